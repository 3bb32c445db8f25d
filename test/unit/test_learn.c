// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of learn's state text (suggest.json and the control
 * socket's `suggest`): written as it goes rather than through a cJSON
 * tree, it must parse back to the same names, counts and flows, with
 * names that need escaping (quotes, backslashes, control bytes) intact;
 * the file learn_write leaves is that same text, also when it is
 * written in many pieces (LEARN_NAMES_MAX names, about 400 KiB).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <event2/event.h>

#include "observe/learn.h"

static const char *const tricky[] = {
    "plain.example",	   "quote\"d.example",
    "back\\slash.example", "tab\tand\nnewline.example",
    "ctl\x01.example",
};

static const cJSON *name_entry(const cJSON *names, const char *name);
static char *read_file(int dirfd, const char *name);
static void file_is_text(struct learn *l, int dirfd, const char *dir,
			 const char *text);
static struct learn *enforcing_learn(struct event_base *base, char *dir,
				     int *dirfd);

static const cJSON *name_entry(const cJSON *names, const char *name)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, names)
	{
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(n, "name");

		if (cJSON_IsString(s) && strcmp(s->valuestring, name) == 0)
			return n;
	}
	return NULL;
}

static char *read_file(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY);
	char *buf = calloc(1, 1 << 20);
	ssize_t n;

	assert_true(fd >= 0);
	assert_non_null(buf);
	n = read(fd, buf, (1 << 20) - 1);
	assert_true(n > 0);
	close(fd);
	return buf;
}

/* A learn in mode enforce on a new directory dir (a mkdtemp template),
 * the global one; its descriptor in *dirfd. */
static struct learn *enforcing_learn(struct event_base *base, char *dir,
				     int *dirfd)
{
	struct learn *l;

	assert_non_null(mkdtemp(dir));
	*dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(*dirfd >= 0);
	l = learn_new(base, *dirfd, dir, "enforce");
	assert_non_null(l);
	learn_set_global(l);
	return l;
}

/* learn_write's file is text, byte for byte; then l, the file and dir
 * are gone. */
static void file_is_text(struct learn *l, int dirfd, const char *dir,
			 const char *text)
{
	char *file;

	assert_int_equal(learn_write(l), 0);
	file = read_file(dirfd, LEARN_FILE);
	assert_string_equal(file, text);
	free(file);
	learn_free(l); /* closes dirfd */
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dirfd >= 0);
	assert_int_equal(unlinkat(dirfd, LEARN_FILE, 0), 0);
	close(dirfd);
	assert_int_equal(rmdir(dir), 0);
}

static void text_parses_back_with_escapes(void **state)
{
	char dir[] = "/tmp/test_learn.XXXXXX";
	struct event_base *base = event_base_new();
	struct learn *l;
	struct nflog_pkt pkt = {.proto = 6, .has_ports = true, .dport = 443};
	cJSON *root;
	const cJSON *names, *flows, *f;
	char *text;
	int dirfd;

	(void)state;
	l = enforcing_learn(base, dir, &dirfd);
	for (size_t i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++)
		learn_name(tricky[i], 1, (uint16_t)i);
	pkt.dst.family = AF_INET;
	pkt.dst.bytes[0] = 198;
	pkt.dst.bytes[1] = 18;
	pkt.dst.bytes[3] = 7;
	learn_flow(&pkt, "no answer gave this address", "quote\"d.example");
	learn_flow(&pkt, "no answer gave this address", NULL);

	text = learn_text(l);
	assert_non_null(text);
	root = cJSON_Parse(text);
	assert_non_null(root);
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(root, "mode")->valuestring,
	    "enforce");
	assert_int_equal(
	    cJSON_GetObjectItemCaseSensitive(root, "version")->valueint, 1);
	assert_int_equal(
	    cJSON_GetObjectItemCaseSensitive(root, "names_dropped")->valueint,
	    0);
	names = cJSON_GetObjectItemCaseSensitive(root, "names");
	assert_true(cJSON_IsArray(names));
	assert_int_equal(cJSON_GetArraySize(names),
			 sizeof(tricky) / sizeof(tricky[0]));
	for (size_t i = 0; i < sizeof(tricky) / sizeof(tricky[0]); i++) {
		const cJSON *n = name_entry(names, tricky[i]);

		assert_non_null(n);
		assert_int_equal(
		    cJSON_GetObjectItemCaseSensitive(n, "count")->valueint, 1);
	}
	flows = cJSON_GetObjectItemCaseSensitive(root, "flows");
	assert_int_equal(cJSON_GetArraySize(flows), 1);
	f = cJSON_GetArrayItem(flows, 0);
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(f, "name")->valuestring,
	    "quote\"d.example");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(f, "count")->valueint,
			 2);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(f, "port")->valueint,
			 443);
	cJSON_Delete(root);

	file_is_text(l, dirfd, dir, text);
	free(text);
	event_base_free(base);
}

/* Nothing learned: still a whole document, the arrays empty. */
static void empty_text_is_json(void **state)
{
	char dir[] = "/tmp/test_learn.XXXXXX";
	struct event_base *base = event_base_new();
	struct learn *l;
	cJSON *root;
	char *text;
	int dirfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	l = learn_new(base, dirfd, dir, "audit");
	assert_non_null(l);
	text = learn_text(l);
	root = cJSON_Parse(text);
	assert_non_null(root);
	assert_int_equal(
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "names")),
	    0);
	assert_int_equal(
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "flows")),
	    0);
	cJSON_Delete(root);
	free(text);
	learn_free(l);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	(void)unlinkat(dirfd, LEARN_FILE, 0);
	close(dirfd);
	assert_int_equal(rmdir(dir), 0);
	event_base_free(base);
}

/* A full table: the file, written a piece at a time, is the text the
 * control socket sends, byte for byte, and every name is in it. */
static void full_table_file_is_the_text(void **state)
{
	char dir[] = "/tmp/test_learn.XXXXXX";
	struct event_base *base = event_base_new();
	struct learn *l;
	char name[64], *text;
	cJSON *root;
	int dirfd;

	(void)state;
	l = enforcing_learn(base, dir, &dirfd);
	for (int i = 0; i < LEARN_NAMES_MAX; i++) {
		snprintf(name, sizeof(name), "n%d.quote\"d.denied.example", i);
		learn_name(name, 1, (uint16_t)i);
	}
	text = learn_text(l);
	assert_non_null(text);
	assert_true(strlen(text) > 100000);
	root = cJSON_Parse(text);
	assert_non_null(root);
	assert_int_equal(
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "names")),
	    LEARN_NAMES_MAX);
	cJSON_Delete(root);
	file_is_text(l, dirfd, dir, text);
	free(text);
	event_base_free(base);
}

/* Counts are questions: A and AAAA of one lookup count once, a retry
 * (same type and id) not at all, a second question of the same process
 * at once counts again; the first asker's uid and the first sighting's
 * wall clock are kept. */
static void counts_questions_with_uid(void **state)
{
	char dir[] = "/tmp/test_learn.XXXXXX";
	struct event_base *base = event_base_new();
	const cJSON *n;
	struct learn *l;
	cJSON *root;
	char *text;
	int dirfd;

	(void)state;
	l = enforcing_learn(base, dir, &dirfd);
	assert_true(learn_name("q.evil.example", 1, 100));
	learn_name_uid("q.evil.example", 4242);
	assert_false(learn_name("q.evil.example", 28, 101)); /* AAAA */
	assert_false(learn_name("q.evil.example", 1, 100));  /* a retry */
	text = learn_text(l);
	root = cJSON_Parse(text);
	n = name_entry(cJSON_GetObjectItemCaseSensitive(root, "names"),
		       "q.evil.example");
	assert_non_null(n);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(n, "count")->valueint,
			 1);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(n, "uid")->valueint,
			 4242);
	assert_true(
	    cJSON_GetObjectItemCaseSensitive(n, "first_seen")->valuedouble >
	    1.7e9);
	cJSON_Delete(root);
	free(text);
	learn_name("q.evil.example", 1, 102); /* the next question, at once */
	learn_name("q.evil.example", 28, 103);
	text = learn_text(l);
	root = cJSON_Parse(text);
	n = name_entry(cJSON_GetObjectItemCaseSensitive(root, "names"),
		       "q.evil.example");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(n, "count")->valueint,
			 2);
	cJSON_Delete(root);
	file_is_text(l, dirfd, dir, text);
	free(text);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(text_parses_back_with_escapes),
	    cmocka_unit_test(empty_text_is_json),
	    cmocka_unit_test(full_table_file_is_the_text),
	    cmocka_unit_test(counts_questions_with_uid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
