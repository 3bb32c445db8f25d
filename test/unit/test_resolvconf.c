// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of resolvconf_read: which nameserver lines become upstreams
 * (bare IPv4/IPv6 addresses, port 53, in file order, once each) and which
 * are skipped (comments, other keywords, an IPv6 zone, a port, our own
 * listen addresses), a missing file, and lines longer than the buffer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/netaddr.h"
#include "config/resolvconf.h"

static char path[64];

static void write_file(const char *text);
static struct config_endpoint endpoint(const char *s);
static void expect_read(const struct config_endpoint *skip, size_t nskip,
			const char *const *want);

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static struct config_endpoint endpoint(const char *s)
{
	struct config_endpoint e;
	const char *why = "";

	memset(&e, 0, sizeof(e));
	if (netaddr_parse_endpoint(s, true, 0, &e.sa, &e.len, &why) != 0)
		fail_msg("%s: %s", s, why);
	return e;
}

/* resolvconf_read of path gives exactly want (NULL-terminated, as
 * "addr:port" text), in that order. */
static void expect_read(const struct config_endpoint *skip, size_t nskip,
			const char *const *want)
{
	struct config_endpoint *got = NULL;
	char buf[NETADDR_ENDPOINT_STRLEN];
	size_t n = 0, i;

	assert_int_equal(resolvconf_read(path, skip, nskip, &got, &n), 0);
	for (i = 0; want[i] != NULL; i++) {
		if (i >= n)
			fail_msg("only %zu nameservers, want %s next", n,
				 want[i]);
		netaddr_format_endpoint((const struct sockaddr *)&got[i].sa,
					buf, sizeof(buf));
		if (strcmp(buf, want[i]) != 0)
			fail_msg("nameserver %zu: %s, want %s", i, buf,
				 want[i]);
	}
	if (n != i)
		fail_msg("%zu nameservers, want %zu", n, i);
	free(got);
}

static void nameserver_lines_in_order(void **state)
{
	static const char *const want[] = {
	    "198.18.0.53:53", "[2001:db8::53]:53", "198.18.0.54:53", NULL};

	(void)state;
	write_file("nameserver 198.18.0.53\n"
		   "nameserver\t2001:db8::53  \n"
		   "nameserver 198.18.0.54 trailing words\r\n");
	expect_read(NULL, 0, want);
}

static void comments_and_other_keywords_skipped(void **state)
{
	static const char *const want[] = {"198.18.0.1:53", NULL};

	(void)state;
	write_file("# nameserver 198.18.0.9\n"
		   "; nameserver 198.18.0.8\n"
		   "search example.test\n"
		   "options ndots:5 nameserver 198.18.0.7\n"
		   "nameservers 198.18.0.6\n"
		   "nameserver\n"
		   "\n"
		   "   nameserver 198.18.0.1\n");
	expect_read(NULL, 0, want);
}

static void zone_port_and_names_skipped(void **state)
{
	static const char *const want[] = {"[fe80::1]:53", NULL};

	(void)state;
	write_file("nameserver fe80::2%eth0\n"
		   "nameserver 198.18.0.1:5353\n"
		   "nameserver [2001:db8::1]:53\n"
		   "nameserver [2001:db8::2]\n"
		   "nameserver dns.example.test\n"
		   "nameserver 198.18.0.300\n"
		   "nameserver fe80::1\n");
	expect_read(NULL, 0, want);
}

static void duplicates_and_own_addresses_skipped(void **state)
{
	/* Our listeners on any port: the address alone is compared. */
	const struct config_endpoint own[] = {endpoint("127.0.0.1:53"),
					      endpoint("[::1]:5353")};
	static const char *const want[] = {"127.0.0.53:53", "198.18.0.1:53",
					   NULL};

	(void)state;
	write_file("nameserver 127.0.0.1\n"
		   "nameserver ::1\n"
		   "nameserver 127.0.0.53\n"
		   "nameserver 198.18.0.1\n"
		   "nameserver 198.18.0.1\n"
		   "nameserver 127.0.0.53\n");
	expect_read(own, 2, want);
}

static void only_own_addresses_is_empty(void **state)
{
	const struct config_endpoint own[] = {endpoint("127.0.0.1:53")};
	static const char *const none[] = {NULL};

	(void)state;
	write_file("nameserver 127.0.0.1\n");
	expect_read(own, 1, none);
	write_file("");
	expect_read(NULL, 0, none);
}

static void missing_file_is_errno(void **state)
{
	struct config_endpoint *got = (struct config_endpoint *)&got;
	size_t n = 7;

	(void)state;
	assert_int_equal(
	    resolvconf_read("/nonexistent/resolv.conf", NULL, 0, &got, &n),
	    -ENOENT);
	assert_null(got);
	assert_int_equal(n, 0);
}

/* A line longer than the buffer is judged by its start; its tail is not
 * read as a line of its own (here, a comment whose tail would otherwise
 * start with "nameserver"). The last line needs no newline. */
static void over_long_lines(void **state)
{
	static const char *const want[] = {"198.18.0.2:53", "198.18.0.3:53",
					   NULL};
	size_t pad = RESOLVCONF_LINE_MAX - 2;
	char *text = malloc(4 * RESOLVCONF_LINE_MAX);
	size_t o = 0;

	(void)state;
	assert_non_null(text);
	text[o++] = '#';
	memset(text + o, ' ', pad);
	o += pad;
	o += (size_t)sprintf(text + o, "nameserver 198.18.0.66\n");
	o += (size_t)sprintf(text + o, "nameserver 198.18.0.2 ");
	memset(text + o, 'x', 2 * RESOLVCONF_LINE_MAX);
	o += 2 * RESOLVCONF_LINE_MAX - 1;
	o += (size_t)sprintf(text + o, "\nnameserver 198.18.0.3");
	write_file(text);
	free(text);
	expect_read(NULL, 0, want);
}

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_resolvconf.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(nameserver_lines_in_order),
	    cmocka_unit_test(comments_and_other_keywords_skipped),
	    cmocka_unit_test(zone_port_and_names_skipped),
	    cmocka_unit_test(duplicates_and_own_addresses_skipped),
	    cmocka_unit_test(only_own_addresses_is_empty),
	    cmocka_unit_test(missing_file_is_errno),
	    cmocka_unit_test(over_long_lines),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
