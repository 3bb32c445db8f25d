// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of suggest's collapsing: exact names by default, `*.parent`
 * for SUGGEST_SIBLINGS siblings under one registrable domain, never a
 * public suffix or a wildcard over one (co.uk, github.io), deeper names
 * covered by a chosen wildcard, --min-count, sorted unique output, and
 * an empty input or result; the encoded-label heuristic (hex, base32,
 * base64 labels flagged; words, CDN hostnames and short labels not);
 * the ecosystem presets proposed where two of their hosts (or all, for a
 * smaller preset) were learned, taking only their own hosts; prune of a
 * preset none of whose hosts was used.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/suggest.h"

static void expect(const struct suggest_name *in, size_t n, uint64_t min,
		   const char *const *want, size_t n_want);
static void exact_names_by_default(void **state);
static void three_siblings_collapse(void **state);
static void public_suffix_children_stay_exact(void **state);
static void public_suffix_itself_is_left_out(void **state);
static void wildcard_covers_deeper_names_and_narrower_wildcards(void **state);
static void min_count_filters_before_collapsing(void **state);
static void duplicates_are_merged(void **state);
static void nothing_left_is_an_empty_list(void **state);
static void encoded_labels_are_flagged(void **state);
static void ordinary_labels_are_not_flagged(void **state);
static void presets_take_only_their_hosts(void **state);
static void one_host_does_not_bring_a_preset(void **state);
static void preset_holds_exact_and_wildcard_hosts(void **state);
static void prune_drops_presets_none_of_whose_hosts_used(void **state);
static void diff_names_presets(void **state);

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void expect(const struct suggest_name *in, size_t n, uint64_t min,
		   const char *const *want, size_t n_want)
{
	char **out = NULL;
	size_t n_out = 0;

	assert_int_equal(suggest_collapse(in, n, min, &out, &n_out), 0);
	for (size_t i = 0; i < n_out && i < n_want; i++)
		assert_string_equal(out[i], want[i]);
	assert_int_equal(n_out, n_want);
	suggest_free_list(out, n_out);
}

static void exact_names_by_default(void **state)
{
	static const struct suggest_name in[] = {
	    {"www.example.com", 1}, {"api.example.com", 1}, {"pypi.org", 3}};
	static const char *const want[] = {"api.example.com", "pypi.org",
					   "www.example.com"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void three_siblings_collapse(void **state)
{
	static const struct suggest_name in[] = {{"a.cdn.example.com", 1},
						 {"b.cdn.example.com", 1},
						 {"c.cdn.example.com", 1},
						 {"example.com", 1},
						 {"x.other.org", 1}};
	static const char *const want[] = {"*.cdn.example.com", "example.com",
					   "x.other.org"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void public_suffix_children_stay_exact(void **state)
{
	static const struct suggest_name in[] = {
	    {"alice.github.io", 1}, {"bob.github.io", 1},
	    {"carol.github.io", 1}, {"a.co.uk", 1},
	    {"b.co.uk", 1},	    {"c.co.uk", 1},
	    {"www.shop.co.uk", 1},  {"api.shop.co.uk", 1},
	    {"cdn.shop.co.uk", 1}};
	static const char *const want[] = {
	    "*.shop.co.uk",  "a.co.uk", "alice.github.io", "b.co.uk",
	    "bob.github.io", "c.co.uk", "carol.github.io"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void public_suffix_itself_is_left_out(void **state)
{
	static const struct suggest_name in[] = {
	    {"co.uk", 5}, {"github.io", 5}, {"com", 5}, {"ok.example", 1}};
	static const char *const want[] = {"ok.example"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void wildcard_covers_deeper_names_and_narrower_wildcards(void **state)
{
	static const struct suggest_name in[] = {
	    {"a.example.com", 1},   {"b.example.com", 1},
	    {"c.example.com", 1},   {"x.deep.example.com", 1},
	    {"p.q.example.com", 1}, {"r.q.example.com", 1},
	    {"s.q.example.com", 1}, {"example.com", 1}};
	static const char *const want[] = {"*.example.com", "example.com"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

static void min_count_filters_before_collapsing(void **state)
{
	static const struct suggest_name in[] = {
	    {"a.example.com", 5}, {"b.example.com", 1}, {"c.example.com", 5}};
	static const char *const want[] = {"a.example.com", "c.example.com"};

	(void)state;
	expect(in, N(in), 2, want, N(want));
}

static void nothing_left_is_an_empty_list(void **state)
{
	static const struct suggest_name in[] = {{"a.example.com", 1}};

	(void)state;
	expect(in, N(in), 5, NULL, 0);
	expect(NULL, 0, 1, NULL, 0);
}

static void duplicates_are_merged(void **state)
{
	static const struct suggest_name in[] = {
	    {"a.example.com", 1}, {"a.example.com", 1}, {"a.example.com", 1}};
	static const char *const want[] = {"a.example.com"};

	(void)state;
	expect(in, N(in), 1, want, N(want));
}

/* diff and prune read files; a config of three entries (allow as the
 * parser leaves it: lower case, no trailing dot). */
static char *running[] = {"www.example.com", "*.cdn.example.com",
			  "old.example.com"};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *run_diff(const char *json, int *rc)
{
	struct config cfg = {.allow = running, .n_allow = 3};
	char path[] = "/tmp/test_suggest_diff.XXXXXX", err[256], *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	write_file(path, json);
	*rc = suggest_diff(&cfg, path, mem, err, sizeof(err));
	fclose(mem);
	unlink(path);
	return out;
}

static void diff_names_added_and_removed(void **state)
{
	char *out;
	int rc;

	(void)state;
	out =
	    run_diff("{\"allow\": [\"WWW.example.com.\", \"*.cdn.example.com\","
		     " \"new.example.com\", \"new.example.com\"]}",
		     &rc);
	assert_int_equal(rc, 2);
	assert_string_equal(out, "+ new.example.com\n- old.example.com\n");
	free(out);
	out = run_diff("{\"allow\": [\"old.example.com\", \"www.example.com\","
		       " \"*.cdn.example.com\"]}",
		       &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
	free(out);
	out = run_diff("{\"allow\": [1]}", &rc);
	assert_int_equal(rc, -EINVAL);
	free(out);
	out = run_diff("{\"deny\": []}", &rc);
	assert_int_equal(rc, -EINVAL);
	free(out);
}

/* An entry unused for the window goes; a used one, one used before the
 * window but first seen within it, and one the file does not know stay. */
static void prune_drops_only_unused(void **state)
{
	char dir[] = "/tmp/test_suggest_prune.XXXXXX", path[64], err[256];
	char *allow[] = {"used.example.com", "stale.example.com",
			 "new.example.com", "unknown.example.com"};
	char *out = NULL, *errs = NULL, text[1024];
	size_t len = 0, elen = 0;
	long now = (long)time(NULL);
	FILE *mem, *emem;
	struct config cfg = {.allow = allow, .n_allow = 4};

	(void)state;
	assert_non_null(mkdtemp(dir));
	cfg.state_dir = dir;
	snprintf(path, sizeof(path), "%s/usage.json", dir);
	snprintf(text, sizeof(text),
		 "{\"entries\": ["
		 "{\"entry\": \"used.example.com\", \"first_seen\": %ld, "
		 "\"last_used\": %ld},"
		 "{\"entry\": \"stale.example.com\", \"first_seen\": %ld, "
		 "\"last_used\": %ld},"
		 "{\"entry\": \"new.example.com\", \"first_seen\": %ld, "
		 "\"last_used\": 0}]}",
		 now - 100000, now - 10, now - 100000, now - 90000, now - 10);
	write_file(path, text);
	assert_int_equal(chmod(path, 0644), 0); /* whatever the umask */
	mem = open_memstream(&out, &len);
	emem = open_memstream(&errs, &elen);
	assert_int_equal(suggest_prune(&cfg, 3600, mem, emem, err, sizeof(err)),
			 0);
	fclose(mem);
	fclose(emem);
	assert_non_null(strstr(out, "\"used.example.com\""));
	assert_null(strstr(out, "stale"));
	assert_non_null(strstr(out, "\"new.example.com\""));
	assert_non_null(strstr(out, "\"unknown.example.com\""));
	assert_non_null(strstr(errs, "pruned stale.example.com: unused for"));
	free(out);
	free(errs);
	unlink(path);
	rmdir(dir);
}

/* The probe's and readiness names, localhost, Tor and mDNS are never
 * proposed; the names of test networks are. */
static void special_use_names_never_proposed(void **state)
{
	(void)state;
	assert_true(suggest_never_proposed("probe.dnsfence.invalid"));
	assert_true(suggest_never_proposed("ready.dnsfence.invalid"));
	assert_true(suggest_never_proposed("localhost"));
	assert_true(suggest_never_proposed("x.LOCALHOST"));
	assert_true(suggest_never_proposed("abc.onion"));
	assert_true(suggest_never_proposed("printer.local"));
	assert_false(suggest_never_proposed("www.allowed.test"));
	assert_false(suggest_never_proposed("invalid.example.com"));
	assert_false(suggest_never_proposed("example.com"));
}

/* The exfiltration pattern: data encoded into labels. */
static void encoded_labels_are_flagged(void **state)
{
	static const struct {
		const char *name, *label, *kind;
	} enc[] = {
	    {"mzxw6ytboi4tqmzq.evil.example", "mzxw6ytboi4tqmzq",
	     "base32/base64"},
	    {"nbswy3dpeb3w64tmmq.t.evil.example", "nbswy3dpeb3w64tmmq",
	     "base32/base64"},
	    {"x.5f4dcc3b5aa765d61d8327deb882cf99.evil.example",
	     "5f4dcc3b5aa765d61d8327deb882cf99", "hex"},
	    {"aGVsbG8gd29ybGQhIGV4ZmlsdHJhdGlvbg.evil.example",
	     "aGVsbG8gd29ybGQhIGV4ZmlsdHJhdGlvbg", "base32/base64"},
	    {"pre-MZXW6YTBOI4TQMZQ.evil.example", "pre-MZXW6YTBOI4TQMZQ",
	     "base32/base64"},
	};
	char label[64];
	const char *kind = NULL;

	(void)state;
	for (size_t i = 0; i < N(enc); i++) {
		assert_true(suggest_looks_encoded(enc[i].name, label,
						  sizeof(label), &kind));
		assert_string_equal(label, enc[i].label);
		assert_string_equal(kind, enc[i].kind);
	}
}

static void ordinary_labels_are_not_flagged(void **state)
{
	static const char *const plain[] = {
	    "www.example.test",
	    "api.example.test",
	    "codeload.github.com",
	    "files.pythonhosted.org",
	    "objects-origin.githubusercontent.com",
	    "github-production-release-asset-2e65be.s3.amazonaws.com",
	    "d3bxy9euw4e147.cloudfront.net",
	    "o123456.ingest.sentry.io",
	    "internationalization.example.com",
	    "productionreleaseassets.example.com",
	    "xn--bcher-kva.example",
	    "abcdefghijklmnop.example.com",
	};
	char label[64] = "";
	const char *kind = NULL;

	(void)state;
	for (size_t i = 0; i < N(plain); i++) {
		if (suggest_looks_encoded(plain[i], label, sizeof(label),
					  &kind))
			fail_msg("%s flagged (%s: %s)", plain[i], label, kind);
	}
}

/* github.com, api.github.com, codeload.github.com: "github";
 * pypi.org, files.pythonhosted.org: "pypi"; gist.github.com (no github
 * host) and a name in no preset stay; a name under min_count counts for
 * nothing. */
static void presets_take_only_their_hosts(void **state)
{
	static const struct suggest_name in[] = {
	    {"github.com", 1},
	    {"api.github.com", 2},
	    {"codeload.github.com", 1},
	    {"gist.github.com", 1},
	    {"pypi.org", 1},
	    {"files.pythonhosted.org", 1},
	    {"lone.example.test", 1},
	    {"us.archive.ubuntu.com", 3},
	    {"security.ubuntu.com", 3},
	    {"proxy.golang.org", 1},
	    {"dl-cdn.alpinelinux.org", 1},
	    {"sum.golang.org", 0},
	};
	static const bool want_taken[] = {true, true,  true,  false,
					  true, true,  false, true,
					  true, false, true,  false};
	const char *pre[SUGGEST_PRESETS_MAX];
	bool taken[N(in)];
	size_t n;

	(void)state;
	n = suggest_presets(in, N(in), 1, pre, N(pre), taken);
	/* The table's order: pypi, go (one host counted: no), github,
	 * ubuntu, alpine (its only host). */
	assert_int_equal(n, 4);
	assert_string_equal(pre[0], "pypi");
	assert_string_equal(pre[1], "github");
	assert_string_equal(pre[2], "ubuntu");
	assert_string_equal(pre[3], "alpine");
	for (size_t i = 0; i < N(in); i++) {
		if (taken[i] != want_taken[i])
			fail_msg("%s: taken %d", in[i].name, taken[i]);
	}
	/* --min-count 2: only api.github.com and the ubuntu names count. */
	n = suggest_presets(in, N(in), 2, pre, N(pre), taken);
	assert_int_equal(n, 1);
	assert_string_equal(pre[0], "ubuntu");
	assert_false(taken[1]);
	/* cap bounds what is written. */
	n = suggest_presets(in, N(in), 1, pre, 1, taken);
	assert_int_equal(n, 1);
	assert_string_equal(pre[0], "pypi");
}

/* One host of a preset with more does not widen to the others. */
static void one_host_does_not_bring_a_preset(void **state)
{
	static const struct suggest_name in[] = {{"registry.npmjs.org", 5},
						 {"github.com", 1},
						 {"www.github.com", 1}};
	const char *pre[SUGGEST_PRESETS_MAX];
	bool taken[N(in)];

	(void)state;
	assert_int_equal(suggest_presets(in, N(in), 1, pre, N(pre), taken), 0);
	for (size_t i = 0; i < N(in); i++)
		assert_false(taken[i]);
	assert_int_equal(suggest_presets(in, 0, 1, pre, N(pre), taken), 0);
}

static void preset_holds_exact_and_wildcard_hosts(void **state)
{
	(void)state;
	assert_true(suggest_preset_holds("github", "api.github.com"));
	assert_true(suggest_preset_holds("github", "ghcr.io"));
	assert_false(suggest_preset_holds("github", "gist.github.com"));
	assert_false(suggest_preset_holds("github", "evil.ghcr.io"));
	assert_true(suggest_preset_holds("ubuntu", "de.archive.ubuntu.com"));
	assert_false(suggest_preset_holds("ubuntu", "ubuntu.com"));
	assert_false(suggest_preset_holds("nosuch", "github.com"));
}

/* pypi: every host unused for the window: dropped; crates: one host used
 * within it: kept; alpine: its host unknown to the file: kept. */
static void prune_drops_presets_none_of_whose_hosts_used(void **state)
{
	char dir[] = "/tmp/test_suggest_prune.XXXXXX", path[64], err[256];
	char *allow[] = {"used.example.com"};
	char *eco[] = {"pypi", "crates", "alpine"};
	char *out = NULL, *errs = NULL, text[2048];
	size_t len = 0, elen = 0;
	long now = (long)time(NULL), old = now - 100000;
	FILE *mem, *emem;
	struct config cfg = {
	    .allow = allow, .n_allow = 1, .ecosystems = eco, .n_ecosystems = 3};

	(void)state;
	assert_non_null(mkdtemp(dir));
	cfg.state_dir = dir;
	snprintf(path, sizeof(path), "%s/usage.json", dir);
	snprintf(text, sizeof(text),
		 "{\"entries\": ["
		 "{\"entry\": \"used.example.com\", \"first_seen\": %ld, "
		 "\"last_used\": %ld},"
		 "{\"entry\": \"pypi.org\", \"first_seen\": %ld, "
		 "\"last_used\": %ld},"
		 "{\"entry\": \"files.pythonhosted.org\", \"first_seen\": %ld, "
		 "\"last_used\": 0},"
		 "{\"entry\": \"pypi.python.org\", \"first_seen\": %ld, "
		 "\"last_used\": 0},"
		 "{\"entry\": \"crates.io\", \"first_seen\": %ld, "
		 "\"last_used\": 0},"
		 "{\"entry\": \"index.crates.io\", \"first_seen\": %ld, "
		 "\"last_used\": %ld},"
		 "{\"entry\": \"static.crates.io\", \"first_seen\": %ld, "
		 "\"last_used\": 0}]}",
		 old, now - 10, old, old + 10, old, old, old, old, now - 10,
		 old);
	write_file(path, text);
	assert_int_equal(chmod(path, 0644), 0);
	mem = open_memstream(&out, &len);
	emem = open_memstream(&errs, &elen);
	assert_int_equal(suggest_prune(&cfg, 3600, mem, emem, err, sizeof(err)),
			 0);
	fclose(mem);
	fclose(emem);
	assert_non_null(
	    strstr(out, "\"ecosystems\": [\"crates\", \"alpine\"]"));
	assert_null(strstr(out, "pypi"));
	assert_non_null(
	    strstr(errs, "pruned ecosystem pypi: none of its 3 hosts used"));
	assert_null(strstr(errs, "crates"));
	assert_null(strstr(errs, "alpine"));
	free(out);
	free(errs);
	unlink(path);
	rmdir(dir);
}

/* "ecosystems" are compared when the other file has them. */
static void diff_names_presets(void **state)
{
	char *eco[] = {"npm", "pypi"};
	char *allow[] = {"www.example.com"};
	struct config cfg = {
	    .allow = allow, .n_allow = 1, .ecosystems = eco, .n_ecosystems = 2};
	char path[] = "/tmp/test_suggest_diff.XXXXXX", err[256], *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "{\"allow\": [\"www.example.com\"], "
			 "\"ecosystems\": [\"npm\", \"github\"]}");
	assert_int_equal(suggest_diff(&cfg, path, mem, err, sizeof(err)), 2);
	fclose(mem);
	assert_string_equal(out, "+ ecosystem github\n- ecosystem pypi\n");
	free(out);
	out = NULL;
	mem = open_memstream(&out, &len);
	write_file(path, "{\"allow\": [\"www.example.com\"]}");
	assert_int_equal(suggest_diff(&cfg, path, mem, err, sizeof(err)), 0);
	fclose(mem);
	free(out);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(exact_names_by_default),
	    cmocka_unit_test(three_siblings_collapse),
	    cmocka_unit_test(public_suffix_children_stay_exact),
	    cmocka_unit_test(public_suffix_itself_is_left_out),
	    cmocka_unit_test(
		wildcard_covers_deeper_names_and_narrower_wildcards),
	    cmocka_unit_test(min_count_filters_before_collapsing),
	    cmocka_unit_test(duplicates_are_merged),
	    cmocka_unit_test(nothing_left_is_an_empty_list),
	    cmocka_unit_test(encoded_labels_are_flagged),
	    cmocka_unit_test(ordinary_labels_are_not_flagged),
	    cmocka_unit_test(diff_names_added_and_removed),
	    cmocka_unit_test(prune_drops_only_unused),
	    cmocka_unit_test(special_use_names_never_proposed),
	    cmocka_unit_test(presets_take_only_their_hosts),
	    cmocka_unit_test(one_host_does_not_bring_a_preset),
	    cmocka_unit_test(preset_holds_exact_and_wildcard_hosts),
	    cmocka_unit_test(prune_drops_presets_none_of_whose_hosts_used),
	    cmocka_unit_test(diff_names_presets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
