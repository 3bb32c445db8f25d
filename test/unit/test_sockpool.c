// SPDX-License-Identifier: GPL-2.0-or-later
/* The DNS process's end of the socket channel (resolve/sockpool.c), on a
 * socketpair whose other end the test plays as the parent: a UDP socket
 * taken is followed by one request for the next (the spare), which is
 * then taken without a request of its own; a take waits for its reply
 * only wait_ms; a reply that comes after its waiter gave up is matched by
 * id, kept as the spare (UDP) or closed (TCP), never handed to another
 * waiter; once a waiter gave up, the next take of that kind fails at once
 * without asking again; a closed channel fails every take with -EPIPE,
 * and a reply to no request in flight breaks the pool (-EPROTO). The
 * pool's ids count up from 1, so the test can queue a reply before its
 * request goes out (a take that sends reads only in its wait). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "base/ipc.h"
#include "resolve/sockpool.h"
#include "fixtures.h"

#define WAIT_MS 100

struct lab {
	struct event_base *base;
	int chan, peer;
	struct sockpool *pool;
};

static void lab_open(struct lab *l)
{
	int sv[2];

	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	l->chan = sv[0];
	l->peer = sv[1];
	l->base = event_base_new();
	assert_non_null(l->base);
	l->pool = sockpool_new(l->base, l->chan, WAIT_MS);
	assert_non_null(l->pool);
}

static void lab_close(struct lab *l)
{
	sockpool_free(l->pool);
	if (l->peer >= 0)
		close(l->peer);
	close(l->chan);
	event_base_free(l->base);
}

/* The parent's reply to request id: status 0 with a new socket of family
 * and type (its inode in *ino when ino is not NULL), or status alone. */
static void reply(struct lab *l, uint32_t id, int family, int type, int status,
		  ino_t *ino)
{
	uint8_t buf[IPC_HDR_SIZE + 4];
	int len =
	    ipc_encode_done(buf, sizeof(buf), IPC_SOCKET_DONE, id, status);
	int fd = -1;
	struct stat st;

	assert_true(len > 0);
	if (status == 0) {
		fd = socket(family, type, 0);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		if (ino != NULL)
			*ino = st.st_ino;
	}
	assert_int_equal(ipc_send(l->peer, buf, (size_t)len, fd), 0);
	if (fd >= 0)
		close(fd);
}

/* The next request the parent has, checked: id, family and type. */
static void expect_request(struct lab *l, uint32_t id, int family, int type)
{
	uint8_t buf[IPC_FRAME_MAX + 1];
	struct ipc_msg m;
	const char *why = "";
	int fd;
	ssize_t n = ipc_recv(l->peer, buf, sizeof(buf), MSG_DONTWAIT, &fd);

	assert_true(n > 0);
	assert_int_equal(fd, -1);
	assert_int_equal(ipc_decode(buf, (size_t)n, &m, &why), 0);
	assert_int_equal(m.type, IPC_SOCKET);
	assert_int_equal(m.id, id);
	assert_int_equal(m.family, family);
	assert_int_equal(m.socktype, type);
}

static void expect_no_request(struct lab *l)
{
	uint8_t buf[IPC_FRAME_MAX + 1];
	int fd;

	assert_int_equal(ipc_recv(l->peer, buf, sizeof(buf), MSG_DONTWAIT, &fd),
			 -EAGAIN);
}

/* fd is a socket of family and type; it is closed. */
static void expect_socket(int fd, int family, int type)
{
	int v;
	socklen_t len = sizeof(v);

	assert_true(fd >= 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len), 0);
	assert_int_equal(v, family);
	len = sizeof(v);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len), 0);
	assert_int_equal(v, type);
	close(fd);
}

static ino_t inode_of(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_ino;
}

/* The first take waits for its reply; the spare is asked for at once and,
 * once it came (read by the loop), taken without a request; then the
 * next spare is asked for, once. */
static void test_spare_asked_ahead(void **state)
{
	struct lab l;
	ino_t ino;
	int fd;

	(void)state;
	lab_open(&l);
	reply(&l, 1, AF_INET, SOCK_DGRAM, 0, NULL);
	expect_socket(sockpool_take(l.pool, AF_INET, SOCK_DGRAM), AF_INET,
		      SOCK_DGRAM);
	expect_request(&l, 1, AF_INET, SOCK_DGRAM);
	expect_request(&l, 2, AF_INET, SOCK_DGRAM);
	expect_no_request(&l);
	reply(&l, 2, AF_INET, SOCK_DGRAM, 0, &ino);
	assert_int_equal(event_base_loop(l.base, EVLOOP_NONBLOCK), 0);
	fd = sockpool_take(l.pool, AF_INET, SOCK_DGRAM);
	assert_true(fd >= 0);
	assert_true(inode_of(fd) == ino);
	expect_socket(fd, AF_INET, SOCK_DGRAM);
	expect_request(&l, 3, AF_INET, SOCK_DGRAM);
	expect_no_request(&l);
	/* the other family has its own */
	reply(&l, 4, AF_INET6, SOCK_DGRAM, 0, NULL);
	expect_socket(sockpool_take(l.pool, AF_INET6, SOCK_DGRAM), AF_INET6,
		      SOCK_DGRAM);
	expect_request(&l, 4, AF_INET6, SOCK_DGRAM);
	expect_request(&l, 5, AF_INET6, SOCK_DGRAM);
	expect_no_request(&l);
	lab_close(&l);
}

/* A TCP take the parent does not answer gives up after the wait; the
 * next TCP take fails at once, asking nothing. The late TCP reply then
 * comes just before the reply a UDP take waits for: the UDP take gets
 * its own socket, not the TCP one; TCP is asked for again afresh. A late
 * UDP reply becomes the spare. A late reply right behind the awaited one
 * does not replace it either. */
static void test_late_reply_goes_to_no_one_else(void **state)
{
	struct lab l;
	ino_t ino;
	int fd;

	(void)state;
	lab_open(&l);
	assert_int_equal(sockpool_take(l.pool, AF_INET, SOCK_STREAM),
			 -ETIMEDOUT);
	expect_request(&l, 1, AF_INET, SOCK_STREAM);
	assert_int_equal(sockpool_take(l.pool, AF_INET, SOCK_STREAM),
			 -ETIMEDOUT);
	expect_no_request(&l);

	reply(&l, 1, AF_INET, SOCK_STREAM, 0, NULL);
	reply(&l, 2, AF_INET6, SOCK_DGRAM, 0, NULL);
	expect_socket(sockpool_take(l.pool, AF_INET6, SOCK_DGRAM), AF_INET6,
		      SOCK_DGRAM);
	expect_request(&l, 2, AF_INET6, SOCK_DGRAM);
	expect_request(&l, 3, AF_INET6, SOCK_DGRAM); /* the spare */
	expect_no_request(&l);

	reply(&l, 4, AF_INET, SOCK_STREAM, 0, NULL);
	expect_socket(sockpool_take(l.pool, AF_INET, SOCK_STREAM), AF_INET,
		      SOCK_STREAM);
	expect_request(&l, 4, AF_INET, SOCK_STREAM);
	expect_no_request(&l);

	/* UDP over IPv4: given up on, then its reply is the spare */
	assert_int_equal(sockpool_take(l.pool, AF_INET, SOCK_DGRAM),
			 -ETIMEDOUT);
	expect_request(&l, 5, AF_INET, SOCK_DGRAM);
	reply(&l, 5, AF_INET, SOCK_DGRAM, 0, &ino);
	fd = sockpool_take(l.pool, AF_INET, SOCK_DGRAM);
	assert_true(fd >= 0);
	assert_true(inode_of(fd) == ino);
	expect_socket(fd, AF_INET, SOCK_DGRAM);
	expect_request(&l, 6, AF_INET, SOCK_DGRAM);
	expect_no_request(&l);

	/* the late reply right behind the awaited one, in the same read */
	assert_int_equal(sockpool_take(l.pool, AF_INET6, SOCK_STREAM),
			 -ETIMEDOUT);
	expect_request(&l, 7, AF_INET6, SOCK_STREAM);
	reply(&l, 8, AF_INET, SOCK_STREAM, 0, NULL);
	reply(&l, 7, AF_INET6, SOCK_STREAM, 0, NULL);
	expect_socket(sockpool_take(l.pool, AF_INET, SOCK_STREAM), AF_INET,
		      SOCK_STREAM);
	expect_request(&l, 8, AF_INET, SOCK_STREAM);
	expect_no_request(&l);
	lab_close(&l);
}

/* The parent's refusal fails its take with the parent's status, and the
 * pool goes on. */
static void test_refusal_is_the_status(void **state)
{
	struct lab l;

	(void)state;
	lab_open(&l);
	reply(&l, 1, AF_INET, SOCK_STREAM, -EMFILE, NULL);
	assert_int_equal(sockpool_take(l.pool, AF_INET, SOCK_STREAM), -EMFILE);
	reply(&l, 2, AF_INET, SOCK_STREAM, 0, NULL);
	expect_socket(sockpool_take(l.pool, AF_INET, SOCK_STREAM), AF_INET,
		      SOCK_STREAM);
	lab_close(&l);
}

/* The parent gone: every take fails with -EPIPE at once, the spare that
 * had come too. A reply to no request breaks the pool for good. */
static void test_gone_and_broken(void **state)
{
	struct lab l;

	(void)state;
	lab_open(&l);
	reply(&l, 1, AF_INET, SOCK_DGRAM, 0, NULL);
	expect_socket(sockpool_take(l.pool, AF_INET, SOCK_DGRAM), AF_INET,
		      SOCK_DGRAM);
	reply(&l, 2, AF_INET, SOCK_DGRAM, 0, NULL); /* the spare */
	assert_int_equal(event_base_loop(l.base, EVLOOP_NONBLOCK), 0);
	close(l.peer);
	l.peer = -1;
	assert_int_equal(sockpool_take(l.pool, AF_INET, SOCK_DGRAM), -EPIPE);
	assert_int_equal(sockpool_take(l.pool, AF_INET6, SOCK_STREAM), -EPIPE);
	lab_close(&l);

	lab_open(&l);
	reply(&l, 7, AF_INET, SOCK_DGRAM, 0, NULL);
	assert_int_equal(sockpool_take(l.pool, AF_INET, SOCK_DGRAM), -EPROTO);
	reply(&l, 2, AF_INET, SOCK_DGRAM, 0, NULL);
	assert_int_equal(sockpool_take(l.pool, AF_INET, SOCK_DGRAM), -EPROTO);
	lab_close(&l);
}

/* A take that never returns: say so (a line test/mutate.sh reads) and
 * fail, rather than hang. */
static void on_alarm(int sig)
{
	static const char msg[] = "[  ERROR   ] --- a take waited 30 s: its "
				  "wait is not bounded\n";

	(void)sig;
	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spare_asked_ahead),
	    cmocka_unit_test(test_late_reply_goes_to_no_one_else),
	    cmocka_unit_test(test_refusal_is_the_status),
	    cmocka_unit_test(test_gone_and_broken),
	};

	/* a wait that is not bounded fails the run instead of hanging it */
	signal(SIGALRM, on_alarm);
	alarm(30);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
