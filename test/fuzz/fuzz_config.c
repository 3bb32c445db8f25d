// SPDX-License-Identifier: GPL-2.0-or-later
/* Fuzz target for config_parse: any bytes either fail with an error
 * message or give a config whose config_to_json parses again to an equal
 * config. The resolv.conf default comes from a fixed file written once,
 * so that the result does not depend on the host. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/configjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char resolv_path[64];

static void remove_resolv(void)
{
	unlink(resolv_path);
}

static const char *resolv_conf(void)
{
	int fd;

	if (resolv_path[0] != '\0')
		return resolv_path;
	snprintf(resolv_path, sizeof(resolv_path), "/tmp/fuzz_config.XXXXXX");
	if ((fd = mkstemp(resolv_path)) < 0)
		abort();
	if (write(fd, "nameserver 198.18.0.53\n", 23) != 23)
		abort();
	close(fd);
	atexit(remove_resolv);
	return resolv_path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_env env = {NULL, "extra.example, *.wild.example",
				 resolv_conf(), NULL, NULL};
	struct config *a = NULL, *b = NULL;
	char err[256], *text = NULL;

	/* The first byte picks whether DNSFENCE_MODE is set, to cover the
	 * override path too. */
	if (size > 0 && data[0] == ' ')
		env.mode = "audit";
	if (config_parse((const char *)data, size, &env, &a, err,
			 sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort(); /* every error says why */
		return 0;
	}
	text = config_to_json(a);
	if (text == NULL)
		abort();
	if (config_parse(text, strlen(text), &env, &b, err, sizeof(err)) != 0) {
		fprintf(stderr, "re-parse failed: %s\n%s\n", err, text);
		abort();
	}
	if (!config_equal(a, b))
		abort();
	free(text);
	config_free(a);
	config_free(b);
	return 0;
}
