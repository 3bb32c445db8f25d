// SPDX-License-Identifier: GPL-2.0-or-later
/* Netlink faults of the sets' hot path, made to happen with a shim: this
 * test defines sendto() and recvmmsg(), which take the place of libc's for
 * the sets module linked into it. Requests to the kernel (AF_NETLINK) are
 * recorded and acked, lost, or refused as each test says; every other
 * call goes to the kernel. Shown: after ENOBUFS (acks dropped) nothing is
 * sent until the socket is read dry; a batch whose ack never comes fails
 * at its deadline and gives its in-flight count back, and the late ack is
 * ignored; sendto() EAGAIN waits for the socket to be writable.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <linux/netlink.h>

#include "base/log.h"
#include "sets/sets.h"

/* ---- the shim ---- */

#define MAX_REQ 256

enum rx_mode { RX_EAGAIN = 0, RX_ENOBUFS, RX_STALE, RX_ACK };

static struct {
	uint32_t seq[MAX_REQ];
	int n_req;	 /* requests sent */
	int send_eagain; /* sendto calls to fail with EAGAIN */
	enum rx_mode rx;
	int acked; /* requests acked so far (in order) */
	int ack_upto;
} shim;

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *to, socklen_t tolen)
{
	const struct nlmsghdr *nlh = buf;
	int left = (int)len;

	if (to == NULL || to->sa_family != AF_NETLINK)
		return syscall(SYS_sendto, fd, buf, len, flags, to, tolen);
	if (shim.send_eagain > 0) {
		shim.send_eagain--;
		errno = EAGAIN;
		return -1;
	}
	for (; NLMSG_OK(nlh, (unsigned)left); nlh = NLMSG_NEXT(nlh, left)) {
		assert_true(shim.n_req < MAX_REQ);
		shim.seq[shim.n_req++] = nlh->nlmsg_seq;
	}
	return (ssize_t)len;
}

static size_t put_ack(uint8_t *buf, uint32_t seq)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct nlmsgerr *e = NLMSG_DATA(nlh);

	memset(buf, 0, NLMSG_SPACE(sizeof(*e)));
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = seq;
	e->error = 0;
	e->msg.nlmsg_seq = seq;
	return nlh->nlmsg_len;
}

int recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
	     struct timespec *timeout)
{
	unsigned i = 0;

	(void)fd;
	(void)flags;
	(void)timeout;
	switch (shim.rx) {
	case RX_ENOBUFS:
		shim.rx = RX_STALE;
		errno = ENOBUFS;
		return -1;
	case RX_STALE: /* a full vector of acks for requests long gone */
		for (i = 0; i < vlen; i++)
			msgs[i].msg_len = (unsigned)put_ack(
			    msgs[i].msg_hdr.msg_iov[0].iov_base, 1);
		return (int)vlen;
	case RX_ACK:
		for (; i < vlen && shim.acked < shim.ack_upto; i++) {
			uint8_t *buf = msgs[i].msg_hdr.msg_iov[0].iov_base;

			msgs[i].msg_len =
			    (unsigned)put_ack(buf, shim.seq[shim.acked++]);
		}
		if (i > 0)
			return (int)i;
		break;
	case RX_EAGAIN:
		break;
	}
	errno = EAGAIN;
	return -1;
}

/* Ack the requests sent so far, up to upto of them, then read. */
static void ack_upto(struct sets *s, int upto)
{
	shim.rx = RX_ACK;
	shim.ack_upto = upto;
	sets_read(s);
	shim.rx = RX_EAGAIN;
}

/* ---- fixture ---- */

struct done {
	int n;
	int status;
};

static void on_done(void *arg, int status)
{
	struct done *d = arg;

	d->n++;
	d->status = status;
}

static struct dns_addr addr(const char *a)
{
	struct dns_addr d = {.ttl = 300};

	d.addr.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, a, d.addr.bytes), 1);
	return d;
}

static struct sets *open_sets(struct event_base *base)
{
	struct sets_params p = {
	    .set4 = "t4", .set6 = "t6", .ttl_min = 60, .ttl_max = 86400};
	char err[256];
	struct sets *s;

	memset(&shim, 0, sizeof(shim));
	s = sets_open(base, &p, err, sizeof(err));
	if (s == NULL)
		fail_msg("sets_open: %s", err);
	return s;
}

static void run_once(struct event_base *base)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
}

/* ---- tests ---- */

static void acked_batch_is_done(void **state)
{
	struct event_base *base = event_base_new();
	struct sets *s = open_sets(base);
	struct dns_addr a[2] = {addr("198.18.1.1"), addr("198.18.1.2")};
	struct done d = {0};

	(void)state;
	assert_int_equal(sets_add(s, a, 2, on_done, &d), 0);
	assert_int_equal(d.n, 0);
	run_once(base);
	assert_int_equal(shim.n_req, 2);
	assert_int_equal(sets_inflight(s), 2);
	ack_upto(s, 2);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, 0);
	assert_int_equal(sets_inflight(s), 0);
	sets_close(s);
	event_base_free(base);
}

static void enobufs_drains_before_sending_again(void **state)
{
	struct event_base *base = event_base_new();
	struct sets *s = open_sets(base);
	struct dns_addr a = addr("198.18.1.1"), b = addr("198.18.1.2");
	struct done da = {0}, db = {0};

	(void)state;
	assert_int_equal(sets_add(s, &a, 1, on_done, &da), 0);
	run_once(base);
	assert_int_equal(shim.n_req, 1);
	/* Acks dropped, and the socket stays full of (stale) ones. */
	shim.rx = RX_ENOBUFS;
	sets_read(s);
	assert_int_equal(da.n, 1);
	assert_int_equal(da.status, -EIO);
	assert_int_equal(sets_inflight(s), 0);
	/* Not read dry yet: nothing new goes out. */
	assert_int_equal(sets_add(s, &b, 1, on_done, &db), 0);
	run_once(base);
	run_once(base);
	assert_int_equal(shim.n_req, 1);
	assert_int_equal(db.n, 0);
	/* Read dry (EAGAIN): the waiting batch goes out. */
	shim.rx = RX_EAGAIN;
	sets_read(s);
	run_once(base);
	assert_int_equal(shim.n_req, 2);
	shim.acked = 1;
	ack_upto(s, 2);
	assert_int_equal(db.n, 1);
	assert_int_equal(db.status, 0);
	sets_close(s);
	event_base_free(base);
}

static void lost_ack_fails_at_the_deadline(void **state)
{
	struct event_base *base = event_base_new();
	struct sets *s = open_sets(base);
	struct dns_addr a[2] = {addr("198.18.1.1"), addr("198.18.1.2")};
	struct dns_addr c = addr("198.18.1.3");
	struct done d = {0}, dc = {0};
	struct timeval limit = {SETS_DEADLINE_MS / 1000 + 2, 0};

	(void)state;
	assert_int_equal(sets_add(s, a, 2, on_done, &d), 0);
	run_once(base);
	assert_int_equal(shim.n_req, 2);
	ack_upto(s, 1); /* the second ack never comes */
	assert_int_equal(sets_inflight(s), 1);
	assert_int_equal(d.n, 0);
	event_base_loopexit(base, &limit);
	while (d.n == 0 && !event_base_got_exit(base))
		event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.status, -ETIMEDOUT);
	assert_int_equal(sets_inflight(s), 0);
	/* The late ack is ignored; the next batch works. */
	ack_upto(s, 2);
	assert_int_equal(d.n, 1);
	assert_int_equal(sets_inflight(s), 0);
	assert_int_equal(sets_add(s, &c, 1, on_done, &dc), 0);
	run_once(base);
	assert_int_equal(shim.n_req, 3);
	ack_upto(s, 3);
	assert_int_equal(dc.n, 1);
	assert_int_equal(dc.status, 0);
	sets_close(s);
	event_base_free(base);
}

static void send_eagain_waits_for_writable(void **state)
{
	struct event_base *base = event_base_new();
	struct sets *s = open_sets(base);
	struct dns_addr a = addr("198.18.1.1");
	struct done d = {0};

	(void)state;
	shim.send_eagain = 1;
	assert_int_equal(sets_add(s, &a, 1, on_done, &d), 0);
	run_once(base);
	assert_int_equal(shim.send_eagain, 0); /* refused once */
	for (int i = 0; i < 10 && shim.n_req == 0; i++)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_int_equal(shim.n_req, 1);
	ack_upto(s, 1);
	assert_int_equal(d.status, 0);
	assert_int_equal(d.n, 1);
	sets_close(s);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(acked_batch_is_done),
	    cmocka_unit_test(enobufs_drains_before_sending_again),
	    cmocka_unit_test(lost_ack_fails_at_the_deadline),
	    cmocka_unit_test(send_eagain_waits_for_writable),
	};

	log_setup(LOGL_ERR, LOG_FORMAT_TEXT, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
