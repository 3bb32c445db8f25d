// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the control protocol's command check and of finding the
 * socket in a config file that does not validate. */
/* Control and reload reach every part of the daemon.
 */
#include <errno.h>
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
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "daemon/control.h"

static void commands_are_exact(void **state)
{
	bool json = true;

	(void)state;
	assert_int_equal(control_parse("reload\n", 7, &json), 1);
	assert_false(json);
	assert_int_equal(control_parse("status", 6, &json), 0);
	assert_false(json);
	assert_int_equal(control_parse("status json\r\n", 13, &json), 0);
	assert_true(json);
	assert_int_equal(control_parse("entries\n", 8, &json), 2);
	assert_int_equal(control_parse("entries json", 12, &json), -EINVAL);
	assert_int_equal(control_parse("suggest\n", 8, &json), 3);
	assert_false(json);
	assert_int_equal(control_parse("suggest json", 12, &json), -EINVAL);
	assert_int_equal(control_parse("report\n", 7, &json), 4);
	assert_int_equal(control_parse("report md", 9, &json), -EINVAL);
	assert_int_equal(control_parse("", 0, &json), -EINVAL);
	assert_int_equal(control_parse("\n", 1, &json), -EINVAL);
	assert_int_equal(control_parse("reload now", 10, &json), -EINVAL);
	assert_int_equal(control_parse("RELOAD", 6, &json), -EINVAL);
	assert_int_equal(control_parse("reloa", 5, &json), -EINVAL);
	assert_int_equal(control_parse("status\0json", 11, &json), -EINVAL);
	assert_int_equal(control_parse("status jsonx", 12, &json), -EINVAL);
}

static void socket_read_from_an_invalid_config(void **state)
{
	char path[] = "/tmp/test_control.XXXXXX", sock[128];
	const char *bad = "{\"ttl\": {\"min\": \"x\"}, "
			  "\"control\": {\"socket\": \"/run/x/c.sock\"}}";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
	close(fd);
	control_socket_of(path, sock, sizeof(sock));
	assert_string_equal(sock, "/run/x/c.sock");
	/* Not JSON, or a relative path: the default. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "{\"control\": {\"socket\": \"rel\"}}", 31),
			 31);
	close(fd);
	control_socket_of(path, sock, sizeof(sock));
	assert_string_equal(sock, CONFIG_DEFAULT_CONTROL);
	/* No socket named: the state directory's, as config.c defaults it. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "{\"state_dir\": \"/run/y//\"}", 25), 25);
	close(fd);
	control_socket_of(path, sock, sizeof(sock));
	assert_string_equal(sock, "/run/y/control.sock");
	unlink(path);
	control_socket_of(path, sock, sizeof(sock));
	assert_string_equal(sock, CONFIG_DEFAULT_CONTROL);
}

/* A daemon that takes the command and closes without a word (it stopped
 * mid-reload): the client says so, not "reply not understood". */
static void closed_without_answer_is_named(void **state)
{
	char dir[] = "/tmp/test_control.XXXXXX", path[64], err[256], line[64];
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int lfd, rc;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/c.sock", dir);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int c = accept(lfd, NULL, NULL);

		(void)!read(c, line, sizeof(line));
		_exit(0);
	}
	rc = control_call(path, "reload", 5, stdout, err, sizeof(err));
	assert_int_equal(rc, -EPIPE);
	assert_non_null(strstr(err, "closed the connection without an answer"));
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	close(lfd);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(commands_are_exact),
	    cmocka_unit_test(socket_read_from_an_invalid_config),
	    cmocka_unit_test(closed_without_answer_is_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
