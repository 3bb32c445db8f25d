// SPDX-License-Identifier: GPL-2.0-or-later
/* serve: assembles the daemon and runs its loop. The order is the point:
 * everything that needs privileges (the listeners on port 53, the
 * netlink socket for the set adds) is opened first, then the process
 * drops to `user` with CAP_NET_ADMIN only (privs.c), and only then does
 * the guard start and the loop serve: no query is ever answered by a
 * root process, and the upstream sockets c-ares opens on the first query
 * belong to `user`, the one uid the firewall lets reach the upstreams.
 * Before binding, privs_preflight says which capabilities a reduced start
 * (systemd User=, a Kubernetes sidecar) lacks, all at once; after the
 * guard has started and the readiness gate (the self-test, selftest.c)
 * found no probe getting around the fence, READY=1 goes to systemd
 * (notify.c), so a Type=notify unit is "active" only when queries are
 * answered behind a fence proved from the workload's side.
 *
 * The policy lives in reload.c, which changes it on SIGHUP, on
 * `dnsfence reload` (the control socket, control.c) and when the config
 * file changes (watch.c). serve_run is a sequence of short steps on one
 * struct daemon; close_parts undoes them in the one safe order. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "daemon/control.h"
#include "daemon/flowcheck.h"
#include "fence/guard.h"
#include "base/log.h"
#include "base/monotime.h"
#include "daemon/notify.h"
#include "flow/flowmark.h"
#include "observe/observe.h"
#include "config/policy.h"
#include "daemon/privs.h"
#include "resolve/prov.h"
#include "config/fingerprint.h"
#include "resolve/provstate.h"
#include "daemon/reload.h"
#include "resolve/resolver.h"
#include "daemon/selftest.h"
#include "daemon/serve.h"
#include "resolve/server.h"
#include "sets/sets.h"
#include "base/stats.h"
#include "resolve/upstream.h"
#include "daemon/watch.h"

#define GATE_QUIET_MS 2000

/* The readiness gate: the self-test's prober and what it said so far. */
struct gate {
	pid_t pid;
	struct event *ev, *timer;
	struct evbuffer *buf;
	size_t count[3];
	char first_open[512];
	bool failed;
};

struct daemon {
	const struct config *cfg; /* as started; reload_config() since */
	const char *path;
	uid_t uid;
	gid_t gid;
	struct event_base *base;
	struct upstream *up;
	struct sets *sets;
	struct resolver *res;
	struct server *srv;
	struct reload *rl;
	struct control *ctl;
	struct watch *watch;
	struct guard *guard;
	struct observe *obs;
	struct flowcheck *fc; /* the name check's queue reader */
	struct event *sigev[4];
	int state_fd; /* state_dir, opened before the drop: prov.state */
	struct gate gate;
	bool ready;
};

static const int signals[] = {SIGTERM, SIGINT, SIGUSR1, SIGHUP};

static void on_signal(evutil_socket_t sig, short what, void *arg);
static void raise_nofile(void);
static bool binds_low_port(const struct config *cfg);
static void notify_state(const char *state);
static struct sets *open_sets(struct event_base *base,
			      const struct config *cfg);
static int open_parts(struct daemon *d);
static int open_reload(struct daemon *d);
static int open_name_check(struct daemon *d);
static void say_address_only(const struct config *cfg);
static int add_signals(struct daemon *d);
static int drop_privileges(struct daemon *d);
static void restore_prov(struct daemon *d);
static void persist_prov(struct daemon *d);
static void announce(struct daemon *d);
static void gate_or_announce(struct daemon *d);
static void on_gate(evutil_socket_t fd, short what, void *arg);
static void on_gate_timeout(evutil_socket_t fd, short what, void *arg);
static void gate_line(struct daemon *d, const char *line);
static void gate_done(struct daemon *d);
static void gate_close(struct gate *g);
static void close_parts(struct daemon *d);

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	if (sig == SIGUSR1) {
		stats_log();
		return;
	}
	if (sig == SIGHUP) {
		reload_request(d->rl, "signal", NULL, NULL);
		return;
	}
	log_info("main", "signal %d: shutting down", (int)sig);
	event_base_loopbreak(d->base);
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

/* Does a listener need cap_net_bind_service (port below
 * net.ipv4.ip_unprivileged_port_start, 1024 unless lowered)? */
static bool binds_low_port(const struct config *cfg)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "re");
	unsigned start = 1024;

	if (f != NULL) {
		if (fscanf(f, "%u", &start) != 1)
			start = 1024;
		fclose(f);
	}
	for (size_t i = 0; i < cfg->n_listen; i++) {
		if (netaddr_port((const struct sockaddr *)&cfg->listen[i].sa) <
		    start)
			return true;
	}
	return false;
}

/* systemd is told, when it is listening; a failure to tell it is worth a
 * warning but never stops the daemon. */
static void notify_state(const char *state)
{
	int r = notify_send(state);

	if (r < 0)
		log_warn("notify", "cannot notify $NOTIFY_SOCKET: %s",
			 strerror(-r));
}

static struct sets *open_sets(struct event_base *base, const struct config *cfg)
{
	struct sets_params sp = {
	    .set4 = cfg->set4,
	    .set6 = cfg->set6,
	    .ttl_min = cfg->ttl_min,
	    .ttl_max = cfg->ttl_max,
	    .map_max = (size_t)cfg->maxelem * 2,
	};
	char err[512];
	struct sets *sets = sets_open(base, &sp, err, sizeof(err));

	if (sets == NULL)
		log_err("sets", "%s", err);
	return sets;
}

/* Everything that may need privileges: the upstream channel, the sets'
 * netlink socket, observe (NFLOG, the state directory, metrics; before
 * the reload machinery, which tells it each new config), the listeners,
 * the policy and its reload machinery. */
static int open_parts(struct daemon *d)
{
	const struct config *cfg = d->cfg;
	char err[512];

	d->base = event_base_new();
	if (d->base == NULL)
		return -ENOMEM;
	d->up = upstream_new(d->base, cfg->upstreams, cfg->n_upstreams,
			     cfg->upstream_timeout_ms, err, sizeof(err));
	if (d->up == NULL) {
		log_err("upstream", "%s", err);
		return -EIO;
	}
	if (cfg->mode != CONFIG_MODE_OFF)
		upstream_set_mark(d->up, cfg->mark);
	if (cfg->mode != CONFIG_MODE_OFF &&
	    (d->sets = open_sets(d->base, cfg)) == NULL)
		return -EIO;
	d->obs = observe_open(d->base, cfg, d->uid, d->gid);
	if (d->obs == NULL)
		return -EIO;
	d->res = resolver_new(d->base, cfg, NULL, d->up, d->sets);
	if (d->res == NULL || open_reload(d) != 0)
		return -ENOMEM;
	resolver_set_usage(d->res, observe_usage(d->obs));
	d->srv = server_new(d->base, cfg, d->res, err, sizeof(err));
	if (d->srv == NULL) {
		log_err("server", "%s", err);
		return -EIO;
	}
	return open_name_check(d);
}

/* The udp ports of `ports` that no parser reads (outside
 * name_check.quic_ports), said once at start: the check does not cover
 * them. */
static void say_address_only(const struct config *cfg)
{
	char list[256] = "", one[32];
	size_t len = 0;

	if (cfg->name_check == CONFIG_NAME_CHECK_OFF)
		return;
	for (size_t i = 0; i < cfg->n_ports; i++) {
		const struct config_port *pt = &cfg->ports[i];

		if (pt->proto != IPPROTO_UDP ||
		    config_port_covered(cfg->quic_ports, cfg->n_quic_ports, pt))
			continue;
		config_port_format(pt, one, sizeof(one));
		if (len + strlen(one) + 3 < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%s%s", len ? ", " : "", one);
	}
	if (len > 0)
		log_info("namecheck",
			 "%s: address-only (no parser reads the first bytes "
			 "of these udp ports; name_check.quic_ports lists the "
			 "ones read as QUIC)",
			 list);
}

/* The queue reader runs whenever the fence does (scope output), so a
 * reload can turn the check on; when it cannot bind and the check is on,
 * the daemon refuses to serve: the rules would drop every checked flow. */
static int open_name_check(struct daemon *d)
{
	const struct config *cfg = d->cfg;
	char err[512];

	if (cfg->mode == CONFIG_MODE_OFF || cfg->scope != CONFIG_SCOPE_OUTPUT)
		return 0;
	d->fc = flowcheck_new(d->base, d->rl, observe_attrib(d->obs), err,
			      sizeof(err));
	if (d->fc != NULL) {
		observe_set_queue(d->obs, FLOW_QUEUE_NUM);
		say_address_only(cfg);
		return 0;
	}
	if (cfg->name_check == CONFIG_NAME_CHECK_OFF) {
		log_warn("namecheck",
			 "%s: name_check cannot be turned on by a reload", err);
		return 0;
	}
	log_err("namecheck", "%s; not serving", err);
	return -EIO;
}

/* The policy, the reload steps, the control socket and the watch (before
 * the drop: the socket is chowned, the directory may need root to read).
 * Neither the socket nor the watch is worth refusing to serve for. */
static int open_reload(struct daemon *d)
{
	struct reload_parts parts = {.base = d->base,
				     .res = d->res,
				     .sets = d->sets,
				     .up = d->up,
				     .obs = d->obs};
	struct policy *pol;
	char err[512];

	pol = reload_build_policy(d->cfg, err, sizeof(err));
	if (pol == NULL) {
		log_err("config", "%s", err);
		return -EINVAL;
	}
	d->rl = reload_new(&parts, d->cfg, pol, d->path);
	if (d->rl == NULL) {
		policy_free(pol);
		return -ENOMEM;
	}
	d->up = NULL; /* the reload's now */
	restore_prov(d);
	d->ctl = control_new(d->base, d->cfg->control_socket, d->uid, d->gid,
			     d->rl, err, sizeof(err));
	control_set_learn(d->ctl, observe_learn(d->obs));
	if (d->ctl == NULL)
		log_warn("control",
			 "no control socket (%s): 'dnsfence reload' and "
			 "'status' will not reach this daemon; SIGHUP still "
			 "reloads",
			 err);
	if (d->cfg->control_watch)
		d->watch = watch_new(d->base, reload_path(d->rl), d->rl);
	return 0;
}

/* The names of the set entries the last daemon (or setup) left: loaded,
 * then removed, so that a crash leaves none for the next setup to trust
 * (persist_prov writes them again at a clean exit). */
static void restore_prov(struct daemon *d)
{
	char want[PROVENANCE_HEXLEN], err[512];
	int rc;

	if (d->sets == NULL || provenance_fingerprint(d->cfg, want) != 0)
		return;
	d->state_fd =
	    open(d->cfg->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->state_fd < 0) {
		log_warn("prov",
			 "%s: %s; a restart with another policy will flush "
			 "the sets",
			 d->cfg->state_dir, strerror(errno));
		return;
	}
	rc = provstate_load(reload_prov(d->rl), d->state_fd, d->cfg->state_dir,
			    want, err, sizeof(err));
	if (rc == 0)
		log_info("prov",
			 "the names of %zu set entries restored from %s/%s",
			 prov_addresses(reload_prov(d->rl)), d->cfg->state_dir,
			 PROVSTATE_FILE);
	else if (rc != -ENOENT)
		log_warn("prov",
			 "%s: not used; a reload will not take back entries "
			 "an earlier run added",
			 err);
	provstate_remove(d->state_fd, d->cfg->state_dir);
}

static void persist_prov(struct daemon *d)
{
	const struct config *cfg;
	char fp[PROVENANCE_HEXLEN], err[512] = "out of memory";

	if (d->sets == NULL || d->rl == NULL || d->state_fd < 0)
		return;
	cfg = reload_config(d->rl);
	if (provenance_fingerprint(cfg, fp) != 0 ||
	    provstate_save(reload_prov(d->rl), d->state_fd, cfg->state_dir, fp,
			   d->uid, d->gid, err, sizeof(err)) != 0)
		log_warn("prov",
			 "%s: a restart with another policy will flush the "
			 "sets",
			 err);
}

static int add_signals(struct daemon *d)
{
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		d->sigev[i] = evsignal_new(d->base, signals[i], on_signal, d);
		if (d->sigev[i] == NULL || evsignal_add(d->sigev[i], NULL) != 0)
			return -ENOMEM;
	}
	return 0;
}

static int drop_privileges(struct daemon *d)
{
	char err[512];

	if (privs_drop(d->uid, d->gid, err, sizeof(err)) != 0) {
		log_err("privs", "cannot drop privileges: %s; not serving",
			err);
		return -EPERM;
	}
	log_info("privs",
		 "running as uid %u gid %u, effective capabilities: "
		 "cap_net_admin only",
		 (unsigned)d->uid, (unsigned)d->gid);
	return 0;
}

static void announce(struct daemon *d)
{
	const struct config *cfg = reload_config(d->rl);
	size_t n = policy_size(reload_policy(d->rl));
	char state[256];

	log_info("main",
		 "dnsfence %s serving, mode %s, %zu allow entries, %zu "
		 "upstream(s)",
		 DNSFENCE_VERSION, config_mode_name(cfg->mode), n,
		 cfg->n_upstreams);
	snprintf(state, sizeof(state),
		 "READY=1\nSTATUS=serving, mode %s, %zu allow entries",
		 config_mode_name(cfg->mode), n);
	resolver_set_gated(d->res, NULL);
	notify_state(state);
	d->ready = true;
}

/* With the gate on (enforce mode, scope output), READY=1 waits for the
 * self-test; the loop serves meanwhile, since the prober asks a denied
 * name through it. Any probe that got out: no READY=1, the line in the
 * log, and the daemon exits 1. */
static void gate_or_announce(struct daemon *d)
{
	const struct config *cfg = reload_config(d->rl);
	struct timeval tv = {.tv_sec = SELFTEST_MAX_MS / 1000 + 4};
	struct gate *g = &d->gate;
	int fd;

	if (!cfg->selftest || cfg->mode != CONFIG_MODE_ENFORCE ||
	    cfg->scope != CONFIG_SCOPE_OUTPUT) {
		if (!cfg->selftest)
			log_warn("selftest", "the readiness gate is off "
					     "(selftest: false)");
		announce(d);
		return;
	}
	fd = selftest_start(cfg, d->uid, d->gid, &g->pid);
	if (fd >= 0) {
		evutil_make_socket_nonblocking(fd);
		g->buf = evbuffer_new();
		g->ev =
		    event_new(d->base, fd, EV_READ | EV_PERSIST, on_gate, d);
		g->timer = evtimer_new(d->base, on_gate_timeout, d);
	}
	if (fd < 0 || g->buf == NULL || g->ev == NULL || g->timer == NULL ||
	    event_add(g->ev, NULL) != 0 || evtimer_add(g->timer, &tv) != 0) {
		log_err("selftest",
			"cannot start the self-test (%s): not "
			"becoming ready",
			fd < 0 ? strerror(-fd) : "out of memory");
		if (fd >= 0 && g->ev == NULL)
			close(fd);
		g->failed = true;
		event_base_loopbreak(d->base);
		return;
	}
	resolver_set_gated(d->res, POLICY_PROBE_NAME);
	observe_quiet(d->obs, d->uid, UINT64_MAX);
	log_info("selftest", "probing the fence from the workload's side "
			     "before becoming ready");
}

static void on_gate(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	struct gate *g = &d->gate;
	char *line;
	int n;

	(void)what;
	while ((n = evbuffer_read(g->buf, fd, 4096)) > 0)
		;
	while ((line = evbuffer_readln(g->buf, NULL, EVBUFFER_EOL_LF)) !=
	       NULL) {
		gate_line(d, line);
		free(line);
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		gate_done(d);
}

static void on_gate_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	(void)fd;
	(void)what;
	log_err("selftest", "the self-test did not finish in time: not "
			    "becoming ready");
	d->gate.failed = true;
	gate_close(&d->gate);
	event_base_loopbreak(d->base);
}

static void gate_line(struct daemon *d, const char *line)
{
	struct gate *g = &d->gate;
	enum selftest_verdict v;
	const char *text;

	if (selftest_parse(line, &v, &text) != 0)
		return;
	g->count[v]++;
	if (v == SELFTEST_OPEN) {
		log_err("selftest", "OPEN: %s", text);
		if (g->first_open[0] == '\0')
			snprintf(g->first_open, sizeof(g->first_open), "%s",
				 text);
	} else if (v == SELFTEST_UNPROVEN) {
		log_warn("selftest", "could not prove: %s", text);
	} else {
		log_debug("selftest", "held: %s", text);
	}
}

static void gate_done(struct daemon *d)
{
	struct gate *g = &d->gate;

	gate_close(g);
	/* The probes' last NFLOG copies may still be queued. */
	observe_quiet(d->obs, d->uid, monotime_ms() + GATE_QUIET_MS);
	if (g->first_open[0] != '\0') {
		log_err("selftest",
			"refusing readiness: %s; exiting (see "
			"docs/deployment.md)",
			g->first_open);
		g->failed = true;
		event_base_loopbreak(d->base);
		return;
	}
	log_info("selftest", "%zu probes held, %zu could not be proved",
		 g->count[SELFTEST_HELD], g->count[SELFTEST_UNPROVEN]);
	announce(d);
}

/* The prober is killed if still running, and reaped. */
static void gate_close(struct gate *g)
{
	if (g->ev != NULL) {
		close(event_get_fd(g->ev));
		event_free(g->ev);
		g->ev = NULL;
	}
	if (g->timer != NULL) {
		event_free(g->timer);
		g->timer = NULL;
	}
	if (g->buf != NULL) {
		evbuffer_free(g->buf);
		g->buf = NULL;
	}
	if (g->pid > 0) {
		(void)kill(g->pid, SIGKILL);
		while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
			;
		g->pid = 0;
	}
}

/* Order matters: the guard's child goes first, then the control clients
 * and the transports (their clients are dropped), then c-ares and the
 * kernel adds finish their pending work, then the resolver that those
 * callbacks point at, and only then the policy it judged with. */
static void close_parts(struct daemon *d)
{
	if (d->ready)
		notify_state("STOPPING=1\nSTATUS=shutting down");
	gate_close(&d->gate);
	guard_free(d->guard);
	flowcheck_free(d->fc);
	control_free(d->ctl);
	watch_free(d->watch);
	if (d->res != NULL)
		resolver_set_usage(d->res, NULL); /* observe_close frees it */
	observe_close(d->obs);
	server_free(d->srv);
	upstream_free(d->up);
	if (d->rl != NULL)
		reload_close_upstreams(d->rl);
	persist_prov(d);
	sets_close(d->sets);
	resolver_free(d->res);
	reload_free(d->rl);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (d->sigev[i] != NULL)
			event_free(d->sigev[i]);
	}
	if (d->base != NULL)
		event_base_free(d->base);
	if (d->state_fd >= 0)
		close(d->state_fd);
	stats_log();
}

int serve_run(const struct config *cfg, const char *path, uid_t uid, gid_t gid)
{
	struct daemon d = {
	    .cfg = cfg, .path = path, .uid = uid, .gid = gid, .state_fd = -1};
	char err[512];
	int rc = -EIO;

	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	/* One malloc arena: the reload's parse thread then allocates where
	 * the loop frees, so what an old policy gives back is reused and
	 * trimmed (reload.c) instead of stranded in a thread's own arena. */
	(void)mallopt(M_ARENA_MAX, 1);
	if (cfg->mode == CONFIG_MODE_OFF)
		log_warn("main",
			 "mode is \"off\": NO FENCE. Every name is forwarded "
			 "and nothing is put in the sets; the workload is "
			 "not protected");
	else if (config_audit_dns_open(cfg))
		log_warn("main",
			 "mode is \"audit\": NOTHING IS BLOCKED. Names not on "
			 "the allowlist are FORWARDED upstream (DNS can carry "
			 "data out) and logged as \"would deny\"; every flow "
			 "the fence would block is let through and logged as "
			 "\"would block\". \"audit_denied\": \"local\" keeps "
			 "denied names local");
	else if (cfg->mode == CONFIG_MODE_AUDIT)
		log_warn("main",
			 "mode is \"audit\" (audit_denied \"local\"): flows "
			 "are NOT BLOCKED, only logged as \"would block\"; "
			 "names not on the allowlist are answered locally and "
			 "DNS to other resolvers is rejected, as in enforce");
	if (privs_preflight(uid, binds_low_port(cfg), err, sizeof(err)) != 0) {
		log_err("privs", "cannot serve: %s", err);
		rc = -EPERM;
		goto out;
	}
	if (open_parts(&d) != 0 || add_signals(&d) != 0)
		goto out;
	if ((rc = drop_privileges(&d)) != 0)
		goto out;
	rc = -EIO;
	if (cfg->mode != CONFIG_MODE_OFF) {
		d.guard = guard_new(d.base, reload_config(d.rl), d.sets);
		if (d.guard == NULL) {
			log_err("guard", "cannot start: out of memory");
			goto out;
		}
		reload_set_guard(d.rl, d.guard);
	}
	gate_or_announce(&d);
	if (event_base_dispatch(d.base) != 0 || guard_failed(d.guard))
		goto out;
	rc = d.gate.failed ? SERVE_NOT_READY : 0;
out:
	close_parts(&d);
	return rc;
}
