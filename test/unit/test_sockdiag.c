// SPDX-License-Identifier: GPL-2.0-or-later
/* test_sockdiag: the kernel's count of acknowledged bytes for one socket,
 * found by its four-tuple, over a loopback connection of the test's own
 * (IPv4 and IPv6): the SYN counts one, each byte the peer's kernel has
 * acknowledged one more; a socket not there is -ENOENT. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/sockdiag.h"

static void key_of(int fd, int family, struct flowtab_key *k)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &la), 0);
	assert_int_equal(getpeername(fd, (struct sockaddr *)&b, &lb), 0);
	memset(k, 0, sizeof(*k));
	k->proto = IPPROTO_TCP;
	k->src.family = k->dst.family = family;
	if (family == AF_INET) {
		const struct sockaddr_in *s = (void *)&a, *d = (void *)&b;

		memcpy(k->src.bytes, &s->sin_addr, 4);
		memcpy(k->dst.bytes, &d->sin_addr, 4);
		k->sport = ntohs(s->sin_port);
		k->dport = ntohs(d->sin_port);
	} else {
		const struct sockaddr_in6 *s = (void *)&a, *d = (void *)&b;

		memcpy(k->src.bytes, &s->sin6_addr, 16);
		memcpy(k->dst.bytes, &d->sin6_addr, 16);
		k->sport = ntohs(s->sin6_port);
		k->dport = ntohs(d->sin6_port);
	}
}

/* Wait until the socket of k reports want acknowledged bytes (the peer's
 * ACK comes back through loopback at once; bounded by 2 s). */
static uint64_t acked_after(struct sockdiag *d, const struct flowtab_key *k,
			    uint64_t want)
{
	uint64_t acked = 0;

	for (int i = 0; i < 200; i++) {
		assert_int_equal(sockdiag_acked(d, k, &acked), 0);
		if (acked >= want)
			break;
		(void)poll(NULL, 0, 10);
	}
	return acked;
}

static void one_family(int family)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct flowtab_key k, gone;
	struct sockdiag *d;
	char err[256], buf[300];
	uint64_t acked = 0;
	int l, c, s;

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr =
		    htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	l = socket(family, SOCK_STREAM, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&ss,
			      family == AF_INET ? sizeof(struct sockaddr_in)
						: sizeof(struct sockaddr_in6)),
			 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&ss, &sl), 0);
	c = socket(family, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&ss, sl), 0);
	s = accept(l, NULL, NULL);
	assert_true(s >= 0);
	key_of(c, family, &k);

	d = sockdiag_open(err, sizeof(err));
	assert_non_null(d);
	assert_int_equal(acked_after(d, &k, 1), 1); /* the SYN */
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(write(c, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(acked_after(d, &k, 1 + sizeof(buf)), 1 + sizeof(buf));
	/* the other end of the same connection is another socket, which
	 * sent nothing (its SYN-ACK is counted or not, by kernel) */
	key_of(s, family, &gone);
	assert_int_equal(sockdiag_acked(d, &gone, &acked), 0);
	assert_true(acked <= 1);
	gone = k;
	gone.dport = (uint16_t)(k.dport + 1);
	assert_int_equal(sockdiag_acked(d, &gone, &acked), -ENOENT);
	sockdiag_close(d);
	close(c);
	close(s);
	close(l);
}

static void acked_bytes_of_one_socket_v4(void **state)
{
	(void)state;
	one_family(AF_INET);
}

static void acked_bytes_of_one_socket_v6(void **state)
{
	(void)state;
	one_family(AF_INET6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(acked_bytes_of_one_socket_v4),
	    cmocka_unit_test(acked_bytes_of_one_socket_v6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
