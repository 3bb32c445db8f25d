// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of attrib_explain: each reason, in the order the daemon
 * decides them, with the words the log line carries; attrib_packet's
 * counting: a late answer's ICMP error is no bypass, and the dedup of a
 * bypass from no socket does not swallow a workload uid's; and
 * attrib_why, what `dnsfence why` prints.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/monotime.h"
#include "base/stats.h"
#include "observe/attrib.h"
#include "observe/recent.h"

#define WALL 1700000000 /* 2023-11-14 22:13:20 UTC */

static struct config *cfg_of(const char *cidr);
static struct nflog_pkt tcp_to(const char *prefix, const char *dst,
			       uint16_t port);
static void never_answered(void **state);
static void answered_wrong_port(void **state);
static void answered_expired(void **state);
static void answered_live_but_rejected(void **state);
static void dns_around_the_resolver(void **state);
static void audit_port_53_is_dns(void **state);
static void other_protocols(void **state);
/* The forward scope's source validation: its prefix is the reason,
 * whatever the destination or port. */
static void forged_source(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-source", "198.18.64.1", 53);
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	assert_int_equal(netaddr_parse("198.18.2.6", &p.src), 0);
	assert_int_equal(attrib_explain(c, &p, NULL, 0, WALL, t, sizeof(t)),
			 ATTRIB_SOURCE);
	assert_string_equal(t, "source 198.18.2.6 is not of the fenced "
			       "interface's networks (forged or spoofed)");
	assert_string_equal(attrib_reason_name(ATTRIB_SOURCE), "source");
}

/* Rule 2's copy of an answer to the daemon's question to an upstream
 * from a process's socket here: the prefix is the reason, and the text
 * names the upstream (the packet's source). */
static void answer_from_a_socket_here(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-answer", "198.18.0.2", 40123);
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	assert_int_equal(netaddr_parse("198.18.0.2", &p.src), 0);
	p.has_uid = true;
	p.uid = 4242;
	assert_int_equal(attrib_explain(c, &p, NULL, 0, WALL, t, sizeof(t)),
			 ATTRIB_ANSWERER);
	assert_string_equal(t,
			    "an answer to dnsfence's question to the "
			    "upstream 198.18.0.2 from a socket of this "
			    "namespace that is not local_upstream_user's: a "
			    "process holds the upstream's port (the resolver "
			    "is down, or runs as another user)");
	assert_string_equal(attrib_reason_name(ATTRIB_ANSWERER), "answerer");
}

static void allow_cidrs_wrong_port(void **state);
static void why_explains_and_suggests(void **state);

/* The keys attrib_explain reads: ports (80, 443) and allow_cidrs. */
static struct config *cfg_of(const char *cidr)
{
	static struct config_port ports[] = {{IPPROTO_TCP, 80, 80},
					     {IPPROTO_TCP, 443, 443}};
	static struct netcidr cidrs[1];
	static struct config c;
	const char *why = "";

	memset(&c, 0, sizeof(c));
	c.ports = ports;
	c.n_ports = 2;
	if (cidr != NULL) {
		assert_int_equal(netaddr_parse_cidr(cidr, &cidrs[0], &why), 0);
		c.allow_cidrs = cidrs;
		c.n_allow_cidrs = 1;
	}
	return &c;
}

static struct nflog_pkt tcp_to(const char *prefix, const char *dst,
			       uint16_t port)
{
	struct nflog_pkt p = {.has_addrs = true,
			      .proto = IPPROTO_TCP,
			      .has_ports = true,
			      .sport = 40000,
			      .dport = port};

	snprintf(p.prefix, sizeof(p.prefix), "%s", prefix);
	assert_int_equal(netaddr_parse("198.18.0.2", &p.src), 0);
	assert_int_equal(netaddr_parse(dst, &p.dst), 0);
	return p;
}

static void never_answered(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-block", "198.18.1.11", 80);
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	assert_int_equal(attrib_explain(c, &p, NULL, 0, WALL, t, sizeof(t)),
			 ATTRIB_NEVER);
	assert_string_equal(t, "address was never answered by dnsfence");
}

static void answered_wrong_port(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-block", "198.18.1.10", 22);
	struct recent_info k = {"api.example.com", 10000, 310000};
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	assert_int_equal(attrib_explain(c, &p, &k, 70000, WALL, t, sizeof(t)),
			 ATTRIB_PORT);
	assert_string_equal(t, "port tcp/22 is not in `ports` (address "
			       "answered for api.example.com at 22:12:20)");
}

static void answered_expired(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-block", "198.18.1.10", 443);
	struct recent_info k = {"api.example.com", 10000, 310000};
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	/* now is 400 s after the answer, 100 s after the expiry. */
	assert_int_equal(attrib_explain(c, &p, &k, 410000, WALL, t, sizeof(t)),
			 ATTRIB_EXPIRED);
	assert_string_equal(t, "answered for api.example.com at 22:06:40, "
			       "entry expired at 22:11:40");
	/* The port wins over the expiry: asking again would not let it
	 * through, adding the port (and asking again) would. */
	p.dport = 22;
	assert_int_equal(attrib_explain(c, &p, &k, 410000, WALL, t, sizeof(t)),
			 ATTRIB_PORT);
	assert_string_equal(t, "port tcp/22 is not in `ports` (address "
			       "answered for api.example.com at 22:06:40, "
			       "entry expired at 22:11:40)");
}

static void answered_live_but_rejected(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-block", "198.18.1.10", 443);
	struct recent_info k = {"api.example.com", 10000, 310000};
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	assert_int_equal(attrib_explain(c, &p, &k, 20000, WALL, t, sizeof(t)),
			 ATTRIB_NOTSET);
	assert_non_null(strstr(t, "but not in the set"));
}

/* The forward scope's client sets: live, on an allowed port, and still
 * refused is an address answered to another client ("bind": "client");
 * with "bind": "interfaces" it is the entry removed, as in the output
 * scope. */
static void answered_to_another_client(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-block", "198.18.1.10", 443);
	struct recent_info k = {"api.example.com", 10000, 310000};
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	c->scope = CONFIG_SCOPE_FORWARD;
	assert_true(config_client_sets(c));
	assert_int_equal(attrib_explain(c, &p, &k, 20000, WALL, t, sizeof(t)),
			 ATTRIB_CLIENT);
	assert_string_equal(t, "answered for api.example.com at 22:13:10 to "
			       "another client, not to 198.18.0.2: an answer "
			       "opens its addresses only for the client that "
			       "asked (\"bind\": \"client\")");
	assert_string_equal(attrib_reason_name(ATTRIB_CLIENT), "other_client");
	c->bind_interfaces = true;
	assert_int_equal(attrib_explain(c, &p, &k, 20000, WALL, t, sizeof(t)),
			 ATTRIB_NOTSET);
}

static void dns_around_the_resolver(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-dns", "8.8.8.8", 53);
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	p.proto = IPPROTO_UDP;
	assert_int_equal(attrib_explain(c, &p, NULL, 0, WALL, t, sizeof(t)),
			 ATTRIB_DNS);
	assert_string_equal(t, "DNS to 8.8.8.8 bypassing dnsfence");
}

static void audit_port_53_is_dns(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-audit", "198.18.0.9", 53);
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	assert_int_equal(attrib_explain(c, &p, NULL, 0, WALL, t, sizeof(t)),
			 ATTRIB_DNS);
	p.dport = 80;
	assert_int_equal(attrib_explain(c, &p, NULL, 0, WALL, t, sizeof(t)),
			 ATTRIB_NEVER);
}

static void other_protocols(void **state)
{
	struct config *c = cfg_of(NULL);
	struct nflog_pkt p = tcp_to("dnsfence-block", "198.18.1.10", 0);
	struct recent_info k = {"api.example.com", 10000, 310000};
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	p.proto = IPPROTO_ICMP;
	p.has_ports = false;
	assert_int_equal(attrib_explain(c, &p, &k, 20000, WALL, t, sizeof(t)),
			 ATTRIB_PROTO);
	assert_string_equal(t, "icmp is never allowed (only `ports`)");
}

static void allow_cidrs_wrong_port(void **state)
{
	struct config *c = cfg_of("198.18.5.0/24");
	struct nflog_pkt p = tcp_to("dnsfence-block", "198.18.5.7", 25);
	char t[ATTRIB_TEXT_MAX];

	(void)state;
	assert_int_equal(attrib_explain(c, &p, NULL, 0, WALL, t, sizeof(t)),
			 ATTRIB_PORT);
	assert_string_equal(
	    t, "port tcp/25 is not in `ports` (address in allow_cidrs)");
}

/* attrib_why: what `dnsfence why` prints, from the recent memory. */
static char *why(const struct config *c, const struct recent *rc,
		 const char *arg, int *r)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	*r = attrib_why(c, rc, arg, f);
	fclose(f);
	return out;
}

static void why_explains_and_suggests(void **state)
{
	struct config *c = cfg_of(NULL);
	struct recent *rc = recent_new(16, 60, 3600);
	struct netaddr a;
	char *out;
	int r;

	(void)state;
	assert_non_null(rc);
	assert_int_equal(netaddr_parse("198.18.1.10", &a), 0);
	recent_put(rc, "www.example.com", &a, 300, monotime_ms());
	out = why(c, rc, "198.18.1.10:9999", &r);
	assert_int_equal(r, 0);
	assert_non_null(strstr(out, "198.18.1.10: answered for "
				    "www.example.com at "));
	assert_non_null(strstr(out, "tcp/9999: blocked (port): port "
				    "tcp/9999 is not in `ports`"));
	assert_non_null(strstr(out, "would allow: add \"tcp/9999\" to ports"));
	free(out);
	/* Its entry expired a minute ago: the port is still the reason. */
	assert_int_equal(netaddr_parse("198.18.1.20", &a), 0);
	recent_put(rc, "old.example.com", &a, 60, monotime_ms() - 120000);
	out = why(c, rc, "198.18.1.20:9999", &r);
	assert_int_equal(r, 0);
	assert_non_null(strstr(out, "its set entry expired at"));
	assert_non_null(strstr(out, "tcp/9999: blocked (port): port "
				    "tcp/9999 is not in `ports`"));
	assert_non_null(strstr(out, "would allow: add \"tcp/9999\" to ports, "
				    "then ask dnsfence for old.example.com "
				    "again"));
	free(out);
	out = why(c, rc, "[2001:db8::7]:443", &r);
	assert_int_equal(r, 0);
	assert_non_null(strstr(out, "2001:db8::7: never answered"));
	assert_non_null(strstr(out, "tcp/443: blocked (never_answered)"));
	assert_non_null(strstr(out, "\"2001:db8::7/128\" in allow_cidrs"));
	free(out);
	out = why(c, rc, "198.18.1.10:53", &r);
	assert_non_null(strstr(out, "tcp/53: blocked (dns)"));
	free(out);
	out = why(c, rc, "no such address", &r);
	assert_int_equal(r, -EINVAL);
	free(out);
	recent_free(rc);
}

static void late_answer_is_no_bypass(void **state)
{
	struct config *c = cfg_of(NULL);
	struct attrib *a = attrib_new(c);
	struct nflog_pkt late = tcp_to("dnsfence-dns", "198.18.0.1", 0);
	struct nflog_pkt wl = tcp_to("dnsfence-dns", "198.18.0.1", 53);
	uint64_t dns0 = stats_get(STAT_BLOCKED_DNS);

	(void)state;
	late.proto = IPPROTO_ICMP;
	late.has_ports = false;
	late.has_icmp = true;
	late.icmp_type = 3;
	late.icmp_code = 3;
	attrib_packet(a, &late);
	attrib_packet(a, &late);
	assert_int_equal(stats_get(STAT_LATE_ANSWER), 2);
	assert_int_equal(stats_get(STAT_BLOCKED_DNS), dns0);
	/* the same ICMP from a socket, or another type, is no late answer */
	late.icmp_code = 1;
	attrib_packet(a, &late);
	assert_int_equal(stats_get(STAT_LATE_ANSWER), 2);
	assert_int_equal(stats_get(STAT_BLOCKED_DNS), dns0 + 1);
	wl.proto = IPPROTO_UDP;
	wl.has_uid = true;
	wl.uid = 4242;
	attrib_packet(a, &wl);
	assert_int_equal(stats_get(STAT_BLOCKED_DNS), dns0 + 2);
	attrib_free(a);
}

/* The kernel's own MLDv2 report (ICMPv6 143, no socket), which rule 4
 * drops once setup made the kernel use MLDv1: no blocked flow. The same
 * from a socket, or an MLDv1 report for a group not in the MLD set (a
 * program joined it), is one. */
static void kernel_mld_v2_report_is_no_flow(void **state)
{
	struct config *c = cfg_of(NULL);
	struct attrib *a = attrib_new(c);
	struct nflog_pkt p = tcp_to("dnsfence-block", "ff02::16", 0);
	uint64_t proto0 = stats_get(STAT_BLOCKED_PROTO);

	(void)state;
	assert_int_equal(netaddr_parse("fe80::1", &p.src), 0);
	p.proto = IPPROTO_ICMPV6;
	p.has_ports = false;
	p.has_icmp = true;
	p.icmp_type = 143;
	attrib_packet(a, &p);
	attrib_packet(a, &p);
	assert_int_equal(stats_get(STAT_BLOCKED_PROTO), proto0);
	p.icmp_type = 131;
	attrib_packet(a, &p);
	assert_int_equal(stats_get(STAT_BLOCKED_PROTO), proto0 + 1);
	p.icmp_type = 143;
	p.has_uid = true;
	p.uid = 4242;
	attrib_packet(a, &p);
	assert_int_equal(stats_get(STAT_BLOCKED_PROTO), proto0 + 2);
	attrib_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(why_explains_and_suggests),
	    cmocka_unit_test(never_answered),
	    cmocka_unit_test(answered_wrong_port),
	    cmocka_unit_test(answered_expired),
	    cmocka_unit_test(answered_live_but_rejected),
	    cmocka_unit_test(answered_to_another_client),
	    cmocka_unit_test(dns_around_the_resolver),
	    cmocka_unit_test(audit_port_53_is_dns),
	    cmocka_unit_test(other_protocols),
	    cmocka_unit_test(forged_source),
	    cmocka_unit_test(answer_from_a_socket_here),
	    cmocka_unit_test(allow_cidrs_wrong_port),
	    cmocka_unit_test(late_answer_is_no_bypass),
	    cmocka_unit_test(kernel_mld_v2_report_is_no_flow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
