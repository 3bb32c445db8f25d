// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of config: every rejection names the exact key path, the
 * defaults are those of DESIGN.md, env overrides apply, the resolv.conf
 * default skips our own addresses, and config_to_json round-trips. No
 * test reads a file outside the temporary ones it writes. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "config/configjson.h"

static char resolv_path[64];  /* a resolv.conf naming 198.18.0.53 */
static char empty_resolv[64]; /* one naming only our own addresses */
static char err[512];

static int write_temp(char *path, size_t cap, const char *text);
static struct config *parse_ok(const char *json, const struct config_env *e);
static void expect_err(const char *json, const struct config_env *e,
		       const char *want);
static char *endpoint_text(const struct config_endpoint *ep);
static void round_trip(const char *json, const struct config_env *e);

static int write_temp(char *path, size_t cap, const char *text)
{
	int fd;

	snprintf(path, cap, "/tmp/test_config.XXXXXX");
	if ((fd = mkstemp(path)) < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static struct config *parse_ok(const char *json, const struct config_env *e)
{
	struct config_env def = {NULL, NULL, resolv_path, NULL, NULL};
	struct config *c = NULL;
	int rc = config_parse(json, strlen(json), e ? e : &def, &c, err,
			      sizeof(err));

	if (rc != 0)
		fail_msg("config_parse(%s): %d %s", json, rc, err);
	return c;
}

/* The message must start with want (key path and reason). */
static void expect_err(const char *json, const struct config_env *e,
		       const char *want)
{
	struct config_env def = {NULL, NULL, resolv_path, NULL, NULL};
	struct config *c = NULL;
	int rc = config_parse(json, strlen(json), e ? e : &def, &c, err,
			      sizeof(err));

	if (rc != -EINVAL)
		fail_msg("%s: rc %d, want -EINVAL", json, rc);
	assert_null(c);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("%s:\n got  \"%s\"\n want \"%s...\"", json, err, want);
}

static char *endpoint_text(const struct config_endpoint *ep)
{
	static char buf[NETADDR_ENDPOINT_STRLEN];

	netaddr_format_endpoint((const struct sockaddr *)&ep->sa, buf,
				sizeof(buf));
	return buf;
}

/* to_json of the parse parses again to an equal config, and prints the
 * same text again. */
static void round_trip(const char *json, const struct config_env *e)
{
	struct config *a = parse_ok(json, e), *b;
	char *t1 = config_to_json(a), *t2;

	assert_non_null(t1);
	b = parse_ok(t1, e);
	assert_true(config_equal(a, b));
	t2 = config_to_json(b);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	config_free(a);
	config_free(b);
}

static void test_defaults_are_those_of_the_design(void **state)
{
	struct config *c = parse_ok("{}", NULL);

	(void)state;
	assert_int_equal(c->n_listen, 2);
	assert_string_equal(endpoint_text(&c->listen[0]), "127.0.0.1:53");
	assert_string_equal(endpoint_text(&c->listen[1]), "[::1]:53");
	assert_int_equal(c->n_upstreams, 1);
	assert_string_equal(endpoint_text(&c->upstreams[0]), "198.18.0.53:53");
	assert_int_equal(c->n_allow, 0);
	assert_int_equal(c->n_ecosystems, 0);
	assert_int_equal(c->deny_rcode, CONFIG_DENY_NXDOMAIN);
	assert_string_equal(c->set4, "dnsfence4");
	assert_string_equal(c->set6, "dnsfence6");
	assert_int_equal(c->maxelem, 65536);
	assert_int_equal(c->ttl_min, 60);
	assert_int_equal(c->ttl_max, 86400);
	assert_int_equal(c->n_ports, 2);
	assert_int_equal(c->ports[0].proto, IPPROTO_TCP);
	assert_int_equal(c->ports[0].first, 80);
	assert_int_equal(c->ports[0].last, 80);
	assert_int_equal(c->ports[1].first, 443);
	assert_int_equal(c->n_allow_cidrs, 0);
	assert_string_equal(c->user, "dnsfence");
	assert_int_equal(c->mode, CONFIG_MODE_ENFORCE);
	assert_int_equal(c->upstream_timeout_ms, 3000);
	assert_int_equal(c->max_inflight, 2048);
	assert_int_equal(c->failure_ttl, 5);
	assert_int_equal(c->serve_stale, 86400);
	assert_int_equal(c->guard_interval, 5);
	assert_int_equal(c->log_level, LOGL_INFO);
	assert_int_equal(c->log_format, LOG_FORMAT_TEXT);
	assert_int_equal(c->n_quic_ports, 1);
	assert_int_equal(c->quic_ports[0].proto, IPPROTO_UDP);
	assert_int_equal(c->quic_ports[0].first, 443);
	config_free(c);
}

static void test_every_key_is_parsed(void **state)
{
	struct config *c = parse_ok(
	    "{\"listen\": [\"198.18.0.1:5353\", \"[2001:db8::1]:53\"],"
	    " \"upstreams\": [\"198.18.0.2\", \"[2001:db8::2]:5300\"],"
	    " \"allow\": [\"Example.COM.\", \"*.pypi.org\", \"example.com\"],"
	    " \"ecosystems\": [\"npm\", \"pypi\", \"npm\"],"
	    " \"deny_rcode\": \"refused\","
	    " \"sets\": {\"ipv4\": \"a4\", \"ipv6\": \"a.6-x_\","
	    " \"maxelem\": 1000},"
	    " \"ttl\": {\"min\": 1, \"max\": 2147483},"
	    " \"ports\": [\"udp/53\", \"tcp/8000-8100\", \"udp/53\"],"
	    " \"allow_cidrs\": [\"10.1.0.0/16\", \"2001:db8::/32\"],"
	    " \"user\": 1000, \"mode\": \"audit\","
	    " \"upstream_timeout\": 60, \"guard_interval\": 3600,"
	    " \"max_inflight\": 16, \"failure_ttl\": 300,"
	    " \"serve_stale\": 0,"
	    " \"log\": {\"level\": \"debug\", \"format\": \"json\"}}",
	    NULL);

	(void)state;
	assert_int_equal(c->n_listen, 2);
	assert_string_equal(endpoint_text(&c->listen[0]), "198.18.0.1:5353");
	assert_int_equal(c->n_upstreams, 2);
	assert_string_equal(endpoint_text(&c->upstreams[0]), "198.18.0.2:53");
	assert_string_equal(endpoint_text(&c->upstreams[1]),
			    "[2001:db8::2]:5300");
	assert_int_equal(c->n_allow, 2);
	assert_string_equal(c->allow[0], "example.com");
	assert_string_equal(c->allow[1], "*.pypi.org");
	assert_int_equal(c->n_ecosystems, 2);
	assert_int_equal(c->deny_rcode, CONFIG_DENY_REFUSED);
	assert_string_equal(c->set4, "a4");
	assert_string_equal(c->set6, "a.6-x_");
	assert_int_equal(c->maxelem, 1000);
	assert_int_equal(c->ttl_min, 1);
	assert_int_equal(c->ttl_max, 2147483);
	assert_int_equal(c->n_ports, 2);
	assert_int_equal(c->ports[0].proto, IPPROTO_UDP);
	assert_int_equal(c->ports[1].first, 8000);
	assert_int_equal(c->ports[1].last, 8100);
	assert_int_equal(c->n_allow_cidrs, 2);
	assert_string_equal(c->user, "1000");
	assert_int_equal(c->mode, CONFIG_MODE_AUDIT);
	assert_int_equal(c->upstream_timeout_ms, 60000);
	assert_int_equal(c->max_inflight, 16);
	assert_int_equal(c->failure_ttl, 300);
	assert_int_equal(c->serve_stale, 0);
	assert_int_equal(c->guard_interval, 3600);
	assert_int_equal(c->log_level, LOGL_DEBUG);
	assert_int_equal(c->log_format, LOG_FORMAT_JSON);
	config_free(c);
}

static void test_json_syntax_errors_give_line_and_column(void **state)
{
	(void)state;
	expect_err("", NULL, "line 1, column 1: parse error");
	expect_err("{\n  \"mode\": \"off\",\n  oops\n}", NULL,
		   "line 3, column ");
	expect_err("{} {}", NULL, "line 1, column 4: parse error");
	expect_err("{\"metrics\": \"localhost:9253\"}", NULL,
		   "metrics: \"localhost:9253\": ");
	expect_err("{\"metrics\": \"127.0.0.1\"}", NULL, "metrics: ");
	expect_err("{\"metrics\": 9253}", NULL,
		   "metrics: expected \"addr:port\" or null");
	expect_err("{\"metrics\": \"127.0.0.1:53\"}", NULL,
		   "metrics: \"127.0.0.1:53\" is also a `listen` endpoint");
	expect_err("{\"state_dir\": \"run/x\"}", NULL,
		   "state_dir: expected an absolute path");
	expect_err("{\"state_dir\": \"/\"}", NULL,
		   "state_dir: expected an absolute path");
	expect_err("{\"allow\": [\"a.com\\u0000evil\"]}", NULL,
		   "line 1, column 18: parse error");
	expect_err("[]", NULL, "top level: expected a JSON object");
	expect_err("\"mode\"", NULL, "top level: expected a JSON object");
	expect_err("null", NULL, "top level: expected a JSON object");
}

static void test_unknown_and_repeated_keys(void **state)
{
	(void)state;
	expect_err("{\"modes\": \"off\"}", NULL, "modes: unknown key");
	expect_err("{\"ttl\": {\"maxx\": 5}}", NULL, "ttl.maxx: unknown key");
	expect_err("{\"sets\": {\"ipv4\": \"a\", \"IPv6\": \"b\"}}", NULL,
		   "sets.IPv6: unknown key");
	expect_err("{\"log\": {\"lvl\": \"info\"}}", NULL,
		   "log.lvl: unknown key");
	expect_err("{\"Mode\": \"off\"}", NULL, "Mode: unknown key");
	expect_err("{\"mode\": \"off\", \"mode\": \"enforce\"}", NULL,
		   "mode: given twice");
	expect_err("{\"ttl\": {\"min\": 5, \"min\": 6}}", NULL,
		   "ttl.min: given twice");
	expect_err("{\"ttl\": {}, \"ttl\": {}}", NULL, "ttl: given twice");
	expect_err("{\"ttl\": 5}", NULL, "ttl: expected an object");
	expect_err("{\"sets\": [\"a\"]}", NULL, "sets: expected an object");
	expect_err("{\"log\": null}", NULL, "log: expected an object");
}

static void test_integers_are_checked(void **state)
{
	(void)state;
	expect_err("{\"ttl\": {\"min\": \"60\"}}", NULL,
		   "ttl.min: expected an integer");
	expect_err("{\"ttl\": {\"min\": 1.5}}", NULL,
		   "ttl.min: expected an integer");
	expect_err("{\"ttl\": {\"min\": true}}", NULL,
		   "ttl.min: expected an integer");
	expect_err("{\"ttl\": {\"min\": -1}}", NULL,
		   "ttl.min: must be between");
	expect_err("{\"ttl\": {\"min\": 0}}", NULL, "ttl.min: must be between");
	expect_err("{\"ttl\": {\"max\": 2147484}}", NULL,
		   "ttl.max: must be between");
	expect_err("{\"ttl\": {\"max\": 1e300}}", NULL,
		   "ttl.max: must be between");
	expect_err("{\"ttl\": {\"max\": 1e999}}", NULL,
		   "ttl.max: expected an integer");
	expect_err("{\"ttl\": {\"min\": 100, \"max\": 50}}", NULL,
		   "ttl.min: 100 is greater than ttl.max (50)");
	expect_err("{\"sets\": {\"maxelem\": 0}}", NULL,
		   "sets.maxelem: must be between");
	expect_err("{\"sets\": {\"maxelem\": 2147483648}}", NULL,
		   "sets.maxelem: must be between");
	expect_err("{\"upstream_timeout\": 61}", NULL,
		   "upstream_timeout: must be between");
	expect_err("{\"upstream_timeout\": 0}", NULL,
		   "upstream_timeout: must be between");
	expect_err("{\"max_inflight\": 15}", NULL,
		   "max_inflight: must be between");
	expect_err("{\"max_inflight\": 60001}", NULL,
		   "max_inflight: must be between");
	expect_err("{\"failure_ttl\": 0}", NULL,
		   "failure_ttl: must be between");
	expect_err("{\"serve_stale\": 604801}", NULL,
		   "serve_stale: must be between");
	expect_err("{\"guard_interval\": 3601}", NULL,
		   "guard_interval: must be between");
	expect_err("{\"guard_interval\": 2.5}", NULL,
		   "guard_interval: expected an integer");
}

static void test_bad_names_are_rejected(void **state)
{
	char json[600];

	(void)state;
	expect_err("{\"allow\": \"example.com\"}", NULL,
		   "allow: expected an array");
	expect_err("{\"allow\": [\"a.com\", 5]}", NULL,
		   "allow[1]: expected a string");
	expect_err("{\"allow\": [\"a.com\", \"b.com\", \"c.com\", "
		   "\"bad..name\"]}",
		   NULL, "allow[3]: \"bad..name\"");
	expect_err("{\"allow\": [\"\"]}", NULL, "allow[0]: ");
	expect_err("{\"allow\": [\".a.com\"]}", NULL, "allow[0]: ");
	expect_err("{\"allow\": [\"a.com..\"]}", NULL, "allow[0]: ");
	expect_err("{\"allow\": [\"a b.com\"]}", NULL, "allow[0]: ");
	expect_err("{\"allow\": [\"a.*.com\"]}", NULL, "allow[0]: ");
	snprintf(json, sizeof(json), "{\"allow\": [\"%0*d.com\"]}", 64, 0);
	expect_err(json, NULL, "allow[0]: ");
	/* 4 labels of 63 + dots = 255 > 253 */
	snprintf(json, sizeof(json), "{\"allow\": [\"%0*d.%0*d.%0*d.%0*d\"]}",
		 63, 0, 63, 0, 63, 0, 63, 0);
	expect_err(json, NULL, "allow[0]: ");
	/* A preset's name in allow, in any case or with a trailing dot: kept
	 * as "crates" it would be refused when read again. */
	expect_err("{\"allow\": [\"crates\"]}", NULL,
		   "allow[0]: \"crates\" is a single label, and the name of a "
		   "preset");
	expect_err("{\"allow\": [\"crateS\"]}", NULL,
		   "allow[0]: \"crateS\" is a single label");
	expect_err("{\"allow\": [\"NPM.\"]}", NULL,
		   "allow[0]: \"NPM.\" is a single label");
	/* An address with a trailing dot: kept as "198.18.0.1" it would be
	 * refused as an address when read again. */
	expect_err("{\"allow\": [\"198.18.0.1.\"]}", NULL,
		   "allow[0]: \"198.18.0.1.\" is an address, not a name: "
		   "addresses go in \"allow_cidrs\" (\"198.18.0.1/32\")");
	expect_err("{\"ecosystems\": [\"npm\", \"foo\"]}", NULL,
		   "ecosystems[1]: unknown preset \"foo\" (known: npm, pypi");
	expect_err("{\"ecosystems\": [1]}", NULL,
		   "ecosystems[0]: expected a string");
	expect_err("{\"qtypes\": [\"LOC\", \"TYPE65280\"]}", NULL,
		   "qtypes[1]: \"TYPE65280\" is a meta, reserved or "
		   "private-use type: never forwarded");
	expect_err("{\"qtypes\": [\"TSIG\"]}", NULL,
		   "qtypes[0]: \"TSIG\" is a meta");
	expect_err("{\"qtypes\": [\"WHAT\"]}", NULL,
		   "qtypes[0]: \"WHAT\" is not a query type");
}

static void test_bad_ports_and_cidrs_are_rejected(void **state)
{
	(void)state;
	expect_err("{\"ports\": [\"tcp/99999\"]}", NULL, "ports[0]: ");
	expect_err("{\"ports\": [\"tcp/80\", \"tcp/0\"]}", NULL, "ports[1]: ");
	expect_err("{\"ports\": [\"sctp/1\"]}", NULL, "ports[0]: ");
	expect_err("{\"ports\": [\"tcp/90-80\"]}", NULL,
		   "ports[0]: \"tcp/90-80\": range is backwards");
	expect_err("{\"ports\": [\"tcp/\"]}", NULL, "ports[0]: ");
	expect_err("{\"ports\": [\"TCP/80\"]}", NULL, "ports[0]: ");
	expect_err("{\"ports\": [\"tcp/80-\"]}", NULL, "ports[0]: ");
	expect_err("{\"ports\": [\"tcp/+80\"]}", NULL, "ports[0]: ");
	expect_err("{\"ports\": [\"tcp/80-90-100\"]}", NULL, "ports[0]: ");
	expect_err("{\"ports\": [80]}", NULL, "ports[0]: expected a string");
	expect_err("{\"allow_cidrs\": [\"10.0.0.1/8\"]}", NULL,
		   "allow_cidrs[0]: \"10.0.0.1/8\": host bits set");
	expect_err("{\"allow_cidrs\": [\"10.0.0.0/33\"]}", NULL,
		   "allow_cidrs[0]: ");
	expect_err("{\"allow_cidrs\": [\"10.0.0.0/8\", \"nope\"]}", NULL,
		   "allow_cidrs[1]: ");
	expect_err("{\"name_check\": {\"quic_ports\": [\"tcp/443\"]}}", NULL,
		   "name_check.quic_ports[0]: \"tcp/443\": QUIC runs over udp");
	expect_err("{\"name_check\": {\"tls_ports\": [\"udp/443\"]}}", NULL,
		   "name_check.tls_ports[0]: \"udp/443\": only tcp ports are "
		   "checked (QUIC ports go in name_check.quic_ports)");
}

static void test_sets_user_mode_and_choices(void **state)
{
	char json[128];

	(void)state;
	expect_err("{\"sets\": {\"ipv4\": \"\"}}", NULL, "sets.ipv4: ");
	snprintf(json, sizeof(json), "{\"sets\": {\"ipv4\": \"%0*d\"}}", 32, 0);
	expect_err(json, NULL, "sets.ipv4: ");
	expect_err("{\"sets\": {\"ipv4\": \"a b\"}}", NULL, "sets.ipv4: ");
	expect_err("{\"sets\": {\"ipv6\": \"-x\"}}", NULL, "sets.ipv6: ");
	expect_err("{\"sets\": {\"ipv6\": \"a:b\"}}", NULL, "sets.ipv6: ");
	snprintf(json, sizeof(json), "{\"sets\": {\"ipv4\": \"%0*d\"}}", 31, 0);
	config_free(parse_ok(json, NULL)); /* 31 characters: the longest */
	expect_err("{\"sets\": {\"ipv6\": 6}}", NULL,
		   "sets.ipv6: expected a string");
	expect_err("{\"sets\": {\"ipv4\": \"same\", \"ipv6\": \"same\"}}", NULL,
		   "sets.ipv6: same name as sets.ipv4");
	expect_err("{\"deny_rcode\": \"servfail\"}", NULL,
		   "deny_rcode: unknown value \"servfail\"");
	expect_err("{\"deny_rcode\": 3}", NULL, "deny_rcode: expected one of");
	expect_err("{\"mode\": \"Enforce\"}", NULL, "mode: unknown value");
	expect_err("{\"log\": {\"level\": \"warn\"}}", NULL,
		   "log.level: unknown value");
	expect_err("{\"log\": {\"format\": \"xml\"}}", NULL,
		   "log.format: unknown value");
	expect_err("{\"user\": \"\"}", NULL, "user: ");
	expect_err("{\"user\": -1}", NULL, "user: must be between");
	expect_err("{\"user\": 4294967295}", NULL, "user: must be between");
	expect_err("{\"user\": 1.5}", NULL, "user: expected an integer");
	expect_err("{\"user\": true}", NULL, "user: expected a user name");
	expect_err("{\"user\": \"a:b\"}", NULL, "user: ");

	struct config *c = parse_ok("{\"user\": 0}", NULL);
	assert_string_equal(c->user, "0");
	config_free(c);
	c = parse_ok("{\"user\": \"nobody\"}", NULL);
	assert_string_equal(c->user, "nobody");
	config_free(c);
}

static void test_listen_and_upstream_rules(void **state)
{
	(void)state;
	expect_err("{\"listen\": [\"127.0.0.1\"]}", NULL, "listen[0]: ");
	expect_err("{\"listen\": [\"[::1]\"]}", NULL, "listen[0]: ");
	expect_err("{\"listen\": [\"127.0.0.1:53\", \"127.0.0.1:53\"]}", NULL,
		   "listen[1]: \"127.0.0.1:53\" is listed twice");
	expect_err("{\"listen\": []}", NULL, "listen: needs at least one");
	expect_err("{\"listen\": [\"[fe80::1%eth0]:53\"]}", NULL,
		   "listen[0]: ");
	expect_err("{\"upstreams\": [\"1.2.3.4:0\"]}", NULL, "upstreams[0]: ");
	expect_err("{\"upstreams\": [\"1.2.3.4:65536\"]}", NULL,
		   "upstreams[0]: ");
	expect_err("{\"upstreams\": [\"dns.google\"]}", NULL, "upstreams[0]: ");
	expect_err("{\"upstreams\": []}", NULL,
		   "upstreams: needs at least one");
	expect_err(
	    "{\"upstreams\": [\"198.18.0.1\", \"127.0.0.1\"]}", NULL,
	    "upstreams[1]: \"127.0.0.1\" is one of our listen addresses");
	expect_err("{\"listen\": [\"[2001:db8::1]:5353\"], \"upstreams\": "
		   "[\"[2001:db8::1]:5353\"]}",
		   NULL, "upstreams[0]: ");
	expect_err("{\"upstreams\": [\"1.1.1.1\", \"1.1.1.1:53\"]}", NULL,
		   "upstreams[1]: ");

	/* Same address, another port: not a loop. A loopback upstream needs
	 * the user its resolver runs as (anyone may bind its port while it
	 * is free), in output scope with a fence; Docker's 127.0.0.11:53
	 * does not. */
	expect_err("{\"upstreams\": [\"198.18.0.1\", \"[::1]:5353\"]}", NULL,
		   "upstreams: ::1 is a loopback address: while the resolver "
		   "there is down or restarting, any process of this namespace "
		   "can bind its port");
	struct config *c = parse_ok("{\"upstreams\": [\"127.0.0.1:5353\"], "
				    "\"local_upstream_user\": 108}",
				    NULL);
	assert_int_equal(c->n_upstreams, 1);
	assert_true(c->local_upstream_uid_set);
	assert_int_equal(c->local_upstream_uid, 108);
	config_free(c);
	c = parse_ok("{\"upstreams\": [\"127.0.0.1:5353\"], \"mode\": \"off\"}",
		     NULL);
	assert_false(c->local_upstream_uid_set);
	config_free(c);
	c = parse_ok("{\"upstreams\": [\"127.0.0.11\"]}", NULL);
	config_free(c);
	/* With subjects a resolver of the namespace is no subject: its
	 * answers never enter the fence, and need no key. */
	c = parse_ok("{\"upstreams\": [\"127.0.0.53\"], \"listen\": "
		     "[\"127.0.0.1:5353\"], \"subjects\": {\"users\": "
		     "[\"4242\"]}}",
		     NULL);
	config_free(c);
	expect_err("{\"upstreams\": [\"127.0.0.11:5353\"]}", NULL,
		   "upstreams: 127.0.0.11 is a loopback address");
	expect_err("{\"upstreams\": [\"127.0.0.1:5353\"], "
		   "\"local_upstream_user\": \"no-such-user-here\"}",
		   NULL,
		   "local_upstream_user: \"no-such-user-here\": no such user");
	expect_err("{\"upstreams\": [\"127.0.0.1:5353\"], "
		   "\"local_upstream_user\": -1}",
		   NULL, "local_upstream_user: a uid is 0..");
	/* The kernel sends what goes to 0.0.0.0 or :: to a local port that
	 * no rule naming the upstream matches: refused in every scope and
	 * mode, the key or not. */
	expect_err(
	    "{\"upstreams\": [\"0.0.0.0:5300\"], "
	    "\"local_upstream_user\": 108}",
	    NULL,
	    "upstreams: 0.0.0.0 is the unspecified address: what is sent "
	    "there goes to this host's own ports");
	expect_err("{\"upstreams\": [\"[::]:5300\"], \"mode\": \"off\"}", NULL,
		   "upstreams: :: is the unspecified address");
	/* An IPv4-mapped endpoint travels as IPv4: no rule would see it. */
	expect_err("{\"upstreams\": [\"[::ffff:198.18.0.9]:5300\"]}", NULL,
		   "upstreams[0]: \"[::ffff:198.18.0.9]:5300\" is an "
		   "IPv4-mapped IPv6 address: its packets are IPv4, which no "
		   "rule for it would see; write 198.18.0.9:5300");
	expect_err("{\"listen\": [\"[::ffff:127.0.0.1]:53\"]}", NULL,
		   "listen[0]: \"[::ffff:127.0.0.1]:53\" is an IPv4-mapped");
}

static void test_upstreams_default_from_resolv_conf(void **state)
{
	char path[64], want[256];
	struct config_env env = {NULL, NULL, path, NULL, NULL};
	struct config *c;

	(void)state;
	assert_int_equal(write_temp(path, sizeof(path),
				    "# comment\nsearch example.com\n"
				    "nameserver 127.0.0.1\n"
				    "nameserver fe80::1%eth0\n"
				    "nameserver not-an-address\n"
				    "nameserver\t198.18.0.9  # trailing\n"
				    "nameserver 198.18.0.9\n"
				    "nameserver ::1\n"
				    "options ndots:5\n"
				    "nameserver 2001:db8::53\n"),
			 0);
	c = parse_ok("{}", &env);
	assert_int_equal(c->n_upstreams, 2);
	assert_string_equal(endpoint_text(&c->upstreams[0]), "198.18.0.9:53");
	assert_string_equal(endpoint_text(&c->upstreams[1]),
			    "[2001:db8::53]:53");
	config_free(c);

	/* Our listen address on another port is still skipped. */
	c = parse_ok("{\"listen\": [\"198.18.0.9:5300\"], "
		     "\"local_upstream_user\": \"0\"}",
		     &env);
	assert_int_equal(c->n_upstreams, 3);
	assert_string_equal(endpoint_text(&c->upstreams[0]), "127.0.0.1:53");
	config_free(c);
	unlink(path);

	/* A loopback nameserver (systemd-resolved's 127.0.0.53): the
	 * refusal says where the upstream came from. */
	assert_int_equal(
	    write_temp(path, sizeof(path), "nameserver 127.0.0.53\n"), 0);
	snprintf(want, sizeof(want),
		 "upstreams: 127.0.0.53 (from %s: the file sets no "
		 "\"upstreams\") is a loopback address",
		 path);
	expect_err("{}", &env, want);
	unlink(path);

	env.resolv_conf = empty_resolv;
	snprintf(want, sizeof(want),
		 "upstreams: not set, and %s names no nameserver but our own "
		 "listen addresses",
		 empty_resolv);
	expect_err("{}", &env, want);

	env.resolv_conf = "/nonexistent/resolv.conf";
	expect_err("{}", &env, "upstreams: not set, and /nonexistent/");
	/* Not read at all when upstreams is given. */
	c = parse_ok("{\"upstreams\": [\"198.18.0.1\"]}", &env);
	config_free(c);
}

/* resolv.conf names only us (a container entrypoint pointed it here):
 * the original it saved gives the upstreams, if root's and not writable
 * by others; anything else still fails. */
static void test_upstreams_from_saved_original(void **state)
{
	char saved[64], want[256];
	struct config_env env = {NULL, NULL, empty_resolv, saved, NULL};
	struct config *c;

	(void)state;
	assert_int_equal(write_temp(saved, sizeof(saved),
				    "nameserver 127.0.0.1\n"
				    "nameserver 198.18.0.77\n"),
			 0);
	assert_int_equal(chmod(saved, 0600), 0);
	snprintf(want, sizeof(want),
		 "upstreams: not set, and %s names no nameserver but our own "
		 "listen addresses (nor does a saved original in %s)",
		 empty_resolv, saved);
	if (geteuid() == 0) {
		c = parse_ok("{}", &env);
		assert_int_equal(c->n_upstreams, 1);
		assert_string_equal(endpoint_text(&c->upstreams[0]),
				    "198.18.0.77:53");
		config_free(c);
		/* Not when others may write it. */
		assert_int_equal(chmod(saved, 0622), 0);
	}
	expect_err("{}", &env, want);
	/* resolv.conf naming an upstream wins over the saved file. */
	env.resolv_conf = resolv_path;
	c = parse_ok("{}", &env);
	assert_string_equal(endpoint_text(&c->upstreams[0]), "198.18.0.53:53");
	config_free(c);
	unlink(saved);
	env.resolv_conf = empty_resolv;
	snprintf(want, sizeof(want), "upstreams: not set, and %s names",
		 empty_resolv);
	expect_err("{}", &env, want);
}

static void test_env_overrides(void **state)
{
	struct config_env env = {"audit", NULL, resolv_path, NULL, NULL};
	struct config *c;

	(void)state;
	c = parse_ok("{\"mode\": \"off\"}", &env);
	assert_int_equal(c->mode, CONFIG_MODE_AUDIT);
	config_free(c);
	env.mode = "";
	c = parse_ok("{\"mode\": \"off\"}", &env);
	assert_int_equal(c->mode, CONFIG_MODE_OFF);
	config_free(c);
	env.mode = "permissive";
	expect_err("{}", &env, "DNSFENCE_MODE: unknown mode \"permissive\"");
	env.mode = "off"; /* the file's value is still validated */
	expect_err("{\"mode\": \"bogus\"}", &env, "mode: unknown value");

	env.mode = NULL;
	env.extra_hosts = " api.github.com , ,EXAMPLE.com.,\t*.npmjs.org,";
	c = parse_ok("{\"allow\": [\"example.com\"]}", &env);
	assert_int_equal(c->n_allow, 3);
	assert_string_equal(c->allow[0], "example.com");
	assert_string_equal(c->allow[1], "api.github.com");
	assert_string_equal(c->allow[2], "*.npmjs.org");
	config_free(c);
	env.extra_hosts = "";
	c = parse_ok("{}", &env);
	assert_int_equal(c->n_allow, 0);
	config_free(c);
	env.extra_hosts = "good.com,bad..name";
	expect_err("{}", &env, "DNSFENCE_EXTRA_HOSTS[1]: \"bad..name\"");
	env.extra_hosts = "a.com, ,b_c d.com";
	expect_err("{}", &env, "DNSFENCE_EXTRA_HOSTS[2]: ");
}

static void test_round_trip(void **state)
{
	struct config_env env = {"off", "extra.example, *.x.example",
				 resolv_path, NULL, NULL};

	(void)state;
	round_trip("{}", NULL);
	round_trip("{}", &env);
	round_trip("{\"listen\": [\"198.18.0.1:5353\", \"[2001:db8::1]:53\"],"
		   " \"upstreams\": [\"[2001:db8::2]:5300\", \"198.18.0.2\"],"
		   " \"allow\": [\"Example.COM.\", \"*.pypi.org\"],"
		   " \"ecosystems\": [\"npm\"], \"deny_rcode\": \"refused\","
		   " \"sets\": {\"ipv4\": \"a4\", \"ipv6\": \"b6\","
		   " \"maxelem\": 1000}, \"ttl\": {\"min\": 1, \"max\": 2},"
		   " \"ports\": [\"udp/53\", \"tcp/8000-8100\"],"
		   " \"allow_cidrs\": [\"10.1.0.0/16\", \"::/0\"],"
		   " \"user\": 1000, \"mode\": \"audit\","
		   " \"upstream_timeout\": 7, \"guard_interval\": 9,"
		   " \"max_inflight\": 100, \"failure_ttl\": 2,"
		   " \"serve_stale\": 0,"
		   " \"log\": {\"level\": \"error\", \"format\": \"json\"}}",
		   &env);
	round_trip("{\"user\": \"q\\\"uo\\\\te\"}", NULL);
	round_trip("{\"metrics\": \"[::1]:9253\", \"state_dir\": \"/tmp/s/\"}",
		   NULL);
	round_trip("{\"metrics\": null}", NULL);
}

static void test_to_json_prints_every_key(void **state)
{
	static const char *const keys[] = {
	    "\"listen\"",
	    "\"upstreams\"",
	    "\"allow\"",
	    "\"ecosystems\"",
	    "\"deny_rcode\"",
	    "\"sets\"",
	    "\"ipv4\"",
	    "\"ipv6\"",
	    "\"maxelem\"",
	    "\"ttl\"",
	    "\"min\"",
	    "\"max\"",
	    "\"ports\"",
	    "\"allow_cidrs\"",
	    "\"user\"",
	    "\"mode\"",
	    "\"upstream_timeout\"",
	    "\"max_inflight\"",
	    "\"failure_ttl\"",
	    "\"serve_stale\"",
	    "\"metrics\"",
	    "\"state_dir\"",
	    "\"guard_interval\"",
	    "\"log\"",
	    "\"level\"",
	    "\"format\"",
	};
	struct config *c = parse_ok("{}", NULL);
	char *t = config_to_json(c);

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strstr(t, keys[i]) == NULL)
			fail_msg("%s missing in\n%s", keys[i], t);
	}
	assert_null(strchr(t, '\t'));
	free(t);
	config_free(c);
}

static void test_reference_lists_every_key_and_variable(void **state)
{
	static const char *const rows[] = {
	    "| `listen` |",
	    "| `upstreams` |",
	    "| `allow` |",
	    "| `ecosystems` |",
	    "| `deny_rcode` |",
	    "| `sets.ipv4` |",
	    "| `sets.ipv6` |",
	    "| `sets.maxelem` |",
	    "| `ttl.min` |",
	    "| `ttl.max` |",
	    "| `ports` |",
	    "| `allow_cidrs` |",
	    "| `user` |",
	    "| `mode` |",
	    "| `upstream_timeout` |",
	    "| `max_inflight` |",
	    "| `failure_ttl` |",
	    "| `serve_stale` |",
	    "| `guard_interval` |",
	    "| `log.level` |",
	    "| `log.format` |",
	    "| `DNSFENCE_MODE` |",
	    "| `DNSFENCE_EXTRA_HOSTS` |",
	    "| `DNSFENCE_CONFIG` |",
	    "`[\"127.0.0.1:53\", \"[::1]:53\"]`",
	    "`[\"tcp/80\", \"tcp/443\"]`",
	    "`60`",
	    "`86400`",
	    "`65536`",
	    "`\"nxdomain\"`",
	    "`\"enforce\"`",
	    "`\"dnsfence4\"`",
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	config_print_reference(f);
	fclose(f);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (strstr(text, rows[i]) == NULL)
			fail_msg("reference lacks %s", rows[i]);
	}
	free(text);
}

static void test_load_missing_file_and_env_path(void **state)
{
	char path[64];
	struct config *c = NULL;

	(void)state;
	assert_int_equal(
	    config_load("/nonexistent/dnsfence.json", &c, err, sizeof(err)),
	    -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/dnsfence.json"));
	assert_int_equal(write_temp(path, sizeof(path),
				    "{\"upstreams\": [\"198.18.0.1\"], "
				    "\"ttl\": {\"min\": 7}}"),
			 0);
	unsetenv("DNSFENCE_MODE");
	unsetenv("DNSFENCE_EXTRA_HOSTS");
	setenv("DNSFENCE_CONFIG", path, 1);
	assert_int_equal(config_load(NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c->ttl_min, 7);
	config_free(c);
	setenv("DNSFENCE_MODE", "audit", 1);
	assert_int_equal(config_load(path, &c, err, sizeof(err)), 0);
	assert_int_equal(c->mode, CONFIG_MODE_AUDIT);
	config_free(c);
	unsetenv("DNSFENCE_MODE");
	unsetenv("DNSFENCE_CONFIG");
	unlink(path);
}

static int setup(void **state)
{
	(void)state;
	if (write_temp(resolv_path, sizeof(resolv_path),
		       "nameserver 198.18.0.53\n") != 0)
		return -1;
	return write_temp(empty_resolv, sizeof(empty_resolv),
			  "nameserver 127.0.0.1\nnameserver ::1\n");
}

static int teardown(void **state)
{
	(void)state;
	unlink(resolv_path);
	unlink(empty_resolv);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_are_those_of_the_design),
	    cmocka_unit_test(test_every_key_is_parsed),
	    cmocka_unit_test(test_json_syntax_errors_give_line_and_column),
	    cmocka_unit_test(test_unknown_and_repeated_keys),
	    cmocka_unit_test(test_integers_are_checked),
	    cmocka_unit_test(test_bad_names_are_rejected),
	    cmocka_unit_test(test_bad_ports_and_cidrs_are_rejected),
	    cmocka_unit_test(test_sets_user_mode_and_choices),
	    cmocka_unit_test(test_listen_and_upstream_rules),
	    cmocka_unit_test(test_upstreams_default_from_resolv_conf),
	    cmocka_unit_test(test_upstreams_from_saved_original),
	    cmocka_unit_test(test_env_overrides),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_to_json_prints_every_key),
	    cmocka_unit_test(test_reference_lists_every_key_and_variable),
	    cmocka_unit_test(test_load_missing_file_and_env_path),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
