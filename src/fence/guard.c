// SPDX-License-Identifier: GPL-2.0-or-later
/* guard: keeps the fence in place while the daemon serves.
 *
 * Reading the rules back means running iptables-save, and writing them
 * means iptables-restore and libipset: all blocking. The event loop must
 * never wait on them, so every guard_interval seconds the guard forks a
 * child that runs drift_compare (drift.c, the very code `dnsfence check`
 * runs), writes one line per difference to a pipe and exits with the
 * drift bits.
 * The parent reads the pipe with a libevent event and reaps the child on
 * SIGCHLD; the job is over when both the pipe is closed and the child is
 * reaped. On drift it logs each difference, counts it, and forks a second
 * child that runs install_fence (install.c, what `setup` does: the sets,
 * their reconcile with the policy fingerprint, the rules). If that
 * fails, the daemon stops (exit 3) so that its supervisor restarts it and
 * runs setup again: serving with a fence known to be broken is not an
 * option. A child that hangs is killed after GUARD_CHILD_TIMEOUT.
 *
 * A reload hands the guard a new config (guard_apply): from then on the
 * checks compare against it, and a third kind of child writes its rules
 * at once (install_fence with the new config, keeping the set entries:
 * the reload deletes what its removed names put there). A job already
 * running finishes first and its result is dropped: it judged or wrote
 * the old config, and the guard never puts the old rules back.
 *
 * The children run with the daemon's credentials: its uid and ambient
 * CAP_NET_ADMIN (privs.c), which iptables-restore inherits across exec. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "fence/drift.h"
#include "fence/firewall.h"
#include "fence/guard.h"
#include "fence/install.h"
#include "base/log.h"
#include "sets/sets.h"
#include "base/stats.h"

#define SYS		    "guard"
#define GUARD_CHILD_TIMEOUT 60	 /* seconds */
#define GUARD_OUT_MAX	    8192 /* child output kept per job */
/* Check child exit status when the state could not be read (above every
 * DRIFT_* combination). */
#define CHILD_UNREADABLE 64

enum job { JOB_NONE = 0, JOB_CHECK, JOB_RESTORE, JOB_APPLY };

struct guard {
	struct event_base *base;
	const struct config *cfg;
	struct sets *sets;
	struct event *tick_ev, *pipe_ev, *chld_ev, *kill_ev;
	enum job job;
	pid_t pid;
	int fd;
	bool eof, reaped, killed, failed;
	int wstatus;
	int drift;	    /* bits of the check that started the restore */
	bool apply_pending; /* guard_apply came: write cfg's rules next */
	guard_applied_fn applied;
	void *applied_arg;
	char out[GUARD_OUT_MAX];
	size_t out_len;
};

static void report_line(void *arg, const char *line);
static void on_tick(evutil_socket_t fd, short what, void *arg);
static void on_pipe(evutil_socket_t fd, short what, void *arg);
static void on_sigchld(evutil_socket_t sig, short what, void *arg);
static void on_kill(evutil_socket_t fd, short what, void *arg);
static int spawn(struct guard *g, enum job job);
static void child_main(struct guard *g, enum job job, int fd)
    __attribute__((noreturn));
static void try_reap(struct guard *g);
static void finish_if_done(struct guard *g);
static void job_done(struct guard *g);
static void check_done(struct guard *g, int code);
static void restore_done(struct guard *g, int code);
static void start_apply(struct guard *g);
static void apply_done(struct guard *g, int code);
static const char *job_name(enum job job);
static void log_lines(struct guard *g, enum log_level level,
		      const char *prefix);
static void schedule(struct guard *g);

struct guard *guard_new(struct event_base *base, const struct config *cfg,
			struct sets *sets)
{
	struct guard *g = malloc(sizeof(*g));

	if (g == NULL)
		return NULL;
	*g = (struct guard){.base = base, .cfg = cfg, .sets = sets, .fd = -1};
	g->tick_ev = evtimer_new(base, on_tick, g);
	g->kill_ev = evtimer_new(base, on_kill, g);
	g->chld_ev = evsignal_new(base, SIGCHLD, on_sigchld, g);
	if (g->tick_ev == NULL || g->kill_ev == NULL || g->chld_ev == NULL ||
	    evsignal_add(g->chld_ev, NULL) != 0) {
		guard_free(g);
		return NULL;
	}
	schedule(g);
	log_info(SYS, "checking the rules and sets every %u s",
		 (unsigned)cfg->guard_interval);
	return g;
}

void guard_free(struct guard *g)
{
	if (g == NULL)
		return;
	struct event *evs[] = {g->pipe_ev, g->tick_ev, g->kill_ev, g->chld_ev};

	if (g->pid > 0 && !g->reaped) {
		(void)kill(g->pid, SIGKILL);
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (g->fd >= 0)
		close(g->fd);
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		if (evs[i] != NULL)
			event_free(evs[i]);
	}
	free(g);
}

bool guard_failed(const struct guard *g)
{
	return g != NULL && g->failed;
}

static void schedule(struct guard *g)
{
	struct timeval tv = {.tv_sec = g->cfg->guard_interval};

	(void)evtimer_add(g->tick_ev, &tv);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct guard *g = arg;

	(void)fd;
	(void)what;
	if (spawn(g, JOB_CHECK) < 0)
		schedule(g); /* logged; try again next interval */
}

/* Fork a child for job; its output comes back through a pipe. */
static int spawn(struct guard *g, enum job job)
{
	struct timeval tv = {.tv_sec = GUARD_CHILD_TIMEOUT};
	int p[2] = {-1, -1};
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		log_err(SYS, "pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		log_err(SYS, "fork: %s", strerror(e));
		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[0]);
		child_main(g, job, p[1]);
	}
	close(p[1]);
	evutil_make_socket_nonblocking(p[0]);
	g->job = job;
	g->pid = pid;
	g->fd = p[0];
	g->eof = g->reaped = g->killed = false;
	g->wstatus = 0;
	g->out_len = 0;
	g->pipe_ev =
	    event_new(g->base, g->fd, EV_READ | EV_PERSIST, on_pipe, g);
	if (g->pipe_ev == NULL || event_add(g->pipe_ev, NULL) != 0) {
		/* Cannot listen to it: stop it, and treat it as failed. */
		log_err(SYS, "cannot watch the child's pipe");
		(void)kill(pid, SIGKILL);
		g->killed = true;
		g->eof = true;
	}
	(void)evtimer_add(g->kill_ev, &tv);
	/* The child may already be gone, its SIGCHLD delivered. */
	finish_if_done(g);
	return 0;
}

/* In the child: never returns. Signals back to their defaults first:
 * libevent's handlers would wake the parent's loop through a shared
 * socketpair. */
static void child_main(struct guard *g, enum job job, int fd)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGUSR1, SIGCHLD, SIGPIPE};
	char err[512];
	int r;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	if (job == JOB_CHECK) {
		r = drift_compare(g->cfg, report_line, &fd, err, sizeof(err));
		if (r < 0) {
			report_line(&fd, err);
			_exit(CHILD_UNREADABLE);
		}
		_exit(r);
	}
	/* No keeper: the daemon holds its provenance in memory, not in the
	 * state file, so a restore that finds another fingerprint flushes. */
	r = install_fence(g->cfg,
			  job == JOB_APPLY ? INSTALL_KEEP : INSTALL_RECONCILE,
			  NULL, NULL, err, sizeof(err));
	if (r < 0) {
		report_line(&fd, err);
		_exit(1);
	}
	_exit(0);
}

/* In the child: one line to the pipe (short writes retried). */
static void report_line(void *arg, const char *line)
{
	int fd = *(int *)arg;
	size_t len = strlen(line), off = 0;
	char nl = '\n';

	while (off < len) {
		ssize_t n = write(fd, line + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		off += (size_t)n;
	}
	while (write(fd, &nl, 1) < 0 && errno == EINTR)
		;
}

static void on_pipe(evutil_socket_t fd, short what, void *arg)
{
	struct guard *g = arg;
	char buf[1024];
	ssize_t n;

	(void)what;
	n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		size_t room = sizeof(g->out) - 1 - g->out_len;
		size_t take = (size_t)n < room ? (size_t)n : room;

		memcpy(g->out + g->out_len, buf, take);
		g->out_len += take;
		return;
	}
	/* EOF or error: the child is done writing. */
	event_free(g->pipe_ev);
	g->pipe_ev = NULL;
	close(g->fd);
	g->fd = -1;
	g->eof = true;
	finish_if_done(g);
}

static void on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	struct guard *g = arg;

	(void)sig;
	(void)what;
	if (g->job != JOB_NONE)
		finish_if_done(g);
}

static void on_kill(evutil_socket_t fd, short what, void *arg)
{
	struct guard *g = arg;

	(void)fd;
	(void)what;
	if (g->job == JOB_NONE || g->reaped)
		return;
	log_err(SYS, "%s child %ld still running after %d s: killing it",
		job_name(g->job), (long)g->pid, GUARD_CHILD_TIMEOUT);
	g->killed = true;
	(void)kill(g->pid, SIGKILL);
}

static void try_reap(struct guard *g)
{
	pid_t r;

	if (g->reaped)
		return;
	do
		r = waitpid(g->pid, &g->wstatus, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == g->pid || (r < 0 && errno == ECHILD)) {
		if (r < 0)
			g->wstatus = W_EXITCODE(CHILD_UNREADABLE, 0);
		g->reaped = true;
	}
}

/* The job is over when the child is reaped and its pipe is at EOF,
 * whichever comes last. */
static void finish_if_done(struct guard *g)
{
	try_reap(g);
	if (g->reaped && g->eof)
		job_done(g);
}

static void job_done(struct guard *g)
{
	enum job job = g->job;
	int code = -1;

	evtimer_del(g->kill_ev);
	if (g->pipe_ev != NULL) {
		event_free(g->pipe_ev);
		g->pipe_ev = NULL;
	}
	if (g->fd >= 0) {
		close(g->fd);
		g->fd = -1;
	}
	g->out[g->out_len] = '\0';
	g->job = JOB_NONE;
	g->pid = 0;
	if (!g->killed && WIFEXITED(g->wstatus))
		code = WEXITSTATUS(g->wstatus);
	else if (WIFSIGNALED(g->wstatus))
		log_err(SYS, "child killed by signal %d", WTERMSIG(g->wstatus));
	if (g->apply_pending && !(job == JOB_APPLY && code != 0)) {
		log_debug(SYS, "%s result dropped: the config changed",
			  job_name(job));
		g->out_len = 0;
		start_apply(g);
		return;
	}
	if (job == JOB_CHECK)
		check_done(g, code);
	else if (job == JOB_RESTORE)
		restore_done(g, code);
	else
		apply_done(g, code);
}

static const char *job_name(enum job job)
{
	return job == JOB_CHECK	    ? "check"
	       : job == JOB_RESTORE ? "restore"
				    : "apply";
}

void guard_set_config(struct guard *g, const struct config *cfg)
{
	g->cfg = cfg;
}

int guard_apply(struct guard *g, const struct config *cfg,
		guard_applied_fn done, void *arg)
{
	g->cfg = cfg;
	g->applied = done;
	g->applied_arg = arg;
	g->apply_pending = true;
	if (g->job == JOB_NONE) {
		evtimer_del(g->tick_ev);
		start_apply(g);
	}
	return 0;
}

static void start_apply(struct guard *g)
{
	g->apply_pending = false;
	if (spawn(g, JOB_APPLY) < 0)
		apply_done(g, -1);
}

/* The new config's rules are in place, or could not be written: then the
 * daemon stops (exit 3), as after a failed restore. */
static void apply_done(struct guard *g, int code)
{
	guard_applied_fn done = g->applied;
	char first[256] = "";

	g->applied = NULL;
	if (code == 0) {
		log_info(SYS, "the new rules are in place");
		if (done != NULL)
			done(g->applied_arg, 0, "");
		schedule(g);
		return;
	}
	g->out[g->out_len] = '\0';
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(g->out, "\n"),
		 g->out);
	log_lines(g, LOGL_ERR, "applying the new rules failed: ");
	if (done != NULL)
		done(g->applied_arg, -EIO, first);
	log_err(SYS, "cannot put the new rules in place: stopping (exit 3) "
		     "so that setup runs again");
	g->failed = true;
	event_base_loopexit(g->base, NULL);
}

static void check_done(struct guard *g, int code)
{
	if (code == 0) {
		log_debug(SYS, "rules and sets in place");
		schedule(g);
		return;
	}
	if (code < 0 || code > (DRIFT_RULES | DRIFT_SETS)) {
		log_lines(g, LOGL_ERR, "cannot verify the fence: ");
		schedule(g);
		return;
	}
	stats_inc(STAT_GUARD_DRIFT);
	log_lines(g, LOGL_WARN, "DRIFT: ");
	log_warn(SYS,
		 "the kernel's %s no longer match the config: writing them "
		 "back",
		 code == DRIFT_RULES  ? "firewall rules"
		 : code == DRIFT_SETS ? "sets"
				      : "firewall rules and sets");
	g->drift = code;
	/* A set that is missing now is empty once recreated: what the map
	 * says about its entries is void. */
	if (code & DRIFT_SETS)
		sets_forget(g->sets);
	if (spawn(g, JOB_RESTORE) < 0)
		restore_done(g, -1);
}

static void restore_done(struct guard *g, int code)
{
	if (code == 0) {
		stats_inc(STAT_GUARD_RESTORED);
		/* Adds made between the check and the recreation were
		 * remembered against the old, missing sets; and the
		 * reconcile flushes the sets when the rules it found did not
		 * carry this policy (deleted, or another policy's). */
		sets_forget(g->sets);
		log_warn(SYS, "restored the firewall rules and sets");
		schedule(g);
		return;
	}
	log_lines(g, LOGL_ERR, "restore failed: ");
	log_err(SYS, "cannot restore the fence: stopping (exit 3) so that "
		     "setup runs again");
	g->failed = true;
	event_base_loopexit(g->base, NULL);
}

/* Log the child's output, one message per line. */
static void log_lines(struct guard *g, enum log_level level, const char *prefix)
{
	char *save = NULL, *line;

	if (g->out_len == 0) {
		log_msg(level, SYS, "%s(no details)", prefix);
		return;
	}
	for (line = strtok_r(g->out, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		log_msg(level, SYS, "%s%s", prefix, line);
	g->out_len = 0;
}
