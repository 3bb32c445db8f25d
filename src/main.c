// SPDX-License-Identifier: GPL-2.0-or-later
/* main: command-line parsing and dispatch. Each command is a short
 * sequence of module calls: setup (sets_create, fw_apply, then the same
 * comparison `check` makes), serve (refuses unless that comparison finds
 * the fence in place, then serve.c), run (both), check, teardown,
 * probe (probe.c: one query to the running daemon, for readiness), and
 * reload and status (control.c: one line to the daemon's socket). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "dnsfence/config.h"
#include "dnsfence/control.h"
#include "dnsfence/firewall.h"
#include "dnsfence/guard.h"
#include "dnsfence/log.h"
#include "dnsfence/privs.h"
#include "dnsfence/probe.h"
#include "dnsfence/serve.h"
#include "dnsfence/sets.h"

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

static int cmd_validate(const char *config_path, const char *arg);
static int cmd_setup(const char *config_path, const char *arg);
static int cmd_serve(const char *config_path, const char *arg);
static int cmd_run(const char *config_path, const char *arg);
static int cmd_check(const char *config_path, const char *arg);
static int cmd_teardown(const char *config_path, const char *arg);
static int cmd_reference(const char *config_path, const char *arg);
static int cmd_probe(const char *config_path, const char *arg);
static int cmd_reload(const char *config_path, const char *arg);
static int cmd_status(const char *config_path, const char *arg);
static int control(const char *config_path, const char *cmd, int timeout_s,
		   const char *what);
static int load_config(const char *path, struct config **out);
static int lookup_user(const struct config *cfg, uid_t *uid, gid_t *gid);
static int fence(const char *config_path, bool do_setup, bool do_serve);
#define RELOAD_TIMEOUT_S 90 /* above the guard's 60 s child timeout */
static void report_log(void *arg, const char *line);
static void report_stdout(void *arg, const char *line);
static int setup(const struct config *cfg, uid_t uid);
static int serve_fenced(const struct config *cfg, const char *path, uid_t uid,
			gid_t gid, bool verify);
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
		char name[32];

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
		if (argc - optind > (c->arg != NULL ? 2 : 1)) {
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

static void report_log(void *arg, const char *line)
{
	log_err((const char *)arg, "%s", line);
}

static void report_stdout(void *arg, const char *line)
{
	(void)arg;
	printf("%s\n", line);
}

/* Create the sets, install the rules, read both back. */
static int setup(const struct config *cfg, uid_t uid)
{
	char err[512];
	int r;

	if (cfg->mode == CONFIG_MODE_OFF) {
		log_warn("setup",
			 "mode is \"off\": installing NO rules and NO sets; "
			 "the workload is NOT fenced");
		return EXIT_OK;
	}
	if (sets_create(cfg->set4, cfg->set6, cfg->maxelem, err, sizeof(err)) !=
	    0) {
		log_err("setup", "sets: %s", err);
		return EXIT_KERNEL;
	}
	if (fw_apply(cfg, uid, err, sizeof(err)) != 0) {
		log_err("setup", "firewall: %s", err);
		return EXIT_KERNEL;
	}
	r = guard_compare(cfg, uid, report_log, (void *)"setup", err,
			  sizeof(err));
	if (r != 0) {
		log_err("setup", "verification failed%s%s", r < 0 ? ": " : "",
			r < 0 ? err : " (differences above)");
		return EXIT_KERNEL;
	}
	log_info("setup",
		 "rules and sets in place (mode %s, upstream DNS "
		 "for uid %u only)",
		 config_mode_name(cfg->mode), (unsigned)uid);
	return EXIT_OK;
}

/* Serve, after checking (verify) that the fence is in place. */
static int serve_fenced(const struct config *cfg, const char *path, uid_t uid,
			gid_t gid, bool verify)
{
	char err[512];
	int r;

	if (verify && cfg->mode != CONFIG_MODE_OFF) {
		r = guard_compare(cfg, uid, report_log, (void *)"serve", err,
				  sizeof(err));
		if (r != 0) {
			log_err("serve",
				"%s: refusing to serve an unfenced namespace; "
				"run 'dnsfence setup' (or 'run') first",
				r < 0 ? err : "the fence is not in place");
			return EXIT_KERNEL;
		}
	}
	return serve_run(cfg, path, uid, gid) == 0 ? EXIT_OK : EXIT_KERNEL;
}

/* setup, serve and run: load the config, resolve the user, then install
 * the fence and/or serve behind it (serve alone first checks that the
 * fence is in place; run has just installed and verified it). */
static int fence(const char *config_path, bool do_setup, bool do_serve)
{
	struct config *cfg = NULL;
	uid_t uid;
	gid_t gid;
	int rc = load_config(config_path, &cfg);

	if (rc == EXIT_OK)
		rc = lookup_user(cfg, &uid, &gid);
	if (rc == EXIT_OK && do_setup)
		rc = setup(cfg, uid);
	if (rc == EXIT_OK && do_serve)
		rc = serve_fenced(cfg, config_path, uid, gid, !do_setup);
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
	char err[512];
	uid_t uid;
	gid_t gid;
	int r, rc = load_config(config_path, &cfg);

	if (rc == EXIT_OK)
		rc = lookup_user(cfg, &uid, &gid);
	if (rc != EXIT_OK)
		goto out;
	if (cfg->mode == CONFIG_MODE_OFF) {
		log_warn("check", "mode is \"off\": no fence is expected, "
				  "nothing to compare");
		goto out;
	}
	r = guard_compare(cfg, uid, report_stdout, NULL, err, sizeof(err));
	fflush(stdout);
	if (r < 0) {
		log_err("check", "%s", err);
		rc = EXIT_KERNEL;
	} else if (r > 0) {
		rc = EXIT_DRIFT;
	}
out:
	config_free(cfg);
	return rc;
}

static int cmd_teardown(const char *config_path, const char *arg)
{
	(void)arg;
	struct config *cfg = NULL;
	char err[512];
	int rc = load_config(config_path, &cfg);

	if (rc != EXIT_OK)
		return rc;
	if (fw_remove(err, sizeof(err)) != 0) {
		log_err("teardown", "firewall: %s", err);
		rc = EXIT_KERNEL;
	}
	if (sets_destroy(cfg->set4, cfg->set6, err, sizeof(err)) != 0) {
		log_err("teardown", "sets: %s", err);
		rc = EXIT_KERNEL;
	}
	if (rc == EXIT_OK)
		log_warn("teardown",
			 "rules and sets removed: outbound traffic is NO "
			 "LONGER fenced");
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
