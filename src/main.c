// SPDX-License-Identifier: GPL-2.0-or-later
/* main: command-line parsing and dispatch, and the serve loop's
 * assembly (config -> policy -> sets -> upstream -> resolver -> server).
 * Everything else lives in the modules. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <event2/event.h>

#include "dnsfence/config.h"
#include "dnsfence/log.h"
#include "dnsfence/policy.h"
#include "dnsfence/resolver.h"
#include "dnsfence/server.h"
#include "dnsfence/sets.h"
#include "dnsfence/stats.h"
#include "dnsfence/upstream.h"

enum exit_code {
	EXIT_OK = 0,
	EXIT_DRIFT = 1,
	EXIT_USAGE = 2,
	EXIT_KERNEL = 3,
};

struct command {
	const char *name;
	int (*fn)(const char *config_path);
	const char *help;
};

static int cmd_validate(const char *config_path);
static int cmd_serve(const char *config_path);
static int cmd_run(const char *config_path);
static int cmd_reference(const char *config_path);
static int load_config(const char *path, struct config **out);
static struct policy *build_policy(const struct config *cfg);
static int serve(const struct config *cfg);
static void on_signal(evutil_socket_t sig, short what, void *arg);
static void raise_nofile(void);
static void usage(FILE *out);

static const struct command commands[] = {
    {"run", cmd_run, "create the sets, then serve"},
    {"serve", cmd_serve, "serve DNS; the sets must already exist"},
    {"validate", cmd_validate,
     "load and validate the config; print it normalized as JSON"},
    {"reference", cmd_reference,
     "print the configuration reference (docs/configuration.md)"},
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dnsfence [-c FILE] COMMAND\n"
		"\n"
		"A DNS resolver that forwards only allowlisted names and puts "
		"the\naddresses it hands out into kernel ipsets.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name,
			commands[i].help);
	fprintf(out,
		"\n"
		"options:\n"
		"  -c, --config FILE  config file (default $DNSFENCE_CONFIG, "
		"else %s)\n"
		"  -h, --help         this text\n"
		"  -V, --version      print the version\n"
		"\n"
		"exit codes: 0 success, 1 check found drift, 2 bad usage or "
		"config,\n3 the kernel refused something\n",
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
	if (optind + 1 != argc) {
		fprintf(stderr, "dnsfence: %s\n",
			optind == argc ? "no command given"
				       : "one command only");
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0)
			return commands[i].fn(config_path);
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

static int cmd_validate(const char *config_path)
{
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

static int cmd_reference(const char *config_path)
{
	(void)config_path;
	config_print_reference(stdout);
	return EXIT_OK;
}

static int cmd_serve(const char *config_path)
{
	struct config *cfg = NULL;
	char err[512];
	int rc = load_config(config_path, &cfg);

	if (rc != EXIT_OK)
		return rc;
	if (cfg->mode != CONFIG_MODE_OFF &&
	    sets_check(cfg->set4, cfg->set6, err, sizeof(err)) != 0) {
		log_err("sets", "%s; run 'dnsfence setup' (or 'run') first",
			err);
		config_free(cfg);
		return EXIT_KERNEL;
	}
	rc = serve(cfg);
	config_free(cfg);
	return rc;
}

static int cmd_run(const char *config_path)
{
	struct config *cfg = NULL;
	char err[512];
	int rc = load_config(config_path, &cfg);

	if (rc != EXIT_OK)
		return rc;
	if (cfg->mode != CONFIG_MODE_OFF &&
	    sets_create(cfg->set4, cfg->set6, cfg->maxelem, err, sizeof(err)) !=
		0) {
		log_err("sets", "%s", err);
		config_free(cfg);
		return EXIT_KERNEL;
	}
	rc = serve(cfg);
	config_free(cfg);
	return rc;
}

static struct policy *build_policy(const struct config *cfg)
{
	struct policy *pol = policy_new();
	const char *why = NULL;

	if (pol == NULL)
		return NULL;
	for (size_t i = 0; i < cfg->n_allow; i++) {
		if (policy_add(pol, cfg->allow[i], &why) != 0) {
			log_err("config", "allow: %s: %s", cfg->allow[i], why);
			goto fail;
		}
	}
	for (size_t i = 0; i < cfg->n_ecosystems; i++) {
		if (policy_add_preset(pol, cfg->ecosystems[i]) != 0) {
			log_err("config", "ecosystems: %s: cannot load",
				cfg->ecosystems[i]);
			goto fail;
		}
	}
	return pol;
fail:
	policy_free(pol);
	return NULL;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;

	(void)what;
	if (sig == SIGUSR1) {
		stats_log();
		return;
	}
	log_info("main", "signal %d: shutting down", (int)sig);
	event_base_loopbreak(base);
}

/* Each TCP client is a descriptor; the soft limit of 1024 is too low. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int serve(const struct config *cfg)
{
	static const int signals[] = {SIGTERM, SIGINT, SIGUSR1};
	struct event *sigev[sizeof(signals) / sizeof(signals[0])] = {NULL};
	struct event_base *base = NULL;
	struct policy *pol = NULL;
	struct upstream *up = NULL;
	struct sets *sets = NULL;
	struct resolver *res = NULL;
	struct server *srv = NULL;
	char err[512];
	int rc = EXIT_KERNEL;

	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if (cfg->mode == CONFIG_MODE_OFF)
		log_warn("main",
			 "mode is \"off\": NO FENCE. Every name is forwarded "
			 "and nothing is put in the sets; the workload is "
			 "not protected");
	pol = build_policy(cfg);
	base = event_base_new();
	if (pol == NULL || base == NULL)
		goto out;
	up = upstream_new(base, cfg->upstreams, cfg->n_upstreams,
			  cfg->upstream_timeout_ms, err, sizeof(err));
	if (up == NULL) {
		log_err("upstream", "%s", err);
		goto out;
	}
	if (cfg->mode != CONFIG_MODE_OFF) {
		struct sets_params sp = {
		    .set4 = cfg->set4,
		    .set6 = cfg->set6,
		    .ttl_min = cfg->ttl_min,
		    .ttl_max = cfg->ttl_max,
		    .map_max = (size_t)cfg->maxelem * 2,
		};

		sets = sets_open(base, &sp, err, sizeof(err));
		if (sets == NULL) {
			log_err("sets", "%s", err);
			goto out;
		}
	}
	res = resolver_new(base, cfg, pol, up, sets);
	if (res == NULL)
		goto out;
	srv = server_new(base, cfg, res, err, sizeof(err));
	if (srv == NULL) {
		log_err("server", "%s", err);
		goto out;
	}
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		sigev[i] = evsignal_new(base, signals[i], on_signal, base);
		if (sigev[i] == NULL || evsignal_add(sigev[i], NULL) != 0)
			goto out;
	}
	log_info("main",
		 "dnsfence %s serving, mode %s, %zu allow entries, %zu "
		 "upstream(s)",
		 DNSFENCE_VERSION, config_mode_name(cfg->mode),
		 policy_size(pol), cfg->n_upstreams);
	if (event_base_dispatch(base) != 0)
		goto out;
	rc = EXIT_OK;
out:
	/* Order matters: the transports go first (their clients are
	 * dropped), then c-ares and the kernel adds finish their pending
	 * work, then the resolver that those callbacks point at. */
	server_free(srv);
	upstream_free(up);
	sets_close(sets);
	resolver_free(res);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (sigev[i] != NULL)
			event_free(sigev[i]);
	}
	policy_free(pol);
	if (base != NULL)
		event_base_free(base);
	stats_log();
	return rc;
}
