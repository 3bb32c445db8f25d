// SPDX-License-Identifier: GPL-2.0-or-later
/* The privileged parent's judgement of the DNS process's requests
 * (daemon/setwriter.c, the pure half): an add of an internal or upstream
 * address is refused, a del is never judged by the config (a reload may
 * evict what the new one no longer admits), and a shorten only shortens:
 * it never lengthens a known entry, and on an entry the parent does not
 * know it is an add, so only of an admitted address, clamped to ttl.max. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "base/ipc.h"
#include "base/netaddr.h"
#include "config/config.h"
#include "daemon/setwriter.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_judge),
	    cmocka_unit_test(test_shorten_only_shortens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
