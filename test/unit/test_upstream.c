// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the upstream module with the real c-ares and libevent:
 * completions never run inside upstream_send(), even when c-ares fails
 * every server inside ares_send() (the upstream here is the limited
 * broadcast address: connect() refuses it with EACCES before any packet
 * is sent, so nothing leaves the machine); every completion is delivered
 * exactly once, from the loop or at upstream_free; query IDs are found
 * in bounded time and -EAGAIN when all are taken (against a silent
 * upstream: a UDP socket of the test's own on 127.0.0.1 that never
 * answers).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "base/log.h"
#include "resolve/upstream.h"

struct calls {
	int n;
	int status;
	bool inside_send;
};

static bool in_send;

static void on_done(void *arg, int status, const uint8_t *answer, size_t len)
{
	struct calls *c = arg;

	(void)answer;
	(void)len;
	c->n++;
	c->status = status;
	if (in_send)
		c->inside_send = true;
}

static struct upstream *upstream_at(struct event_base *base, uint32_t addr,
				    uint16_t port)
{
	struct config_endpoint ep;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ep.sa;
	char err[256];
	struct upstream *u;

	memset(&ep, 0, sizeof(ep));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(addr);
	ep.len = sizeof(*sin);
	u = upstream_new(base, &ep, 1, 3000, err, sizeof(err));
	if (u == NULL)
		fail_msg("upstream_new: %s", err);
	return u;
}

static struct upstream *broadcast_upstream(struct event_base *base)
{
	return upstream_at(base, INADDR_BROADCAST, 53);
}

/* A bound UDP socket on 127.0.0.1 that nobody reads; *port is its port. */
static int silent_socket(uint16_t *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* A query for "a.test" A with the given ID. */
static size_t make_query(uint16_t id, uint8_t *q)
{
	static const uint8_t rest[] = {0x01, 0x00, 0, 1,   0, 0,   0,	0,
				       0,    0,	   1, 'a', 4, 't', 'e', 's',
				       't',  0,	   0, 1,   0, 1};

	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	memcpy(q + 2, rest, sizeof(rest));
	return 2 + sizeof(rest);
}

static int send_one(struct upstream *u, struct calls *c)
{
	uint8_t q[64];
	uint16_t id;
	int rc = upstream_new_id(u, &id);

	if (rc != 0)
		return rc;
	in_send = true;
	rc = upstream_send(u, q, make_query(id, q), on_done, c);
	in_send = false;
	return rc;
}

static void test_failure_inside_ares_send_is_deferred(void **state)
{
	struct event_base *base = event_base_new();
	struct upstream *u = broadcast_upstream(base);
	struct calls c = {0};

	(void)state;
	assert_int_equal(send_one(u, &c), 0);
	assert_int_equal(c.n, 0); /* not from inside upstream_send */
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(c.n, 1);
	assert_false(c.inside_send);
	assert_true(c.status < 0);
	assert_int_not_equal(c.status, -ECANCELED);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(c.n, 1); /* exactly once */
	upstream_free(u);
	assert_int_equal(c.n, 1);
	event_base_free(base);
}

static void test_free_cancels_deferred_completions(void **state)
{
	struct event_base *base = event_base_new();
	struct upstream *u = broadcast_upstream(base);
	struct calls c = {0};

	(void)state;
	assert_int_equal(send_one(u, &c), 0);
	assert_int_equal(send_one(u, &c), 0);
	assert_int_equal(c.n, 0);
	upstream_free(u);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.status, -ECANCELED);
	event_base_free(base);
}

/* A silent upstream holds every ID: with all 65,536 taken,
 * upstream_new_id says so instead of looping. */
static void test_new_id_is_bounded_when_all_are_taken(void **state)
{
	struct event_base *base = event_base_new();
	uint16_t port, id;
	int fd = silent_socket(&port);
	struct upstream *u = upstream_at(base, INADDR_LOOPBACK, port);
	struct calls c = {0};
	int sent = 0, rc;

	(void)state;
	while ((rc = send_one(u, &c)) == 0 && sent <= 65536)
		sent++;
	assert_int_equal(rc, -EAGAIN);
	assert_int_equal(sent, 65536);
	assert_int_equal(upstream_new_id(u, &id), -EAGAIN);
	assert_int_equal(c.n, 0);
	upstream_free(u);
	assert_int_equal(c.n, 65536);
	assert_int_equal(c.status, -ECANCELED);
	event_base_free(base);
	close(fd);
}

static void test_an_id_in_use_is_refused(void **state)
{
	struct event_base *base = event_base_new();
	uint16_t port;
	int fd = silent_socket(&port);
	struct upstream *u = upstream_at(base, INADDR_LOOPBACK, port);
	struct calls c = {0};
	uint8_t q[64];
	size_t len = make_query(4242, q);

	(void)state;
	assert_int_equal(upstream_send(u, q, len, on_done, &c), 0);
	assert_int_equal(upstream_send(u, q, len, on_done, &c), -EEXIST);
	assert_int_equal(upstream_send(u, q, 11, on_done, &c), -EINVAL);
	assert_int_equal(c.n, 0);
	upstream_free(u);
	assert_int_equal(c.n, 1);
	event_base_free(base);
	close(fd);
}

static void test_strerror_names_the_rcode(void **state)
{
	(void)state;
	assert_string_equal(upstream_strerror(-EREMOTEIO),
			    "upstream answered SERVFAIL");
	assert_string_equal(upstream_strerror(-EACCES),
			    "upstream answered REFUSED");
	assert_string_equal(upstream_strerror(-ETIMEDOUT), "timed out");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_failure_inside_ares_send_is_deferred),
	    cmocka_unit_test(test_free_cancels_deferred_completions),
	    cmocka_unit_test(test_new_id_is_bounded_when_all_are_taken),
	    cmocka_unit_test(test_an_id_in_use_is_refused),
	    cmocka_unit_test(test_strerror_names_the_rcode),
	};

	log_setup(LOGL_ERR, LOG_FORMAT_TEXT, false);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
