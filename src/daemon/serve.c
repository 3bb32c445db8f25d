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
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "daemon/control.h"
#include "daemon/flowcheck.h"
#include "daemon/link.h"
#include "daemon/offload.h"
#include "daemon/sandbox.h"
#include "daemon/setwriter.h"
#include "daemon/split.h"
#include "fence/guard.h"
#include "fence/held.h"
#include "fence/mldset.h"
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
#include "resolve/sockpool.h"
#include "sets/sets.h"
#include "sets/setsadm.h"
#include "observe/metrics.h"
#include "base/statefs.h"
#include "base/stats.h"
#include "resolve/upstream.h"
#include "daemon/watch.h"

#define GATE_QUIET_MS	2000
#define STOP_WAIT_MS	5000
#define CHAN_BUF	(16 * 1024 * 1024)
#define RULES_QUEUE_MAX 8 /* IPC_RULES frames waiting for the parse */

/* The three channels between the two processes (setwriter.h, link.h). */
enum { CHAN_SET, CHAN_SOCK, CHAN_LINK, CHANS };

/* The readiness gate: the self-test's prober and what it said so far. */
struct gate {
	pid_t pid;
	struct event *ev, *timer;
	struct evbuffer *buf;
	size_t count[3];
	char first_open[512];
	bool failed;
};

/* One IPC_RULES frame from the DNS process, as it came. */
struct rules_frame {
	uint32_t id;
	int what; /* IPC_RULES_CHANGED, _SAME or _DRAINED */
};

/* The parent's read of a reloaded config (parent_rules): the parse in a
 * thread, the frames that come meanwhile queued, in order. */
struct rules_reload {
	struct offload *parse;
	struct rules_frame queue[RULES_QUEUE_MAX];
	size_t n_queued;
	/* the parse under way: its frame, and what the thread hands back */
	struct rules_frame frame;
	struct config *next;
	int rc;
	bool shed_failed;
	char err[512];
};

struct daemon {
	const struct config *cfg; /* as started; reload_config() since */
	const char *path;
	uid_t uid;
	gid_t gid;
	struct event_base *base;
	struct upstream *up;
	struct sockpool *pool; /* the socket channel's spares and replies */
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
	/* the split: each process's ends of the channels, the other's */
	bool child; /* this is the DNS process */
	int chan[CHANS], peer[CHANS];
	pid_t parent_pid;
	struct link *link;
	/* the parent's: the child, its writers, the config it read itself */
	struct split *split;
	struct setwriter *sw, *skw;
	const struct config *cur;
	struct config *owned[2]; /* the last two it read (the guard may
				  * still hold the older one) */
	uint32_t rules_id;
	struct rules_reload rr;
	uint32_t n_allow;
	/* the control socket, bound and listening before the fork (a
	 * client's SO_PEERCRED names the parent), served by the child */
	int ctl_fd;
	char ctl_err[512];
	struct event *count_ev; /* the set entries, for metrics */
	struct event *mld_ev;	/* the MLD set kept to our addresses */
	struct event *held_ev;	/* the next end of a replaced upstream's hold */
	int held_fd;		/* the parent's state_dir, for HELD_FILE */
	bool mld_failing;
#ifdef DNSFENCE_TEST_HOOKS
	struct event *hook_ev;
#endif
};

static const int signals[] = {SIGTERM, SIGINT, SIGUSR1, SIGHUP};
static const struct link_ops parent_ops;
static const struct link_ops child_ops;

static void on_signal(evutil_socket_t sig, short what, void *arg);
static void raise_nofile(void);
static bool binds_low_port(const struct config *cfg);
static void notify_state(const char *state);
static struct sets *open_sets(struct event_base *base, const struct config *cfg,
			      int chan);
static int open_parts(struct daemon *d);
static int open_reload(struct daemon *d);
static int open_name_check(struct daemon *d);
static size_t address_only(const struct config *cfg, int proto, char *list,
			   size_t size);
static void say_address_only(const struct config *cfg);
static int add_signals(struct daemon *d);
static int drop_privileges(struct daemon *d);
static void restore_prov(struct daemon *d);
static void persist_prov(struct daemon *d);
static void announce(struct daemon *d);
static bool gate_on(const struct config *cfg);
static void gate_or_announce(struct daemon *d);
static void on_gate(evutil_socket_t fd, short what, void *arg);
static void on_gate_timeout(evutil_socket_t fd, short what, void *arg);
static void gate_line(struct daemon *d, const char *line);
static void gate_done(struct daemon *d);
static void gate_close(struct gate *g);
static void close_parts(struct daemon *d);
static void say_mode(const struct config *cfg);
static bool channels_broken(const struct daemon *d);
static void on_count(evutil_socket_t fd, short what, void *arg);
static void rules_next(struct daemon *d);
static void rules_drained(struct daemon *d, uint32_t id);
static void parse_rules(void *arg);
static void parsed_rules(void *arg);
static void apply_rules(struct daemon *d);
static struct config *cur_config(struct daemon *d);
static void arm_held(struct daemon *d);
static void on_held(evutil_socket_t fd, short what, void *arg);
static void save_held(struct daemon *d, struct config *cfg);

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;

	(void)what;
	if (sig == SIGUSR1) { /* the counters are the DNS process's */
		if (d->child)
			stats_log();
		else if (d->split != NULL)
			(void)kill(split_pid(d->split), SIGUSR1);
		return;
	}
	if (sig == SIGHUP && d->child) {
		reload_request(d->rl, "signal", NULL, NULL);
		return;
	}
	if (d->child && sig != SIGHUP) {
		/* systemd signals the whole group: the parent's stop (the
		 * link channel's close) is the DNS process's */
		log_debug("main", "signal %d: the parent stops this process",
			  (int)sig);
		return;
	}
	if (sig == SIGHUP) { /* the reload is the DNS process's */
		if (d->split != NULL)
			(void)kill(split_pid(d->split), SIGHUP);
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

/* The ports of cfg one by one, ranges unrolled, into out (room for
 * SETS_CLIENT_PORTS_MAX: config.c refuses more with client sets). */
static size_t client_ports(const struct config *cfg, struct sets_port *out)
{
	size_t n = 0;

	for (size_t i = 0; i < cfg->n_ports; i++)
		for (uint32_t p = cfg->ports[i].first;
		     p <= cfg->ports[i].last && n < SETS_CLIENT_PORTS_MAX; p++)
			out[n++] = (struct sets_port){cfg->ports[i].proto,
						      (uint16_t)p};
	return n;
}

/* The parent's sets over netlink (chan -1), or the DNS process's
 * through the parent (chan: its end of the set channel, taken over). */
static struct sets *open_sets(struct event_base *base, const struct config *cfg,
			      int chan)
{
	struct sets_port ports[SETS_CLIENT_PORTS_MAX];
	struct sets_params sp = {
	    .set4 = cfg->set4,
	    .set6 = cfg->set6,
	    .ttl_min = cfg->ttl_min,
	    .ttl_max = cfg->ttl_max,
	};
	char err[512];
	struct sets *sets;

	if (config_client_sets(cfg)) {
		sp.client4 = cfg->client4;
		sp.client6 = cfg->client6;
		sp.ports = ports;
		sp.n_ports = client_ports(cfg, ports);
	}
	sets = chan < 0 ? sets_open(base, &sp, err, sizeof(err))
			: sets_open_remote(base, &sp, chan, err, sizeof(err));

	if (sets == NULL)
		log_err("sets", "%s", err);
	return sets;
}

/* The DNS process's parts, opened before it enters the sandbox (so still
 * with the privileges the listeners and NFLOG need to be bound): the
 * upstream channel, whose sockets come marked from the parent, the sets
 * through the parent, observe (NFLOG, the state directory, metrics; before
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
	d->link = link_new(d->base, d->chan[CHAN_LINK], false, &child_ops, d);
	d->chan[CHAN_LINK] = -1;
	if (d->link == NULL)
		return -ENOMEM;
	if (cfg->mode != CONFIG_MODE_OFF) {
		d->pool =
		    sockpool_new(d->base, d->chan[CHAN_SOCK], SOCKPOOL_WAIT_MS);
		if (d->pool == NULL)
			return -ENOMEM;
		upstream_use_socket_channel(d->up, d->pool);
		d->sets = open_sets(d->base, cfg, d->chan[CHAN_SET]);
		d->chan[CHAN_SET] = -1;
		if (d->sets == NULL)
			return -EIO;
	}
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

/* The ports of `ports` of protocol proto that no parser of the name check
 * reads (udp: outside name_check.quic_ports; tcp: outside tls_ports and
 * http_ports), written to list as "tcp/8080, ..." (cut short when it does
 * not fit); the length written. */
static size_t address_only(const struct config *cfg, int proto, char *list,
			   size_t size)
{
	char one[32];
	size_t len = 0;

	list[0] = '\0';
	for (size_t i = 0; i < cfg->n_ports; i++) {
		const struct config_port *pt = &cfg->ports[i];
		bool read =
		    proto == IPPROTO_UDP
			? config_port_covered(cfg->quic_ports,
					      cfg->n_quic_ports, pt)
			: config_port_covered(cfg->tls_ports, cfg->n_tls_ports,
					      pt) ||
			      config_port_covered(cfg->http_ports,
						  cfg->n_http_ports, pt);

		if (pt->proto != proto || read)
			continue;
		config_port_format(pt, one, sizeof(one));
		if (len + strlen(one) + 3 < size)
			len += (size_t)snprintf(list + len, size - len, "%s%s",
						len ? ", " : "", one);
	}
	return len;
}

/* The ports the check leaves address-only, said once at start: udp ones
 * as a fact (QUIC is the only udp protocol it reads), tcp ones as a
 * warning, since an allowed address then opens them to any name the
 * front end serves. */
static void say_address_only(const struct config *cfg)
{
	char list[256];

	if (cfg->name_check == CONFIG_NAME_CHECK_OFF)
		return;
	if (address_only(cfg, IPPROTO_UDP, list, sizeof(list)) > 0)
		log_info("namecheck",
			 "%s: address-only (no parser reads the first bytes "
			 "of these udp ports; name_check.quic_ports lists the "
			 "ones read as QUIC)",
			 list);
	if (address_only(cfg, IPPROTO_TCP, list, sizeof(list)) > 0)
		log_warn("namecheck",
			 "%s: address-only (no parser reads the first bytes "
			 "of these tcp ports: any name served on an allowed "
			 "address passes; name_check.tls_ports and http_ports "
			 "list the ones read)",
			 list);
}

/* The queue reader runs whenever the fence does (scope output), so a
 * reload can turn the check on; when it cannot bind and the check is on,
 * the daemon refuses to serve: the rules would drop every checked flow. */
static int open_name_check(struct daemon *d)
{
	const struct config *cfg = d->cfg;
	char err[512];

	if (cfg->mode != CONFIG_MODE_OFF && cfg->scope == CONFIG_SCOPE_FORWARD)
		log_info("namecheck",
			 "off in the forward scope: the fenced interfaces' "
			 "flows are checked by address only (a container "
			 "reaching an answered address may name any server of "
			 "that front end)");
	if (cfg->mode == CONFIG_MODE_OFF || cfg->scope != CONFIG_SCOPE_OUTPUT)
		return 0;
	d->fc = flowcheck_new(d->base, d->rl, observe_attrib(d->obs), err,
			      sizeof(err));
	if (d->fc != NULL &&
	    flowcheck_hand_over(d->fc, link_fd(d->link)) != 0) {
		log_err("namecheck", "cannot give the queues to the parent; "
				     "not serving");
		return -EIO;
	}
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
				     .obs = d->obs,
				     .pool = d->pool,
				     .main_pid = d->parent_pid};
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
	if (d->cfg->mode != CONFIG_MODE_OFF)
		reload_set_rules(d->rl, link_rules, d->link);
	restore_prov(d);
	snprintf(err, sizeof(err), "%s", d->ctl_err);
	if (d->ctl_fd >= 0)
		d->ctl =
		    control_new_on(d->base, d->cfg->control_socket, d->ctl_fd,
				   d->uid, d->gid, d->rl, err, sizeof(err));
	d->ctl_fd = -1;
	control_set_learn(d->ctl, observe_learn(d->obs));
	control_set_usage(d->ctl, observe_usage(d->obs));
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
	    statefs_open_dir(d->cfg->state_dir, d->uid, err, sizeof(err));
	if (d->state_fd < 0) {
		log_warn("prov",
			 "%s; a restart with another policy will flush the "
			 "sets",
			 err);
		return;
	}
	rc = provstate_load(reload_prov(d->rl), d->state_fd, d->cfg->state_dir,
			    d->uid, want, err, sizeof(err));
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
	/* Bound as root: a directory on its path that the daemon's uid may
	 * not search leaves the daemon locked out of its own socket. */
	if (access(d->cfg->control_socket, F_OK) != 0 && errno == EACCES)
		log_warn("control",
			 "%s: uid %u cannot reach it (a directory on its path "
			 "does not let it search): the self-test cannot read "
			 "the daemon's counters and the socket outlives the "
			 "daemon; put it in a directory of its own, which "
			 "dnsfence creates 0770 root:%u",
			 d->cfg->control_socket, (unsigned)d->uid,
			 (unsigned)d->gid);
	return 0;
}

static void announce(struct daemon *d)
{
	const struct config *cfg = d->cur;
	char state[256];

	log_info("main",
		 "dnsfence %s serving, mode %s, %u allow entries, %zu "
		 "upstream(s)",
		 DNSFENCE_VERSION, config_mode_name(cfg->mode),
		 (unsigned)d->n_allow, cfg->n_upstreams);
	snprintf(state, sizeof(state),
		 "READY=1\nSTATUS=serving, mode %s, %u allow entries",
		 config_mode_name(cfg->mode), (unsigned)d->n_allow);
	notify_state(state);
	d->ready = true;
}

/* Does the readiness gate run (enforce mode, scope output)? Both
 * processes ask: the DNS process answers the probes apart until the
 * parent's IPC_GATE. */
static bool gate_on(const struct config *cfg)
{
	return cfg->selftest && cfg->mode == CONFIG_MODE_ENFORCE &&
	       cfg->scope == CONFIG_SCOPE_OUTPUT;
}

/* With the gate on, READY=1 waits for the self-test; the DNS process
 * serves meanwhile, since the prober asks a denied name through it. Any
 * probe that got out: no READY=1, the line in the log, and the daemon
 * exits 1. The parent runs it once the DNS process says it serves. */
static void gate_or_announce(struct daemon *d)
{
	const struct config *cfg = d->cur;
	struct timeval tv = {.tv_sec = SELFTEST_MAX_MS / 1000 + 4};
	struct gate *g = &d->gate;
	int fd;

	if (!gate_on(cfg)) {
		selftest_facts_say();
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
	selftest_facts_say();
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
		/* a fact of this place, in the start's environment line */
		selftest_fact("the self-test could not prove: %s", text);
	} else {
		log_debug("selftest", "held: %s", text);
	}
}

static void gate_done(struct daemon *d)
{
	struct gate *g = &d->gate;

	gate_close(g);
	selftest_facts_say();
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
	if (link_send(d->link, IPC_GATE, 0) != 0) {
		log_err("split", "cannot tell the DNS process the gate "
				 "passed: not becoming ready");
		g->failed = true;
		event_base_loopbreak(d->base);
		return;
	}
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

/* Order matters: the guard's child goes first, then the DNS process (a
 * clean stop: it saves the names of the set entries) and the channels,
 * then the control clients and the transports (their clients are
 * dropped), then c-ares and the kernel adds finish their pending work,
 * then the resolver that those callbacks point at, and only then the
 * policy it judged with. */
static void close_parts(struct daemon *d)
{
	if (d->ready)
		notify_state("STOPPING=1\nSTATUS=shutting down");
	gate_close(&d->gate);
	guard_free(d->guard);
	link_free(d->link); /* the DNS process's stop */
	d->link = NULL;
	if (d->split != NULL) {
		(void)split_stop(d->split, STOP_WAIT_MS);
		split_free(d->split);
	}
	offload_free(d->rr.parse); /* its thread reads d->cur */
	config_free(d->rr.next);
	setwriter_free(d->sw);
	setwriter_free(d->skw);
	for (size_t i = 0; i < CHANS; i++) {
		if (d->chan[i] >= 0)
			close(d->chan[i]);
	}
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
	sockpool_free(d->pool); /* after every upstream that takes from it */
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (d->sigev[i] != NULL)
			event_free(d->sigev[i]);
	}
#ifdef DNSFENCE_TEST_HOOKS
	if (d->hook_ev != NULL)
		event_free(d->hook_ev);
#endif
	if (d->count_ev != NULL)
		event_free(d->count_ev);
	if (d->mld_ev != NULL)
		event_free(d->mld_ev);
	if (d->held_ev != NULL)
		event_free(d->held_ev);
	if (d->held_fd >= 0)
		close(d->held_fd);
	if (d->ctl_fd >= 0)
		close(d->ctl_fd);
	if (d->base != NULL)
		event_base_free(d->base);
	if (d->state_fd >= 0)
		close(d->state_fd);
	for (size_t i = 0; i < 2; i++)
		config_free(d->owned[i]);
	if (d->child)
		stats_log(); /* the parent's count only the guard */
}

/* The DNS process: the gate passed (the probes are answered as any
 * other name from now; their last NFLOG copies may still be queued). */
static void child_gate(void *arg)
{
	struct daemon *d = arg;

	resolver_set_gated(d->res, NULL);
	observe_quiet(d->obs, d->uid, monotime_ms() + GATE_QUIET_MS);
}

/* The DNS process: the guard recreated the sets. */
static void child_forget(void *arg)
{
	struct daemon *d = arg;

	sets_forget(d->sets);
}

static const struct link_ops child_ops = {.gate = child_gate,
					  .forget = child_forget};

#ifdef DNSFENCE_TEST_HOOKS
/* The test build only: SIGUSR2 makes the DNS process do what a parser
 * bug that runs code would try, a system call outside its filter. */
static void on_hook(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	(void)arg;
	log_warn("split", "test hook: calling ptrace(PTRACE_TRACEME)");
	(void)syscall(SYS_ptrace, PTRACE_TRACEME, 0, NULL, NULL);
}
#endif

/* libevent's own messages in the DNS process: its "signals already added
 * to another base" warning names the parent's base, which this process
 * inherited and never runs. */
static void on_libevent_log(int severity, const char *msg)
{
	if (severity == EVENT_LOG_ERR)
		log_err("libevent", "%s", msg);
	else
		log_debug("libevent", "%s", msg);
}

/* The DNS process's body (split_fn): its own loop on its own event base
 * (the parent's is never touched), its parts opened while it still holds
 * what binding them needs, then the sandbox, and only then a byte read
 * from the network. */
static int dns_main(void *arg)
{
	struct daemon *d = arg;
	char err[512];
	int rc;

	for (size_t i = 0; i < CHANS; i++) { /* the parent's ends */
		close(d->chan[i]);
		d->chan[i] = d->peer[i];
		d->peer[i] = -1;
	}
	d->base = NULL;
	d->split = NULL;
	d->child = true;
	/* ps, top and /proc/PID/comm tell the two apart */
	(void)prctl(PR_SET_NAME, "dnsfence-dns", 0, 0, 0);
	event_set_log_callback(on_libevent_log);
	d->cur = d->cfg;
	rc = open_parts(d);
	if (rc == 0)
		rc = add_signals(d);
#ifdef DNSFENCE_TEST_HOOKS
	if (rc == 0 && ((d->hook_ev = evsignal_new(d->base, SIGUSR2, on_hook,
						   d)) == NULL ||
			evsignal_add(d->hook_ev, NULL) != 0))
		rc = -ENOMEM;
#endif
	if (rc == 0 && sandbox_enter(d->uid, d->gid, err, sizeof(err)) != 0) {
		log_err("split",
			"the DNS process cannot enter its sandbox: "
			"%s; not serving",
			err);
		rc = -EPERM;
	}
	/* a change of uid clears the death signal: set it again */
	if (rc == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 ||
			getppid() != d->parent_pid))
		rc = -ESRCH;
	if (rc == 0 && gate_on(d->cfg)) {
		resolver_set_gated(d->res, POLICY_PROBE_NAME);
		observe_quiet(d->obs, d->uid, UINT64_MAX);
	}
	if (rc == 0 &&
	    link_send(d->link, IPC_HELLO,
		      (uint32_t)policy_size(reload_policy(d->rl))) != 0)
		rc = -EPIPE;
	if (rc == 0 && event_base_dispatch(d->base) != 0)
		rc = -EIO;
	if (rc == 0 && link_failed(d->link))
		rc = -EPIPE;
	close_parts(d);
	return rc == 0 ? 0 : 1;
}

/* The parent: the DNS process serves; now the gate, or READY=1. */
static void parent_hello(void *arg, uint32_t n)
{
	struct daemon *d = arg;

	if (d->ready || d->gate.pid > 0)
		return;
	d->n_allow = n;
	gate_or_announce(d);
}

static void parent_applied(void *arg, int status, const char *detail)
{
	struct daemon *d = arg;

	if (status != 0)
		log_err("guard", "the reloaded rules: %s", detail);
	(void)link_reply(d->link, d->rules_id, status);
}

/* The parent: the DNS process reloaded. The config is read here again,
 * never taken from the DNS process: what the rules and the set writer
 * admit is the operator's file, whatever a compromised DNS process says.
 * (A file changed between the two reads is read again by the next
 * reload, which the watch or the operator starts.) The read runs in a
 * thread (parse_rules), so that the set writer answers adds meanwhile,
 * judged by the running config; the frames that come while it runs wait
 * in order, DRAINED too: it empties the running config's retired list,
 * which the thread reads. Beyond RULES_QUEUE_MAX waiting (the DNS process
 * sends one per reload and waits for the answer of a change), a frame is
 * refused at once (-EBUSY, as a bad file: the DNS process's reload says
 * the rules were not applied). */
static void parent_rules(void *arg, uint32_t id, int what)
{
	struct daemon *d = arg;
	struct rules_reload *rr = &d->rr;

	if (rr->n_queued == RULES_QUEUE_MAX) {
		log_err("split",
			"a reload's rules while %d wait for the parent: "
			"refused (the running rules stay)",
			RULES_QUEUE_MAX);
		(void)link_reply(d->link, id, -EBUSY);
		return;
	}
	rr->queue[rr->n_queued++] = (struct rules_frame){id, what};
	rules_next(d);
}

/* The waiting frames in order, until one needs a parse; never while one
 * runs. */
static void rules_next(struct daemon *d)
{
	struct rules_reload *rr = &d->rr;

	while (rr->n_queued > 0 && !offload_busy(rr->parse)) {
		struct rules_frame f = rr->queue[0];

		rr->n_queued--;
		memmove(rr->queue, rr->queue + 1,
			rr->n_queued * sizeof(rr->queue[0]));
		if (f.what == IPC_RULES_DRAINED) {
			rules_drained(d, f.id);
			continue;
		}
		rr->frame = f;
		if (offload_run(rr->parse, parse_rules, parsed_rules, d) != 0)
			(void)link_reply(d->link, f.id, -EBUSY);
	}
}

/* The replaced upstreams drained in the DNS process: the rules without
 * them, but for their origin lines, held against late answers (held.h). */
static void rules_drained(struct daemon *d, uint32_t id)
{
	if (d->owned[0] != NULL && d->owned[0] == d->cur) {
		struct config *cfg = d->owned[0];
		uint64_t until = monotime_s() + HELD_SECONDS;
		char list[HELD_MAX * (NETADDR_ENDPOINT_STRLEN + 1)] = "";
		struct config_endpoint *retired = cfg->retired;
		size_t n = cfg->n_retired, held = 0;

		cfg->retired = NULL;
		cfg->n_retired = 0;
		for (size_t i = 0; i < n; i++) {
			char s[NETADDR_ENDPOINT_STRLEN];
			int r = held_add(cfg, &retired[i], until);

			netaddr_format_endpoint(
			    (const struct sockaddr *)&retired[i].sa, s,
			    sizeof(s));
			if (r < 0)
				log_err("firewall",
					"%s: out of memory: its origin rules "
					"go with the rest, and a late answer "
					"may open an entry a workload can "
					"ride",
					s);
			else if (held++ < HELD_MAX)
				snprintf(list + strlen(list),
					 sizeof(list) - strlen(list), "%s%s",
					 held > 1 ? " " : "", s);
		}
		free(retired);
		if (held > 0) {
			log_info("firewall",
				 "replaced upstream(s) %s drained: their "
				 "origin rules stay %d s against late answers",
				 list, HELD_SECONDS);
			save_held(d, cfg);
			arm_held(d);
		}
	}
	if (d->guard != NULL)
		guard_apply(d->guard, d->cur, NULL, NULL);
	(void)link_reply(d->link, id, 0);
}

/* The config the parent renders its rules from, to change its holds:
 * the last reload's, or the one main read and this process owns (const
 * to the parts that only read it). */
static struct config *cur_config(struct daemon *d)
{
	if (d->owned[0] != NULL && d->owned[0] == d->cur)
		return d->owned[0];
	return d->cur == d->cfg ? (struct config *)d->cfg : NULL;
}

static void save_held(struct daemon *d, struct config *cfg)
{
	char err[512];

	if (held_save(cfg, d->held_fd, d->uid, d->gid, err, sizeof(err)) != 0)
		log_warn("firewall",
			 "%s: `check` and a restart will not know of the "
			 "held origin rules (check reports them as extra)",
			 err);
}

/* The parent: the timer at the next end of a hold. */
static void arm_held(struct daemon *d)
{
	const struct config *cfg = d->cur;
	uint64_t next = held_next(cfg), now = monotime_s();
	struct timeval tv = {.tv_sec = next > now ? (time_t)(next - now) : 0};

	if (next == 0 || d->child)
		return;
	if (d->held_ev == NULL)
		d->held_ev = evtimer_new(d->base, on_held, d);
	if (d->held_ev == NULL || evtimer_add(d->held_ev, &tv) != 0)
		log_err("firewall",
			"cannot arm the end of the replaced upstreams' hold: "
			"their origin rules stay until the next reload or "
			"restart");
}

/* A hold ended: the rules without its origin lines. Not while a reload's
 * parse runs (its thread reads the running config's holds): a second
 * later. */
static void on_held(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	char list[HELD_MAX * (NETADDR_ENDPOINT_STRLEN + 1)];
	struct config *cfg = cur_config(d);
	struct timeval again = {.tv_sec = 1};

	(void)fd;
	(void)what;
	if (cfg == NULL || offload_busy(d->rr.parse)) {
		(void)evtimer_add(d->held_ev, &again);
		return;
	}
	if (held_expire(cfg, monotime_s(), list, sizeof(list)) > 0) {
		log_info("firewall",
			 "the hold of replaced upstream(s) %s ended: their "
			 "origin rules go",
			 list);
		save_held(d, cfg);
		if (d->guard != NULL)
			guard_apply(d->guard, d->cur, NULL, NULL);
	}
	arm_held(d);
}

/* In the thread: it reads d->cur and d->path, which the loop leaves
 * alone until parsed_rules; no logging here. */
static void parse_rules(void *arg)
{
	struct daemon *d = arg;
	struct rules_reload *rr = &d->rr;

	rr->shed_failed = false;
	rr->rc = config_load(d->path, &rr->next, rr->err, sizeof(rr->err));
	if (rr->rc == 0)
		rr->rc = reload_keep_replaced(d->cur, rr->next, rr->err,
					      sizeof(rr->err));
	/* The parent matches no name: of the allow list its rules need
	 * only the fingerprint (a 100,000-name list is megabytes a copy). */
	if (rr->rc == 0)
		rr->shed_failed = provenance_shed_allow(rr->next) != 0;
	/* What the parse freed: back to the kernel, or each reload's copy
	 * stays resident in the parent (reload.c does the same in the DNS
	 * process). */
	(void)malloc_trim(0);
}

/* In the loop, the thread joined: the swap, the set writers, the guard,
 * the answer; then the frames that waited. */
static void parsed_rules(void *arg)
{
	struct daemon *d = arg;

	apply_rules(d);
	rules_next(d);
}

static void apply_rules(struct daemon *d)
{
	struct rules_reload *rr = &d->rr;
	struct config *next = rr->next;
	uint32_t id = rr->frame.id;

	rr->next = NULL;
	if (rr->rc != 0) {
		log_err("split",
			"the parent cannot read the reloaded config: "
			"%s",
			rr->err);
		config_free(next);
		(void)link_reply(d->link, id, -EINVAL);
		return;
	}
	if (rr->shed_failed)
		log_warn("split", "the parent keeps the reloaded allow list: "
				  "out of memory");
	config_free(d->owned[1]);
	d->owned[1] = d->owned[0];
	d->owned[0] = next;
	if (next->n_held > 0 || d->cur->n_held > 0)
		save_held(d, next);
	d->cur = next;
	arm_held(d);
	setwriter_set_config(d->sw, next);
	setwriter_set_config(d->skw, next);
	if (d->guard != NULL && rr->frame.what == IPC_RULES_CHANGED) {
		d->rules_id = id;
		guard_apply(d->guard, next, parent_applied, d);
		return;
	}
	if (d->guard != NULL)
		guard_set_config(d->guard, next);
	(void)link_reply(d->link, id, 0);
}

static const struct link_ops parent_ops = {.hello = parent_hello,
					   .rules = parent_rules};

/* The parent's guard recreated the sets: the DNS process's map is stale
 * too. */
static void parent_forgot(void *arg)
{
	struct daemon *d = arg;

	if (d->count_ev != NULL) /* status: the recreated sets at once */
		on_count(-1, 0, d);
	if (d->link != NULL && link_send(d->link, IPC_FORGET, 0) != 0)
		log_warn("split", "cannot tell the DNS process the sets were "
				  "recreated");
}

/* The parent counts the sets' entries for the DNS process's status and
 * metrics (libipset needs CAP_NET_ADMIN; a short blocking call, here
 * rather than in the loop that answers queries). */
static void on_count(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	const struct config *cfg = d->cur;
	uint64_t n4 = 0, n6 = 0;
	long long v4 = -1, v6 = -1;

	(void)fd;
	(void)what;
	if (setsadm_count(cfg->set4, &n4) == 0)
		v4 = (long long)n4;
	if (setsadm_count(cfg->set6, &n6) == 0)
		v6 = (long long)n6;
	stats_set_entries(v4, v6);
	stats_set_log_drops();
}

/* The parent keeps the MLD set the groups of the namespace's addresses
 * (fence/mldset.c), which change under it (SLAAC, an operator's `ip
 * addr`, DAD): once a second, against the kernel's own lists. */
static void on_mld(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;
	char err[512];
	int r;

	(void)fd;
	(void)what;
	r = mldset_sync(d->cur, err, sizeof(err));
	if (r < 0 && !d->mld_failing)
		log_warn("mld",
			 "cannot keep the MLD set current (%s): reports for "
			 "addresses added since stay in until it works",
			 err);
	else if (r >= 0 && d->mld_failing)
		log_info("mld", "the MLD set is current again");
	d->mld_failing = r < 0;
}

static int start_mld(struct daemon *d)
{
	struct timeval tv = {.tv_sec = 1};

	if (d->cfg->mode == CONFIG_MODE_OFF ||
	    d->cfg->scope != CONFIG_SCOPE_OUTPUT)
		return 0;
	d->mld_ev = event_new(d->base, -1, EV_PERSIST, on_mld, d);
	if (d->mld_ev == NULL || event_add(d->mld_ev, &tv) != 0)
		return -ENOMEM;
	return 0;
}

static int start_count(struct daemon *d)
{
	struct timeval tv = {.tv_sec = METRICS_SETS_CACHE_MS / 1000,
			     .tv_usec = (METRICS_SETS_CACHE_MS % 1000) * 1000};

	if (d->cfg->mode == CONFIG_MODE_OFF)
		return 0;
	d->count_ev = event_new(d->base, -1, EV_PERSIST, on_count, d);
	if (d->count_ev == NULL || event_add(d->count_ev, &tv) != 0)
		return -ENOMEM;
	on_count(-1, 0, d);
	return 0;
}

/* The three channels: SOCK_SEQPACKET pairs, close-on-exec; the DNS
 * process's end of the socket channel is made non-blocking by its pool
 * (resolve/sockpool.h). Each end may queue CHAN_BUF bytes
 * (SO_SNDBUFFORCE: still root here): a
 * frame costs its buffer about 1 KiB whatever its size, and the parent
 * must be able to queue an answer to each of the SETWRITER_INFLIGHT_MAX
 * requests it holds (one it cannot send stops it), as the DNS process
 * its verdicts. */
static int open_channels(struct daemon *d)
{
	for (size_t i = 0; i < CHANS; i++) {
		int sv[2], buf = CHAN_BUF;

		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) !=
		    0)
			return -errno;
		for (size_t e = 0; e < 2; e++) {
			if (setsockopt(sv[e], SOL_SOCKET, SO_SNDBUFFORCE, &buf,
				       sizeof(buf)) != 0)
				(void)setsockopt(sv[e], SOL_SOCKET, SO_SNDBUF,
						 &buf, sizeof(buf));
		}
		d->chan[i] = sv[0];
		d->peer[i] = sv[1];
		evutil_make_socket_nonblocking(sv[0]);
		if (i != CHAN_SOCK)
			evutil_make_socket_nonblocking(sv[1]);
	}
	return 0;
}

/* The parent's parts: the sets over netlink and the writers that serve
 * the DNS process's requests, the link; then the drop to uid with
 * CAP_NET_ADMIN only, and the guard. */
static int open_parent(struct daemon *d)
{
	const struct config *cfg = d->cfg;

	if (cfg->mode != CONFIG_MODE_OFF) {
		d->sets = open_sets(d->base, cfg, -1);
		if (d->sets == NULL)
			return -EIO;
		sets_on_forget(d->sets, parent_forgot, d);
		sets_quiet(d->sets);
		d->sw = setwriter_new(d->base, d->chan[CHAN_SET], cfg, d->sets);
		d->chan[CHAN_SET] = -1;
		d->skw = setwriter_new(d->base, d->chan[CHAN_SOCK], cfg, NULL);
		d->chan[CHAN_SOCK] = -1;
		if (d->sw == NULL || d->skw == NULL)
			return -ENOMEM;
	}
	d->link = link_new(d->base, d->chan[CHAN_LINK], true, &parent_ops, d);
	d->chan[CHAN_LINK] = -1;
	d->rr.parse = offload_new(d->base);
	if (d->link == NULL || d->rr.parse == NULL || add_signals(d) != 0 ||
	    start_count(d) != 0 || start_mld(d) != 0)
		return -ENOMEM;
	/* Before the drop: the directories above state_dir may be closed
	 * to the daemon's uid (the DNS process keeps its own, state_fd). */
	if (d->cfg->scope == CONFIG_SCOPE_OUTPUT &&
	    d->cfg->mode != CONFIG_MODE_OFF) {
		char err[512];

		d->held_fd = statefs_open_dir(d->cfg->state_dir, d->uid, err,
					      sizeof(err));
		if (d->held_fd < 0)
			log_warn("firewall", "%s", err);
	}
	arm_held(d); /* the holds setup found or the last run left */
	if (drop_privileges(d) != 0)
		return -EPERM;
	if (cfg->mode != CONFIG_MODE_OFF) {
		d->guard = guard_new(d->base, cfg, d->sets);
		if (d->guard == NULL) {
			log_err("guard", "cannot start: out of memory");
			return -EIO;
		}
	}
	return 0;
}

/* The mode's warning, once at start: what the workload is not protected
 * from. Enforce says nothing. */
static void say_mode(const struct config *cfg)
{
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
}

/* A channel to the DNS process refused a frame or closed. */
static bool channels_broken(const struct daemon *d)
{
	return setwriter_failed(d->sw) || setwriter_failed(d->skw) ||
	       link_failed(d->link);
}

/* The parent, once the DNS process runs: what the child took is closed
 * here, and what the parent will not touch again goes back. */
static void after_fork(struct daemon *d)
{
	for (size_t i = 0; i < CHANS; i++) {
		close(d->peer[i]);
		d->peer[i] = -1;
	}
	if (d->ctl_fd >= 0) /* the DNS process's now */
		close(d->ctl_fd);
	d->ctl_fd = -1;
	stats_count_shared();
	/* The config's parse (a cJSON tree of the whole file, the allow
	 * list's checks) was freed before the fork but stays resident
	 * until trimmed: the parent never touches it again. */
	(void)malloc_trim(0);
	log_info("split",
		 "the DNS process is pid %d (no capability, seccomp); this "
		 "process keeps cap_net_admin for the sets, the upstream "
		 "sockets' mark, the name check's verdicts and the guard",
		 (int)split_pid(d->split));
}

/* The parent's loop, until it ends: 0, SERVE_NOT_READY (the gate
 * refused), or -EIO (the guard, a channel or the DNS process failed). */
static int serve_loop(struct daemon *d)
{
	int st;

	if (event_base_dispatch(d->base) == 0 && !split_ended(d->split, &st) &&
	    channels_broken(d) && !split_wait(d->split, 1000))
		log_err("split",
			"the DNS process (pid %d) broke its channels: stopping "
			"it; the fence stays in place",
			(int)split_pid(d->split));
	if (guard_failed(d->guard) || channels_broken(d))
		return -EIO;
	if (split_ended(d->split, &st))
		return -EIO; /* said by split.c */
	return d->gate.failed ? SERVE_NOT_READY : 0;
}

int serve_run(const struct config *cfg, const char *path, uid_t uid, gid_t gid)
{
	struct daemon d = {.cfg = cfg,
			   .cur = cfg,
			   .path = path,
			   .uid = uid,
			   .gid = gid,
			   .state_fd = -1,
			   .held_fd = -1,
			   .ctl_fd = -1,
			   .parent_pid = getpid()};
	char err[512];
	int rc = -EIO;

	for (size_t i = 0; i < CHANS; i++)
		d.chan[i] = d.peer[i] = -1;
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	/* One malloc arena: the reload's parse thread then allocates where
	 * the loop frees, so what an old policy gives back is reused and
	 * trimmed (reload.c) instead of stranded in a thread's own arena. */
	(void)mallopt(M_ARENA_MAX, 1);
	say_mode(cfg);
	selftest_note_vsock(); /* /dev/vsock is root's: before any drop */
	if (privs_preflight(uid, binds_low_port(cfg), err, sizeof(err)) != 0) {
		log_err("privs", "cannot serve: %s", err);
		rc = -EPERM;
		goto out;
	}
	d.base = event_base_new();
	if (d.base == NULL || open_channels(&d) != 0 || stats_share() != 0) {
		log_err("split", "cannot open the channels to the DNS process");
		goto out;
	}
	d.ctl_fd = control_bind(cfg->control_socket, gid, d.ctl_err,
				sizeof(d.ctl_err));
	rc = split_fork(d.base, dns_main, &d, &d.split);
	if (rc != 0) {
		log_err("split", "cannot start the DNS process: %s",
			strerror(-rc));
		d.split = NULL;
		rc = -EIO;
		goto out;
	}
	after_fork(&d);
	rc = open_parent(&d);
	if (rc != 0)
		goto out;
	rc = serve_loop(&d);
out:
	close_parts(&d);
	return rc;
}
