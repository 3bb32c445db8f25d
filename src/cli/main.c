// SPDX-License-Identifier: GPL-2.0-or-later
/* main: command-line parsing and dispatch. A command loads the config
 * (and resolves the user), calls one function of another module
 * (fence.c for setup, serve, run, check and teardown; probe.c for probe;
 * control.c for reload and status, one line to the daemon's socket;
 * suggest.c for suggest; config.c and configjson.c for reference and
 * validate), and turns its result into the exit code. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "config/config.h"
#include "config/configjson.h"
#include "daemon/control.h"
#include "cli/fence.h"
#include "base/log.h"
#include "daemon/privs.h"
#include "cli/probe.h"
#include "sets/setsadm.h"
#include "cli/suggest.h"

enum exit_code {
	EXIT_OK = 0,
	EXIT_DRIFT = 1,
	EXIT_USAGE = 2,
	EXIT_KERNEL = 3,
};

struct command {
	const char *name;
	int (*fn)(const char *config_path, const char *arg);
	const char *arg; /* an optional operand, e.g. "[NAME]"; NULL: none */
	const char *help;
};

/* The command's own argv (argv[0] its name), for a command whose operand
 * is options ("[--...") that it parses itself. */
static int cmd_argc;
static char **cmd_argv;

static int cmd_validate(const char *config_path, const char *arg);
static int cmd_setup(const char *config_path, const char *arg);
static int cmd_serve(const char *config_path, const char *arg);
static int cmd_run(const char *config_path, const char *arg);
static int cmd_check(const char *config_path, const char *arg);
static int cmd_teardown(const char *config_path, const char *arg);
static int cmd_reference(const char *config_path, const char *arg);
static int cmd_probe(const char *config_path, const char *arg);
static int cmd_suggest(const char *config_path, const char *arg);
static int load_config(const char *path, struct config **out);
static int lookup_user(const struct config *cfg, uid_t *uid, gid_t *gid);
static int fence(const char *config_path, bool do_setup, bool do_serve);
static int cmd_reload(const char *config_path, const char *arg);
static int cmd_status(const char *config_path, const char *arg);
static int control(const char *config_path, const char *cmd, int timeout_s,
		   const char *what);
#define RELOAD_TIMEOUT_S 90 /* above the guard's 60 s child timeout */
static void usage(FILE *out);

static const struct command commands[] = {
    {"run", cmd_run, NULL, "setup, then serve (drops privileges after setup)"},
    {"setup", cmd_setup, NULL, "create the sets, install and verify the rules"},
    {"serve", cmd_serve, NULL,
     "serve DNS only; the sets and rules must already be in place"},
    {"check", cmd_check, NULL,
     "compare the kernel with the config; exit 1 and list each "
     "difference"},
    {"teardown", cmd_teardown, NULL,
     "remove the rules and the sets: the deliberate way to OPEN the "
     "namespace"},
    {"validate", cmd_validate, NULL,
     "load and validate the config; print it normalized as JSON"},
    {"reference", cmd_reference, NULL,
     "print the configuration reference (docs/configuration.md)"},
    {"probe", cmd_probe, "[NAME]",
     "ask the daemon for NAME (default " PROBE_DEFAULT_NAME
     "); exit 0 on any reply within 2 s, else 1"},
    {"suggest", cmd_suggest, "[--min-count N]",
     "print an allow list learned from what the fence denied (audit mode: "
     "would deny), as JSON"},
    {"reload", cmd_reload, NULL,
     "make the running daemon apply the config file now; exit 2 (naming "
     "the key) when it keeps the running policy, 3 when no daemon "
     "listens"},
    {"status", cmd_status, "[--json]",
     "the running daemon's mode, policy, sets, counters and last "
     "reload"},
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dnsfence [-c FILE] COMMAND [NAME]\n"
		"\n"
		"A DNS resolver that forwards only allowlisted names and puts "
		"the\naddresses it hands out into kernel ipsets.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char name[40];

		snprintf(name, sizeof(name), "%s%s%s", commands[i].name,
			 commands[i].arg != NULL ? " " : "",
			 commands[i].arg != NULL ? commands[i].arg : "");
		fprintf(out, "  %-13s %s\n", name, commands[i].help);
	}
	fprintf(out,
		"\n"
		"options:\n"
		"  -c, --config FILE  config file (default $DNSFENCE_CONFIG, "
		"else %s)\n"
		"  -h, --help         this text\n"
		"  -V, --version      print the version\n"
		"\n"
		"exit codes: 0 success, 1 check found drift (probe: no reply), "
		"2 bad usage\nor config, 3 the kernel refused something\n",
		CONFIG_DEFAULT_PATH);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *config_path = NULL;
	int opt;

	while ((opt = getopt_long(argc, argv, "+c:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("dnsfence %s\n", DNSFENCE_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "dnsfence: no command given\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const struct command *c = &commands[i];

		if (strcmp(argv[optind], c->name) != 0)
			continue;
		cmd_argc = argc - optind;
		cmd_argv = argv + optind;
		if (argc - optind > (c->arg == NULL		     ? 1
				     : strncmp(c->arg, "[-", 2) == 0 ? 3
								     : 2)) {
			fprintf(stderr, "dnsfence: %s: too many operands\n",
				c->name);
			usage(stderr);
			return EXIT_USAGE;
		}
		return c->fn(config_path,
			     optind + 1 < argc ? argv[optind + 1] : NULL);
	}
	fprintf(stderr, "dnsfence: unknown command '%s'\n", argv[optind]);
	usage(stderr);
	return EXIT_USAGE;
}

static int load_config(const char *path, struct config **out)
{
	char err[512];
	int rc = config_load(path, out, err, sizeof(err));

	if (rc != 0) {
		log_err("config", "%s", err);
		return EXIT_USAGE;
	}
	log_setup((*out)->log_level, (*out)->log_format, false);
	return EXIT_OK;
}

static int cmd_validate(const char *config_path, const char *arg)
{
	(void)arg;
	struct config *cfg = NULL;
	char *json;
	int rc = load_config(config_path, &cfg);

	if (rc != EXIT_OK)
		return rc;
	if (cfg->deny_rcode == CONFIG_DENY_REFUSED)
		log_warn("config",
			 "deny_rcode: \"refused\": musl waits for its timeout "
			 "(5 s) on every denied name and stops walking the "
			 "search list at the first REFUSED, which breaks "
			 "Kubernetes-style search domains; \"nxdomain\" has "
			 "neither problem");
	json = config_to_json(cfg);
	if (json == NULL) {
		config_free(cfg);
		log_err("config", "out of memory");
		return EXIT_KERNEL;
	}
	fputs(json, stdout);
	fputc('\n', stdout);
	free(json);
	config_free(cfg);
	return EXIT_OK;
}

static int cmd_reference(const char *config_path, const char *arg)
{
	(void)arg;
	(void)config_path;
	config_print_reference(stdout);
	return EXIT_OK;
}

/* The configured user, resolved: uid/gid for the rules and the drop. */
static int lookup_user(const struct config *cfg, uid_t *uid, gid_t *gid)
{
	char err[512];

	if (privs_lookup(cfg->user, uid, gid, err, sizeof(err)) != 0) {
		log_err("config", "%s", err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* setup, serve and run: load the config, resolve the user, fence_run. */
static int fence(const char *config_path, bool do_setup, bool do_serve)
{
	struct config *cfg = NULL;
	uid_t uid;
	gid_t gid;
	int rc = load_config(config_path, &cfg);

	if (rc == EXIT_OK)
		rc = lookup_user(cfg, &uid, &gid);
	if (rc == EXIT_OK &&
	    fence_run(cfg, config_path, uid, gid, do_setup, do_serve) != 0)
		rc = EXIT_KERNEL;
	config_free(cfg);
	return rc;
}

static int cmd_setup(const char *config_path, const char *arg)
{
	(void)arg;
	return fence(config_path, true, false);
}

static int cmd_serve(const char *config_path, const char *arg)
{
	(void)arg;
	return fence(config_path, false, true);
}

static int cmd_run(const char *config_path, const char *arg)
{
	(void)arg;
	return fence(config_path, true, true);
}

static int cmd_check(const char *config_path, const char *arg)
{
	(void)arg;
	struct config *cfg = NULL;
	uid_t uid;
	gid_t gid;
	int r, rc = load_config(config_path, &cfg);

	if (rc == EXIT_OK)
		rc = lookup_user(cfg, &uid, &gid);
	if (rc == EXIT_OK) {
		r = fence_check(cfg, uid);
		rc = r < 0 ? EXIT_KERNEL : r > 0 ? EXIT_DRIFT : EXIT_OK;
	}
	config_free(cfg);
	return rc;
}

static int cmd_teardown(const char *config_path, const char *arg)
{
	(void)arg;
	struct config *cfg = NULL;
	int rc = load_config(config_path, &cfg);

	if (rc == EXIT_OK && fence_teardown(cfg) != 0)
		rc = EXIT_KERNEL;
	config_free(cfg);
	return rc;
}

static int cmd_probe(const char *config_path, const char *arg)
{
	struct config *cfg = NULL;
	const char *name = arg != NULL ? arg : PROBE_DEFAULT_NAME;
	char err[512];
	int rcode = 0, r, rc = load_config(config_path, &cfg);

	if (rc != EXIT_OK)
		return rc;
	r = probe_run(cfg, name, PROBE_TIMEOUT_MS, &rcode, err, sizeof(err));
	if (r == -EINVAL) {
		log_err("probe", "%s", err);
		rc = EXIT_USAGE;
	} else if (r != 0) {
		log_err("probe", "dnsfence is not answering: %s", err);
		rc = EXIT_DRIFT;
	} else {
		log_debug("probe", "%s: rcode %d", name, rcode);
	}
	config_free(cfg);
	return rc;
}

/* suggest [--min-count N]: names seen fewer than N times are left out. */
static int cmd_suggest(const char *config_path, const char *arg)
{
	static const struct option longopts[] = {
	    {"min-count", required_argument, NULL, 'm'},
	    {NULL, 0, NULL, 0},
	};
	struct config *cfg = NULL;
	unsigned long long min = 1;
	char err[512], *end = NULL;
	int opt, r, rc;

	(void)arg;
	optind = 1;
	while ((opt = getopt_long(cmd_argc, cmd_argv, "+", longopts, NULL)) !=
	       -1) {
		errno = 0;
		if (opt != 'm' || (min = strtoull(optarg, &end, 10)) == 0 ||
		    errno != 0 || *end != '\0' || optarg[0] == '-') {
			fprintf(stderr, "dnsfence: suggest: usage: suggest "
					"[--min-count N] (N >= 1)\n");
			return EXIT_USAGE;
		}
	}
	if (optind != cmd_argc) {
		fprintf(stderr, "dnsfence: suggest: too many operands\n");
		return EXIT_USAGE;
	}
	rc = load_config(config_path, &cfg);
	if (rc != EXIT_OK)
		return rc;
	r = suggest_run(cfg, min, stdout, err, sizeof(err));
	if (r != 0) {
		log_err("suggest", "%s%s", err,
			r == -ENOENT ? " (has the daemon run with this config?)"
				     : "");
		rc = r == -EINVAL ? EXIT_USAGE : EXIT_KERNEL;
	}
	config_free(cfg);
	return rc;
}

static int cmd_reload(const char *config_path, const char *arg)
{
	(void)arg;
	return control(config_path, "reload", RELOAD_TIMEOUT_S, "reload");
}

static int cmd_status(const char *config_path, const char *arg)
{
	if (arg != NULL && strcmp(arg, "--json") != 0) {
		fprintf(stderr, "dnsfence: status: unknown operand '%s'\n",
			arg);
		usage(stderr);
		return EXIT_USAGE;
	}
	return control(config_path, arg != NULL ? "status json" : "status",
		       CONTROL_IO_TIMEOUT * 2, "status");
}

/* The socket is the config's control.socket, read even from a file that
 * does not validate: the daemon answers a bad edit with its own error.
 * When no daemon answers, a local error in the file is the answer. */
static int control(const char *config_path, const char *cmd, int timeout_s,
		   const char *what)
{
	struct config *cfg = NULL;
	char err[1024], lerr[512] = "", path[128];
	int r;

	control_socket_of(config_path, path, sizeof(path));
	if (config_load(config_path, &cfg, lerr, sizeof(lerr)) == 0)
		lerr[0] = '\0';
	config_free(cfg);
	r = control_call(path, cmd, timeout_s, stdout, err, sizeof(err));
	fflush(stdout);
	if ((r == -ENOENT || r == -ECONNREFUSED) && lerr[0] != '\0') {
		log_err("config", "%s", lerr);
		r = EXIT_USAGE;
	} else if (r == -ENOENT || r == -ECONNREFUSED) {
		log_err(what, "no dnsfence daemon listens on %s", path);
		r = EXIT_KERNEL;
	} else if (r < 0) {
		log_err(what, "%s", err);
		r = EXIT_KERNEL;
	} else if (r > 0) {
		log_err(what, "%s", err);
	} else if (strcmp(what, "reload") == 0) {
		printf("reloaded: %s\n", err);
	}
	return r;
}
