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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(commands_are_exact),
	    cmocka_unit_test(socket_read_from_an_invalid_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
