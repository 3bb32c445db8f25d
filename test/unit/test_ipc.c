// SPDX-License-Identifier: GPL-2.0-or-later
/* The IPC frames between the DNS process and the privileged parent
 * (base/ipc.c): what is written reads back the same, and every frame
 * whose size, type, count, family or padding is off is refused with a
 * reason. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/ipc.h"
#include "base/netaddr.h"
#include "fixtures.h"

static struct ipc_addr addr(const char *text, uint32_t ttl)
{
	struct ipc_addr a = {.ttl = ttl};

	assert_int_equal(netaddr_parse(text, &a.addr), 0);
	return a;
}

/* in[0..n) as a frame of type: written, read back the same. */
static void round_trip(enum ipc_type type, uint32_t id,
		       const struct ipc_addr *in, size_t n)
{
	uint8_t buf[IPC_FRAME_MAX];
	struct ipc_msg m;
	const char *why = "";
	int len = ipc_encode_addrs(buf, sizeof(buf), type, id, in, n);

	assert_int_equal(len, IPC_HDR_SIZE + n * IPC_ADDR_SIZE);
	assert_int_equal(ipc_decode(buf, (size_t)len, &m, &why), 0);
	assert_int_equal(m.type, type);
	assert_int_equal(m.id, id);
	assert_int_equal(m.count, n);
	for (size_t i = 0; i < n; i++) {
		assert_true(netaddr_equal(&m.addrs[i].addr, &in[i].addr));
		assert_int_equal(m.addrs[i].ttl, in[i].ttl);
	}
}

static void test_add_round_trip(void **state)
{
	struct ipc_addr in[3] = {addr("198.18.1.10", 60),
				 addr("2001:db8:1::30", 0),
				 addr("198.18.1.11", 4294967295u)};

	(void)state;
	round_trip(IPC_ADD, 77, in, 3);
}

/* A del's records carry 0, a shorten's the seconds left (1 or more). */
static void test_del_shorten_round_trip(void **state)
{
	struct ipc_addr del[2] = {addr("198.18.1.10", 0),
				  addr("2001:db8:1::30", 0)};
	struct ipc_addr shorten[1] = {addr("198.18.1.11", 30)};
	uint8_t buf[IPC_FRAME_MAX];

	(void)state;
	round_trip(IPC_DEL, 5, del, 2);
	round_trip(IPC_SHORTEN, 6, shorten, 1);
	/* what the encoder refuses to write */
	del[0].ttl = 1;
	assert_int_equal(ipc_encode_addrs(buf, sizeof(buf), IPC_DEL, 5, del, 2),
			 -EINVAL);
	shorten[0].ttl = 0;
	assert_int_equal(
	    ipc_encode_addrs(buf, sizeof(buf), IPC_SHORTEN, 6, shorten, 1),
	    -EINVAL);
	assert_int_equal(
	    ipc_encode_addrs(buf, sizeof(buf), IPC_ADD_DONE, 6, del, 1),
	    -EINVAL);
}

static void test_done_round_trip(void **state)
{
	uint8_t buf[16];
	struct ipc_msg m;
	const char *why = "";
	int len = ipc_encode_done(buf, sizeof(buf), IPC_ADD_DONE, 9, -ENOSPC);

	(void)state;
	assert_int_equal(len, IPC_HDR_SIZE + 4);
	assert_int_equal(ipc_decode(buf, (size_t)len, &m, &why), 0);
	assert_int_equal(m.type, IPC_ADD_DONE);
	assert_int_equal(m.id, 9);
	assert_int_equal(m.status, -ENOSPC);
	assert_int_equal(
	    ipc_encode_done(buf, IPC_HDR_SIZE + 3, IPC_ADD_DONE, 9, 0),
	    -ENOSPC);
}

static void test_encode_bounds(void **state)
{
	struct ipc_addr many[IPC_ADD_MAX + 1];
	uint8_t buf[IPC_FRAME_MAX];

	(void)state;
	for (size_t i = 0; i <= IPC_ADD_MAX; i++)
		many[i] = addr("198.18.1.10", 1);
	assert_int_equal(
	    ipc_encode_addrs(buf, sizeof(buf), IPC_ADD, 1, many, 0), -EINVAL);
	assert_int_equal(ipc_encode_addrs(buf, sizeof(buf), IPC_ADD, 1, many,
					  IPC_ADD_MAX + 1),
			 -EINVAL);
	assert_int_equal(
	    ipc_encode_addrs(buf, sizeof(buf), IPC_ADD, 1, many, IPC_ADD_MAX),
	    IPC_FRAME_MAX);
	assert_int_equal(ipc_encode_addrs(buf, IPC_FRAME_MAX - 1, IPC_ADD, 1,
					  many, IPC_ADD_MAX),
			 -ENOSPC);
	many[0].addr.family = AF_UNIX;
	assert_int_equal(
	    ipc_encode_addrs(buf, sizeof(buf), IPC_ADD, 1, many, 1), -EINVAL);
}

static void test_socket_round_trip(void **state)
{
	uint8_t buf[64];
	struct ipc_msg m;
	const char *why = "";
	int len = ipc_encode_socket(buf, sizeof(buf), 3, AF_INET6, SOCK_STREAM);

	(void)state;
	assert_int_equal(len, IPC_HDR_SIZE + 8);
	assert_int_equal(ipc_decode(buf, (size_t)len, &m, &why), 0);
	assert_int_equal(m.type, IPC_SOCKET);
	assert_int_equal(m.family, AF_INET6);
	assert_int_equal(m.socktype, SOCK_STREAM);
	len = ipc_encode_done(buf, sizeof(buf), IPC_SOCKET_DONE, 3, -EPERM);
	assert_int_equal(ipc_decode(buf, (size_t)len, &m, &why), 0);
	assert_int_equal(m.type, IPC_SOCKET_DONE);
	assert_int_equal(m.status, -EPERM);
	/* only UDP and TCP over IPv4 and IPv6 */
	assert_int_equal(ipc_encode_socket(buf, sizeof(buf), 3, AF_PACKET, 0),
			 -EINVAL);
	assert_int_equal(
	    ipc_encode_socket(buf, sizeof(buf), 3, AF_INET, SOCK_RAW), -EINVAL);
	assert_int_equal(ipc_encode_done(buf, sizeof(buf), IPC_ADD, 3, 0),
			 -EINVAL);
}

/* One frame carrying both ends of the pipe p. */
static void send_two_fds(int chan, uint8_t *frame, size_t len, const int p[2])
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = frame, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(c), p, 2 * sizeof(int));
	assert_int_equal(sendmsg(chan, &mh, 0), (ssize_t)len);
}

/* A frame carries at most one descriptor; the receiver gets it, or
 * refuses a frame with two and closes both. */
static void test_descriptor_passing(void **state)
{
	uint8_t frame[IPC_HDR_SIZE + 4], buf[IPC_FRAME_MAX + 1];
	int sv[2], p[2], fd = -1;
	int len = ipc_encode_done(frame, sizeof(frame), IPC_SOCKET_DONE, 1, 0);

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(ipc_send(sv[0], frame, (size_t)len, p[1]), 0);
	assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), 0, &fd), len);
	assert_true(fd >= 0 && fd != p[1]);
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(read(p[0], buf, 1), 1);
	close(fd);
	/* no descriptor */
	assert_int_equal(ipc_send(sv[0], frame, (size_t)len, -1), 0);
	assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), 0, &fd), len);
	assert_int_equal(fd, -1);
	/* two: refused */
	send_two_fds(sv[0], frame, (size_t)len, p);
	assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), 0, &fd), -EBADMSG);
	assert_int_equal(fd, -1);
	/* a closed channel */
	close(sv[0]);
	assert_int_equal(ipc_recv(sv[1], buf, sizeof(buf), 0, &fd), 0);
	assert_int_equal(ipc_request_socket(sv[1], 1, AF_INET, SOCK_DGRAM),
			 -EPIPE);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

/* Frames sent together (ipc_send_many) are received together
 * (ipc_inbox_recv), each whole and in order, each read as ipc_recv reads
 * one: a longer frame than the inbox holds by its true length, a
 * descriptor given to the one frame that carried it, two refused, and a
 * closed channel as a frame of length 0. */
static void test_many_frames(void **state)
{
	uint8_t a[IPC_HDR_SIZE + 4], b[IPC_HDR_SIZE + 4], big[64];
	uint8_t *frames[3] = {a, b, big};
	size_t lens[3] = {sizeof(a), sizeof(b), sizeof(big)};
	struct ipc_inbox *in = ipc_inbox_new(sizeof(a) + 1);
	const uint8_t *data;
	struct ipc_msg m;
	const char *why = "";
	int sv[2], p[2], fd = -1;

	(void)state;
	assert_non_null(in);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(ipc_encode_done(a, sizeof(a), IPC_ADD_DONE, 7, 0),
			 sizeof(a));
	assert_int_equal(
	    ipc_encode_done(b, sizeof(b), IPC_ADD_DONE, 8, -ENOENT), sizeof(b));
	memset(big, 0, sizeof(big));
	assert_int_equal(ipc_send_many(sv[0], frames, lens, 3), 3);
	assert_int_equal(ipc_send(sv[0], a, sizeof(a), p[1]), 0);
	assert_int_equal(ipc_inbox_recv(in, sv[1], MSG_DONTWAIT), 4);
	assert_int_equal(ipc_inbox_frame(in, 0, &data, &fd), sizeof(a));
	assert_int_equal(ipc_decode(data, sizeof(a), &m, &why), 0);
	assert_int_equal(m.id, 7);
	assert_int_equal(fd, -1);
	assert_int_equal(ipc_inbox_frame(in, 1, &data, &fd), sizeof(b));
	assert_int_equal(ipc_decode(data, sizeof(b), &m, &why), 0);
	assert_int_equal(m.id, 8);
	assert_int_equal(m.status, -ENOENT);
	/* longer than the inbox's room: its true size */
	assert_int_equal(ipc_inbox_frame(in, 2, &data, &fd), sizeof(big));
	assert_int_equal(ipc_inbox_frame(in, 3, &data, &fd), sizeof(a));
	assert_true(fd >= 0 && fd != p[1]);
	close(fd);
	/* a frame is taken once; nothing more waits */
	assert_int_equal(ipc_inbox_frame(in, 3, &data, &fd), -EINVAL);
	assert_int_equal(ipc_inbox_recv(in, sv[1], MSG_DONTWAIT), -EAGAIN);
	/* two descriptors on one frame: refused, both closed */
	send_two_fds(sv[0], a, sizeof(a), p);
	assert_int_equal(ipc_inbox_recv(in, sv[1], MSG_DONTWAIT), 1);
	assert_int_equal(ipc_inbox_frame(in, 0, &data, &fd), -EBADMSG);
	assert_int_equal(fd, -1);
	close(sv[0]);
	assert_true(ipc_inbox_recv(in, sv[1], MSG_DONTWAIT) >= 1);
	assert_int_equal(ipc_inbox_frame(in, 0, &data, &fd), 0);
	/* none sent on a closed channel */
	assert_true(ipc_send_many(sv[1], frames, lens, 1) < 0);
	ipc_inbox_free(in);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

/* Each bad frame: refused, with the reason expected. */
static void refused(const uint8_t *buf, size_t len, const char *reason)
{
	struct ipc_msg m;
	const char *why = "";

	assert_int_equal(ipc_decode(buf, len, &m, &why), -EINVAL);
	assert_string_equal(why, reason);
}

/* The link channel's frames: header only but IPC_VERDICT; a count the
 * type does not take, or a body, is malformed. */
static void test_link_frames(void **state)
{
	uint8_t buf[IPC_FRAME_MAX + 1];
	struct ipc_msg m;
	const char *why = "";
	int len;

	(void)state;
	len =
	    ipc_encode_link(buf, sizeof(buf), IPC_RULES, IPC_RULES_CHANGED, 9);
	assert_int_equal(len, IPC_HDR_SIZE);
	assert_int_equal(ipc_decode(buf, (size_t)len, &m, &why), 0);
	assert_int_equal(m.type, IPC_RULES);
	assert_int_equal(m.count, IPC_RULES_CHANGED);
	assert_int_equal(m.id, 9);
	assert_int_equal(ipc_encode_link(buf, sizeof(buf), IPC_RULES, 3, 1),
			 -EINVAL);
	assert_int_equal(ipc_encode_link(buf, sizeof(buf), IPC_GATE, 1, 1),
			 -EINVAL);
	assert_int_equal(ipc_encode_link(buf, sizeof(buf), IPC_ADD, 1, 1),
			 -EINVAL);
	len = ipc_encode_link(buf, sizeof(buf), IPC_HELLO, 0, 4242);
	assert_int_equal(ipc_decode(buf, (size_t)len, &m, &why), 0);
	assert_int_equal(m.id, 4242);
	/* a body after a header-only frame */
	memset(buf + IPC_HDR_SIZE, 0, 4);
	refused(buf, IPC_HDR_SIZE + 4,
		"frame size or count does not match its type");
	/* a forged count on IPC_FORGET */
	len = ipc_encode_link(buf, sizeof(buf), IPC_FORGET, 0, 1);
	buf[2] = 1;
	refused(buf, (size_t)len,
		"frame size or count does not match its type");
	len = ipc_encode_verdict(buf, sizeof(buf), 4453, 77, 4, 0x100000);
	assert_int_equal(len, IPC_HDR_SIZE + 8);
	assert_int_equal(ipc_decode(buf, (size_t)len, &m, &why), 0);
	assert_int_equal(m.type, IPC_VERDICT);
	assert_int_equal(m.count, 4453);
	assert_int_equal(m.id, 77);
	assert_int_equal(m.verdict, 4);
	assert_int_equal(m.mark, 0x100000);
	refused(buf, (size_t)len - 1, "frame size does not match its type");
	assert_int_equal(ipc_encode_verdict(buf, IPC_HDR_SIZE, 1, 1, 1, 0),
			 -ENOSPC);
}

static void test_bad_frames_refused(void **state)
{
	static uint8_t buf[IPC_FRAME_MAX + 64];
	struct ipc_addr a[2] = {addr("198.18.1.10", 5), addr("198.18.1.11", 5)};
	int len = ipc_encode_addrs(buf, sizeof(buf), IPC_ADD, 1, a, 2);
	uint32_t v32;
	uint16_t v;

	(void)state;
	refused(buf, IPC_FRAME_MAX + 1, "oversized frame");
	refused(buf, IPC_HDR_SIZE - 1, "frame shorter than its header");
	refused(buf, (size_t)len - 1, "frame size does not match its count");
	refused(buf, (size_t)len + IPC_ADDR_SIZE,
		"frame size does not match its count");
	v = 0;
	memcpy(buf + 2, &v, 2);
	refused(buf, IPC_HDR_SIZE, "address count out of range");
	v = IPC_ADD_MAX + 1;
	memcpy(buf + 2, &v, 2);
	refused(buf, IPC_HDR_SIZE + (IPC_ADD_MAX + 1) * IPC_ADDR_SIZE,
		"oversized frame");
	v = 2;
	memcpy(buf + 2, &v, 2);
	buf[IPC_HDR_SIZE] = 5;
	refused(buf, (size_t)len, "address family neither 4 nor 6");
	buf[IPC_HDR_SIZE] = 4;
	buf[IPC_HDR_SIZE + 1] = 1;
	refused(buf, (size_t)len, "padding not zero");
	buf[IPC_HDR_SIZE + 1] = 0;
	buf[IPC_HDR_SIZE + 8 + 4] = 1; /* past the 4 bytes of an IPv4 */
	refused(buf, (size_t)len, "padding not zero");
	buf[IPC_HDR_SIZE + 8 + 4] = 0;
	v = IPC_PAIR + 1; /* the first type past the vocabulary */
	memcpy(buf, &v, 2);
	refused(buf, (size_t)len, "unknown frame type");
	len = ipc_encode_done(buf, sizeof(buf), IPC_ADD_DONE, 1, 0);
	refused(buf, (size_t)len + 1, "frame size does not match its type");
	/* a del with a timeout, a shorten to none */
	len = ipc_encode_addrs(buf, sizeof(buf), IPC_ADD, 1, a, 2);
	v = IPC_DEL;
	memcpy(buf, &v, 2);
	refused(buf, (size_t)len, "a del with a timeout");
	v = IPC_SHORTEN;
	memcpy(buf, &v, 2);
	memset(buf + IPC_HDR_SIZE + IPC_ADDR_SIZE + 4, 0, 4);
	refused(buf, (size_t)len, "a shorten to no timeout");
	refused(buf, (size_t)len - 3, "frame size does not match its count");
	/* a socket request of another kind, or of the wrong size */
	len = ipc_encode_socket(buf, sizeof(buf), 1, AF_INET, SOCK_DGRAM);
	refused(buf, (size_t)len + 1, "frame size does not match its type");
	v32 = AF_PACKET;
	memcpy(buf + IPC_HDR_SIZE, &v32, 4);
	refused(buf, (size_t)len,
		"a socket neither UDP nor TCP over IPv4 or IPv6");
	v32 = AF_INET;
	memcpy(buf + IPC_HDR_SIZE, &v32, 4);
	v32 = SOCK_RAW;
	memcpy(buf + IPC_HDR_SIZE + 4, &v32, 4);
	refused(buf, (size_t)len,
		"a socket neither UDP nor TCP over IPv4 or IPv6");
}

/* A pair frame (the client sets): client, address, ttl read back the
 * same, both families in one frame; a family mismatch, a ttl of 0, too
 * many records are not written; a v4 record's unused bytes not zero, or
 * a size that is not the count's, are refused. */
static void test_pair_frames(void **state)
{
	struct ipc_pair in[IPC_PAIR_MAX + 1];
	uint8_t buf[IPC_FRAME_MAX];
	struct ipc_msg m;
	const char *why = "";
	int len;

	(void)state;
	memset(in, 0, sizeof(in));
	assert_int_equal(netaddr_parse("198.18.64.2", &in[0].client), 0);
	assert_int_equal(netaddr_parse("198.18.1.10", &in[0].addr), 0);
	in[0].ttl = 300;
	assert_int_equal(netaddr_parse("2001:db8:64::2", &in[1].client), 0);
	assert_int_equal(netaddr_parse("2001:db8:1::10", &in[1].addr), 0);
	in[1].ttl = 1;
	len = ipc_encode_pairs(buf, sizeof(buf), 9, in, 2);
	assert_int_equal(len, IPC_HDR_SIZE + 2 * IPC_PAIR_SIZE);
	assert_int_equal(ipc_decode(buf, (size_t)len, &m, &why), 0);
	assert_int_equal(m.type, IPC_PAIR);
	assert_int_equal(m.id, 9);
	assert_int_equal(m.count, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_true(netaddr_equal(&m.pairs[i].client, &in[i].client));
		assert_true(netaddr_equal(&m.pairs[i].addr, &in[i].addr));
		assert_int_equal(m.pairs[i].ttl, in[i].ttl);
	}
	buf[IPC_HDR_SIZE + 24 + 5] = 1; /* past the v4 address */
	refused(buf, (size_t)len, "a pair's family or padding");
	refused(buf, (size_t)len - 1,
		"pair count out of range, or the frame's size not its count's");
	for (size_t i = 2; i < IPC_PAIR_MAX + 1; i++)
		in[i] = in[0];
	assert_int_equal(
	    ipc_encode_pairs(buf, sizeof(buf), 9, in, IPC_PAIR_MAX),
	    IPC_HDR_SIZE + IPC_PAIR_MAX * IPC_PAIR_SIZE);
	assert_int_equal(
	    ipc_encode_pairs(buf, sizeof(buf), 9, in, IPC_PAIR_MAX + 1),
	    -EINVAL);
	in[1].client = in[0].client; /* v4 client, v6 address */
	assert_int_equal(ipc_encode_pairs(buf, sizeof(buf), 9, in, 2), -EINVAL);
	in[1] = in[0];
	in[1].ttl = 0;
	assert_int_equal(ipc_encode_pairs(buf, sizeof(buf), 9, in, 2), -EINVAL);
	in[1].ttl = 1;
	assert_int_equal(ipc_encode_pairs(buf, 16, 9, in, 2), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_round_trip),
	    cmocka_unit_test(test_del_shorten_round_trip),
	    cmocka_unit_test(test_done_round_trip),
	    cmocka_unit_test(test_socket_round_trip),
	    cmocka_unit_test(test_descriptor_passing),
	    cmocka_unit_test(test_many_frames),
	    cmocka_unit_test(test_encode_bounds),
	    cmocka_unit_test(test_bad_frames_refused),
	    cmocka_unit_test(test_link_frames),
	    cmocka_unit_test(test_pair_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
