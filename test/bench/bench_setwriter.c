// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_setwriter: the privileged parent's set writer alone, as the
 * driver of test/e2e/test_setwriter_refuses_compromised_adds.sh, whose
 * harness plays a compromised DNS process on the other end of the
 * channel. Not a benchmark; it lives here because CMake builds
 * test/bench/bench_*.c as programs.
 *
 *   bench_setwriter CONFIG FD   serve the SOCK_SEQPACKET channel FD with
 *                               the config's sets until the writer stops
 *                               (exit 3, the line says why) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "base/log.h"
#include "config/config.h"
#include "daemon/setwriter.h"
#include "sets/sets.h"

int main(int argc, char **argv)
{
	struct config *cfg = NULL;
	struct event_base *base = NULL;
	struct sets *sets = NULL;
	struct setwriter *w = NULL;
	char err[512] = "";
	char *end = NULL;
	long fd;
	int ret = 2;

	if (argc != 3) {
		fputs("usage: bench_setwriter CONFIG FD\n", stderr);
		return 2;
	}
	fd = strtol(argv[2], &end, 10);
	if (end == argv[2] || *end || fd < 0 || fd > 65535) {
		fputs("bench_setwriter: FD: not a descriptor number\n", stderr);
		return 2;
	}
	if (config_load(argv[1], &cfg, err, sizeof(err)) != 0) {
		log_err("config", "%s", err);
		return 2;
	}
	base = event_base_new();
	if (base != NULL) {
		struct sets_params sp = {.set4 = cfg->set4,
					 .set6 = cfg->set6,
					 .ttl_min = cfg->ttl_min,
					 .ttl_max = cfg->ttl_max};

		sets = sets_open(base, &sp, err, sizeof(err));
	}
	if (sets == NULL) {
		log_err("sets", "%s", err);
		goto out;
	}
	w = setwriter_new(base, (int)fd, cfg, sets);
	if (w == NULL)
		goto out;
	log_info("setwriter", "serving descriptor %ld", fd);
	event_base_dispatch(base);
	ret = setwriter_failed(w) ? 3 : 0;
out:
	sets_close(sets);
	setwriter_free(w);
	if (base != NULL)
		event_base_free(base);
	config_free(cfg);
	return ret;
}
