// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of what dnsfence trusts on disk (base/statefs.c): a state
 * directory that group or others may write, or a link to one, is refused
 * with a message naming `state_dir`; a state file that is group- or
 * world-writable, or a link, is refused; a temporary name someone
 * planted is replaced, never written through. Run as any uid: the owner
 * rule is checked against the uid running the test. */
#include <errno.h>
#include <fcntl.h>
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

#include "base/statefs.h"

static void writable_or_linked_dirs_are_refused(void **state);
static void writable_or_linked_files_are_refused(void **state);
static void a_planted_temporary_file_is_replaced(void **state);
static void write_file(const char *path, const char *text, mode_t mode);
static void rm_dir(const char *dir);

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void rm_dir(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void writable_or_linked_dirs_are_refused(void **state)
{
	char dir[] = "/tmp/dnsfence-statefs-XXXXXX", sub[256], link[256];
	char err[1024];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/state", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(mkdir(sub, 0750), 0);
	assert_int_equal(chmod(sub, 0750), 0);
	fd = statefs_open_dir(sub, getuid(), err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);

	assert_int_equal(chmod(sub, 0770), 0);
	assert_int_equal(statefs_open_dir(sub, getuid(), err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "state_dir"));
	assert_non_null(strstr(err, sub));
	assert_non_null(strstr(err, "0770"));
	assert_int_equal(chmod(sub, 01777), 0);
	assert_int_equal(statefs_open_dir(sub, getuid(), err, sizeof(err)),
			 -EPERM);

	assert_int_equal(chmod(sub, 0750), 0);
	assert_int_equal(symlink(sub, link), 0);
	assert_int_equal(statefs_open_dir(link, getuid(), err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(statefs_open_dir("/nonexistent-statefs", getuid(), err,
					  sizeof(err)),
			 -ENOENT);
	rm_dir(dir);
}

static void writable_or_linked_files_are_refused(void **state)
{
	char dir[] = "/tmp/dnsfence-statefs-XXXXXX", p[256], err[1024];
	int dfd, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	snprintf(p, sizeof(p), "%s/good", dir);
	write_file(p, "x", 0640);
	snprintf(p, sizeof(p), "%s/open", dir);
	write_file(p, "x", 0666);
	snprintf(p, sizeof(p), "%s/group", dir);
	write_file(p, "x", 0660);
	assert_int_equal(symlinkat("good", dfd, "link"), 0);

	fd = statefs_open_file(dfd, dir, "good", getuid(), err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(
	    statefs_open_file(dfd, dir, "open", getuid(), err, sizeof(err)),
	    -EPERM);
	assert_non_null(strstr(err, "0666"));
	assert_int_equal(
	    statefs_open_file(dfd, dir, "group", getuid(), err, sizeof(err)),
	    -EPERM);
	assert_int_equal(
	    statefs_open_file(dfd, dir, "link", getuid(), err, sizeof(err)),
	    -EPERM);
	assert_int_equal(
	    statefs_open_file(dfd, dir, "none", getuid(), err, sizeof(err)),
	    -ENOENT);
	close(dfd);
	rm_dir(dir);
}

static void a_planted_temporary_file_is_replaced(void **state)
{
	char dir[] = "/tmp/dnsfence-statefs-XXXXXX", p[256], keep[256];
	char buf[64] = "";
	struct stat st;
	int dfd, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	snprintf(p, sizeof(p), "%s/x.tmp", dir);
	snprintf(keep, sizeof(keep), "%s/planted", dir);
	write_file(p, "planted\n", 0666);
	assert_int_equal(link(p, keep), 0); /* the planter's handle */
	assert_int_equal(symlinkat("planted", dfd, "y.tmp"), 0);

	fd = statefs_create(dfd, "x.tmp", 0640);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "ours\n", 5), 5);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_nlink, 1); /* a fresh file, not the planted */
	close(fd);
	fd = open(keep, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 8);
	assert_string_equal(buf, "planted\n");
	close(fd);
	/* a link under the name is removed, not followed */
	fd = statefs_create(dfd, "y.tmp", 0640);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(keep, &st), 0);
	assert_int_equal(st.st_size, 8);
	close(dfd);
	rm_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(writable_or_linked_dirs_are_refused),
	    cmocka_unit_test(writable_or_linked_files_are_refused),
	    cmocka_unit_test(a_planted_temporary_file_is_replaced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
