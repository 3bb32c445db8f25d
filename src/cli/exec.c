// SPDX-License-Identifier: GPL-2.0-or-later
/* exec: `dnsfence exec [--user USER] [--allow NAME]... [--ecosystem NAME]...
 * [--port PROTO/PORT]... [--audit] [--uid-fallback] [--report FILE] -- CMD
 * [ARGS]`, one command fenced, the rest of the namespace untouched.
 *
 * Everything exec is given is judged before anything is made: each
 * flag's value alone (its error names the flag and the form exec takes),
 * then the config the instance will run (the file, or the built-in
 * defaults when there is none and --allow or --ecosystem say what to
 * allow; the environment's DNSFENCE_MODE and DNSFENCE_EXTRA_HOSTS folded
 * into it, and said; the flags over it), so a refused start leaves
 * nothing behind and tears nothing down. --audit runs the instance in
 * audit mode with denied names forwarded: nothing is denied, and the
 * report says what enforce would have denied and blocked.
 *
 * The fence is a private instance for this command: that config with `subjects`
 * set to a fresh cgroup made for it below our own (where none can be made, exec
 * refuses unless --uid-fallback asks for the command's uid instead, whose
 * processes are then all killed before the fence goes), its own listener on a
 * loopback address of its own, its own sets, state directory and control socket
 * under STATE_DIR/exec/PID (STATE_DIR the config's `state_dir`), so it never
 * meets another daemon's. The daemon is this binary's `run`, started as a
 * child; once it answers, the command is started in the cgroup, as USER
 * (never root: a root process, capabilities or not, can write the cgroup
 * tree and leave), with no capability in any set and no_new_privs. When
 * the command exits (or we are asked to stop: the signal goes to the
 * command first), what is left in the cgroup is killed, then the daemon
 * is stopped, what it recorded (its state directory, which it owns:
 * STATE_DIR/exec/PID/state) is summed up on stderr and, with --report,
 * written whole (report.c), the instance's rules and sets are removed
 * with this
 * binary's `teardown`, the cgroup and the directory go, and our exit
 * status is the command's (128 + signal when a signal ended it); a cgroup
 * that cannot be emptied keeps the rules. A `dnsfence exec` killed
 * outright leaves its directory: the next one finds it (its pid gone),
 * judges it (root's alone, not a link) and, by keys rebuilt from that
 * pid only (never a config, cgroup or pid read there: another user may
 * have planted them), empties its cgroup, stops its daemon and removes
 * its fence first. The command cannot
 * reach into another process of its uid (seccomp, Landlock) nor open a
 * socket that netfilter never sees (AF_VSOCK; io_uring), and exec
 * refuses a cgroup tree the command's uid could write.
 *
 * The daemon's stderr goes through a relay process of exec's to its log
 * file; once the fence answers, its warnings and errors are also said on
 * our stderr, as they come (a command whose name fails then hears why),
 * and the log is kept, as STATE_DIR/exec/PID.log, when the command or
 * the daemon failed.
 *
 * One exec at a time per network namespace: the output fence's chains
 * are one per namespace. A namespace already fenced by another dnsfence
 * is refused (use `subjects` in that daemon's config instead). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/exec.h"
#include "cli/probe.h"
#include "cli/report.h"
#include "config/config.h"
#include "fence/firewall.h"
#include "fence/fwexec.h"
#include "base/statefs.h"
#include "daemon/privs.h"

#define READY_TIMEOUT_MS 15000
#define STOP_TIMEOUT_MS	 5000
#define KILL_TIMEOUT_MS	 5000
#define PATH_LEN	 512
#define STATE_SUBDIR	 "state" /* the daemon's state_dir, in DIR */
#define RELAY_LINE	 1024	 /* a relayed line's bytes, the rest cut */
#define KEPT_LOGS_MAX	 16	 /* kept logs (keep_log); the oldest go */

/* What the command line gave exec (parse_args); the arrays hold strings,
 * each already judged alone (check_flag). */
struct flags {
	const char *user, *report;
	bool uid_fallback, audit;
	cJSON *allow, *ecosystems, *ports;
};

struct instance {
	char dir[PATH_LEN];    /* STATE_DIR/exec/PID */
	char conf[PATH_LEN];   /* its dnsfence.json */
	char cgroup[PATH_LEN]; /* the cgroup's directory, "" when by uid */
	char cgpath[PATH_LEN]; /* the same as the kernel names it */
	bool by_uid;	       /* no cgroup: uid fenced (--uid-fallback) */
	bool started;	       /* its daemon was started: its fence may exist */
	bool failed;	       /* its daemon failed: its log is kept */
	bool ready;	       /* its daemon answered (wait_ready) */
	uid_t uid;
	gid_t gid;
	pid_t daemon;
	pid_t relay; /* the process copying the daemon's log (start_relay) */
};

static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t relay_on; /* in the relay: the fence is up */
static char state_path[PATH_LEN];      /* STATE_DIR */
static uid_t state_uid;		/* the daemon's user, who may own STATE_DIR */
static char exec_dir[PATH_LEN]; /* STATE_DIR/exec */
static int exec_fd = -1;	/* exec_dir, judged: root's, no g/o write */

static bool path_fmt(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* snprintf for paths: false (and "") when it would not fit. */
static bool path_fmt(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap) {
		out[0] = '\0';
		return false;
	}
	return true;
}

static int parse_args(int argc, char **argv, struct flags *fl, int *cmd_at);
static int check_flag(const char *flag, const char *key, const char *value);
static void flag_hint(const char *key, const char *value, char *out,
		      size_t cap);
static bool flag_valid(const char *key, const char *value, char *err,
		       size_t errlen);
static cJSON *build_config(const char *given, const struct flags *fl,
			   const struct instance *in);
static int fold_env(cJSON *j, bool audit);
static int fold_flags(cJSON *j, const struct flags *fl,
		      const struct config *cfg);
static int append_all(cJSON *j, const char *key, const cJSON *items);
static void plan_instance(struct instance *in);
static int open_exec_dir(void);
static int start_relay(struct instance *in, const char *log);
static void relay(int from, int log);
static void relay_line(const char *line);
static void finish_relay(struct instance *in);
static void relay_file(const char *log);
static void on_ready(int sig);
static void keep_log(const struct instance *in, int status);
static void prune_logs(const char *keep);
static int resolve_user(const char *user, uid_t *uid, gid_t *gid);
static int cgroup_root(char *mnt, size_t mlen, char *own, size_t olen);
static int make_cgroup(struct instance *in, bool uid_fallback);
static int write_config(const struct instance *in, cJSON *j);
static cJSON *read_json(const char *path);
static void instance_keys(cJSON *j, const struct instance *in, int pid);
static pid_t spawn_self(const char *conf, const char *command, const char *log,
			int out);
static int wait_ready(struct instance *in);
static pid_t start_command(const struct instance *in, char **argv);
static void drop_everything(const struct instance *in);
static int exec_filter(void);
static int cgroup_delegated(const char *mnt, const char *own, uid_t uid,
			    gid_t gid);
static int empty_cgroup(const struct instance *in);
static int empty_uid(const struct instance *in);
static int kill_uid_pass(uid_t uid, const struct stat *ns, pid_t daemon);
static int wait_command(pid_t pid);
static void stop_daemon(struct instance *in);
static void report(const struct instance *in, int status, const char *path);
static void teardown(const struct instance *in);
static void clean_stale(void);
static bool namespace_fenced(void);
static void on_signal(int sig);
static int rm_tree(const char *dir);
static int find_exec_dir(const char *given);
static bool root_only(const struct stat *st);
static int parse_pid(const char *name);
static bool stale_entry(int pid, const char *name, struct instance *in);
static void stale_subject(int pid, int dfd, struct instance *in);
static int write_teardown_config(int pid, int dfd, struct instance *in);
static void stop_stale_daemon(const char *dir);

int exec_main(const char *config_path, int argc, char **argv)
{
	struct instance in = {.daemon = -1, .relay = -1};
	struct flags fl = {.allow = cJSON_CreateArray(),
			   .ecosystems = cJSON_CreateArray(),
			   .ports = cJSON_CreateArray()};
	cJSON *conf = NULL;
	int cmd_at = 0, status = 125;
	char pidname[16], log[PATH_LEN + 16];
	pid_t child = -1;

	if (fl.allow == NULL || fl.ecosystems == NULL || fl.ports == NULL)
		goto out;
	if (parse_args(argc, argv, &fl, &cmd_at) != 0)
		goto out;
	if (geteuid() != 0) {
		fprintf(stderr, "dnsfence: exec: run as root (it installs the "
				"command's fence)\n");
		goto out;
	}
	/* Judged whole before anything is made (nothing to tear down). */
	if (resolve_user(fl.user, &in.uid, &in.gid) != 0 ||
	    find_exec_dir(config_path) != 0)
		goto out;
	plan_instance(&in);
	if ((conf = build_config(config_path, &fl, &in)) == NULL ||
	    open_exec_dir() != 0)
		goto out;
	clean_stale();
	if (namespace_fenced()) {
		fprintf(stderr,
			"dnsfence: exec: this network namespace is already "
			"fenced by dnsfence (chain DNSFENCE-OUT); name the "
			"command's user or cgroup in that daemon's `subjects` "
			"instead\n");
		goto out;
	}
	snprintf(pidname, sizeof(pidname), "%d", (int)getpid());
	path_fmt(log, sizeof(log), "%s/dnsfence.log", in.dir);
	if (mkdirat(exec_fd, pidname, 0700) != 0)
		goto io;
	if (make_cgroup(&in, fl.uid_fallback) != 0 ||
	    write_config(&in, conf) != 0)
		goto cleanup;
	/* No SA_RESTART: the wait for the command must see the signal. */
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (wait_ready(&in) != 0)
		goto cleanup;
	child = start_command(&in, argv + cmd_at);
	if (child > 0)
		status = wait_command(child);
cleanup:
	/* Nothing of the command may outlive its fence: the cgroup (or the
	 * uid's processes) emptied first, or the rules stay. */
	if (empty_cgroup(&in) != 0 || empty_uid(&in) != 0) {
		stop_daemon(&in);
		finish_relay(&in);
		if (in.started && !in.ready)
			relay_file(log);
		if (child > 0)
			report(&in, status, fl.report);
		keep_log(&in, status);
		goto out;
	}
	stop_daemon(&in);
	finish_relay(&in);
	if (in.started && !in.ready)
		relay_file(log);
	if (child > 0)
		report(&in, status, fl.report);
	keep_log(&in, status);
	teardown(&in);
	goto out;
io:
	fprintf(stderr, "dnsfence: exec: cannot make %s: %s\n",
		in.dir[0] ? in.dir : exec_dir, strerror(errno));
out:
	if (exec_fd >= 0)
		close(exec_fd);
	exec_fd = -1;
	cJSON_Delete(conf);
	cJSON_Delete(fl.allow);
	cJSON_Delete(fl.ecosystems);
	cJSON_Delete(fl.ports);
	return status;
}

/* exec_dir from the config's state_dir, its owner's uid in state_uid;
 * nothing is made here (open_exec_dir makes it). */
static int find_exec_dir(const char *given)
{
	const char *path = config_path(given);
	const char *state = CONFIG_DEFAULT_STATE_DIR, *user = "dnsfence";
	cJSON *j = access(path, F_OK) == 0 ? read_json(path) : NULL, *sd, *u;
	char err[1024], num[24];
	gid_t gid = 0;
	int rc = -ENAMETOOLONG;

	sd = j ? cJSON_GetObjectItem(j, "state_dir") : NULL;
	if (cJSON_IsString(sd) && sd->valuestring[0] == '/')
		state = sd->valuestring;
	u = j ? cJSON_GetObjectItem(j, "user") : NULL;
	if (cJSON_IsString(u))
		user = u->valuestring;
	else if (cJSON_IsNumber(u) &&
		 snprintf(num, sizeof(num), "%.0f", u->valuedouble) > 0)
		user = num;
	if (privs_lookup(user, &state_uid, &gid, err, sizeof(err)) != 0)
		state_uid = 0; /* then only root's state directory will do */
	if (!path_fmt(state_path, sizeof(state_path), "%s", state) ||
	    !path_fmt(exec_dir, sizeof(exec_dir), "%s/exec", state))
		fprintf(stderr, "dnsfence: exec: state_dir %s: too long\n",
			state);
	else
		rc = 0;
	cJSON_Delete(j);
	return rc;
}

/* exec_dir made when missing (state_dir as the daemon makes it) and
 * opened as exec_fd. The state directory must pass the daemon's own
 * rule (statefs.h: root's or `user`'s, no group or other write, not a
 * link); exec_dir, which only exec writes, must be root's alone: what
 * is in it names what the next exec removes. */
static int open_exec_dir(void)
{
	char err[1024];
	struct stat st;
	int sfd = -1, rc = -EIO;

	if (mkdir(state_path, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "dnsfence: exec: cannot make %s: %s\n",
			state_path, strerror(errno));
		goto out;
	}
	sfd = statefs_open_dir(state_path, state_uid, err, sizeof(err));
	if (sfd < 0) {
		fprintf(stderr, "dnsfence: exec: %s\n", err);
		rc = sfd;
		goto out;
	}
	if (mkdirat(sfd, "exec", 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "dnsfence: exec: cannot make %s: %s\n",
			exec_dir, strerror(errno));
		goto out;
	}
	exec_fd = openat(sfd, "exec",
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (exec_fd < 0 || fstat(exec_fd, &st) != 0 || !root_only(&st)) {
		fprintf(stderr,
			"dnsfence: exec: %s is %s: refusing it, since what it "
			"holds names the rules, sets, cgroups and processes "
			"the next exec removes. Fix: remove it (exec makes it "
			"again, root's, mode 0700)\n",
			exec_dir,
			exec_fd < 0 ? "a symbolic link or not a directory"
				    : "not root's alone (owner or mode)");
		if (exec_fd >= 0)
			close(exec_fd);
		exec_fd = -1;
		rc = -EPERM;
		goto out;
	}
	rc = 0;
out:
	if (sfd >= 0)
		close(sfd);
	return rc;
}

/* The instance's directory and config paths, and the cgroup it will
 * have (make_cgroup makes it), so that its config can be judged first. */
static void plan_instance(struct instance *in)
{
	char mnt[PATH_LEN], own[PATH_LEN];

	path_fmt(in->dir, sizeof(in->dir), "%s/%d", exec_dir, (int)getpid());
	path_fmt(in->conf, sizeof(in->conf), "%s/dnsfence.json", in->dir);
	in->cgpath[0] = '\0';
	if (cgroup_root(mnt, sizeof(mnt), own, sizeof(own)) == 0)
		path_fmt(in->cgpath, sizeof(in->cgpath), "%s/dnsfence-exec-%d",
			 own, (int)getpid());
}

/* A directory (lstat'ed: a link is not) that only root may write. */
static bool root_only(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == 0 &&
	       (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

static void on_signal(int sig)
{
	got_signal = sig;
}

static int parse_args(int argc, char **argv, struct flags *fl, int *cmd_at)
{
	static const struct option longopts[] = {
	    {"user", required_argument, NULL, 'u'},
	    {"allow", required_argument, NULL, 'a'},
	    {"ecosystem", required_argument, NULL, 'e'},
	    {"port", required_argument, NULL, 'p'},
	    {"audit", no_argument, NULL, 'A'},
	    {"uid-fallback", no_argument, NULL, 'F'},
	    {"report", required_argument, NULL, 'R'},
	    {NULL, 0, NULL, 0},
	};
	char err[4200];
	cJSON *list;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+u:a:", longopts, NULL)) != -1) {
		if (opt == 'u') {
			fl->user = optarg;
		} else if (opt == 'a' || opt == 'e' || opt == 'p') {
			list = opt == 'a'   ? fl->allow
			       : opt == 'e' ? fl->ecosystems
					    : fl->ports;
			if (check_flag(opt == 'a'   ? "allow"
				       : opt == 'e' ? "ecosystem"
						    : "port",
				       opt == 'a'   ? "allow"
				       : opt == 'e' ? "ecosystems"
						    : "ports",
				       optarg) != 0 ||
			    !cJSON_AddItemToArray(list,
						  cJSON_CreateString(optarg)))
				return -EINVAL;
		} else if (opt == 'A') {
			fl->audit = true;
		} else if (opt == 'F') {
			fl->uid_fallback = true;
		} else if (opt == 'R') {
			if (report_check_path(optarg, err, sizeof(err)) != 0) {
				fprintf(stderr, "dnsfence: exec: %s\n", err);
				return -EINVAL;
			}
			fl->report = optarg;
		} else {
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		fprintf(stderr,
			"dnsfence: exec: usage: exec [--user USER] "
			"[--allow NAME]... [--ecosystem NAME]... "
			"[--port PROTO/PORT]... [--audit] [--uid-fallback] "
			"[--report FILE] -- CMD [ARGS]\n");
		return -EINVAL;
	}
	*cmd_at = optind;
	return 0;
}

/* Whether value, alone, is a valid item of the config's key; err gets
 * the config's reason without its "key[0]: " (and quoted value) prefix. */
static bool flag_valid(const char *key, const char *value, char *err,
		       size_t errlen)
{
	struct config_env env = {0};
	struct config *cfg = NULL;
	cJSON *j = cJSON_CreateObject(), *arr, *up;
	char *text = NULL, why[1024], quoted[600];
	const char *reason = why;
	bool ok = false;

	snprintf(err, errlen, "out of memory");
	arr = j != NULL ? cJSON_AddArrayToObject(j, key) : NULL;
	/* an upstream of its own: the host's resolv.conf is not asked */
	up = j != NULL ? cJSON_AddArrayToObject(j, "upstreams") : NULL;
	if (arr == NULL || up == NULL ||
	    !cJSON_AddItemToArray(arr, cJSON_CreateString(value)) ||
	    !cJSON_AddItemToArray(up, cJSON_CreateString("192.0.2.1")) ||
	    (text = cJSON_PrintUnformatted(j)) == NULL)
		goto out;
	if (config_parse(text, strlen(text), &env, &cfg, why, sizeof(why)) ==
	    0) {
		ok = true;
		goto out;
	}
	if (strncmp(reason, key, strlen(key)) == 0 &&
	    strncmp(reason + strlen(key), "[0]: ", 5) == 0)
		reason += strlen(key) + 5;
	snprintf(quoted, sizeof(quoted), "\"%s\": ", value);
	if (strncmp(reason, quoted, strlen(quoted)) == 0)
		reason += strlen(quoted);
	snprintf(err, errlen, "%s", reason);
out:
	config_free(cfg);
	free(text);
	cJSON_Delete(j);
	return ok;
}

/* Why value is refused, said as the flags to give, where it is a URL
 * or a preset's name ("" for any other value: the config's reason). */
static void flag_hint(const char *key, const char *value, char *out, size_t cap)
{
	char host[300], err[256];
	const char *h = strstr(value, "://"), *end;
	long port = 0;

	out[0] = '\0';
	if (strcmp(key, "allow") != 0)
		return;
	if (flag_valid("ecosystems", value, err, sizeof(err))) {
		snprintf(out, cap,
			 "a single label, and the name of a preset: give "
			 "--ecosystem %s (or --allow with each name it should "
			 "allow)",
			 value);
		return;
	}
	h = h != NULL ? h + 3 : value;
	if (strchr(h, '@') != NULL)
		h = strchr(h, '@') + 1;
	end = h + strcspn(h, ":/?#");
	if (*end == ':')
		port = strtol(end + 1, NULL, 10);
	snprintf(host, sizeof(host), "%.*s", (int)(end - h), h);
	if (strcmp(host, value) == 0 || host[0] == '\0' ||
	    !flag_valid("allow", host, err, sizeof(err)))
		return;
	if (port > 0 && port != 80 && port != 443 && port < 65536)
		snprintf(out, cap,
			 "not a bare name: give --allow %s, and the port "
			 "apart: --port tcp/%ld",
			 host, port);
	else
		snprintf(out, cap, "not a bare name: give --allow %s", host);
}

/* One --allow, --ecosystem or --port value, judged alone as the config
 * judges an item of key: 0, or -EINVAL said, naming the flag. */
static int check_flag(const char *flag, const char *key, const char *value)
{
	char why[1024], hint[512];

	if (flag_valid(key, value, why, sizeof(why)))
		return 0;
	flag_hint(key, value, hint, sizeof(hint));
	if (hint[0] != '\0') /* the config's own fix names config keys */
		fprintf(stderr, "dnsfence: exec: --%s %s: %s\n", flag, value,
			hint);
	else
		fprintf(stderr, "dnsfence: exec: --%s %s: %s\n", flag, value,
			why);
	return -EINVAL;
}

/* The config the instance runs, before its own keys (instance_keys):
 * the file (path as config_load finds it), or {} when there is none and
 * --allow or --ecosystem say what to allow (said); judged with the
 * environment as config_load judges it, then with DNSFENCE_MODE and
 * DNSFENCE_EXTRA_HOSTS folded in (and taken out of our environment, so
 * that every later reader of the written file sees the same config),
 * the flags over it, and the instance's keys for in. NULL, said. */
static cJSON *build_config(const char *given, const struct flags *fl,
			   const struct instance *in)
{
	const char *path = config_path(given),
		   *cenv = getenv("DNSFENCE_CONFIG");
	const char *state = getenv("DNSFENCE_STATE_DIR");
	bool named = (given != NULL && given[0] != '\0') ||
		     (cenv != NULL && cenv[0] != '\0');
	char err[2560], saved[PATH_LEN], *text = NULL;
	struct config_env env = {.mode = getenv("DNSFENCE_MODE"),
				 .extra_hosts = getenv("DNSFENCE_EXTRA_HOSTS")};
	struct config *cfg = NULL;
	cJSON *j = NULL, *whole = NULL;
	size_t len = 0;

	if (state != NULL && state[0] != '\0' &&
	    path_fmt(saved, sizeof(saved), "%s/resolv.conf.orig", state))
		env.saved_resolv_conf = saved;
	if (access(path, F_OK) != 0 && errno == ENOENT && !named &&
	    cJSON_GetArraySize(fl->allow) + cJSON_GetArraySize(fl->ecosystems) >
		0) {
		fprintf(stderr,
			"dnsfence: exec: no config file (%s is missing): the "
			"command's fence runs on the built-in defaults plus "
			"exec's --allow and --ecosystem (every other name "
			"denied, ports tcp/80 and tcp/443)\n",
			path);
		text = strdup("{}");
		len = 2;
	} else if (config_read_file(path, &text, &len, err, sizeof(err)) != 0) {
		fprintf(stderr, "dnsfence: exec: %s%s\n", err,
			access(path, F_OK) == 0 ? ""
			: named
			    ? ". Give -c with a config file that exists"
			    : ". Give -c FILE (or DNSFENCE_CONFIG), or, to run "
			      "on the built-in defaults, say what to allow "
			      "with --allow NAME or --ecosystem NAME");
		goto out;
	}
	if (text == NULL)
		goto out;
	if (config_parse(text, len, &env, &cfg, err, sizeof(err)) != 0) {
		if (strncmp(err, "DNSFENCE_", 9) == 0)
			fprintf(stderr, "dnsfence: exec: the environment: %s\n",
				err);
		else
			fprintf(stderr, "dnsfence: exec: %s: %s\n", path, err);
		goto out;
	}
	if ((j = cJSON_ParseWithLength(text, len)) == NULL ||
	    fold_env(j, fl->audit) != 0 || fold_flags(j, fl, cfg) != 0 ||
	    (whole = cJSON_Duplicate(j, true)) == NULL) {
		fprintf(stderr, "dnsfence: exec: %s: out of memory\n", path);
		goto fail;
	}
	instance_keys(whole, in, (int)getpid());
	free(text);
	config_free(cfg);
	cfg = NULL;
	env.mode = env.extra_hosts = NULL; /* folded in */
	if ((text = cJSON_PrintUnformatted(whole)) == NULL ||
	    config_parse(text, strlen(text), &env, &cfg, err, sizeof(err)) !=
		0) {
		fprintf(stderr,
			"dnsfence: exec: the command's config (%s with exec's "
			"flags): %s\n",
			path, text == NULL ? "out of memory" : err);
		goto fail;
	}
	goto out;
fail:
	cJSON_Delete(j);
	j = NULL;
out:
	cJSON_Delete(whole);
	config_free(cfg);
	free(text);
	return j;
}

/* DNSFENCE_MODE and DNSFENCE_EXTRA_HOSTS into j, each said, and out of
 * our environment; --audit (audit, denied names forwarded) over them. */
static int fold_env(cJSON *j, bool audit)
{
	const char *mode = getenv("DNSFENCE_MODE");
	const char *extra = getenv("DNSFENCE_EXTRA_HOSTS");
	cJSON *names = cJSON_CreateArray();
	int rc = names != NULL ? 0 : -ENOMEM;

	if (rc == 0 && mode != NULL && mode[0] != '\0') {
		fprintf(stderr,
			"dnsfence: exec: DNSFENCE_MODE=%s %s the command's "
			"fence\n",
			mode,
			audit ? "is overridden by --audit for" : "applies to");
		cJSON_DeleteItemFromObject(j, "mode");
		if (!cJSON_AddStringToObject(j, "mode", mode))
			rc = -ENOMEM;
	}
	for (const char *p = extra; rc == 0 && p != NULL && *p != '\0';) {
		size_t n = strcspn(p, ","), b = strspn(p, " \t");
		size_t e = n;
		char item[300];

		while (e > b && (p[e - 1] == ' ' || p[e - 1] == '\t'))
			e--;
		if (e > b && e - b < sizeof(item)) {
			snprintf(item, sizeof(item), "%.*s", (int)(e - b),
				 p + b);
			if (!cJSON_AddItemToArray(names,
						  cJSON_CreateString(item)))
				rc = -ENOMEM;
		}
		p += n + (p[n] == ',');
	}
	if (rc == 0 && cJSON_GetArraySize(names) > 0) {
		fprintf(stderr,
			"dnsfence: exec: DNSFENCE_EXTRA_HOSTS=%s adds to the "
			"command's allow list\n",
			extra);
		rc = append_all(j, "allow", names);
	}
	if (rc == 0 && audit) {
		cJSON_DeleteItemFromObject(j, "mode");
		cJSON_DeleteItemFromObject(j, "audit_denied");
		if (!cJSON_AddStringToObject(j, "mode", "audit") ||
		    !cJSON_AddStringToObject(j, "audit_denied", "forward"))
			rc = -ENOMEM;
	}
	unsetenv("DNSFENCE_MODE");
	unsetenv("DNSFENCE_EXTRA_HOSTS");
	cJSON_Delete(names);
	return rc;
}

/* --allow, --ecosystem and --port appended to the file's lists; `ports`
 * starts from the config's own (its default when the file has none). */
static int fold_flags(cJSON *j, const struct flags *fl,
		      const struct config *cfg)
{
	char buf[32];
	cJSON *ports;

	if (cJSON_GetArraySize(fl->ports) > 0 &&
	    !cJSON_IsArray(cJSON_GetObjectItem(j, "ports"))) {
		cJSON_DeleteItemFromObject(j, "ports");
		if ((ports = cJSON_AddArrayToObject(j, "ports")) == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < cfg->n_ports; i++) {
			config_port_format(&cfg->ports[i], buf, sizeof(buf));
			if (!cJSON_AddItemToArray(ports,
						  cJSON_CreateString(buf)))
				return -ENOMEM;
		}
	}
	if (append_all(j, "allow", fl->allow) != 0 ||
	    append_all(j, "ecosystems", fl->ecosystems) != 0 ||
	    append_all(j, "ports", fl->ports) != 0)
		return -ENOMEM;
	return 0;
}

/* Copies of items' strings appended to j's array key (made when
 * missing; a value of another type is left for the parse to refuse). */
static int append_all(cJSON *j, const char *key, const cJSON *items)
{
	cJSON *list = cJSON_GetObjectItem(j, key);
	const cJSON *it;

	if (cJSON_GetArraySize(items) == 0)
		return 0;
	if (list == NULL && (list = cJSON_AddArrayToObject(j, key)) == NULL)
		return -ENOMEM;
	if (!cJSON_IsArray(list))
		return 0;
	cJSON_ArrayForEach(it, items)
	{
		if (!cJSON_AddItemToArray(list,
					  cJSON_CreateString(it->valuestring)))
			return -ENOMEM;
	}
	return 0;
}

/* USER, else the user who ran sudo; never root. */
static int resolve_user(const char *user, uid_t *uid, gid_t *gid)
{
	const char *sudo = getenv("SUDO_UID");
	struct passwd *pw = NULL;
	char *end = NULL;
	unsigned long n;

	if (user == NULL && sudo != NULL && *sudo != '\0')
		user = sudo;
	if (user == NULL) {
		fprintf(stderr,
			"dnsfence: exec: give --user USER: the command must "
			"not run as root (a root process can leave its "
			"cgroup and its fence)\n");
		return -EINVAL;
	}
	errno = 0;
	n = strtoul(user, &end, 10);
	if (*user != '\0' && end != NULL && *end == '\0' && errno == 0 &&
	    n < 4294967295UL) {
		pw = getpwuid((uid_t)n);
		*uid = (uid_t)n;
		*gid = pw != NULL ? pw->pw_gid : (gid_t)n;
	} else if ((pw = getpwnam(user)) != NULL) {
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
	} else {
		fprintf(stderr, "dnsfence: exec: --user %s: no such user\n",
			user);
		return -ENOENT;
	}
	if (*uid == 0) {
		fprintf(stderr,
			"dnsfence: exec: --user %s is root: a root process "
			"can leave its cgroup and its fence; give another "
			"user\n",
			user);
		return -EINVAL;
	}
	return 0;
}

/* The cgroup v2 mount (/proc/self/mountinfo) and our own cgroup there
 * (/proc/self/cgroup's "0::" line). */
static int cgroup_root(char *mnt, size_t mlen, char *own, size_t olen)
{
	char line[1024];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	bool found = false;

	if (f == NULL)
		return -errno;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char *sep = strstr(line, " - cgroup2 ");
		char path[PATH_LEN];

		if (sep == NULL ||
		    sscanf(line, "%*s %*s %*s %*s %511s", path) != 1)
			continue;
		path_fmt(mnt, mlen, "%s", path);
		found = true;
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	f = fopen("/proc/self/cgroup", "r");
	if (f == NULL)
		return -errno;
	found = false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		path_fmt(own, olen, "%s",
			 strcmp(line + 3, "/") ? line + 3 : "");
		found = true;
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

/* Whether the command (uid, its one gid: the groups are dropped) could
 * write an ancestor of its cgroup, from ours (its parent) up to the root:
 * moving a process needs write access to the destination's cgroup.procs
 * and to the common ancestor's, which is always one of these, so none
 * writable means no way out. -EPERM, said, when one is (systemd's
 * delegation of user@UID.service). */
static int cgroup_delegated(const char *mnt, const char *own, uid_t uid,
			    gid_t gid)
{
	static const char *const files[] = {"", "/cgroup.procs",
					    "/cgroup.threads"};
	char dir[PATH_LEN], p[PATH_LEN + 32];
	struct stat st;

	if (!path_fmt(dir, sizeof(dir), "%s%s", mnt, own))
		return -ENAMETOOLONG;
	for (;;) {
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			path_fmt(p, sizeof(p), "%s%s", dir, files[i]);
			if (stat(p, &st) != 0)
				continue;
			if ((st.st_uid == uid && (st.st_mode & S_IWUSR)) ||
			    (st.st_gid == gid && (st.st_mode & S_IWGRP)) ||
			    (st.st_mode & S_IWOTH)) {
				fprintf(
				    stderr,
				    "dnsfence: exec: cgroup %s is writable "
				    "by the command (%s owned by uid %u gid "
				    "%u, mode %03o; the command runs as uid "
				    "%u gid %u): it could move itself there "
				    "and leave its fence. Run exec from a "
				    "cgroup its user does not own (e.g. "
				    "'systemd-run --scope' as root, or a "
				    "root shell outside the user's session)\n",
				    dir[strlen(mnt)] ? dir + strlen(mnt) : "/",
				    p, (unsigned)st.st_uid, (unsigned)st.st_gid,
				    (unsigned)(st.st_mode & 0777),
				    (unsigned)uid, (unsigned)gid);
				return -EPERM;
			}
		}
		if (strlen(dir) <= strlen(mnt))
			return 0;
		*strrchr(dir, '/') = '\0';
	}
}

/* A fresh cgroup below ours; -EPERM when the command could write an
 * ancestor of it. Where none can be made (no cgroup v2: every plain `ip
 * netns exec` hides the tree), exec refuses, since a child the command
 * leaves behind (setsid, a double fork) is then beyond reach, unless the
 * operator asked for the uid instead (uid_fallback): then every process
 * of the uid in this network namespace is fenced, and killed before the
 * fence goes (empty_uid). */
static int make_cgroup(struct instance *in, bool uid_fallback)
{
	char mnt[PATH_LEN], own[PATH_LEN], why[PATH_LEN + 64];

	in->cgroup[0] = in->cgpath[0] = '\0';
	if (cgroup_root(mnt, sizeof(mnt), own, sizeof(own)) != 0) {
		snprintf(why, sizeof(why), "no cgroup v2 here");
		goto by_uid;
	}
	if (cgroup_delegated(mnt, own, in->uid, in->gid) != 0)
		return -EPERM;
	path_fmt(in->cgpath, sizeof(in->cgpath), "%s/dnsfence-exec-%d", own,
		 (int)getpid());
	path_fmt(in->cgroup, sizeof(in->cgroup), "%s%s", mnt, in->cgpath);
	if (mkdir(in->cgroup, 0755) == 0)
		return 0;
	snprintf(why, sizeof(why), "cannot make cgroup %.*s (%s)", PATH_LEN,
		 in->cgroup, strerror(errno));
	in->cgroup[0] = in->cgpath[0] = '\0';
by_uid:
	if (!uid_fallback) {
		fprintf(stderr,
			"dnsfence: exec: %s: exec fences the command by a "
			"cgroup of its own, so that nothing it leaves behind "
			"(a child that detached) outlives the fence; refusing "
			"to run it without one. Give exec a cgroup v2 tree it "
			"may write: `ip netns exec` hides the host's, so mount "
			"it first ('ip netns exec NS sh -c \"mount -t cgroup2 "
			"cgroup2 /sys/fs/cgroup && exec dnsfence exec ...\"'), "
			"or run exec where /sys/fs/cgroup is mounted "
			"(systemd-run --scope, a container with its cgroup "
			"namespace); or give --uid-fallback to fence every "
			"process of uid %u in this network namespace instead "
			"(all of them are killed before the fence goes)\n",
			why, (unsigned)in->uid);
		return -ENOENT;
	}
	in->by_uid = true;
	fprintf(stderr,
		"dnsfence: exec: %s: fencing uid %u instead (--uid-fallback): "
		"every process of that uid in this network namespace is "
		"fenced, and every one of them is killed before the fence "
		"goes\n",
		why, (unsigned)in->uid);
	return 0;
}

static cJSON *read_json(const char *path)
{
	char err[256], *text = NULL;
	size_t len = 0;
	cJSON *j = NULL;

	if (config_read_file(path, &text, &len, err, sizeof(err)) == 0)
		j = cJSON_ParseWithLength(text, len);
	free(text);
	return j;
}

/* The keys of the private instance, each replacing the user's: the
 * subject, its own listener on a loopback address of this pid, its own
 * sets, state and control socket, no metrics, output scope. */
static void instance_keys(cJSON *j, const struct instance *in, int pid)
{
	char buf[PATH_LEN + 32];
	cJSON *sub, *arr, *sets, *ctl;

	cJSON_DeleteItemFromObject(j, "subjects");
	sub = cJSON_AddObjectToObject(j, "subjects");
	arr = cJSON_AddArrayToObject(sub, in->cgpath[0] ? "cgroups" : "users");
	if (in->cgpath[0])
		snprintf(buf, sizeof(buf), "%s", in->cgpath);
	else
		snprintf(buf, sizeof(buf), "%u", (unsigned)in->uid);
	cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	cJSON_DeleteItemFromObject(j, "listen");
	arr = cJSON_AddArrayToObject(j, "listen");
	snprintf(buf, sizeof(buf), "127.%d.%d.%d:53", 100 + (pid >> 16 & 127),
		 pid >> 8 & 255, (pid & 255) ? pid & 255 : 1);
	cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	cJSON_DeleteItemFromObject(j, "sets");
	sets = cJSON_AddObjectToObject(j, "sets");
	snprintf(buf, sizeof(buf), "dfx%d-4", pid);
	cJSON_AddStringToObject(sets, "ipv4", buf);
	snprintf(buf, sizeof(buf), "dfx%d-6", pid);
	cJSON_AddStringToObject(sets, "ipv6", buf);
	/* Its state in a directory of its own, which the daemon makes and
	 * gives its user (it writes suggest.json, usage.json and prov.state
	 * there after the privilege drop); the rest stays root's. */
	cJSON_DeleteItemFromObject(j, "state_dir");
	snprintf(buf, sizeof(buf), "%s/" STATE_SUBDIR, in->dir);
	cJSON_AddStringToObject(j, "state_dir", buf);
	cJSON_DeleteItemFromObject(j, "control");
	ctl = cJSON_AddObjectToObject(j, "control");
	snprintf(buf, sizeof(buf), "%s/control.sock", in->dir);
	cJSON_AddStringToObject(ctl, "socket", buf);
	cJSON_AddBoolToObject(ctl, "watch", false);
	cJSON_DeleteItemFromObject(j, "metrics");
	cJSON_DeleteItemFromObject(j, "scope");
}

/* j (build_config's) with the instance's own keys over it, as in->conf. */
static int write_config(const struct instance *in, cJSON *j)
{
	char *text;
	int rc = -EIO;
	FILE *f;

	instance_keys(j, in, (int)getpid());
	if ((text = cJSON_Print(j)) == NULL)
		return -ENOMEM;
	f = fopen(in->conf, "w");
	if (f != NULL && fputs(text, f) >= 0 && fclose(f) == 0)
		rc = 0;
	else if (f != NULL)
		fclose(f);
	if (rc)
		fprintf(stderr, "dnsfence: exec: cannot write %s: %s\n",
			in->conf, strerror(errno));
	free(text);
	return rc;
}

/* This binary's COMMAND for conf, stdout and stderr to out (a pipe to
 * the relay) or, when out is -1, appended to log. Its stderr is no
 * journal's stream and it tells no service manager of its state: those
 * two variables are exec's. DNSFENCE_MODE and DNSFENCE_EXTRA_HOSTS are
 * already in conf (build_config). */
static pid_t spawn_self(const char *conf, const char *command, const char *log,
			int out)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (out < 0)
		out =
		    open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (out >= 0) {
		dup2(out, STDOUT_FILENO);
		dup2(out, STDERR_FILENO);
	}
	unsetenv("NOTIFY_SOCKET");
	unsetenv("JOURNAL_STREAM");
	execl("/proc/self/exe", "dnsfence", "-c", conf, command, (char *)NULL);
	_exit(126);
}

/* The daemon's log: a process of its own reads the daemon's stderr (the
 * pipe whose writing end this returns, or -errno, said) until every
 * writer is gone and appends every line to log; once the fence answers
 * (SIGUSR1 from wait_ready) it also says each warning and error on our
 * stderr (relay_line). What the daemon says while it starts (facts of
 * the machine: the uid it shares, a check it cannot make here) stays in
 * the log, unless the fence does not come up (relay_file says it then).
 * The relay ignores the signals a terminal sends to its group: exec
 * waits for it once the daemon stopped. */
static int start_relay(struct instance *in, const char *log)
{
	int p[2] = {-1, -1};
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	sigset_t usr1, old;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* blocked until the relay has its handler (SIGUSR1 would kill it) */
	sigprocmask(SIG_BLOCK, &usr1, &old);
	if (fd < 0 || pipe2(p, O_CLOEXEC) != 0 || (in->relay = fork()) < 0) {
		int e = errno;

		fprintf(stderr, "dnsfence: exec: the fence's log %s: %s\n", log,
			strerror(e));
		if (fd >= 0)
			close(fd);
		if (p[0] >= 0) {
			close(p[0]);
			close(p[1]);
		}
		in->relay = -1;
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -e;
	}
	if (in->relay == 0) {
		struct sigaction sa = {.sa_handler = on_ready};

		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		close(p[1]);
		relay(p[0], fd);
		_exit(0);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(fd);
	return p[1];
}

static void on_ready(int sig)
{
	(void)sig;
	relay_on = 1;
}

/* The warnings and errors of the log file, said as relay_line says
 * them: those of a fence that did not come up. */
static void relay_file(const char *log)
{
	char line[RELAY_LINE];
	FILE *f = fopen(log, "re");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		relay_line(line);
	}
	if (f != NULL)
		fclose(f);
}

/* In the relay: from's bytes to log as they come; each whole line (cut
 * at RELAY_LINE bytes) judged by relay_line. */
static void relay(int from, int log)
{
	char buf[4096], line[RELAY_LINE];
	size_t n = 0;
	ssize_t got;

	for (;;) {
		got = read(from, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		for (ssize_t off = 0, w; off < got; off += w) {
			w = write(log, buf + off, (size_t)(got - off));
			if (w <= 0)
				break;
		}
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n') {
				line[n] = '\0';
				if (relay_on)
					relay_line(line);
				n = 0;
			} else if (n < sizeof(line) - 1) {
				line[n++] = buf[i];
			}
		}
	}
	if (n > 0 && relay_on) {
		line[n] = '\0';
		relay_line(line);
	}
}

/* One line of the daemon's log, in any of log.c's forms (text
 * "TS LEVEL SYS: MSG", JSON {"level","sys","msg"}, the journal's
 * "<N>SYS: MSG", a command's "dnsfence: ..."), said on stderr as
 * "dnsfence: LEVEL: SYS: MSG" when it is a warning or an error, every
 * byte that is not printable ASCII as '?' (names come from the
 * workload). */
static void relay_line(const char *line)
{
	char out[RELAY_LINE + 64];
	const char *level = NULL, *rest = line, *sp;
	cJSON *j = NULL;
	size_t n, o;

	if (line[0] == '{' && (j = cJSON_Parse(line)) != NULL) {
		level = cJSON_GetStringValue(cJSON_GetObjectItem(j, "level"));
		snprintf(out, sizeof(out), "%s: %s",
			 cJSON_GetStringValue(cJSON_GetObjectItem(j, "sys")),
			 cJSON_GetStringValue(cJSON_GetObjectItem(j, "msg")));
		rest = out;
	} else if (line[0] == '<' && line[1] >= '0' && line[1] <= '7' &&
		   line[2] == '>') {
		level = line[1] <= '3'	 ? "error"
			: line[1] == '4' ? "warning"
					 : NULL;
		rest = line + 3;
	} else if (strncmp(line, "dnsfence: ", 10) == 0) {
		level = "";
		rest = line + 10;
	} else if ((sp = strchr(line, ' ')) != NULL) {
		if (strncmp(sp + 1, "error ", 6) == 0)
			level = "error";
		else if (strncmp(sp + 1, "warning ", 8) == 0)
			level = "warning";
		rest = sp + 1 + (level != NULL ? strlen(level) + 1 : 0);
	}
	if (level != NULL && (level[0] == '\0' || strcmp(level, "error") == 0 ||
			      strcmp(level, "warning") == 0)) {
		char say[RELAY_LINE + 96];

		o = (size_t)snprintf(say, sizeof(say), "dnsfence: %s%s", level,
				     level[0] != '\0' ? ": " : "");
		for (n = 0; rest[n] != '\0' && o < sizeof(say) - 2; n++)
			say[o++] =
			    rest[n] >= 0x20 && rest[n] < 0x7f ? rest[n] : '?';
		say[o++] = '\n';
		/* stderr gone: the log file still has the line */
		if (write(STDERR_FILENO, say, o) < 0)
			say[0] = '\0';
	}
	cJSON_Delete(j);
}

/* The relay, once the daemon stopped: it ends when the last writer of
 * its pipe (the daemon's processes) is gone; bounded, then killed. */
static void finish_relay(struct instance *in)
{
	int st;

	for (int waited = 0; in->relay > 0 && waited < STOP_TIMEOUT_MS;
	     waited += 20) {
		if (waitpid(in->relay, &st, WNOHANG) == in->relay) {
			in->relay = -1;
			return;
		}
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	}
	if (in->relay > 0) {
		kill(in->relay, SIGKILL);
		waitpid(in->relay, &st, 0);
		in->relay = -1;
	}
}

/* The daemon's log, moved out of the directory that goes with the
 * fence to exec_dir/PID.log (no pid's name: never taken for an exec's
 * entry) and its path said, when the command failed (not because we
 * were asked to stop it) or the daemon did: what it said there is the
 * reason. The last KEPT_LOGS_MAX are kept (prune_logs). */
static void keep_log(const struct instance *in, int status)
{
	char name[32];
	int dfd;

	if (!in->started || (!in->failed && (status == 0 || got_signal)))
		return; /* a command we were asked to stop did not fail */
	snprintf(name, sizeof(name), "%d.log", (int)getpid());
	dfd = open(in->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0 && renameat(dfd, "dnsfence.log", exec_fd, name) == 0) {
		fprintf(stderr,
			"dnsfence: exec: the fence's log is kept: "
			"%s/%s\n",
			exec_dir, name);
		prune_logs(name);
	}
	if (dfd >= 0)
		close(dfd);
}

/* At most KEPT_LOGS_MAX kept logs (PID.log) in exec_dir: the oldest
 * (modified first) removed, never keep (the one just kept). */
static void prune_logs(const char *keep)
{
	for (;;) {
		int fd = dup(exec_fd), n = 0;
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		char oldest[sizeof(((struct dirent *)0)->d_name)] = "";
		struct timespec at = {0};
		struct dirent *e;
		struct stat st;

		if (d == NULL) {
			if (fd >= 0)
				close(fd);
			return;
		}
		rewinddir(
		    d); /* the offset is exec_fd's, which clean_stale read */
		while ((e = readdir(d)) != NULL) {
			const char *dot = strchr(e->d_name, '.');
			char pid[32];

			if (dot == NULL || strcmp(dot, ".log") != 0 ||
			    (size_t)(dot - e->d_name) >= sizeof(pid))
				continue;
			snprintf(pid, sizeof(pid), "%.*s",
				 (int)(dot - e->d_name), e->d_name);
			if (parse_pid(pid) <= 0 ||
			    fstatat(exec_fd, e->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) != 0 ||
			    !S_ISREG(st.st_mode))
				continue;
			n++;
			if (strcmp(e->d_name, keep) != 0 &&
			    (oldest[0] == '\0' ||
			     st.st_mtim.tv_sec < at.tv_sec ||
			     (st.st_mtim.tv_sec == at.tv_sec &&
			      st.st_mtim.tv_nsec < at.tv_nsec))) {
				snprintf(oldest, sizeof(oldest), "%s",
					 e->d_name);
				at = st.st_mtim;
			}
		}
		closedir(d);
		if (n <= KEPT_LOGS_MAX || oldest[0] == '\0' ||
		    unlinkat(exec_fd, oldest, 0) != 0)
			return;
	}
}

/* The instance's daemon started (its log through the relay) and asked
 * until it answers: 0, or -EIO said (the daemon's own errors are
 * already on stderr, and its log is kept). */
static int wait_ready(struct instance *in)
{
	char log[PATH_LEN + 16], err[256], why[64] = "no answer within 15 s";
	struct config *cfg = NULL;
	int rcode, st, out;

	path_fmt(log, sizeof(log), "%s/dnsfence.log", in->dir);
	if (config_load(in->conf, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "dnsfence: exec: %s\n", err);
		return -EINVAL;
	}
	out = start_relay(in, log);
	in->daemon = spawn_self(in->conf, "run", log, out);
	if (out >= 0)
		close(out);
	in->started = in->daemon > 0;
	for (int waited = 0; in->daemon > 0 && !got_signal; waited += 100) {
		if (waitpid(in->daemon, &st, WNOHANG) == in->daemon) {
			in->daemon = -1;
			snprintf(why, sizeof(why), "its daemon exited (%s %d)",
				 WIFEXITED(st) ? "status" : "signal",
				 WIFEXITED(st) ? WEXITSTATUS(st)
					       : WTERMSIG(st));
			break;
		}
		if (probe_run(cfg, PROBE_DEFAULT_NAME, 100, &rcode, err,
			      sizeof(err)) == 0) {
			config_free(cfg);
			in->ready = true;
			if (in->relay > 0)
				kill(in->relay, SIGUSR1);
			return 0;
		}
		if (waited >= READY_TIMEOUT_MS)
			break;
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
	config_free(cfg);
	if (got_signal)
		snprintf(why, sizeof(why), "interrupted by signal %d",
			 (int)got_signal);
	in->failed = true;
	fprintf(stderr,
		"dnsfence: exec: the command's fence did not come up: %s%s\n",
		why, in->started ? "; what it said:" : "");
	return -EIO;
}

/* In the child: into the cgroup, every capability gone, USER. */
static void drop_everything(const struct instance *in)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};
	char procs[PATH_LEN + 16];

	if (in->cgroup[0]) {
		int fd;

		path_fmt(procs, sizeof(procs), "%s/cgroup.procs", in->cgroup);
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || dprintf(fd, "0\n") < 0) {
			fprintf(stderr, "dnsfence: exec: cannot enter %s: %s\n",
				in->cgroup, strerror(errno));
			_exit(126);
		}
		close(fd);
	}
	for (int c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno == EINVAL)
			break;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 ||
	    setgroups(0, NULL) != 0 || setresgid(in->gid, in->gid, in->gid) ||
	    setresuid(in->uid, in->uid, in->uid) != 0 ||
	    syscall(SYS_capset, &h, d) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || exec_filter() != 0) {
		fprintf(stderr, "dnsfence: exec: cannot drop privileges: %s\n",
			strerror(errno));
		_exit(126);
	}
}

/* A Landlock domain of its own (Linux 5.13, where enabled): a process in
 * one may not ptrace-access a process outside it, which also closes
 * /proc/PID/mem (open for writing: code into an unfenced process), that
 * no system call filter can tell from another open. The ruleset handles
 * only making block devices, which no unprivileged process may do
 * anyway. Where Landlock is off, the seccomp filter alone holds. */
static void landlock_domain(void)
{
	struct landlock_ruleset_attr attr = {.handled_access_fs =
						 LANDLOCK_ACCESS_FS_MAKE_BLOCK};
	long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);

	if (fd < 0)
		return;
	if (syscall(SYS_landlock_restrict_self, (int)fd, 0) != 0)
		fprintf(stderr, "dnsfence: exec: landlock_restrict_self: %s\n",
			strerror(errno));
	close((int)fd);
}

/* A seccomp filter, inherited by every child: no way into another
 * process of the uid (an unfenced one's sockets: pidfd_getfd; its memory,
 * to make it connect: ptrace, process_vm_readv/writev), EPERM, not a
 * kill: a program that tries (a debugger, a crash reporter) gets an
 * error. And no way past netfilter: an AF_VSOCK socket reaches the
 * hypervisor (CID 2) of a VM with a vsock device, unprivileged, and no
 * firewall rule sees it; socket() of that family fails as where the
 * kernel has none (EAFNOSUPPORT). io_uring can make a socket without
 * socket(2) (IORING_OP_SOCKET, Linux 5.19), out of the filter's sight, so
 * io_uring_setup fails as where it is not built in (ENOSYS: programs fall
 * back to plain calls). The 32-bit entries of x86-64 get the same rules;
 * there libseccomp cannot read socketcall's arguments, so socketcall's
 * SYS_SOCKET fails for every family (a 32-bit program whose libc makes
 * sockets through socketcall gets none; the direct socket call works). */
static int exec_filter(void)
{
	static const char *const peeking[] = {
	    "pidfd_getfd", "ptrace", "process_vm_readv", "process_vm_writev"};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = ctx ? 0 : -ENOMEM;

	if (rc == 0 && seccomp_arch_native() == SCMP_ARCH_X86_64) {
		rc = seccomp_arch_add(ctx, SCMP_ARCH_X86);
		if (rc == 0 || rc == -EEXIST)
			rc = seccomp_arch_add(ctx, SCMP_ARCH_X32);
		if (rc == -EEXIST)
			rc = 0;
	}
	for (size_t i = 0; rc == 0 && i < sizeof(peeking) / sizeof(peeking[0]);
	     i++) {
		int nr = seccomp_syscall_resolve_name(peeking[i]);

		rc = nr == __NR_SCMP_ERROR
			 ? -ENOSYS
			 : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	}
	if (rc == 0) {
		struct scmp_arg_cmp vsock = {
		    .arg = 0, .op = SCMP_CMP_EQ, .datum_a = AF_VSOCK};

		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
				      SCMP_SYS(socket), 1, vsock);
	}
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
				      SCMP_SYS(io_uring_setup), 0);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc != 0)
		errno = -rc;
	if (rc == 0)
		landlock_domain();
	return rc;
}

static pid_t start_command(const struct instance *in, char **argv)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0) {
		fprintf(stderr, "dnsfence: exec: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid > 0)
		return pid;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	drop_everything(in);
	/* After the uid change, which clears it: exec gone, CMD goes too. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(125);
	execvp(argv[0], argv);
	fprintf(stderr, "dnsfence: exec: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* The command's status; a signal to us is passed on to it first. */
static int wait_command(pid_t pid)
{
	int st, forwarded = 0;

	for (;;) {
		pid_t r = waitpid(pid, &st, 0);

		if (r == pid)
			break;
		if (r < 0 && errno == EINTR && got_signal &&
		    forwarded != got_signal) {
			forwarded = got_signal;
			kill(pid, got_signal);
		} else if (r < 0 && errno != EINTR) {
			return 125;
		}
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 125;
}

/* The daemon stopped (SIGTERM, then SIGKILL past STOP_TIMEOUT_MS); one
 * that had already ended, or ends otherwise than by our signal with
 * status 0, failed (said). */
static void stop_daemon(struct instance *in)
{
	int st = 0;
	bool gone;

	if (in->daemon <= 0)
		return;
	gone = waitpid(in->daemon, &st, WNOHANG) == in->daemon;
	if (!gone) {
		kill(in->daemon, SIGTERM);
		for (int waited = 0; !gone && waited < STOP_TIMEOUT_MS;
		     waited += 50) {
			gone = waitpid(in->daemon, &st, WNOHANG) == in->daemon;
			if (!gone)
				nanosleep(
				    &(struct timespec){0, 50 * 1000 * 1000},
				    NULL);
		}
		if (!gone) {
			kill(in->daemon, SIGKILL);
			waitpid(in->daemon, &st, 0);
		}
	} else {
		fprintf(stderr, "dnsfence: exec: the command's fence stopped "
				"before the command ended\n");
		in->failed = true;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		in->failed = true;
	in->daemon = -1;
}

/* What the stopped daemon saw, from the files it wrote at exit: the
 * summary on stderr, the whole report to path (NULL: none). A report
 * that cannot be made is said; the exit status stays the command's. */
static void report(const struct instance *in, int status, const char *path)
{
	struct config *cfg = NULL;
	char err[1024];

	if (config_load(in->conf, &cfg, err, sizeof(err)) != 0 ||
	    report_exec(cfg, status, path, stderr, err, sizeof(err)) != 0)
		fprintf(stderr, "dnsfence: exec: no report: %s\n", err);
	config_free(cfg);
}

/* Kill whatever of the command is left in its cgroup (a child that
 * detached: setsid, a double fork) and wait until the kernel says the
 * cgroup is empty, bounded: 0 when it is (or there is no cgroup), -EBUSY,
 * said, when not, and then the fence must stay. cgroup.kill (Linux 5.14)
 * kills the cgroup's processes as one, so none can fork past it; without
 * it, each pid in cgroup.procs is killed until none is left. */
static int empty_cgroup(const struct instance *in)
{
	char path[PATH_LEN + 32], line[64];
	int killed = 0;
	bool empty = false;
	FILE *f;
	int fd;

	if (!in->cgroup[0] || access(in->cgroup, F_OK) != 0)
		return 0;
	path_fmt(path, sizeof(path), "%s/cgroup.procs", in->cgroup);
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			killed++;
		fclose(f);
	}
	path_fmt(path, sizeof(path), "%s/cgroup.kill", in->cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			fprintf(stderr, "dnsfence: exec: %s: %s\n", path,
				strerror(errno));
		close(fd);
	}
	for (int waited = 0; !empty && waited <= KILL_TIMEOUT_MS;
	     waited += 20) {
		path_fmt(path, sizeof(path), "%s/cgroup.events", in->cgroup);
		if ((f = fopen(path, "r")) == NULL)
			break;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strcmp(line, "populated 0\n") == 0)
				empty = true;
		fclose(f);
		if (empty)
			break;
		if (fd < 0) { /* no cgroup.kill: one pid at a time */
			path_fmt(path, sizeof(path), "%s/cgroup.procs",
				 in->cgroup);
			if ((f = fopen(path, "r")) != NULL) {
				while (fgets(line, sizeof(line), f) != NULL)
					kill((pid_t)atoi(line), SIGKILL);
				fclose(f);
			}
		}
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	}
	if (killed > 0 && empty)
		fprintf(stderr,
			"dnsfence: exec: %d process(es) of the command were "
			"still running and were killed\n",
			killed);
	if (empty)
		return 0;
	fprintf(stderr,
		"dnsfence: exec: cgroup %s still holds processes of the "
		"command: its fence (rules and sets) stays in place; kill "
		"them, then run 'dnsfence -c %s teardown' (or any exec, which "
		"finishes it)\n",
		in->cgroup, in->conf);
	return -EBUSY;
}

/* The uid fence's end (--uid-fallback): every process of the uid in
 * this network namespace killed (a child that detached, and whatever
 * else runs as that uid here: the operator asked for the uid), passes
 * repeated until none is found, bounded: 0, or -EBUSY (said) while one
 * remains, and then the fence stays. */
static int empty_uid(const struct instance *in)
{
	struct stat ns;
	int found = -1, first = 0;

	if (!in->by_uid)
		return 0;
	if (stat("/proc/self/ns/net", &ns) == 0) {
		for (int waited = 0; waited <= KILL_TIMEOUT_MS; waited += 20) {
			found = kill_uid_pass(in->uid, &ns, in->daemon);
			if (waited == 0)
				first = found;
			if (found == 0)
				break;
			nanosleep(&(struct timespec){0, 20 * 1000 * 1000},
				  NULL);
		}
	}
	if (found == 0) {
		fprintf(stderr,
			"dnsfence: exec: %d process(es) of uid %u in this "
			"network namespace were still running and were "
			"killed\n",
			first, (unsigned)in->uid);
		return 0;
	}
	fprintf(stderr,
		"dnsfence: exec: processes of uid %u still run in this network "
		"namespace: the command's fence (rules and sets) stays in "
		"place; kill them, then run 'dnsfence -c %s teardown' (or any "
		"exec, which finishes it)\n",
		(unsigned)in->uid, in->conf);
	return -EBUSY;
}

/* One pass over /proc: SIGKILL to every live process whose real or
 * effective uid is uid, in the network namespace ns, but exec's own
 * daemon and its DNS process; how many were found. */
static int kill_uid_pass(uid_t uid, const struct stat *ns, pid_t daemon)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		unsigned r = (unsigned)-1, eu = (unsigned)-1;
		int pid = parse_pid(e->d_name), ppid = 0;
		char path[64], line[256], state = 0;
		struct stat st;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", pid);
		if (pid <= 0 || pid == (int)getpid() || pid == daemon ||
		    (f = fopen(path, "re")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "Uid: %u %u", &r, &eu) == 2 ||
			    sscanf(line, "PPid: %d", &ppid) == 1 ||
			    sscanf(line, "State: %c", &state) == 1)
				continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
		if ((r != uid && eu != uid) || state == 'Z' ||
		    (daemon > 0 && ppid == daemon) || stat(path, &st) != 0 ||
		    st.st_dev != ns->st_dev || st.st_ino != ns->st_ino)
			continue;
		kill(pid, SIGKILL);
		n++;
	}
	closedir(d);
	return n;
}

/* The instance's rules and sets (its `teardown`, once its daemon was
 * started: before, there are none), cgroup and directory. */
static void teardown(const struct instance *in)
{
	char log[PATH_LEN + 16];
	bool removed = true;
	int st = 0;
	pid_t pid;

	path_fmt(log, sizeof(log), "%s/teardown.log", in->dir);
	if (in->started && access(in->conf, R_OK) == 0) {
		pid = spawn_self(in->conf, "teardown", log, -1);
		if (pid > 0)
			waitpid(pid, &st, 0);
		removed = pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		if (!removed)
			fprintf(stderr,
				"dnsfence: exec: removing the command's "
				"fence failed; see %s and run 'dnsfence -c "
				"%s teardown'\n",
				log, in->conf);
	}
	/* The last task may still be leaving the cgroup: EBUSY a moment. */
	for (int i = 0; in->cgroup[0] && i < 50 && rmdir(in->cgroup) != 0 &&
			errno == EBUSY;
	     i++)
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	if (in->cgroup[0] && access(in->cgroup, F_OK) == 0)
		fprintf(stderr, "dnsfence: exec: cannot remove cgroup %s: %s\n",
			in->cgroup, strerror(errno));
	if (removed) /* else kept for the next exec to finish */
		rm_tree(in->dir);
}

/* DIR's files, its daemon's state directory's files (by name, through
 * descriptors: the daemon's user owns that one, and a link there is
 * removed, never followed), those two directories. */
static int rm_tree(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int sfd = fd >= 0
		      ? openat(fd, STATE_SUBDIR,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		      : -1;
	int fds[2] = {sfd, fd};

	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < 2; i++) {
		int dup_fd = fds[i] >= 0 ? dup(fds[i]) : -1;
		DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
		struct dirent *e;

		if (d == NULL && dup_fd >= 0)
			close(dup_fd);
		while (d != NULL && (e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0)
				unlinkat(fds[i], e->d_name, 0);
		}
		if (d != NULL)
			closedir(d);
		if (i == 0 && sfd >= 0) {
			close(sfd);
			unlinkat(fd, STATE_SUBDIR, AT_REMOVEDIR);
		}
	}
	close(fd);
	return rmdir(dir) == 0 ? 0 : -errno;
}

/* Stop the daemon a killed exec left in DIR: the process whose command
 * line is exactly the one that exec started ("dnsfence -c
 * DIR/dnsfence.json run") and whose program is this one, found in /proc
 * (the daemon changes its uid, which clears a parent-death signal, so
 * it outlives an exec killed outright). No pid is taken from a file. */
static void stop_stale_daemon(const char *dir)
{
	char want[PATH_LEN + 64], cmd[PATH_LEN + 64], path[64];
	struct stat self, st;
	struct dirent *e;
	size_t wlen;
	DIR *d;
	int n;

	n = snprintf(want, sizeof(want), "dnsfence%c-c%c%s/dnsfence.json%crun",
		     0, 0, dir, 0);
	if (n < 0 || (size_t)n >= sizeof(want) - 1 ||
	    stat("/proc/self/exe", &self) != 0 ||
	    (d = opendir("/proc")) == NULL)
		return;
	wlen = (size_t)n + 1; /* with the last NUL */
	while ((e = readdir(d)) != NULL) {
		int pid = parse_pid(e->d_name);
		ssize_t len;
		int fd;

		if (pid <= 0 || pid == (int)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, cmd, sizeof(cmd));
		close(fd);
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		if (len != (ssize_t)wlen || memcmp(cmd, want, wlen) != 0 ||
		    stat(path, &st) != 0 || st.st_dev != self.st_dev ||
		    st.st_ino != self.st_ino)
			continue;
		kill(pid, SIGTERM);
		for (int i = 0; i < STOP_TIMEOUT_MS / 50 && kill(pid, 0) == 0;
		     i++)
			nanosleep(&(struct timespec){0, 50 * 1000 * 1000},
				  NULL);
		if (kill(pid, 0) == 0)
			kill(pid, SIGKILL);
	}
	closedir(d);
}

/* A pid as exec names its directory: decimal, no sign, no leading zero;
 * 0 for any other name. */
static int parse_pid(const char *name)
{
	long v = 0;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	for (const char *c = name; *c != '\0'; c++) {
		if (*c < '0' || *c > '9' || v > (0x7fffffffL - 9) / 10)
			return 0;
		v = v * 10 + (*c - '0');
	}
	return (int)v;
}

/* The entry NAME of exec_dir, of the exec with pid (gone), judged before
 * anything is done by it: a directory, not a link, root's, that no group
 * or other may write (what exec makes, 0700). in gets its directory,
 * its cgroup (stale_cgroup) and the config its teardown runs, written
 * afresh from pid: never one found there. false (said) to leave it. */
static bool stale_entry(int pid, const char *name, struct instance *in)
{
	struct stat st = {0};
	bool ok = false;
	int dfd = -1;

	path_fmt(in->dir, sizeof(in->dir), "%s/%s", exec_dir, name);
	if (fstatat(exec_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !root_only(&st) ||
	    (dfd = openat(exec_fd, name,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
		0 ||
	    fstat(dfd, &st) != 0 || !root_only(&st)) {
		fprintf(stderr,
			"dnsfence: exec: ignoring %s: not a directory exec "
			"made (owner uid %u, mode %03o%s); nothing named there "
			"is removed or stopped\n",
			in->dir, (unsigned)st.st_uid,
			(unsigned)(st.st_mode & 07777),
			S_ISLNK(st.st_mode) ? ", a symbolic link" : "");
		goto out;
	}
	stale_subject(pid, dfd, in);
	ok = write_teardown_config(pid, dfd, in) == 0;
out:
	if (dfd >= 0)
		close(dfd);
	return ok;
}

/* The cgroup of the exec with pid: "dnsfence-exec-PID" (the name exec
 * gives it), below the cgroup its own config names when that file is
 * root's (no group or other write) and the path has no "." or ".."
 * step, else below ours; used only when it is a directory of root's on
 * the cgroup2 mount. "" when there is none. An exec that fenced a uid
 * (--uid-fallback) named it in that file: its processes in this
 * namespace are killed as at its own end (empty_uid). */
static void stale_subject(int pid, int dfd, struct instance *in)
{
	char mnt[PATH_LEN], own[PATH_LEN], base[64], err[512], *text = NULL;
	const char *at = NULL;
	cJSON *j = NULL, *cg;
	size_t len = 0;
	struct stat st;
	int fd;
	FILE *f;

	in->cgroup[0] = in->cgpath[0] = '\0';
	if (cgroup_root(mnt, sizeof(mnt), own, sizeof(own)) != 0)
		return;
	snprintf(base, sizeof(base), "/dnsfence-exec-%d", pid);
	fd = statefs_open_file(dfd, in->dir, "dnsfence.json", 0, err,
			       sizeof(err));
	if (fd >= 0 && (f = fdopen(fd, "r")) != NULL) {
		text = calloc(1, 65537);
		len = text != NULL ? fread(text, 1, 65536, f) : 0;
		fclose(f);
		j = len > 0 ? cJSON_ParseWithLength(text, len) : NULL;
	} else if (fd >= 0) {
		close(fd);
	}
	cg = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "subjects"), "cgroups");
	if (cg != NULL && cJSON_IsString(cg->child))
		at = cg->child->valuestring;
	cg = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "subjects"), "users");
	if (cg != NULL && cJSON_IsString(cg->child) &&
	    parse_pid(cg->child->valuestring) > 0) {
		in->by_uid = true;
		in->uid = (uid_t)parse_pid(cg->child->valuestring);
	}
	if (at != NULL && at[0] == '/' && strstr(at, "/./") == NULL &&
	    strstr(at, "/../") == NULL && strstr(at, "//") == NULL &&
	    strlen(at) > strlen(base) &&
	    strcmp(at + strlen(at) - strlen(base), base) == 0)
		path_fmt(in->cgpath, sizeof(in->cgpath), "%s", at);
	else
		path_fmt(in->cgpath, sizeof(in->cgpath), "%s%s", own, base);
	cJSON_Delete(j);
	free(text);
	if (!path_fmt(in->cgroup, sizeof(in->cgroup), "%s%s", mnt,
		      in->cgpath) ||
	    lstat(in->cgroup, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != 0)
		in->cgroup[0] = in->cgpath[0] = '\0';
}

/* The config the teardown of the exec with pid runs, with the keys exec
 * derives from that pid (sets, listener, state and control socket), in
 * its directory as teardown.json, created exclusively: the teardown of
 * a killed exec removes only that exec's sets, and refuses rules that
 * match others (another config's fence). No subjects (the chains go
 * whole); an upstream of its own, since a teardown asks none. */
static int write_teardown_config(int pid, int dfd, struct instance *in)
{
	cJSON *j = cJSON_CreateObject(), *up;
	char *text = NULL;
	int fd = -1, rc = -ENOMEM;

	if (!path_fmt(in->conf, sizeof(in->conf), "%s/teardown.json",
		      in->dir) ||
	    j == NULL)
		goto out;
	instance_keys(j, in, pid);
	cJSON_DeleteItemFromObject(j, "subjects");
	up = cJSON_AddArrayToObject(j, "upstreams");
	if (up != NULL)
		cJSON_AddItemToArray(up, cJSON_CreateString("192.0.2.1"));
	if ((text = cJSON_Print(j)) == NULL)
		goto out;
	fd = statefs_create(dfd, "teardown.json", 0600);
	rc = fd < 0 ? fd : 0;
	if (fd >= 0 && write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		rc = -EIO;
	if (rc != 0)
		fprintf(stderr, "dnsfence: exec: cannot write %s: %s\n",
			in->conf, strerror(-rc));
out:
	if (fd >= 0)
		close(fd);
	free(text);
	cJSON_Delete(j);
	return rc;
}

/* What an exec killed outright left: an entry whose pid is gone, judged
 * and rebuilt from that pid (stale_entry) before its cgroup is emptied,
 * its daemon stopped and its fence removed. */
static void clean_stale(void)
{
	int fd = dup(exec_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct instance in = {.daemon = -1};
		int pid = parse_pid(e->d_name);

		if (pid <= 0 || (kill(pid, 0) == 0 || errno != ESRCH) ||
		    !stale_entry(pid, e->d_name, &in))
			continue;
		fprintf(stderr,
			"dnsfence: exec: removing what exec %d left (it was "
			"killed)\n",
			pid);
		in.started = true; /* its daemon ran: rules may be left */
		if (empty_cgroup(&in) != 0 || empty_uid(&in) != 0)
			continue; /* its rules stay while it has processes */
		stop_stale_daemon(in.dir);
		teardown(&in);
	}
	closedir(d);
}

/* Another fence's chain in this namespace's filter table. */
static bool namespace_fenced(void)
{
	enum fwexec_backend b;
	char err[256], *text = NULL;
	bool found;
	int rc = fwexec_backend(&b, err, sizeof(err));

	if (rc == -EEXIST)
		return true; /* both backends hold rules: not ours to add */
	if (rc != 0 || fw_save_family(b, AF_INET, &text, err, sizeof(err)))
		found = false;
	else
		found = strstr(text, "\n:" FW_CHAIN " ") != NULL;
	free(text);
	return found;
}
