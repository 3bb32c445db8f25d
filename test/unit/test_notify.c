// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the sd_notify sender: a datagram reaches a socket named by
 * path and one in the abstract namespace ('@'), an unset name is a no-op,
 * and a relative name is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/notify.h"

/* A datagram socket bound to name ('@' = abstract); returns the fd. */
static int listen_on(const char *name)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memcpy(sun.sun_path, name, n);
	if (name[0] == '@')
		sun.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
			  (name[0] == '/' ? 1 : 0));
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, len), 0);
	return fd;
}

static void expect_datagram(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void test_path_socket_receives_ready(void **state)
{
	char dir[] = "/tmp/dnsfence-notify.XXXXXX", path[64];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = listen_on(path);
	assert_int_equal(notify_send_to(path, "READY=1\nSTATUS=x"), 0);
	expect_datagram(fd, "READY=1\nSTATUS=x");
	close(fd);
	unlink(path);
	rmdir(dir);
}

static void test_abstract_socket_receives_ready(void **state)
{
	char name[64];
	int fd;

	(void)state;
	snprintf(name, sizeof(name), "@dnsfence-test-%d", (int)getpid());
	fd = listen_on(name);
	assert_int_equal(setenv("NOTIFY_SOCKET", name, 1), 0);
	assert_int_equal(notify_send("STOPPING=1"), 0);
	expect_datagram(fd, "STOPPING=1");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

static void test_unset_is_noop_and_bad_names_refused(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(notify_send("READY=1"), 0);
	assert_int_equal(notify_send_to("", "READY=1"), 0);
	assert_int_equal(notify_send_to("relative/path", "READY=1"), -EINVAL);
	assert_int_equal(
	    notify_send_to("/nonexistent/dnsfence/notify", "READY=1"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_socket_receives_ready),
	    cmocka_unit_test(test_abstract_socket_receives_ready),
	    cmocka_unit_test(test_unset_is_noop_and_bad_names_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
