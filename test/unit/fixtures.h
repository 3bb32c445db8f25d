/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small fixtures shared by unit tests; include after <cmocka.h>. Header
 * only (static inline), so a test links no extra module for them. */
#ifndef DNSFENCE_TEST_FIXTURES_H
#define DNSFENCE_TEST_FIXTURES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef DNSFENCE_NETADDR_H
/* The n-th address of 198.18.0.0/15 (n < 131072): test addresses only. */
static inline struct netaddr fixture_v4(uint32_t n)
{
	struct netaddr a = {.family = AF_INET};

	a.bytes[0] = 198;
	a.bytes[1] = 18 + (uint8_t)(n >> 16 & 1);
	a.bytes[2] = (uint8_t)(n >> 8);
	a.bytes[3] = (uint8_t)n;
	return a;
}
#endif

#ifdef DNSFENCE_CONFIG_H
/* json parsed with no resolv.conf and no environment; fails the test with
 * the parser's message when it does not validate. */
static inline struct config *fixture_config(const char *json)
{
	struct config_env env = {NULL, NULL, "/nonexistent/resolv.conf", NULL,
				 NULL};
	struct config *c = NULL;
	char err[512] = "";

	if (config_parse(json, strlen(json), &env, &c, err, sizeof(err)) != 0)
		fail_msg("config_parse: %s", err);
	return c;
}
#endif

/* text without the first line that is exactly line (the line must be
 * there); text is changed in place and returned. */
static inline char *fixture_drop_line(char *text, const char *line)
{
	char *p = strstr(text, line);
	size_t n = strlen(line) + 1;

	assert_non_null(p);
	memmove(p, p + n, strlen(p + n) + 1);
	return text;
}

/* What fn(arg) writes to stderr (fd 2), into out (cut at cap - 1). */
static inline void fixture_stderr(void (*fn)(void *), void *arg, char *out,
				  size_t cap)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, cap - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

#endif
