// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of learn's state text (suggest.json and the control
 * socket's `suggest`): written as it goes rather than through a cJSON
 * tree, it must parse back to the same names, counts and flows, with
 * names that need escaping (quotes, backslashes, control bytes) intact;
 * the file learn_write leaves is that same text, also when it is
 * written in many pieces (LEARN_NAMES_MAX names, about 400 KiB). A new
 * learn on the same directory starts from the file (a restart keeps the
 * names and flows), unless it was saved in the other mode, is group
 * writable or does not parse.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <event2/event.h>

#include "observe/attrib.h"
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
	l = learn_new(base, *dirfd, dir, "enforce", getuid());
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
	l = learn_new(base, dirfd, dir, "audit", getuid());
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

/* A learn of mode on dir, which holds what an earlier one saved: the
 * global one. */
static struct learn *reopened(struct event_base *base, const char *dir,
			      const char *mode)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	struct learn *l;

	assert_true(dirfd >= 0);
	l = learn_new(base, dirfd, dir, mode, getuid());
	assert_non_null(l);
	learn_set_global(l);
	return l;
}

/* l's text, parsed. */
static cJSON *parsed(const struct learn *l)
{
	char *text = learn_text(l);
	cJSON *root = text != NULL ? cJSON_Parse(text) : NULL;

	free(text);
	assert_non_null(root);
	return root;
}

static int num_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	assert_true(cJSON_IsNumber(v));
	return v->valueint;
}

static void gone(const char *dir)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY);

	(void)unlinkat(dirfd, LEARN_FILE, 0);
	close(dirfd);
	assert_int_equal(rmdir(dir), 0);
}

/* A restart in the same mode keeps the denied names (count, uid, first
 * seen) and the blocked flows (reason mapped back to attrib's string, so
 * the next block of the same flow counts on it); a flow whose reason is
 * not attrib's is dropped; a restart in the other mode starts afresh. */
static void restart_keeps_names_and_flows(void **state)
{
	char dir[] = "/tmp/test_learn.XXXXXX";
	struct event_base *base = event_base_new();
	struct nflog_pkt pkt = {.proto = 6, .has_ports = true, .dport = 8080};
	const char *port = attrib_reason_name(ATTRIB_PORT);
	const cJSON *n, *flows, *f;
	struct learn *l;
	cJSON *root;
	double first;
	int dirfd;

	(void)state;
	l = enforcing_learn(base, dir, &dirfd);
	assert_true(learn_name("kept.denied.example", 1, 1));
	learn_name_uid("kept.denied.example", 4242);
	learn_name("kept.denied.example", 1, 2);
	assert_int_equal(netaddr_parse("198.18.0.9", &pkt.dst), 0);
	pkt.has_uid = true;
	pkt.uid = 4243;
	learn_flow(&pkt, port, "kept.denied.example");
	pkt.dport = 9090;
	learn_flow(&pkt, "not a reason of attrib", NULL);
	pkt.dport = 8080;
	root = parsed(l);
	first = cJSON_GetObjectItemCaseSensitive(
		    name_entry(cJSON_GetObjectItemCaseSensitive(root, "names"),
			       "kept.denied.example"),
		    "first_seen")
		    ->valuedouble;
	cJSON_Delete(root);
	learn_free(l); /* writes, as a stopping daemon does */

	l = reopened(base, dir, "enforce");
	root = parsed(l);
	n = name_entry(cJSON_GetObjectItemCaseSensitive(root, "names"),
		       "kept.denied.example");
	assert_non_null(n);
	assert_int_equal(num_of(n, "count"), 2);
	assert_int_equal(num_of(n, "uid"), 4242);
	assert_true(
	    cJSON_GetObjectItemCaseSensitive(n, "first_seen")->valuedouble ==
	    first);
	flows = cJSON_GetObjectItemCaseSensitive(root, "flows");
	assert_int_equal(cJSON_GetArraySize(flows), 1);
	f = cJSON_GetArrayItem(flows, 0);
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(f, "dst")->valuestring,
	    "198.18.0.9");
	assert_int_equal(num_of(f, "proto"), 6);
	assert_int_equal(num_of(f, "port"), 8080);
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(f, "reason")->valuestring, "port");
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(f, "name")->valuestring,
	    "kept.denied.example");
	assert_int_equal(num_of(f, "uid"), 4243);
	assert_int_equal(num_of(f, "count"), 1);
	cJSON_Delete(root);
	learn_flow(&pkt, port, "kept.denied.example");
	assert_false(learn_name("kept.denied.example", 1, 3));
	root = parsed(l);
	f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "flows"),
			       0);
	assert_int_equal(num_of(f, "count"), 2);
	assert_int_equal(
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "flows")),
	    1);
	n = name_entry(cJSON_GetObjectItemCaseSensitive(root, "names"),
		       "kept.denied.example");
	assert_int_equal(num_of(n, "count"), 3);
	cJSON_Delete(root);
	learn_free(l);

	l = reopened(base, dir,
		     "audit"); /* enforce's denials are not audit's */
	root = parsed(l);
	assert_string_equal(
	    cJSON_GetObjectItemCaseSensitive(root, "mode")->valuestring,
	    "audit");
	assert_int_equal(
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "names")),
	    0);
	assert_int_equal(
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "flows")),
	    0);
	cJSON_Delete(root);
	learn_free(l);
	gone(dir);
	event_base_free(base);
}

/* A file someone else could have written (group writable) or that does
 * not parse is not read back: the learn starts empty, and works. */
static void untrusted_or_broken_file_ignored(void **state)
{
	char dir[] = "/tmp/test_learn.XXXXXX";
	struct event_base *base = event_base_new();
	const char *broken = "{\"mode\": \"enforce\", \"names\": [";
	struct learn *l;
	cJSON *root;
	int dirfd, fd;

	(void)state;
	l = enforcing_learn(base, dir, &dirfd);
	learn_name("planted.example", 1, 1);
	assert_int_equal(learn_write(l), 0);
	learn_free(l);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dirfd >= 0);
	assert_int_equal(fchmodat(dirfd, LEARN_FILE, 0660, 0), 0);
	close(dirfd);
	l = reopened(base, dir, "enforce");
	root = parsed(l);
	assert_int_equal(
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "names")),
	    0);
	cJSON_Delete(root);
	learn_free(l);

	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dirfd >= 0);
	fd = openat(dirfd, LEARN_FILE, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, broken, strlen(broken)),
			 (ssize_t)strlen(broken));
	close(fd);
	close(dirfd);
	l = reopened(base, dir, "enforce");
	assert_true(learn_name("after.example", 1, 1));
	root = parsed(l);
	assert_int_equal(
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "names")),
	    1);
	cJSON_Delete(root);
	learn_free(l);
	gone(dir);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(text_parses_back_with_escapes),
	    cmocka_unit_test(empty_text_is_json),
	    cmocka_unit_test(full_table_file_is_the_text),
	    cmocka_unit_test(counts_questions_with_uid),
	    cmocka_unit_test(restart_keeps_names_and_flows),
	    cmocka_unit_test(untrusted_or_broken_file_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
