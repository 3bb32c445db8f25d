// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the provenance state file: a saved map loads back link
 * for link (expired links left out), and a file of another policy,
 * another boot or version, a truncated or malformed one, or one with
 * more links than the map holds is refused whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/monotime.h"
#include "base/netaddr.h"
#include "resolve/prov.h"
#include "resolve/provstate.h"

#define POLICY "0123456789abcdef"
#define BOOT   "00000000-0000-0000-0000-000000000000"
#define HEAD   "dnsfence-prov 1\npolicy " POLICY "\nboot " BOOT "\n"
#define WWW    "0377777707616c6c6f776564047465737400" /* www.allowed.test */

static const uint8_t www[] = "\3www\7allowed\4test";
static const uint8_t api[] = "\3api\7allowed\4test";

static void saved_map_loads_back(void **state);
static void expired_links_are_left_out(void **state);
static void other_generation_is_stale(void **state);
static void malformed_files_are_refused(void **state);
static void more_links_than_the_map_holds(void **state);
static int parse(struct prov *p, const char *text);
static void addr(const char *s, struct netaddr *a);

static void addr(const char *s, struct netaddr *a)
{
	assert_int_equal(netaddr_parse(s, a), 0);
}

static int parse(struct prov *p, const char *text)
{
	char err[256];

	return provstate_parse(p, text, strlen(text), POLICY, BOOT, 100, err,
			       sizeof(err));
}

static void saved_map_loads_back(void **state)
{
	char dir[] = "/tmp/test_provstate.XXXXXX", err[256];
	struct prov *a = prov_new(16), *b = prov_new(16);
	uint64_t now = monotime_s();
	struct netaddr x, y;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	addr("198.18.1.10", &x);
	addr("2001:db8:1::10", &y);
	assert_int_equal(prov_note(a, www, sizeof(www), &x, now + 60, now), 0);
	assert_int_equal(prov_note(a, api, sizeof(api), &x, now + 90, now), 0);
	assert_int_equal(prov_note(a, www, sizeof(www), &y, now + 60, now), 0);
	assert_int_equal(
	    provstate_save(a, fd, dir, POLICY, 0, 0, err, sizeof(err)), 0);
	assert_int_equal(
	    provstate_load(b, fd, dir, getuid(), POLICY, err, sizeof(err)), 0);
	assert_int_equal(prov_links(b), 3);
	assert_int_equal(prov_addresses(b), 2);
	assert_int_equal(prov_links_of(b, &x, NULL, NULL, now), 2);
	/* Another policy's file is stale, and the map is left empty. */
	assert_int_equal(provstate_load(b, fd, dir, getuid(),
					"fedcba9876543210", err, sizeof(err)),
			 -ESTALE);
	assert_int_equal(prov_links(b), 0);
	provstate_remove(fd, dir);
	assert_int_equal(
	    provstate_load(b, fd, dir, getuid(), POLICY, err, sizeof(err)),
	    -ENOENT);
	close(fd);
	assert_int_equal(rmdir(dir), 0);
	prov_free(a);
	prov_free(b);
}

static void expired_links_are_left_out(void **state)
{
	struct prov *p = prov_new(16);

	(void)state;
	assert_int_equal(parse(p, HEAD "L 198.18.1.10 100 " WWW "\n"
				       "L 198.18.1.11 101 " WWW "\nend\n"),
			 0);
	assert_int_equal(prov_links(p), 1);
	prov_free(p);
}

static void other_generation_is_stale(void **state)
{
	struct prov *p = prov_new(16);

	(void)state;
	assert_int_equal(parse(p, "dnsfence-prov 1\npolicy fedcba9876543210\n"
				  "boot " BOOT "\nend\n"),
			 -ESTALE);
	assert_int_equal(parse(p, "dnsfence-prov 1\npolicy " POLICY
				  "\nboot 11111111-0000-0000-0000-"
				  "000000000000\nend\n"),
			 -ESTALE);
	prov_free(p);
}

static void malformed_files_are_refused(void **state)
{
	static const char *const bad[] = {
	    "",
	    "dnsfence-prov 2\npolicy " POLICY "\nboot " BOOT "\nend\n",
	    HEAD "L 198.18.1.10 500 " WWW "\n",	     /* no end */
	    HEAD "end\nL 198.18.1.10 500 " WWW "\n", /* after the end */
	    HEAD "L 198.18.1.10 500 0377x\nend\n",
	    HEAD "L 198.18.1.10 500 037\nend\n",
	    HEAD "L 198.18.1.10 500 ff00\nend\n", /* not a wire name */
	    HEAD "L 198.18.1.999 500 " WWW "\nend\n",
	    HEAD "L 198.18.1.10 -5 " WWW "\nend\n",
	    HEAD "L 198.18.1.10 99999999999 " WWW "\nend\n",
	    HEAD "X\nend\n",
	};
	struct prov *p = prov_new(16);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(p, bad[i]), -EINVAL);
	prov_free(p);
}

static void more_links_than_the_map_holds(void **state)
{
	struct prov *p = prov_new(1);

	(void)state;
	assert_int_equal(parse(p, HEAD "L 198.18.1.10 500 " WWW "\n"
				       "L 198.18.1.11 500 " WWW "\nend\n"),
			 -ENOSPC);
	prov_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(saved_map_loads_back),
	    cmocka_unit_test(expired_links_are_left_out),
	    cmocka_unit_test(other_generation_is_stale),
	    cmocka_unit_test(malformed_files_are_refused),
	    cmocka_unit_test(more_links_than_the_map_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
