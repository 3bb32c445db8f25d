// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the output fence for named subjects (no kernel): the
 * exact jumps into DNSFENCE-OUT and DNSFENCE-DNS for a uid, a gid and a
 * cgroup subject, the connmark rules and the loopback switch in the
 * chain, the nat chain's DNAT, the subject keys' errors, and fw_compare
 * finding jumps out of place, a nat chain missing or left behind. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "config/config.h"
#include "fence/firewall.h"
#include "fence/fwsubject.h"

#include "fixtures.h"

#define C "-A DNSFENCE-OUT "
#define SUBJECTS                                                               \
	"{\"upstreams\": [\"198.18.0.1\"], \"subjects\": {\"users\": "         \
	"[\"4242\"], \"groups\": [\"4300\"], \"cgroups\": "                    \
	"[\"/system.slice/agent.service/\"]}}"

struct reports {
	char lines[16][600];
	int n;
};

static void collect(void *arg, const char *line);

static void collect(void *arg, const char *line)
{
	struct reports *r = arg;

	if (r->n < 16)
		snprintf(r->lines[r->n], sizeof(r->lines[0]), "%s", line);
	r->n++;
}

/* The whole restore text and the jumps, as iptables-save prints them. */
static void uid_gid_cgroup_render_their_jumps(void **state)
{
	struct config *c = fixture_config(SUBJECTS);
	struct fw_rules j4 = {0}, j6 = {0}, nat = {0};
	char *v4 = fw_render(c, AF_INET);

	(void)state;
	assert_int_equal(fwsubject_jumps(c, AF_INET, &j4), 0);
	assert_int_equal(j4.n, 5);
	assert_string_equal(j4.v[0], "-A OUTPUT -m owner --uid-owner 4242 -j "
				     "DNSFENCE-OUT");
	assert_string_equal(j4.v[1], "-A OUTPUT -m owner --gid-owner 4300 "
				     "--suppl-groups -j DNSFENCE-OUT");
	assert_string_equal(j4.v[2], "-A OUTPUT -m cgroup --path "
				     "\"/system.slice/agent.service\" -j "
				     "DNSFENCE-OUT");
	/* An orphaned socket's packets, by the connection's connmark. */
	assert_string_equal(j4.v[3], "-A OUTPUT -m owner ! --socket-exists -m "
				     "connmark --mark 0x64000000/0x64000000 "
				     "-j DNSFENCE-OUT");
	assert_string_equal(j4.v[4], "-A OUTPUT -p igmp -j DNSFENCE-OUT");
	assert_int_equal(fwsubject_jumps(c, AF_INET6, &j6), 0);
	assert_int_equal(j6.n, 7);
	assert_string_equal(j6.v[6], "-A OUTPUT -p ipv6-icmp -m icmp6 "
				     "--icmpv6-type 143 -j DNSFENCE-OUT");
	/* OUTPUT's policy is not ours with subjects; connmark first. */
	assert_non_null(v4);
	assert_null(strstr(v4, ":OUTPUT"));
	assert_true(
	    strncmp(v4,
		    "*filter\n:DNSFENCE-OUT - [0:0]\n" C
		    "-m conntrack --ctstate NEW -j CONNMARK --set-xmark "
		    "0x64000000/0x64000000\n",
		    strlen("*filter\n:DNSFENCE-OUT - [0:0]\n" C)) == 0);
	assert_non_null(strstr(v4, C "-m conntrack --ctstate RELATED,"
				     "ESTABLISHED -m connmark --mark "
				     "0x64000000/0x64000000 -j ACCEPT\n" C
				     "-m conntrack --ctstate RELATED,"
				     "ESTABLISHED --ctdir REPLY -j ACCEPT\n"));
	assert_null(strstr(v4, "ESTABLISHED -j ACCEPT"));
	assert_non_null(strstr(v4, C "-o lo -j ACCEPT\n"));
	assert_int_equal(fwsubject_nat_rules(c, AF_INET, &nat), 0);
	assert_int_equal(nat.n, 2);
	assert_string_equal(nat.v[0], "-A DNSFENCE-DNS -p udp -m udp --dport "
				      "53 -j DNAT --to-destination "
				      "127.0.0.1:53");
	fw_rules_free(&nat);
	assert_int_equal(fwsubject_nat_rules(c, AF_INET6, &nat), 0);
	assert_string_equal(nat.v[1], "-A DNSFENCE-DNS -p tcp -m tcp --dport "
				      "53 -j DNAT --to-destination [::1]:53");
	fw_rules_free(&nat);
	/* The redirected flows' own conntrack zone, both protocols. */
	assert_int_equal(fwsubject_zone_rules(c, AF_INET6, &nat), 0);
	assert_int_equal(nat.n, 2);
	assert_string_equal(nat.v[0], "-A DNSFENCE-ZONE -p udp -m udp --dport "
				      "53 -j CT --zone-orig 53");
	assert_string_equal(nat.v[1], "-A DNSFENCE-ZONE -p tcp -m tcp --dport "
				      "53 -j CT --zone-orig 53");
	fw_rules_free(&nat);
	fw_rules_free(&j4);
	fw_rules_free(&j6);
	free(v4);
	config_free(c);
}

/* Without subjects: one plain jump, DROP policy, no nat rules (the name
 * check, which has CONNMARK rules of its own, off). */
static void no_subjects_is_the_whole_namespace(void **state)
{
	struct config *c = fixture_config(
	    "{\"upstreams\": [\"198.18.0.1\"], \"name_check\": {\"mode\": "
	    "\"off\"}}");
	struct fw_rules j = {0}, nat = {0};
	char *v4 = fw_render(c, AF_INET);

	(void)state;
	assert_int_equal(fwsubject_jumps(c, AF_INET, &j), 0);
	assert_int_equal(j.n, 1);
	assert_string_equal(j.v[0], "-A OUTPUT -j DNSFENCE-OUT");
	assert_int_equal(fwsubject_nat_rules(c, AF_INET, &nat), 0);
	assert_int_equal(nat.n, 0);
	assert_int_equal(fwsubject_zone_rules(c, AF_INET, &nat), 0);
	assert_int_equal(nat.n, 0);
	assert_non_null(strstr(v4, ":OUTPUT DROP\n"));
	assert_null(strstr(v4, "CONNMARK"));
	fw_rules_free(&j);
	free(v4);
	config_free(c);
}

/* "loopback": "listener": no blanket loopback accept; named ports. */
static void loopback_listener_keeps_only_named_ports(void **state)
{
	struct config *c = fixture_config(
	    "{\"upstreams\": [\"198.18.0.1\"], \"subjects\": {\"users\": "
	    "[\"4242\"], \"loopback\": \"listener\", \"loopback_ports\": "
	    "[\"tcp/5432\", \"udp/8000-8010\"]}}");
	char *v4 = fw_render(c, AF_INET);

	(void)state;
	assert_null(strstr(v4, C "-o lo -j ACCEPT"));
	assert_non_null(
	    strstr(v4, C "-o lo -p tcp -m tcp --dport 5432 -j ACCEPT\n" C
			 "-o lo -p udp -m udp --dport 8000:8010 -j ACCEPT\n"));
	assert_non_null(strstr(v4, C "-d 127.0.0.1/32 -p udp -m udp --dport "
				     "53 -j ACCEPT"));
	free(v4);
	config_free(c);
}

/* The kernel's text, as iptables-save prints it, with the three tables. */
static char *saved_with(const struct config *c, const char *jumps,
			const char *nat, const char *raw)
{
	char *filter = fw_render(c, AF_INET), *out = NULL;
	size_t skip = strlen("*filter\n");
	int body = (int)(strlen(filter) - skip - strlen("COMMIT\n"));

	assert_true(asprintf(&out,
			     "*filter\n:OUTPUT ACCEPT [0:0]\n%s%.*sCOMMIT\n"
			     "*nat\n:OUTPUT ACCEPT [0:0]\n%sCOMMIT\n"
			     "*raw\n:OUTPUT ACCEPT [0:0]\n%sCOMMIT\n",
			     jumps, body, filter + skip, nat, raw) > 0);
	free(filter);
	return out;
}

/* The three subjects' jumps of one table, to chain CH. */
#define SUBJECT_JUMPS(CH)                                                      \
	"-A OUTPUT -m owner --uid-owner 4242 -j " CH "\n"                      \
	"-A OUTPUT -m owner --gid-owner 4300 --suppl-groups -j " CH "\n"       \
	"-A OUTPUT -m cgroup --path \"/system.slice/agent.service\" -j " CH    \
	"\n"
#define J4                                                                     \
	SUBJECT_JUMPS("DNSFENCE-OUT")                                          \
	"-A OUTPUT -m owner ! --socket-exists -m connmark --mark "             \
	"0x64000000/0x64000000 -j DNSFENCE-OUT\n"                              \
	"-A OUTPUT -p igmp -j DNSFENCE-OUT\n"
#define NAT                                                                    \
	":DNSFENCE-DNS - [0:0]\n" SUBJECT_JUMPS(                               \
	    "DNSFENCE-DNS") "-A DNSFENCE-DNS -p udp -m udp --dport 53 -j "     \
			    "DNAT --to-destination "                           \
			    "127.0.0.1:53\n"                                   \
			    "-A DNSFENCE-DNS -p tcp -m tcp --dport 53 -j "     \
			    "DNAT --to-destination "                           \
			    "127.0.0.1:53\n"
#define RAW                                                                    \
	":DNSFENCE-ZONE - [0:0]\n" SUBJECT_JUMPS(                              \
	    "DNSFENCE-ZONE") "-A DNSFENCE-ZONE -p udp -m udp --dport 53 -j "   \
			     "CT --zone-orig 53\n"                             \
			     "-A DNSFENCE-ZONE -p tcp -m tcp --dport 53 -j "   \
			     "CT --zone-orig 53\n"

static void compare_finds_jumps_and_nat_drift(void **state)
{
	struct config *c = fixture_config(SUBJECTS);
	struct config *whole =
	    fixture_config("{\"upstreams\": [\"198.18.0.1\"]}");
	struct reports r = {0};
	char *ok = saved_with(c, J4, NAT, RAW);
	char *other_first = saved_with(c, "-A OUTPUT -j ACCEPT\n" J4, NAT, RAW);
	char *no_nat = saved_with(c, J4, "", RAW);
	char *no_zone = saved_with(c, J4, NAT, "");
	char *zone_late = saved_with(c, J4, NAT, "-A OUTPUT -j ACCEPT\n" RAW);
	char *stray = saved_with(
	    c, J4 "-A OUTPUT -m owner --uid-owner 7 -j DNSFENCE-OUT\n", NAT,
	    RAW);

	(void)state;
	assert_int_equal(fw_compare(c, AF_INET, ok, collect, &r), 0);
	assert_int_equal(fw_compare(c, AF_INET, other_first, collect, &r), 1);
	assert_non_null(strstr(r.lines[0], "are not its first rules"));
	r.n = 0;
	assert_int_equal(fw_compare(c, AF_INET, no_nat, collect, &r), 1);
	assert_string_equal(r.lines[0], "ipv4: nat chain DNSFENCE-DNS missing");
	r.n = 0;
	assert_int_equal(fw_compare(c, AF_INET, no_zone, collect, &r), 1);
	assert_string_equal(r.lines[0],
			    "ipv4: raw chain DNSFENCE-ZONE missing");
	r.n = 0;
	/* The zone's jumps must come first: a CT rule earlier in raw OUTPUT
	 * would give the flow its template instead. */
	assert_int_equal(fw_compare(c, AF_INET, zone_late, collect, &r), 1);
	assert_non_null(strstr(r.lines[0], "DNSFENCE-ZONE"));
	r.n = 0;
	assert_int_equal(fw_compare(c, AF_INET, stray, collect, &r), 1);
	assert_string_equal(r.lines[0],
			    "ipv4: unexpected jump to DNSFENCE-OUT: -A OUTPUT "
			    "-m owner --uid-owner 7 -j DNSFENCE-OUT");
	/* A whole-namespace config finds the subjects' nat chain left. */
	r.n = 0;
	assert_true(fw_compare(whole, AF_INET, ok, collect, &r) > 0);
	assert_true(r.n >= 2);
	bool left = false;
	for (int i = 0; i < r.n && i < 16; i++)
		left = left || strstr(r.lines[i], "nat chain DNSFENCE-DNS is "
						  "left") != NULL;
	assert_true(left);
	left = false;
	for (int i = 0; i < r.n && i < 16; i++)
		left = left || strstr(r.lines[i], "raw chain DNSFENCE-ZONE is "
						  "left") != NULL;
	assert_true(left);
	free(ok);
	free(other_first);
	free(no_nat);
	free(no_zone);
	free(zone_late);
	free(stray);
	config_free(c);
	config_free(whole);
}

/* The repair: every jump deleted, the wanted ones inserted first. */
static void fixes_delete_every_jump_and_insert_in_order(void **state)
{
	struct fw_rules want = {0};
	struct fw_jumps have = {0};
	char *fixes;

	(void)state;
	fw_rules_push(&want, "-A OUTPUT -m owner --uid-owner 1 -j X");
	fw_rules_push(&want, "-A OUTPUT -p igmp -j X");
	fw_jumps_line(&have, "-A OUTPUT -j ACCEPT", "X");
	fw_jumps_line(&have, "-A OUTPUT -p igmp -j X", "X");
	fw_jumps_line(&have, "-A OUTPUT -j XY", "X");
	fixes = fw_jumps_fixes(&want, &have);
	assert_string_equal(fixes, "-D OUTPUT -p igmp -j X\n"
				   "-I OUTPUT 1 -m owner --uid-owner 1 -j X\n"
				   "-I OUTPUT 2 -p igmp -j X\n");
	free(fixes);
	fw_jumps_free(&have);
	fw_jumps_line(&have, "-A OUTPUT -m owner --uid-owner 1 -j X", "X");
	fw_jumps_line(&have, "-A OUTPUT -p igmp -j X", "X");
	fixes = fw_jumps_fixes(&want, &have);
	assert_string_equal(fixes, "");
	free(fixes);
	fw_jumps_free(&have);
	fw_rules_free(&want);
}

static void expect_error(const char *json, const char *want)
{
	struct config_env env = {NULL, NULL, "/nonexistent/resolv.conf", NULL,
				 NULL};
	struct config *c = NULL;
	char err[512] = "";

	assert_int_equal(
	    config_parse(json, strlen(json), &env, &c, err, sizeof(err)),
	    -EINVAL);
	if (strstr(err, want) == NULL)
		fail_msg("error \"%s\" lacks \"%s\"", err, want);
}

static void subject_keys_say_the_fix(void **state)
{
	(void)state;
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"users\": [\"no-such-user-x\"]}}",
		     "subjects.users[0]: \"no-such-user-x\": no such user "
		     "(create it before setup, or give its uid)");
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"users\": [\"0\"]}}",
		     "is root");
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"groups\": [\"0\"]}}",
		     "gid 0");
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"cgroups\": [\"agent\"]}}",
		     "subjects.cgroups[0]: \"agent\": expected an absolute "
		     "cgroup v2 path");
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"cgroups\": [\"/a b\"]}}",
		     "character ' ' not allowed");
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"cgroups\": [\"/a/../b\"]}}",
		     "dot segment");
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"loopback\": \"listener\"}}",
		     "subjects.loopback: only used with subjects.users");
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"users\": [\"4242\"], "
		     "\"loopback_ports\": [\"tcp/1\"]}}",
		     "only used with \"subjects.loopback\": \"listener\"");
	expect_error("{\"upstreams\": [\"198.18.0.1\"], \"subjects\": "
		     "{\"users\": [\"4242\"]}, \"user\": "
		     "\"4242\"}",
		     "uid 4242 is the daemon's own `user`");
	expect_error(
	    "{\"upstreams\": [\"198.18.0.1\"], \"scope\": \"forward\", "
	    "\"interfaces\": [\"br0\"], "
	    "\"listen\": [\"198.18.0.2:53\"], \"subjects\": {\"users\": "
	    "[\"4242\"]}}",
	    "subjects: only used with \"scope\": \"output\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(uid_gid_cgroup_render_their_jumps),
	    cmocka_unit_test(no_subjects_is_the_whole_namespace),
	    cmocka_unit_test(loopback_listener_keeps_only_named_ports),
	    cmocka_unit_test(compare_finds_jumps_and_nat_drift),
	    cmocka_unit_test(fixes_delete_every_jump_and_insert_in_order),
	    cmocka_unit_test(subject_keys_say_the_fix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
