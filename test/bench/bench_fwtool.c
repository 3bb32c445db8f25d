// SPDX-License-Identifier: GPL-2.0-or-later
/* bench_fwtool: the firewall module alone, as the driver of
 * test/e2e/test_firewall_rules.sh (which runs it inside a network
 * namespace of its own). Not a benchmark; it lives here because CMake
 * builds test/bench/bench_*.c as programs.
 *
 *   bench_fwtool render CONFIG   prints the ipv4 then ipv6 restore input
 *   bench_fwtool apply  CONFIG   exit 0, or 3 with the error
 *   bench_fwtool check  CONFIG   exit 0, 1 with one line per difference,
 *                                or 3
 *   bench_fwtool remove              exit 0, or 3 with the error
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "config/config.h"
#include "fence/firewall.h"
#include "base/log.h"

static void print_line(void *arg, const char *line);
static int usage(void);

static void print_line(void *arg, const char *line)
{
	(void)arg;
	printf("%s\n", line);
}

static int usage(void)
{
	fputs("usage: bench_fwtool render|apply|check CONFIG\n"
	      "       bench_fwtool remove\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	struct config *cfg = NULL;
	char err[1024] = "";
	int ret = 3, r;

	if (argc == 2 && strcmp(argv[1], "remove") == 0) {
		r = fw_remove(err, sizeof(err));
		if (r)
			log_err("firewall", "remove: %s", err);
		return r ? 3 : 0;
	}
	if (argc != 3)
		return usage();
	if (config_load(argv[2], &cfg, err, sizeof(err)) != 0) {
		log_err("config", "%s", err);
		return 2;
	}
	if (strcmp(argv[1], "render") == 0) {
		char *v4 = fw_render(cfg, AF_INET);
		char *v6 = fw_render(cfg, AF_INET6);

		if (v4 && v6) {
			printf("%s%s", v4, v6);
			ret = 0;
		}
		free(v4);
		free(v6);
	} else if (strcmp(argv[1], "apply") == 0) {
		r = fw_apply(cfg, err, sizeof(err));
		if (r)
			log_err("firewall", "apply: %s", err);
		ret = r ? 3 : 0;
	} else if (strcmp(argv[1], "check") == 0) {
		r = fw_check(cfg, print_line, NULL);
		ret = r < 0 ? 3 : r;
	} else {
		ret = usage();
	}
	config_free(cfg);
	return ret;
}
