// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the held replaced upstreams (fence/held.c): a hold is
 * never one of the config's upstreams, a later end wins, at most HELD_MAX
 * are kept (the one ending first goes), ended holds expire, a reload
 * inherits them, the file round-trips and a foreign one is refused whole,
 * and the origin line of rule 2 parses back to its endpoint. */
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

#include "base/monotime.h"
#include "base/netaddr.h"
#include "config/config.h"
#include "fence/fwrules.h"
#include "fence/held.h"

#define BOOT "00000000-0000-0000-0000-000000000000"

static struct config_endpoint ep(const char *s)
{
	struct config_endpoint e = {0};
	const char *why = NULL;

	assert_int_equal(
	    netaddr_parse_endpoint(s, true, 53, &e.sa, &e.len, &why), 0);
	return e;
}

static void upstreams_are_never_held(void **state)
{
	struct config cfg = {0};
	struct config_endpoint up = ep("198.18.0.1:53"),
			       old = ep("198.18.0.1:5300");

	(void)state;
	cfg.upstreams = &up;
	cfg.n_upstreams = 1;
	assert_int_equal(held_add(&cfg, &up, 100), 0);
	assert_int_equal(cfg.n_held, 0);
	/* the same address on another port is another endpoint */
	assert_int_equal(held_add(&cfg, &old, 100), 1);
	assert_int_equal(cfg.n_held, 1);
	free(cfg.held);
}

static void a_later_end_wins(void **state)
{
	struct config cfg = {0};
	struct config_endpoint a = ep("198.18.0.9:5300");

	(void)state;
	assert_int_equal(held_add(&cfg, &a, 200), 1);
	assert_int_equal(held_add(&cfg, &a, 100), 0);
	assert_int_equal(cfg.held[0].until, 200);
	assert_int_equal(held_add(&cfg, &a, 300), 1);
	assert_int_equal(cfg.n_held, 1);
	assert_int_equal(cfg.held[0].until, 300);
	assert_int_equal(held_next(&cfg), 300);
	free(cfg.held);
}

static void bounded_the_first_to_end_goes(void **state)
{
	struct config cfg = {0};
	char s[64];

	(void)state;
	for (int i = 0; i < HELD_MAX; i++) {
		snprintf(s, sizeof(s), "198.18.0.%d:5300", i + 1);
		struct config_endpoint e = ep(s);
		/* 198.18.0.3 ends first */
		assert_int_equal(held_add(&cfg, &e, i == 2 ? 50 : 100 + i), 1);
	}
	struct config_endpoint n = ep("[2001:db8::9]:53");
	assert_int_equal(held_add(&cfg, &n, 500), 1);
	assert_int_equal(cfg.n_held, HELD_MAX);
	for (size_t i = 0; i < cfg.n_held; i++) {
		struct config_endpoint gone = ep("198.18.0.3:5300");

		assert_false(netaddr_endpoint_equal(&cfg.held[i].e, &gone));
	}
	assert_int_equal(held_next(&cfg), 100);
	free(cfg.held);
}

static void ended_holds_expire(void **state)
{
	struct config cfg = {0};
	struct config_endpoint a = ep("198.18.0.9:5300"),
			       b = ep("[2001:db8::9]:53");
	char list[256];

	(void)state;
	assert_int_equal(held_add(&cfg, &a, 100), 1);
	assert_int_equal(held_add(&cfg, &b, 200), 1);
	assert_int_equal(held_expire(&cfg, 99, list, sizeof(list)), 0);
	assert_string_equal(list, "");
	assert_int_equal(held_expire(&cfg, 100, list, sizeof(list)), 1);
	assert_string_equal(list, "198.18.0.9:5300");
	assert_int_equal(cfg.n_held, 1);
	assert_int_equal(held_next(&cfg), 200);
	assert_int_equal(held_expire(&cfg, 500, list, sizeof(list)), 1);
	assert_string_equal(list, "[2001:db8::9]:53");
	assert_int_equal(held_next(&cfg), 0);
	free(cfg.held);
}

static void a_reload_inherits_less_its_upstreams(void **state)
{
	struct config old = {0}, cfg = {0};
	struct config_endpoint a = ep("198.18.0.9:5300"),
			       b = ep("198.18.0.8:53");

	(void)state;
	assert_int_equal(held_add(&old, &a, 100), 1);
	assert_int_equal(held_add(&old, &b, 200), 1);
	cfg.upstreams = &b; /* named again */
	cfg.n_upstreams = 1;
	assert_int_equal(held_inherit(&old, &cfg), 0);
	assert_int_equal(cfg.n_held, 1);
	assert_true(netaddr_endpoint_equal(&cfg.held[0].e, &a));
	assert_int_equal(cfg.held[0].until, 100);
	free(old.held);
	free(cfg.held);
}

static void the_file_round_trips(void **state)
{
	char dir[] = "/tmp/test_held.XXXXXX", err[512], path[600];
	struct config cfg = {0}, back = {0};
	struct config_endpoint a = ep("198.18.0.9:5300"),
			       b = ep("[2001:db8::9]:53");
	uint64_t now = monotime_s();

	(void)state;
	assert_non_null(mkdtemp(dir));
	cfg.state_dir = dir;
	back.state_dir = dir;
	assert_int_equal(held_add(&cfg, &a, now + 100), 1);
	assert_int_equal(held_add(&cfg, &b, now + 2), 1);
	assert_int_equal(held_save(&cfg, -1, 0, 0, err, sizeof(err)), 0);
	/* b's hold has ended when it is read back */
	assert_int_equal(held_load(&back, getuid(), now + 2, err, sizeof(err)),
			 0);
	assert_int_equal(back.n_held, 1);
	assert_true(netaddr_endpoint_equal(&back.held[0].e, &a));
	assert_int_equal(back.held[0].until, now + 100);
	/* an empty list removes the file; a missing file holds nothing */
	cfg.n_held = 0;
	assert_int_equal(held_save(&cfg, -1, 0, 0, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, HELD_FILE);
	assert_int_equal(access(path, F_OK), -1);
	back.n_held = 0;
	assert_int_equal(held_load(&back, getuid(), now, err, sizeof(err)), 0);
	assert_int_equal(back.n_held, 0);
	assert_int_equal(rmdir(dir), 0);
	free(cfg.held);
	free(back.held);
}

static int parse(struct config *cfg, const char *text, uint64_t now)
{
	char err[256];

	return held_parse(cfg, text, strlen(text), BOOT, now, err, sizeof(err));
}

static void a_foreign_file_is_refused_whole(void **state)
{
	static const char *const bad[] = {
	    "dnsfence-held 2\nboot " BOOT "\nend\n",
	    "dnsfence-held 1\nboot 11111111-0000-0000-0000-000000000000\nend\n",
	    "dnsfence-held 1\nboot " BOOT "\nH 198.18.0.9:5300 500\n",
	    "dnsfence-held 1\nboot " BOOT "\nH 198.18.0.9 500\nend\n",
	    "dnsfence-held 1\nboot " BOOT "\nH 198.18.0.9:5300 500 x\nend\n",
	    "dnsfence-held 1\nboot " BOOT "\nend\nH 198.18.0.9:5300 500\n",
	    "",
	};
	struct config cfg = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&cfg, bad[i], 100), -EINVAL);
		assert_int_equal(cfg.n_held, 0);
	}
	/* a hold longer than a drain's is cut to HELD_SECONDS */
	assert_int_equal(parse(&cfg,
			       "dnsfence-held 1\nboot " BOOT
			       "\nH 198.18.0.9:5300 99999999\nend\n",
			       100),
			 0);
	assert_int_equal(cfg.n_held, 1);
	assert_int_equal(cfg.held[0].until, 100 + HELD_SECONDS);
	free(cfg.held);
}

static void origin_lines_parse_back(void **state)
{
	struct config_endpoint e = {0}, want = ep("198.18.0.1:5300"),
			       want6 = ep("[2001:db8::1]:53");

	(void)state;
	assert_true(fw_rules_origin_of(
	    "-A DNSFENCE-OUT -m conntrack --ctorigsrc 198.18.0.1 "
	    "--ctorigsrcport 5300 -m mark --mark 0x64000000 -j ACCEPT",
	    &e));
	assert_true(netaddr_endpoint_equal(&e, &want));
	assert_true(fw_rules_origin_of(
	    "-A DNSFENCE-OUT -m conntrack --ctorigsrc 2001:db8::1 "
	    "--ctorigsrcport 53 -m mark --mark 0x64000000 -j ACCEPT",
	    &e));
	assert_true(netaddr_endpoint_equal(&e, &want6));
	/* the NFLOG and DROP lines of the same match, and other rules */
	assert_false(fw_rules_origin_of(
	    "-A DNSFENCE-OUT -m conntrack --ctorigsrc 198.18.0.1 "
	    "--ctorigsrcport 5300 -j DROP",
	    &e));
	assert_false(fw_rules_origin_of(
	    "-A DNSFENCE-OUT -m conntrack --ctorigdst 198.18.0.1 -m mark "
	    "--mark 0x64000000 -j ACCEPT",
	    &e));
	assert_false(fw_rules_origin_of(
	    "-A DNSFENCE-OUT -m conntrack --ctorigsrc 198.18.0.1 "
	    "--ctorigsrcport 0 -m mark --mark 0x64000000 -j ACCEPT",
	    &e));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(upstreams_are_never_held),
	    cmocka_unit_test(a_later_end_wins),
	    cmocka_unit_test(bounded_the_first_to_end_goes),
	    cmocka_unit_test(ended_holds_expire),
	    cmocka_unit_test(a_reload_inherits_less_its_upstreams),
	    cmocka_unit_test(the_file_round_trips),
	    cmocka_unit_test(a_foreign_file_is_refused_whole),
	    cmocka_unit_test(origin_lines_parse_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
