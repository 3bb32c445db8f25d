// SPDX-License-Identifier: GPL-2.0-or-later
/* The privileged parent's judgement of the DNS process's requests
 * (daemon/setwriter.c, the pure half): an add of an internal or upstream
 * address is refused, a del is never judged by the config (a reload may
 * evict what the new one no longer admits), and a shorten only shortens:
 * it never lengthens a known entry, and on an entry the parent does not
 * know it is an add, so only of an admitted address, clamped to ttl.max.
 * And the socket channel, with a real writer in a forked child (as root:
 * SO_MARK): an upstream socket comes back of the family and type asked
 * for, carrying the config's mark; a set request on that channel, or a
 * descriptor sent to the parent, stops the writer; c-ares asks for its
 * sockets through the channel's pool (upstream_use_socket_channel) and a
 * question is answered through one, and with the parent gone the question
 * fails instead of going out on a socket of the process's own. */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "base/ipc.h"
#include "base/netaddr.h"
#include "config/config.h"
#include "daemon/setwriter.h"
#include "resolve/sockpool.h"
#include "resolve/upstream.h"
#include "fixtures.h"

static const char CONFIG[] =
    "{\"listen\": [\"127.0.0.1:53\"], \"upstreams\": [\"198.18.0.1\"], "
    "\"allow\": [\"a.test\"], \"ttl\": {\"min\": 5, \"max\": 600}}";

static struct ipc_addr addr(const char *text, uint32_t ttl)
{
	struct ipc_addr a = {.ttl = ttl};

	assert_int_equal(netaddr_parse(text, &a.addr), 0);
	return a;
}

static int judge(const struct config *c, enum ipc_type type, struct ipc_addr a)
{
	uint8_t buf[IPC_FRAME_MAX];
	struct ipc_msg m;
	char why[256] = "";
	int len = ipc_encode_addrs(buf, sizeof(buf), type, 1, &a, 1);
	int rc;

	assert_true(len > 0);
	rc = setwriter_judge(c, buf, (size_t)len, &m, why, sizeof(why));
	if (rc != 0)
		assert_true(why[0] != '\0');
	return rc;
}

static void test_judge(void **state)
{
	struct config *c = fixture_config(CONFIG);

	(void)state;
	assert_int_equal(judge(c, IPC_ADD, addr("198.18.1.10", 60)), 0);
	assert_int_equal(judge(c, IPC_ADD, addr("10.0.0.1", 60)), -EPERM);
	assert_int_equal(judge(c, IPC_ADD, addr("198.18.0.1", 60)), -EPERM);
	assert_int_equal(judge(c, IPC_DEL, addr("10.0.0.1", 0)), 0);
	assert_int_equal(judge(c, IPC_SHORTEN, addr("10.0.0.1", 5)), 0);
	config_free(c);
}

static void test_shorten_only_shortens(void **state)
{
	struct config *c = fixture_config(CONFIG);
	struct ipc_addr pub = addr("198.18.1.10", 30);
	struct ipc_addr internal = addr("10.0.0.1", 30);
	uint64_t now = 1000, exp = 0;

	(void)state;
	/* a known entry, 100 s left: 30 s is sooner, 100 or 200 is not */
	assert_true(setwriter_shorten_ok(c, &pub, now, now + 100, &exp));
	assert_int_equal(exp, now + 30);
	pub.ttl = 100;
	assert_false(setwriter_shorten_ok(c, &pub, now, now + 100, &exp));
	pub.ttl = 200;
	assert_false(setwriter_shorten_ok(c, &pub, now, now + 100, &exp));
	/* a known internal entry (an older config's) may only shrink */
	assert_true(setwriter_shorten_ok(c, &internal, now, now + 100, &exp));
	/* no entry: an add, admitted and clamped to ttl.max */
	pub.ttl = 100000;
	assert_true(setwriter_shorten_ok(c, &pub, now, 0, &exp));
	assert_int_equal(exp, now + 600);
	assert_true(setwriter_shorten_ok(c, &pub, now, now, &exp));
	assert_false(setwriter_shorten_ok(c, &internal, now, 0, &exp));
	assert_false(setwriter_shorten_ok(c, &internal, now, now - 1, &exp));
	config_free(c);
}

struct child {
	pid_t pid;
	int chan;
};

/* A writer with no sets serving one end of a fresh channel in a child;
 * the child exits 3 when the writer stopped, 0 when the channel closed
 * without a stop (never: a close is a stop too). */
static struct child socket_writer(const struct config *c)
{
	struct child ch;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	ch.pid = fork();
	assert_true(ch.pid >= 0);
	if (ch.pid == 0) {
		struct event_base *base = event_base_new();
		struct setwriter *w;

		close(sv[0]);
		evutil_make_socket_nonblocking(sv[1]);
		w = setwriter_new(base, sv[1], c, NULL);
		if (w == NULL)
			_exit(2);
		event_base_dispatch(base);
		_exit(setwriter_failed(w) ? 3 : 0);
	}
	close(sv[1]);
	ch.chan = sv[0];
	return ch;
}

static int child_exit(struct child ch)
{
	int status = 0;

	close(ch.chan);
	assert_int_equal(waitpid(ch.pid, &status, 0), ch.pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_socket_carries_the_mark(void **state)
{
	struct config *c = fixture_config(CONFIG);
	struct child ch = socket_writer(c);
	int type = 0, dom = 0;
	uint32_t mark = 0;
	socklen_t len;
	int fd;

	(void)state;
	fd = ipc_request_socket(ch.chan, 1, AF_INET6, SOCK_DGRAM);
	assert_true(fd >= 0);
	len = sizeof(mark);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_MARK, &mark, &len), 0);
	assert_int_equal(mark, c->mark);
	assert_true(mark != 0);
	len = sizeof(type);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len), 0);
	assert_int_equal(type, SOCK_DGRAM);
	len = sizeof(dom);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len), 0);
	assert_int_equal(dom, AF_INET6);
	close(fd);
	fd = ipc_request_socket(ch.chan, 2, AF_INET, SOCK_STREAM);
	assert_true(fd >= 0);
	len = sizeof(type);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len), 0);
	assert_int_equal(type, SOCK_STREAM);
	close(fd);
	/* closing the channel stops the writer too */
	assert_int_equal(child_exit(ch), 3);
	config_free(c);
}

static void test_socket_channel_refuses(void **state)
{
	struct config *c = fixture_config(CONFIG);
	struct ipc_addr a = addr("198.18.1.10", 60);
	uint8_t buf[IPC_FRAME_MAX + 1];
	struct child ch;
	int len, p[2], fd = -1;

	(void)state;
	/* an add on the socket channel (the writer has no sets there) */
	ch = socket_writer(c);
	len = ipc_encode_addrs(buf, sizeof(buf), IPC_ADD, 1, &a, 1);
	assert_int_equal(ipc_send(ch.chan, buf, (size_t)len, -1), 0);
	assert_int_equal(ipc_recv(ch.chan, buf, sizeof(buf), 0, &fd), 0);
	assert_int_equal(child_exit(ch), 3);
	/* a descriptor sent to the parent */
	ch = socket_writer(c);
	assert_int_equal(pipe(p), 0);
	len = ipc_encode_socket(buf, sizeof(buf), 1, AF_INET, SOCK_DGRAM);
	assert_int_equal(ipc_send(ch.chan, buf, (size_t)len, p[0]), 0);
	assert_int_equal(ipc_recv(ch.chan, buf, sizeof(buf), 0, &fd), 0);
	assert_int_equal(fd, -1);
	assert_int_equal(child_exit(ch), 3);
	close(p[0]);
	close(p[1]);
	config_free(c);
}

struct answer {
	int n, status;
};

static void on_answer(void *arg, int status, const uint8_t *ans, size_t len)
{
	struct answer *a = arg;

	(void)ans;
	(void)len;
	a->n++;
	a->status = status;
}

/* A UDP "upstream" on 127.0.0.1 that answers each question with itself,
 * QR set (an empty answer); *port its port. */
static void on_question(evutil_socket_t fd, short what, void *arg)
{
	struct sockaddr_storage from;
	socklen_t flen = sizeof(from);
	uint8_t q[512];
	ssize_t n =
	    recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&from, &flen);

	(void)what;
	if (n > 3) {
		q[2] |= 0x80;
		(void)sendto(fd, q, (size_t)n, 0, (struct sockaddr *)&from,
			     flen);
		(*(int *)arg)++;
	}
}

static int ask(struct event_base *base, struct upstream *u, struct answer *a)
{
	static const uint8_t rest[] = {0x01, 0x00, 0, 1,   0, 0,   0,	0,
				       0,    0,	   1, 'a', 4, 't', 'e', 's',
				       't',  0,	   0, 1,   0, 1};
	uint8_t q[64];
	uint16_t id;
	int rc = upstream_new_id(u, &id);

	if (rc != 0)
		return rc;
	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	memcpy(q + 2, rest, sizeof(rest));
	rc = upstream_send(u, q, 2 + sizeof(rest), on_answer, a);
	for (int i = 0; rc == 0 && a->n == 0 && i < 500; i++)
		event_base_loop(base, EVLOOP_ONCE);
	return rc;
}

static void test_cares_sockets_from_the_parent(void **state)
{
	struct config *c = fixture_config(CONFIG);
	struct child ch = socket_writer(c);
	struct event_base *base = event_base_new();
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t slen = sizeof(sin);
	int srv = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), asked = 0;
	struct config_endpoint ep = {0};
	struct answer a = {0}, b = {0};
	struct event *ev;
	struct upstream *u;
	struct sockpool *pool = sockpool_new(base, ch.chan, SOCKPOOL_WAIT_MS);
	char err[256];

	(void)state;
	assert_non_null(pool);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(srv, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(srv, (struct sockaddr *)&sin, &slen), 0);
	memcpy(&ep.sa, &sin, sizeof(sin));
	ep.len = sizeof(sin);
	ev = event_new(base, srv, EV_READ | EV_PERSIST, on_question, &asked);
	assert_int_equal(event_add(ev, NULL), 0);
	u = upstream_new(base, &ep, 1, 1000, err, sizeof(err));
	assert_non_null(u);
	upstream_use_socket_channel(u, pool);
	assert_int_equal(ask(base, u, &a), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.status, 0);
	assert_int_equal(asked, 1);
	upstream_free(u);
	/* the parent gone: the question fails, nothing reaches the server */
	assert_int_equal(kill(ch.pid, SIGKILL), 0);
	assert_int_equal(waitpid(ch.pid, NULL, 0), ch.pid);
	u = upstream_new(base, &ep, 1, 1000, err, sizeof(err));
	assert_non_null(u);
	upstream_use_socket_channel(u, pool);
	assert_int_equal(ask(base, u, &b), 0);
	assert_int_equal(b.n, 1);
	assert_true(b.status < 0);
	assert_int_equal(asked, 1);
	upstream_free(u);
	sockpool_free(pool);
	close(ch.chan);
	event_free(ev);
	close(srv);
	event_base_free(base);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_judge),
	    cmocka_unit_test(test_shorten_only_shortens),
	    cmocka_unit_test(test_socket_carries_the_mark),
	    cmocka_unit_test(test_socket_channel_refuses),
	    cmocka_unit_test(test_cares_sockets_from_the_parent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
