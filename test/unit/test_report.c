// SPDX-License-Identifier: GPL-2.0-or-later
/* report: exec's summary is bounded and quiet on a clean run, a table cell
 * cannot break its table, and a --report path is judged before use. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "cli/report.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* report_exec over a state directory holding suggest (suggest.json, NULL:
 * none); its summary, and the report written to out (NULL: none). */
static char *run(const char *suggest, const char *out, int *rc)
{
	char dir[] = "/tmp/test_report.XXXXXX", path[64], err[256];
	struct config cfg = {0};
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	assert_non_null(mkdtemp(dir));
	cfg.state_dir = dir;
	snprintf(path, sizeof(path), "%s/suggest.json", dir);
	if (suggest != NULL)
		write_file(path, suggest);
	*rc = report_exec(&cfg, 3, out, mem, err, sizeof(err));
	fclose(mem);
	unlink(path);
	rmdir(dir);
	return text;
}

/* 25 denied names: 20 lines, then "and 5 more"; the file has all 25. */
static void summary_bounded(void **state)
{
	char json[8192] = "{\"names\": [",
	     out[] = "/tmp/test_report_b.XXXXXX.md";
	char *sum, line[64];
	size_t n = strlen(json);
	int rc, lines = 0, rows = 0;
	FILE *f;

	(void)state;
	for (int i = 0; i < 25; i++)
		n += (size_t)snprintf(json + n, sizeof(json) - n,
				      "%s{\"name\": \"n%02d.example.com\", "
				      "\"count\": 1}",
				      i ? ", " : "", i);
	snprintf(json + n, sizeof(json) - n, "], \"flows\": []}");
	assert_int_equal(close(mkstemps(out, 3)), 0);
	sum = run(json, out, &rc);
	assert_int_equal(rc, 0);
	for (const char *p = sum; (p = strstr(p, "  denied ")) != NULL; p++)
		lines++;
	assert_int_equal(lines, REPORT_SUMMARY_LINES + 1);
	assert_non_null(strstr(sum, "and 5 more"));
	assert_non_null(strstr(sum, "25 names denied, 0 flows blocked"));
	f = fopen(out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		rows += strncmp(line, "| `n", 4) == 0;
	fclose(f);
	assert_int_equal(rows, 25);
	unlink(out);
	free(sum);
}

/* Nothing denied or blocked (or no file at all): no summary. */
static void clean_run_is_quiet(void **state)
{
	char *sum;
	int rc;

	(void)state;
	sum = run("{\"names\": [{\"name\": \"probe.dnsfence.invalid\", "
		  "\"count\": 1}], \"flows\": []}",
		  NULL, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(sum, "");
	free(sum);
	sum = run(NULL, NULL, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(sum, "");
	free(sum);
	sum = run("[1]", NULL, &rc);
	assert_int_equal(rc, -EINVAL);
	free(sum);
}

/* A name with '|', '`' and a control byte stays in its cell; the JSON
 * report parses and keeps the name as it was. */
static void cells_escaped(void **state)
{
	const char *json = "{\"names\": [{\"name\": \"a|b`c\\u0001.example\", "
			   "\"count\": 2}], \"flows\": [{\"dst\": "
			   "\"198.18.1.10\", \"proto\": 6, \"port\": 9999, "
			   "\"reason\": \"port\", \"name\": \"x.example\", "
			   "\"count\": 1}]}";
	char md[] = "/tmp/test_report_c.XXXXXX.md";
	char js[] = "/tmp/test_report_c.XXXXXX.json";
	char buf[4096] = "", *sum;
	cJSON *root;
	size_t n;
	FILE *f;
	int rc;

	(void)state;
	assert_true(mkstemps(md, 3) >= 0);
	assert_true(mkstemps(js, 5) >= 0);
	sum = run(json, md, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(sum, "a|b`c?.example (2 lookups)"));
	assert_non_null(strstr(sum, "fix: --port tcp/9999"));
	free(sum);
	f = fopen(md, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "| `a\\|b?c?.example` | 2 |"));
	sum = run(json, js, &rc);
	assert_int_equal(rc, 0);
	free(sum);
	f = fopen(js, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	root = cJSON_Parse(buf);
	assert_non_null(root);
	assert_string_equal(
	    cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(root, "denied"), 0),
		"name")
		->valuestring,
	    "a|b`c\001.example");
	assert_int_equal(cJSON_GetObjectItem(root, "exit_status")->valueint, 3);
	cJSON_Delete(root);
	unlink(md);
	unlink(js);
}

static void path_judged(void **state)
{
	char dir[] = "/tmp/test_report_p.XXXXXX", p[128], err[256];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/x.md", dir);
	assert_int_equal(report_check_path(p, err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/missing/x.md", dir);
	assert_int_equal(report_check_path(p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "--report"));
	assert_int_equal(report_check_path(dir, err, sizeof(err)), -EINVAL);
	snprintf(p, sizeof(p), "%s/link", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	assert_int_equal(report_check_path(p, err, sizeof(err)), -EINVAL);
	unlink(p);
	assert_int_equal(report_check_path("", err, sizeof(err)), -EINVAL);
	snprintf(p, sizeof(p), "%s/", dir);
	assert_int_equal(report_check_path(p, err, sizeof(err)), -EINVAL);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(summary_bounded),
	    cmocka_unit_test(clean_run_is_quiet),
	    cmocka_unit_test(cells_escaped),
	    cmocka_unit_test(path_judged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
