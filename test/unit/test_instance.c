// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of one daemon per fence: the default state directory of a
 * named network namespace (and names that are not used), a second claim
 * on the same state directory refused with the holder's pid, a claim on
 * a control socket a live process answers on refused, a stale socket
 * file accepted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/instance.h"

static void named_namespaces_get_their_own_dir(void **state);
static void second_claim_on_the_state_is_refused(void **state);
static void live_control_socket_is_refused(void **state);
static int listen_on(const char *path);

static void named_namespaces_get_their_own_dir(void **state)
{
	static const char *const unused[] = {
	    NULL,
	    "",
	    ".hidden",
	    "a/b",
	    "a b",
	    "x\n",
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "4"};
	char buf[128];

	(void)state;
	instance_dir_for("blue", buf, sizeof(buf));
	assert_string_equal(buf, "/run/dnsfence-blue");
	instance_dir_for("df1-wl.2_x", buf, sizeof(buf));
	assert_string_equal(buf, "/run/dnsfence-df1-wl.2_x");
	for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
		instance_dir_for(unused[i], buf, sizeof(buf));
		assert_string_equal(buf, "/run/dnsfence");
	}
}

static int listen_on(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(sun.sun_path));
	memcpy(sun.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(fd, 1), 0);
	return fd;
}

static void second_claim_on_the_state_is_refused(void **state)
{
	char dir[] = "/tmp/test_instance.XXXXXX", sock[128], want[64];
	char err[512], path[160];
	struct instance *a, *b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/control.sock", dir);
	a = instance_claim(dir, sock, getuid(), getgid(), err, sizeof(err));
	assert_non_null(a);
	b = instance_claim(dir, sock, getuid(), getgid(), err, sizeof(err));
	assert_null(b);
	snprintf(want, sizeof(want), "(pid %ld)", (long)getpid());
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, dir));
	instance_release(a);
	b = instance_claim(dir, sock, getuid(), getgid(), err, sizeof(err));
	assert_non_null(b);
	instance_release(b);
	snprintf(path, sizeof(path), "%s/%s", dir, INSTANCE_PID_FILE);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void live_control_socket_is_refused(void **state)
{
	char dir[] = "/tmp/test_instance.XXXXXX", sock[128], want[64];
	char err[512], path[160];
	struct instance *in;
	pid_t pid;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/control.sock", dir);
	fd = listen_on(sock);
	assert_int_equal(instance_socket_owner(sock, &pid), 1);
	assert_int_equal(pid, getpid());
	in = instance_claim(dir, sock, getuid(), getgid(), err, sizeof(err));
	assert_null(in);
	snprintf(want, sizeof(want), "(pid %ld)", (long)getpid());
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, sock));
	/* The listener gone, its file stale: accepted. */
	close(fd);
	assert_int_equal(instance_socket_owner(sock, &pid), 0);
	in = instance_claim(dir, sock, getuid(), getgid(), err, sizeof(err));
	assert_non_null(in);
	instance_release(in);
	snprintf(path, sizeof(path), "%s/%s", dir, INSTANCE_PID_FILE);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(sock), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(named_namespaces_get_their_own_dir),
	    cmocka_unit_test(second_claim_on_the_state_is_refused),
	    cmocka_unit_test(live_control_socket_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
