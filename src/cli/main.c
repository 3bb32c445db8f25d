// SPDX-License-Identifier: GPL-2.0-or-later
/* main: command-line parsing and dispatch. A command loads the config
 * (and resolves the user), calls one function of another module
 * (fence.c for setup, serve, run, check and teardown; probe.c for probe;
 * control.c for reload and status, one line to the daemon's socket;
 * suggest.c for suggest; why.c for why; config.c and configjson.c for reference
 * and validate), and turns its result into the exit code.
 *
 * Every command is one row of `commands`: its name, operands, options,
 * one-line summary and exit codes. The parser, `COMMAND --help`,
 * `help COMMAND` and the command list of `--help` all read that row, so
 * a new command is one row and one function. Options may come before or
 * after the command's operands; `--` ends them. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"
#include "config/configjson.h"
#include "base/instance.h"
#include "base/statefs.h"
#include "daemon/control.h"
#include "cli/exec.h"
#include "cli/fence.h"
#include "cli/inspect.h"
#include "config/fingerprint.h"
#include "config/subjects.h"
#include "fence/held.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "base/log.h"
#include "daemon/privs.h"
#include "cli/probe.h"
#include "sets/setsadm.h"
#include "cli/report.h"
#include "cli/suggest.h"
#include "cli/why.h"
#include "daemon/selftest.h"
#include "daemon/serve.h"

enum exit_code {
	EXIT_OK = 0,
	EXIT_DRIFT = 1,
	EXIT_USAGE = 2,
	EXIT_KERNEL = 3,
	EXIT_DAEMON = 4,
};

#define CMD_OPTS_MAX 8

struct cmd_opt {
	const char *name; /* the long option, without "--" */
	const char *arg;  /* its argument's name; NULL: a flag */
	const char *help;
};

/* What the parser hands a command: the config path (global -c, or the
 * command's own -c), each declared option's value in the order of the
 * row's opts ("" for a flag that was given, NULL for one that was not),
 * and the operands. */
struct invocation {
	const struct command *cmd;
	const char *config_path;
	const char *opt[CMD_OPTS_MAX];
	int argc;
	char **argv;
};

struct command {
	const char *name;
	int (*fn)(const struct invocation *inv);
	const char *operands; /* e.g. "[NAME]"; NULL: none */
	int max_operands;
	const char *summary;
	struct cmd_opt opts[CMD_OPTS_MAX];
	const char *exits; /* the exit codes this command gives */
	bool daemon;	   /* logs as a daemon (timestamps, levels) */
	bool raw; /* parses its own options (exec: they end at its CMD) */
};

static int cmd_validate(const struct invocation *inv);
static int cmd_setup(const struct invocation *inv);
static int cmd_serve(const struct invocation *inv);
static int cmd_run(const struct invocation *inv);
static int cmd_check(const struct invocation *inv);
static int cmd_teardown(const struct invocation *inv);
static int cmd_reference(const struct invocation *inv);
static int cmd_probe(const struct invocation *inv);
static int cmd_suggest(const struct invocation *inv);
static int cmd_reload(const struct invocation *inv);
static int cmd_status(const struct invocation *inv);
static int cmd_report(const struct invocation *inv);
static int cmd_entries(const struct invocation *inv);
static int cmd_allowed(const struct invocation *inv);
static int cmd_help(const struct invocation *inv);
static int cmd_completion(const struct invocation *inv);
static int cmd_selftest(const struct invocation *inv);
static int cmd_why(const struct invocation *inv);
static int cmd_prune(const struct invocation *inv);
static int cmd_diff(const struct invocation *inv);
static int parse_duration(const char *s, int64_t *out);
static int cmd_exec(const struct invocation *inv);
static int load_config(const char *path, struct config **out);
static int lookup_user(const struct config *cfg, uid_t *uid, gid_t *gid,
		       bool warn_shared);
static int trusted_state_dir(const struct config *cfg, uid_t uid);
static int fence(const struct invocation *inv, bool do_setup, bool do_serve);
static int no_daemon(const char *config_path, const char *what);
static int control(const char *config_path, const char *cmd, int timeout_s,
		   const char *what);
static void other_file(const char *given, const char *text);
static int check_here(const char *path, const struct config *cfg);
static const struct command *find_command(const char *name);
static int parse_command(const struct command *c, int argc, char **argv,
			 struct invocation *inv);
static int usage_error(const struct command *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void wrap(FILE *out, size_t col, const char *text);
static void usage(FILE *out);
static void command_help(const struct command *c, FILE *out);
#define RELOAD_TIMEOUT_S 90 /* above the guard's 60 s child timeout */

#define EXITS_FENCE                                                            \
	"0 done; 2 bad usage or config; 3 the kernel refused something "       \
	"(rules, sets, sockets, privileges); 4 a daemon already serves this "  \
	"config (its control socket answers), or the fence in place is "       \
	"another config's (it matches other sets)"
#define EXITS_CONTROL                                                          \
	"0 done; 2 bad usage, or the daemon found the config bad; 3 no "       \
	"daemon listens on the control socket, or it failed"

static const struct command commands[] = {
    {.name = "run",
     .fn = cmd_run,
     .summary = "setup, then serve (drops privileges after setup)",
     .exits = EXITS_FENCE,
     .daemon = true},
    {.name = "setup",
     .fn = cmd_setup,
     .summary = "create the sets, install and verify the rules",
     .exits = EXITS_FENCE},
    {.name = "serve",
     .fn = cmd_serve,
     .summary = "serve DNS only; the sets and rules must already be in "
		"place",
     .exits = "0 stopped by a signal; 2 bad usage or config; 3 the fence "
	      "is not in place, or the kernel refused something",
     .daemon = true},
    {.name = "check",
     .fn = cmd_check,
     .summary = "compare the kernel with the config; exit 1 and list each "
		"difference",
     .exits = "0 the fence matches the config; 1 a difference (one line "
	      "each on stdout); 2 bad usage or config; 3 the kernel state "
	      "cannot be read"},
    {.name = "teardown",
     .fn = cmd_teardown,
     .summary = "remove the rules and the sets: the deliberate way to OPEN "
		"the namespace",
     .exits = "0 removed; 2 bad usage or config; 3 the kernel refused "
	      "something; 4 a daemon serves this config: nothing was "
	      "removed (its guard would put the fence back); stop it "
	      "first. Also 4 when the fence in place is another config's "
	      "(it matches other sets): nothing was removed"},
    {.name = "validate",
     .fn = cmd_validate,
     .summary = "load and validate the config; print it normalized as JSON",
     .opts = {{"effective", NULL,
	       "print \"allow\" with every ecosystem preset expanded into "
	       "its names (and \"ecosystems\" empty): the names the fence "
	       "allows"}},
     .exits = "0 valid; 2 bad usage or config (the message names the key "
	      "and the fix)"},
    {.name = "reference",
     .fn = cmd_reference,
     .summary = "print the configuration reference (docs/configuration.md)",
     .exits = "0"},
    {.name = "probe",
     .fn = cmd_probe,
     .operands = "[NAME]",
     .max_operands = 1,
     .summary = "ask the daemon for NAME (default " PROBE_DEFAULT_NAME
		"); exit 0 on any reply within 2 s, else 1",
     .exits = "0 a reply came; 1 none within 2 s; 2 bad usage or config"},
    {.name = "suggest",
     .fn = cmd_suggest,
     .summary = "print an allow list learned from what the fence denied "
		"(audit mode: would deny), as JSON; an ecosystem preset "
		"where its hosts were denied",
     .opts = {{"min-count", "N",
	       "leave out names asked fewer than N times (default 1; a count "
	       "is questions, A and AAAA of one lookup once)"},
	      {"explain", NULL,
	       "add \"explain\": per learned entry its count, first seen, "
	       "the uids that asked and, for a wildcard or a preset, the "
	       "names behind it; names that look like encoded data "
	       "(exfiltration) are warned of, with or without this"}},
     .exits = "0 printed; 2 bad usage or config; 3 no state file (has the "
	      "daemon run with this config?) or it cannot be read"},
    {.name = "selftest",
     .fn = cmd_selftest,
     .summary = "probe from the workload's side that nothing gets around "
		"the fence; exit 1 naming what got out",
     .exits = "0 no probe got out (each line says held, or could not "
	      "prove); 1 a probe got around the fence (its OPEN line names "
	      "it); 2 bad usage or config; 3 the prober could not start"},
    {.name = "why",
     .fn = cmd_why,
     .operands = "NAME|ADDR[:PORT]",
     .max_operands = 1,
     .summary = "is NAME allowed (by which entry, else the entry to add) "
		"and what the daemon answered and blocked for it; or why a "
		"flow to ADDR (and TCP PORT) is blocked, and what would "
		"allow it. From the running daemon, else from the blocked "
		"flows in state_dir (the first line says which)",
     .exits = "0 explained; 2 bad usage, bad config or neither a name "
	      "nor an address; 3 for an address: no daemon listens and "
	      "state_dir holds no blocked flows, or the daemon failed"},
    {.name = "prune",
     .fn = cmd_prune,
     .summary = "print the allow list (and ecosystems) without the "
		"entries (presets) unused for a while, as JSON",
     .opts = {{"unused-for", "DURATION",
	       "how long unused (default 30d; units s, m, h, d, w)"}},
     .exits = "0 printed (each dropped entry named on stderr); 2 bad usage "
	      "or config; 3 no usage file (has the daemon run with this "
	      "config?) or it cannot be read"},
    {.name = "diff",
     .fn = cmd_diff,
     .operands = "OTHER.json",
     .max_operands = 1,
     .summary = "what OTHER.json's allow list (and ecosystems) adds (+) "
		"and removes (-) against the config's",
     .exits = "0 the same; 1 they differ (one line each); 2 bad usage, "
	      "config or OTHER.json; 3 OTHER.json cannot be read"},
    {.name = "reload",
     .fn = cmd_reload,
     .summary = "make the running daemon apply the config file now",
     .exits = "0 applied (or nothing to change); 2 the daemon kept its "
	      "running policy (the message names the key); 3 no daemon "
	      "listens on the control socket, or it failed"},
    {.name = "status",
     .fn = cmd_status,
     .summary = "the running daemon's mode, policy, sets, counters and "
		"last reload",
     .opts = {{"json", NULL, "one JSON object instead of key: value lines"}},
     .exits = EXITS_CONTROL},
    {.name = "report",
     .fn = cmd_report,
     .summary = "the egress report: allowed names asked, denied names "
		"and blocked flows, each with its fix; from the running "
		"daemon, else from state_dir",
     .opts = {{"format", "FORMAT",
	       "md (Markdown tables, for $GITHUB_STEP_SUMMARY), json (one "
	       "object) or text (one line each; the default)"}},
     .exits = "0 printed; 2 bad usage or config; 3 nothing to report (no "
	      "daemon answered on the control socket and state_dir holds no "
	      "records), or state_dir or its files cannot be read or are not "
	      "trusted"},
    {.name = "entries",
     .fn = cmd_entries,
     .summary = "what the running daemon put in the sets: name -> "
		"addresses -> expiry",
     .opts = {{"json", NULL, "one JSON object instead of lines"},
	      {"name", "NAME", "only NAME and the names below it"},
	      {"addr", "ADDR", "only the names that put ADDR in the sets"}},
     .exits = "0 listed (also when nothing matches); 2 bad usage; 3 no "
	      "daemon listens on the control socket, or it failed"},
    {.name = "allowed",
     .fn = cmd_allowed,
     .operands = "NAME",
     .max_operands = 1,
     .summary = "is NAME allowed by the config, and by which entry (allow, "
		"or an ecosystem preset)? If not, the entry to add, as the "
		"denied answer's EDE says it",
     .opts = {{"json", NULL,
	       "one JSON object: name, allowed, entry, source, mode; for a "
	       "name not allowed would_allow (the entry to add) and hint "
	       "(the EDE's text)"}},
     .exits = "0 allowed; 1 not allowed; 2 bad usage, bad config or not a "
	      "name"},
    {.name = "exec",
     .fn = cmd_exec,
     .operands = "-- CMD [ARGS]",
     .summary = "run CMD alone fenced (a fresh cgroup, no capabilities, as "
		"USER: default the user who ran sudo), the rest of the "
		"namespace untouched",
     .opts = {{"user", "USER",
	       "run CMD as USER (never root: a root process can leave its "
	       "cgroup)"},
	      {"allow", "NAME",
	       "allow NAME too, besides the config's allow list (repeat it; "
	       "a bare name, as in `allow`: github.com, *.github.com)"},
	      {"ecosystem", "NAME",
	       "allow the hosts of the preset NAME too, as the config's "
	       "`ecosystems` (repeat it; `dnsfence allowed` names them)"},
	      {"port", "PROTO/PORT",
	       "let flows to answered addresses use PROTO/PORT too, besides "
	       "the config's `ports` (tcp/N, udp/N, tcp/N-M; repeat it)"},
	      {"audit", NULL,
	       "deny nothing: run the fence in audit mode (denied names "
	       "forwarded) and report what enforce would have denied and "
	       "blocked"},
	      {"uid-fallback", NULL,
	       "where no cgroup v2 tree can be had (a plain 'ip netns "
	       "exec'), fence every process of USER's uid in this network "
	       "namespace instead of refusing; all of them are killed "
	       "before the fence goes"},
	      {"report", "FILE",
	       "when CMD ends, write what it asked and reached to FILE: "
	       "Markdown tables when FILE ends in .md (for "
	       "$GITHUB_STEP_SUMMARY), JSON otherwise (denied names and "
	       "blocked flows, each with its fix, are also summed up on "
	       "stderr, with or without this). The fence's own warnings and "
	       "errors are copied to stderr as they come, and its log is "
	       "kept when CMD fails. Without a config file (-c, "
	       "DNSFENCE_CONFIG, the default path) exec refuses unless "
	       "--allow or --ecosystem say what to allow"}},
     .exits = "0 or any other status: CMD's own (128 + N when signal N "
	      "ended it); 125 "
	      "exec itself failed (the fence could not be set up or "
	      "removed), or refused a flag's value or the config before "
	      "making anything; 126 CMD could not be run; 127 CMD not found",
     .raw = true},
    {.name = "help",
     .fn = cmd_help,
     .operands = "[COMMAND]",
     .max_operands = 1,
     .summary = "this list, or COMMAND's options and exit codes",
     .exits = "0; 2 an unknown COMMAND"},
    {.name = "completion",
     .fn = cmd_completion,
     .operands = "bash",
     .max_operands = 1,
     .summary = "print a bash completion script, made from this command "
		"table (installed as "
		"share/bash-completion/completions/dnsfence)",
     .exits = "0; 2 a shell other than bash"},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* text from column col (the cursor is there), wrapped at 79 columns with
 * later lines indented to col. */
static void wrap(FILE *out, size_t col, const char *text)
{
	size_t at = col;

	while (*text != '\0') {
		size_t w = strcspn(text, " ");

		if (at > col && at + 1 + w > 79) {
			fprintf(out, "\n%*s", (int)col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', out);
			at++;
		}
		fwrite(text, 1, w, out);
		at += w;
		text += w;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dnsfence [-c FILE] COMMAND [OPTIONS] [OPERANDS]\n"
		"\n"
		"A DNS resolver that forwards only allowlisted names and puts "
		"the\naddresses it hands out into kernel ipsets.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++) {
		char name[40];

		snprintf(name, sizeof(name), "%s%s%s", commands[i].name,
			 commands[i].operands != NULL ? " " : "",
			 commands[i].operands != NULL ? commands[i].operands
						      : "");
		fprintf(out, "  %-17s ", name);
		wrap(out, 20, commands[i].summary);
	}
	fprintf(
	    out,
	    "\n"
	    "options (before or after the command):\n"
	    "  -c, --config FILE  config file (default $DNSFENCE_CONFIG, "
	    "else %s)\n"
	    "  -h, --help         this text; 'dnsfence COMMAND --help' or "
	    "'dnsfence help\n"
	    "                     COMMAND': that command's options and exit "
	    "codes\n"
	    "  -V, --version      print the version\n"
	    "\n"
	    "exit codes: 0 success, 1 check found drift (probe: no reply; "
	    "selftest,\nrun, serve: a probe got around the fence; diff: the "
	    "lists differ), "
	    "2 bad usage\nor config, 3 the kernel refused something (for "
	    "reload and status: no daemon\nlistens), 4 a running daemon or "
	    "another config's fence is in the way\n(setup, run, teardown)\n",
	    config_default_path());
}

static void command_help(const struct command *c, FILE *out)
{
	fprintf(out, "usage: dnsfence [-c FILE] %s", c->name);
	for (size_t i = 0; i < CMD_OPTS_MAX && c->opts[i].name != NULL; i++)
		fprintf(out, " [--%s%s%s]", c->opts[i].name,
			c->opts[i].arg != NULL ? " " : "",
			c->opts[i].arg != NULL ? c->opts[i].arg : "");
	fprintf(out, "%s%s\n\n%s\n\noptions:\n", c->operands != NULL ? " " : "",
		c->operands != NULL ? c->operands : "", c->summary);
	fprintf(out,
		"  -c, --config FILE  the config file (default "
		"$DNSFENCE_CONFIG, else\n"
		"                     %s)\n",
		config_default_path());
	for (size_t i = 0; i < CMD_OPTS_MAX && c->opts[i].name != NULL; i++) {
		char opt[40];

		snprintf(opt, sizeof(opt), "--%s%s%s", c->opts[i].name,
			 c->opts[i].arg != NULL ? " " : "",
			 c->opts[i].arg != NULL ? c->opts[i].arg : "");
		fprintf(out, "  %-18s ", opt);
		wrap(out, 21, c->opts[i].help);
	}
	fprintf(out, "  -h, --help         this text\n\nexit codes: ");
	wrap(out, 12, c->exits);
}

static int usage_error(const struct command *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dnsfence: %s%s", c != NULL ? c->name : "",
		c != NULL ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (c != NULL)
		fprintf(stderr, "\nTry 'dnsfence %s --help'.\n", c->name);
	else
		fprintf(stderr, "\nTry 'dnsfence --help'.\n");
	return EXIT_USAGE;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	}
	return NULL;
}

/* argv[0] is the command's name. The options are -c/--config and
 * -h/--help for every command, and the row's own; getopt permutes, so
 * they may follow the operands. 0 with inv filled; -1 when --help was
 * printed; EXIT_USAGE (said) otherwise. */
static int parse_command(const struct command *c, int argc, char **argv,
			 struct invocation *inv)
{
	struct option longopts[CMD_OPTS_MAX + 3];
	size_t n = 0;
	int opt;

	if (c->raw) { /* everything after the name is the command's */
		inv->cmd = c;
		inv->argc = argc - 1;
		inv->argv = argv + 1;
		return argc > 1 && (strcmp(argv[1], "--help") == 0 ||
				    strcmp(argv[1], "-h") == 0)
			   ? -1
			   : 0;
	}
	longopts[n++] = (struct option){"config", required_argument, NULL, 'c'};
	longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	for (size_t i = 0; i < CMD_OPTS_MAX && c->opts[i].name != NULL; i++)
		longopts[n++] = (struct option){
		    c->opts[i].name,
		    c->opts[i].arg != NULL ? required_argument : no_argument,
		    NULL, 256 + (int)i};
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	optind = 0; /* glibc: start afresh on this argv */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:h", longopts, NULL)) != -1) {
		if (opt == 'c')
			inv->config_path = optarg;
		else if (opt == 'h')
			return -1;
		else if (opt >= 256)
			inv->opt[opt - 256] = optarg != NULL ? optarg : "";
		else if (opt == ':')
			return usage_error(c, "option '%s' needs an argument",
					   argv[optind - 1]);
		else
			return usage_error(c, "unknown option '%s'",
					   argv[optind - 1]);
	}
	inv->cmd = c;
	inv->argc = argc - optind;
	inv->argv = argv + optind;
	if (inv->argc > c->max_operands)
		return usage_error(c, "unexpected operand '%s'%s",
				   inv->argv[c->max_operands],
				   c->operands != NULL ? "" : " (none taken)");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	struct invocation inv = {0};
	const struct command *c;
	int opt, r;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:c:hV", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'c':
			inv.config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("dnsfence %s\n", DNSFENCE_VERSION);
			return EXIT_OK;
		case ':':
			return usage_error(NULL,
					   "option '%s' needs an argument",
					   argv[optind - 1]);
		default:
			return usage_error(NULL, "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error(NULL, "no command given");
	c = find_command(argv[optind]);
	if (c == NULL)
		return usage_error(NULL, "unknown command '%s'", argv[optind]);
	r = parse_command(c, argc - optind, argv + optind, &inv);
	if (r < 0) {
		command_help(c, stdout);
		return EXIT_OK;
	}
	if (r != 0)
		return r;
	log_init(c->daemon ? LOG_DEST_AUTO : LOG_DEST_CLI);
	return c->fn(&inv);
}

static int cmd_exec(const struct invocation *inv)
{
	/* exec_main reads its options with getopt from argv[1]. */
	return exec_main(inv->config_path, inv->argc + 1, inv->argv - 1);
}

static int cmd_help(const struct invocation *inv)
{
	const struct command *c;

	if (inv->argc == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	c = find_command(inv->argv[0]);
	if (c == NULL)
		return usage_error(inv->cmd, "unknown command '%s'",
				   inv->argv[0]);
	command_help(c, stdout);
	return EXIT_OK;
}

/* Generated from commands[], as --help is, so the two cannot drift. */
static int cmd_completion(const struct invocation *inv)
{
	if (inv->argc > 0 && strcmp(inv->argv[0], "bash") != 0)
		return usage_error(inv->cmd, "only bash is supported, not '%s'",
				   inv->argv[0]);
	printf("# bash completion for dnsfence (`dnsfence completion bash`, "
	       "made from its command table)\n"
	       "_dnsfence() {\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} "
	       "prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n"
	       "\tCOMPREPLY=()\n"
	       "\tcase $prev in -c | --config) "
	       "COMPREPLY=($(compgen -f -- \"$cur\")); return ;; esac\n"
	       "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	       "\t\tcase ${COMP_WORDS[i]} in\n"
	       "\t\t-c | --config) ((i++)) ;;\n"
	       "\t\t-*) ;;\n"
	       "\t\t*) cmd=${COMP_WORDS[i]}; break ;;\n"
	       "\t\tesac\n"
	       "\tdone\n"
	       "\tcase $cmd in\n"
	       "\t\"\") COMPREPLY=($(compgen -W \"--config --help --version");
	for (size_t i = 0; i < N_COMMANDS; i++)
		printf(" %s", commands[i].name);
	printf("\" -- \"$cur\")) ;;\n");
	for (size_t i = 0; i < N_COMMANDS; i++) {
		const struct command *c = &commands[i];

		printf("\t%s) COMPREPLY=($(compgen -W \"--config --help",
		       c->name);
		for (size_t o = 0; o < CMD_OPTS_MAX && c->opts[o].name; o++)
			printf(" --%s", c->opts[o].name);
		if (c->fn == cmd_help)
			for (size_t j = 0; j < N_COMMANDS; j++)
				printf(" %s", commands[j].name);
		if (c->fn == cmd_completion)
			printf(" bash");
		printf("\" -- \"$cur\")) ;;\n");
	}
	printf("\tesac\n}\ncomplete -o default -F _dnsfence dnsfence\n");
	return EXIT_OK;
}

static int load_config(const char *path, struct config **out)
{
	char err[2560]; /* an unknown key lists every known one */
	int rc = config_load(path, out, err, sizeof(err));

	if (rc != 0) {
		log_err("config", "%s", err);
		return EXIT_USAGE;
	}
	log_setup((*out)->log_level, (*out)->log_format, false);
	return EXIT_OK;
}

/* What the parse cannot know: the network namespace it is run in (the
 * fence's, for setup and run; validate says what run would say here). */
static int check_here(const char *path, const struct config *cfg)
{
	char err[768];

	if (subjects_check_own_addresses(cfg, err, sizeof(err)) == 0)
		return EXIT_OK;
	log_err("config", "%s: %s", config_path(path), err);
	return EXIT_USAGE;
}

static int cmd_validate(const struct invocation *inv)
{
	struct config *cfg = NULL;
	uid_t uid;
	gid_t gid;
	char *json;
	int rc = load_config(inv->config_path, &cfg);

	if (rc == EXIT_OK)
		rc = check_here(inv->config_path, cfg);
	if (rc == EXIT_OK)
		rc = lookup_user(cfg, &uid, &gid, false);
	if (rc != EXIT_OK) {
		config_free(cfg);
		return rc;
	}
	if (cfg->deny_rcode == CONFIG_DENY_REFUSED)
		log_warn("config",
			 "deny_rcode: \"refused\": musl waits for its timeout "
			 "(5 s) on every denied name and stops walking the "
			 "search list at the first REFUSED, which breaks "
			 "Kubernetes-style search domains; \"nxdomain\" has "
			 "neither problem");
	json = inv->opt[0] != NULL ? config_to_json_effective(cfg)
				   : config_to_json(cfg);
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

static int cmd_reference(const struct invocation *inv)
{
	(void)inv;
	config_print_reference(stdout);
	return EXIT_OK;
}

/* The configured user, resolved as run resolves it: uid/gid for the
 * rules and the drop. warn_shared: say so when that is nobody (only
 * for the commands that install or serve with it). */
static int lookup_user(const struct config *cfg, uid_t *uid, gid_t *gid,
		       bool warn_shared)
{
	char err[512];

	if (privs_lookup(cfg->user, uid, gid, err, sizeof(err)) != 0) {
		log_err("config", "%s", err);
		return EXIT_USAGE;
	}
	if (warn_shared && privs_shared_uid(*uid))
		log_warn("config",
			 "user: the daemon runs as nobody (uid %u), a uid "
			 "other programs share; give dnsfence a user of its "
			 "own (docs/security.md)",
			 (unsigned)*uid);
	return EXIT_OK;
}

/* setup, run and teardown change the fence a running daemon keeps (its
 * guard puts back what they remove, and a second daemon would take over
 * the control socket): ask the config's control socket first. */
static int no_daemon(const char *config_path, const char *what)
{
	char path[128], who[160], stop[48] = "";
	pid_t pid = 0;
	int r;

	control_socket_of(config_path, path, sizeof(path));
	r = control_listener(path, &pid);
	if (r <= 0)
		return EXIT_OK;
	if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH)
		snprintf(who, sizeof(who),
			 "the DNS process of a dnsfence daemon whose pid %ld "
			 "is gone (it did not exit within %d s: find it with "
			 "'pgrep -x dnsfence-dns')",
			 (long)pid, INSTANCE_ORPHAN_WAIT_MS / 1000);
	else if (pid > 0)
		snprintf(who, sizeof(who), "a dnsfence daemon (pid %ld)",
			 (long)pid);
	else
		snprintf(who, sizeof(who), "a dnsfence daemon");
	if (pid > 0 && kill(pid, 0) == 0)
		snprintf(stop, sizeof(stop), ", or 'kill -TERM %ld'",
			 (long)pid);
	if (strcmp(what, "teardown") == 0)
		log_err(what,
			"%s serves this config on %s; its guard would put the "
			"rules back within guard_interval seconds, so nothing "
			"was removed and the namespace stays FENCED. Stop the "
			"daemon first ('systemctl stop dnsfence', 'docker "
			"stop'%s), then run 'dnsfence teardown' again",
			who, path, stop);
	else
		log_err(what,
			"%s already serves this config on %s; 'dnsfence "
			"reload' makes it apply the file, 'dnsfence status' "
			"shows it; stop it first to start another",
			who, path);
	return EXIT_DAEMON;
}

/* The replaced upstreams whose origin lines are held (fence/held.h): as
 * the last run left them, and at setup also every upstream endpoint the
 * kernel's rules name and this config does not (the previous run's,
 * whose late answers may still come). A file that cannot be used holds
 * nothing more than the kernel's rules show (setup) and is said. */
static void load_held(struct config *cfg, const char *what, bool from_rules,
		      uid_t uid, gid_t gid)
{
	char err[512], list[HELD_MAX * (NETADDR_ENDPOINT_STRLEN + 1)];
	uint64_t now = monotime_s();
	size_t added = 0;

	if (cfg->mode == CONFIG_MODE_OFF || cfg->scope != CONFIG_SCOPE_OUTPUT)
		return;
	if (held_load(cfg, uid, now, err, sizeof(err)) != 0)
		log_warn(what, "%s: not used", err);
	if (!from_rules)
		return;
	if (held_from_rules(cfg, now, &added, list, sizeof(list), err,
			    sizeof(err)) != 0) {
		log_warn("setup",
			 "cannot read which upstreams the rules named: %s; "
			 "no replaced upstream's origin rules are held",
			 err);
		return;
	}
	if (added > 0)
		log_info("setup",
			 "the rules named upstream(s) %s that this config "
			 "does not: their origin rules stay %d s against late "
			 "answers",
			 list, HELD_SECONDS);
	if (added > 0) { /* a first setup: no daemon made it yet */
		int fd = instance_open_dir(cfg->state_dir, uid, gid, err,
					   sizeof(err));

		if (fd >= 0)
			close(fd);
	}
	if (held_save(cfg, -1, uid, gid, err, sizeof(err)) != 0)
		log_warn("setup",
			 "%s: `check` and the daemon will not know of the held "
			 "origin rules",
			 err);
}

/* A state_dir that is there must pass statefs.h's rule before anything
 * is read from it or written to it (a missing one is made later, as the
 * daemon's): EXIT_USAGE, said, when it does not. */
static int trusted_state_dir(const struct config *cfg, uid_t uid)
{
	char err[1024];
	int fd = statefs_open_dir(cfg->state_dir, uid, err, sizeof(err));

	if (fd >= 0)
		close(fd);
	if (fd != -EPERM)
		return EXIT_OK;
	log_err("config", "%s", err);
	return EXIT_USAGE;
}

/* setup, serve and run: load the config, resolve the user, fence_run. */
static int fence(const struct invocation *inv, bool do_setup, bool do_serve)
{
	struct config *cfg = NULL;
	uid_t uid;
	gid_t gid;
	int rc = load_config(inv->config_path, &cfg);

	if (rc == EXIT_OK)
		rc = check_here(inv->config_path, cfg);
	if (rc == EXIT_OK)
		rc = lookup_user(cfg, &uid, &gid, true);
	if (rc == EXIT_OK && do_setup)
		rc = no_daemon(inv->config_path, inv->cmd->name);
	if (rc == EXIT_OK)
		rc = trusted_state_dir(cfg, uid);
	if (rc == EXIT_OK)
		load_held(cfg, inv->cmd->name, do_setup, uid, gid);
	/* The fingerprint once: the guard renders the rules again at every
	 * check, and a long allowlist takes a sort each time (without
	 * memory for it, each render computes it as before). */
	if (rc == EXIT_OK)
		(void)provenance_memoize(cfg);
	if (rc == EXIT_OK) {
		int r = fence_run(cfg, inv->config_path, uid, gid, do_setup,
				  do_serve);

		rc = r == SERVE_NOT_READY ? EXIT_DRIFT
		     : r == -EBUSY	  ? EXIT_DAEMON
		     : r != 0		  ? EXIT_KERNEL
					  : EXIT_OK;
	}
	config_free(cfg);
	return rc;
}

static int cmd_setup(const struct invocation *inv)
{
	return fence(inv, true, false);
}

static int cmd_serve(const struct invocation *inv)
{
	return fence(inv, false, true);
}

static int cmd_run(const struct invocation *inv)
{
	return fence(inv, true, true);
}

static int cmd_check(const struct invocation *inv)
{
	struct config *cfg = NULL;
	int r, rc = load_config(inv->config_path, &cfg);

	if (rc == EXIT_OK) {
		uid_t uid = 0;
		gid_t gid = 0;
		char err[512];

		/* The daemon's user wrote the file; none: root's only. */
		if (privs_lookup(cfg->user, &uid, &gid, err, sizeof(err)) != 0)
			uid = 0;
		load_held(cfg, "check", false, uid, gid);
		r = fence_check(cfg);
		rc = r < 0 ? EXIT_KERNEL : r > 0 ? EXIT_DRIFT : EXIT_OK;
	}
	config_free(cfg);
	return rc;
}

static int cmd_teardown(const struct invocation *inv)
{
	struct config *cfg = NULL;
	int rc = load_config(inv->config_path, &cfg);

	if (rc == EXIT_OK)
		rc = no_daemon(inv->config_path, "teardown");
	if (rc == EXIT_OK) {
		int r = fence_teardown(cfg);

		rc = r == -EBUSY ? EXIT_DAEMON : r != 0 ? EXIT_KERNEL : EXIT_OK;
	}
	config_free(cfg);
	return rc;
}

static int cmd_probe(const struct invocation *inv)
{
	struct config *cfg = NULL;
	const char *name = inv->argc > 0 ? inv->argv[0] : PROBE_DEFAULT_NAME;
	char err[512];
	int rcode = 0, r, rc = load_config(inv->config_path, &cfg);

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

/* suggest [--min-count N] [--explain]: names seen fewer than N times
 * are left out. */
static int cmd_suggest(const struct invocation *inv)
{
	struct config *cfg = NULL;
	unsigned long long min = 1;
	const char *arg = inv->opt[0];
	char err[512], *end = NULL;
	int r, rc;

	if (arg != NULL) {
		errno = 0;
		min = strtoull(arg, &end, 10);
		if (min == 0 || errno != 0 || *end != '\0' || arg[0] == '-')
			return usage_error(inv->cmd,
					   "--min-count '%s': expected a whole "
					   "number, 1 or more",
					   arg);
	}
	rc = load_config(inv->config_path, &cfg);
	if (rc != EXIT_OK)
		return rc;
	r = inv->opt[1] != NULL
		? suggest_run_explained(cfg, min, stdout, err, sizeof(err))
		: suggest_run(cfg, min, stdout, err, sizeof(err));
	if (r != 0) {
		log_err("suggest", "%s%s", err,
			r == -ENOENT ? " (has the daemon run with this config?)"
				     : "");
		rc = r == -EINVAL ? EXIT_USAGE : EXIT_KERNEL;
	}
	config_free(cfg);
	return rc;
}

/* selftest: print each probe's verdict, then one summary line; exit 1
 * when any probe got out, 0 otherwise ("could not prove" is said, not
 * counted as a pass). */
static int cmd_selftest(const struct invocation *inv)
{
	static const char *const label[] = {[SELFTEST_HELD] = "held",
					    [SELFTEST_UNPROVEN] =
						"could not prove",
					    [SELFTEST_OPEN] = "OPEN"};
	struct config *cfg = NULL;
	size_t count[3] = {0}, cap = 0;
	char *line = NULL;
	const char *text;
	enum selftest_verdict v;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	FILE *in;
	int fd, rc = load_config(inv->config_path, &cfg);

	if (rc == EXIT_OK)
		rc = lookup_user(cfg, &uid, &gid, false);
	if (rc != EXIT_OK)
		goto out;
	selftest_warn_vsock();
	selftest_warn_capable(cfg);
	fd = selftest_start(cfg, uid, gid, &pid);
	if (fd < 0 || (in = fdopen(fd, "r")) == NULL) {
		log_err("selftest", "cannot start the prober: %s",
			strerror(fd < 0 ? -fd : errno));
		rc = EXIT_KERNEL;
		goto out;
	}
	while (getline(&line, &cap, in) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (selftest_parse(line, &v, &text) != 0)
			continue;
		count[v]++;
		printf("%-16s %s\n", label[v], text);
	}
	fclose(in);
	free(line);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (count[SELFTEST_OPEN] > 0)
		printf("selftest: OPEN: %zu probe(s) got around the fence\n",
		       count[SELFTEST_OPEN]);
	else if (count[SELFTEST_UNPROVEN] > 0)
		printf("selftest: could not prove %zu of %zu probes (no "
		       "control target answered); none got out\n",
		       count[SELFTEST_UNPROVEN],
		       count[SELFTEST_UNPROVEN] + count[SELFTEST_HELD]);
	else
		printf("selftest: passed: %zu probes held\n",
		       count[SELFTEST_HELD]);
	rc = count[SELFTEST_OPEN] > 0 ? EXIT_DRIFT : EXIT_OK;
out:
	config_free(cfg);
	return rc;
}

/* why NAME|ADDR[:PORT] (why.c). A config that does not load still lets
 * an address be asked of the daemon, as before. */
static int cmd_why(const struct invocation *inv)
{
	char cmd[CONTROL_LINE_MAX - 1], err[1024], path[128];
	struct config *cfg = NULL;
	int r, rc;

	if (inv->argc < 1)
		return usage_error(inv->cmd, "NAME or ADDR[:PORT] is missing");
	if (why_is_address(inv->argv[0]) &&
	    config_load(inv->config_path, &cfg, err, sizeof(err)) != 0) {
		if ((size_t)snprintf(cmd, sizeof(cmd), "why %s",
				     inv->argv[0]) >= sizeof(cmd))
			return usage_error(inv->cmd,
					   "'%s' is too long for an address",
					   inv->argv[0]);
		return control(inv->config_path, cmd, CONTROL_IO_TIMEOUT * 2,
			       "why");
	}
	config_free(cfg);
	rc = load_config(inv->config_path, &cfg);
	if (rc != EXIT_OK)
		return rc;
	control_socket_of(inv->config_path, path, sizeof(path));
	r = why_run(cfg, path, inv->argv[0], stdout, err, sizeof(err));
	fflush(stdout);
	if (r != 0)
		log_err("why", "%s", err);
	config_free(cfg);
	return r == 0	      ? EXIT_OK
	       : r == -EINVAL ? EXIT_USAGE
	       : r > 0	      ? r
			      : EXIT_KERNEL;
}

/* "30d", "12h", "90m", "3600s", "2w", or seconds without a unit. */
static int parse_duration(const char *s, int64_t *out)
{
	static const struct {
		char unit;
		int64_t seconds;
	} units[] = {{'s', 1},	   {'m', 60},	  {'h', 3600},
		     {'d', 86400}, {'w', 604800}, {'\0', 1}};
	char *end = NULL;
	unsigned long long n;

	errno = 0;
	if (s == NULL || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	n = strtoull(s, &end, 10);
	if (errno != 0 || n > 100ull * 365 * 86400)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (end[0] == units[i].unit &&
		    (end[0] == '\0' || end[1] == '\0')) {
			*out = (int64_t)n * units[i].seconds;
			return 0;
		}
	}
	return -EINVAL;
}

/* prune [--unused-for DURATION] */
static int cmd_prune(const struct invocation *inv)
{
	struct config *cfg = NULL;
	int64_t unused = 30 * 86400;
	char err[512];
	int r, rc;

	if (inv->opt[0] != NULL && parse_duration(inv->opt[0], &unused) != 0)
		return usage_error(inv->cmd,
				   "--unused-for '%s': expected a duration "
				   "such as 30d, 12h or 90m",
				   inv->opt[0]);
	rc = load_config(inv->config_path, &cfg);
	if (rc != EXIT_OK)
		return rc;
	r = suggest_prune(cfg, unused, stdout, stderr, err, sizeof(err));
	if (r != 0) {
		log_err("prune", "%s%s", err,
			r == -ENOENT ? " (has the daemon run with this config?)"
				     : "");
		rc = r == -EINVAL ? EXIT_USAGE : EXIT_KERNEL;
	}
	config_free(cfg);
	return rc;
}

static int cmd_diff(const struct invocation *inv)
{
	struct config *cfg = NULL;
	char err[512];
	int r, rc;

	if (inv->argc < 1)
		return usage_error(inv->cmd, "OTHER.json is missing");
	rc = load_config(inv->config_path, &cfg);
	if (rc != EXIT_OK)
		return rc;
	r = suggest_diff(cfg, inv->argv[0], stdout, err, sizeof(err));
	if (r < 0) {
		log_err("diff", "%s", err);
		rc = r == -EINVAL ? EXIT_USAGE : EXIT_KERNEL;
	} else {
		rc = r > 0 ? EXIT_DRIFT : EXIT_OK;
	}
	config_free(cfg);
	return rc;
}

static int cmd_reload(const struct invocation *inv)
{
	return control(inv->config_path, "reload", RELOAD_TIMEOUT_S, "reload");
}

static int cmd_status(const struct invocation *inv)
{
	return control(inv->config_path,
		       inv->opt[0] != NULL ? "status json" : "status",
		       CONTROL_IO_TIMEOUT * 2, "status");
}

/* report [--format md|json|text] */
static int cmd_report(const struct invocation *inv)
{
	enum report_format fmt = REPORT_TEXT;
	struct config *cfg = NULL;
	char err[1536];
	int r, rc;

	if (inv->opt[0] != NULL && report_format_parse(inv->opt[0], &fmt) != 0)
		return usage_error(inv->cmd,
				   "--format '%s': expected md, json or text",
				   inv->opt[0]);
	rc = load_config(inv->config_path, &cfg);
	if (rc != EXIT_OK)
		return rc;
	r = report_run(cfg, fmt, stdout, err, sizeof(err));
	if (r != 0) {
		log_err("report", "%s", err);
		rc = EXIT_KERNEL;
	}
	config_free(cfg);
	return rc;
}

static int cmd_entries(const struct invocation *inv)
{
	char path[128], err[512], *reply = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&reply, &len);
	int r;

	if (mem == NULL)
		return EXIT_KERNEL;
	control_socket_of(inv->config_path, path, sizeof(path));
	r = control_call(path, "entries", CONTROL_IO_TIMEOUT * 5, mem, err,
			 sizeof(err));
	fclose(mem);
	if (r == -ENOENT || r == -ECONNREFUSED) {
		log_err("entries", "no dnsfence daemon listens on %s", path);
		r = EXIT_KERNEL;
	} else if (r != 0) {
		log_err("entries", "%s", err);
		r = r < 0 ? EXIT_KERNEL : r;
	} else if (inspect_entries(reply, inv->opt[1], inv->opt[2],
				   inv->opt[0] != NULL, stdout, err,
				   sizeof(err)) < 0) {
		log_err("entries", "%s", err);
		r = EXIT_USAGE;
	}
	free(reply);
	return r;
}

static int cmd_allowed(const struct invocation *inv)
{
	struct config *cfg = NULL;
	char err[512];
	int r, rc;

	if (inv->argc != 1)
		return usage_error(inv->cmd, "NAME is required");
	rc = load_config(inv->config_path, &cfg);
	if (rc != EXIT_OK)
		return rc;
	r = inspect_allowed(cfg, inv->argv[0], inv->opt[0] != NULL, stdout, err,
			    sizeof(err));
	if (r < 0)
		log_err("allowed", "%s", err);
	config_free(cfg);
	return r < 0 ? EXIT_USAGE : r == 1 ? EXIT_OK : EXIT_DRIFT;
}

/* The daemon reloads the file it was started with ("read PATH: ..."):
 * say so when -c named another one. */
static void other_file(const char *given, const char *text)
{
	const char *path = config_path(given), *end;

	if (strncmp(text, "read ", 5) != 0 ||
	    (end = strstr(text + 5, ": ")) == NULL)
		return;
	if ((size_t)(end - text - 5) != strlen(path) ||
	    strncmp(text + 5, path, strlen(path)) != 0)
		log_warn("reload",
			 "the daemon re-read the file it was started with, "
			 "%.*s, not %s (-c only chose the control socket)",
			 (int)(end - text - 5), text + 5, path);
}

/* The socket is the config's control.socket, read even from a file that
 * does not validate: the daemon answers a bad edit with its own error.
 * When no daemon answers, a local error in the file is the answer. */
static int control(const char *config_path, const char *cmd, int timeout_s,
		   const char *what)
{
	struct config *cfg = NULL;
	char err[1536], lerr[512] = "", path[128];
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
		other_file(config_path, err);
	}
	return r;
}
