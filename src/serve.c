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
 * guard has started, READY=1 goes to systemd (notify.c), so a Type=notify
 * unit is "active" only when queries are answered behind the fence. */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <event2/event.h>

#include "dnsfence/guard.h"
#include "dnsfence/log.h"
#include "dnsfence/notify.h"
#include "dnsfence/observe.h"
#include "dnsfence/policy.h"
#include "dnsfence/privs.h"
#include "dnsfence/resolver.h"
#include "dnsfence/serve.h"
#include "dnsfence/server.h"
#include "dnsfence/sets.h"
#include "dnsfence/stats.h"
#include "dnsfence/upstream.h"

static struct policy *build_policy(const struct config *cfg);
static void on_signal(evutil_socket_t sig, short what, void *arg);
static void raise_nofile(void);
static bool binds_low_port(const struct config *cfg);
static void notify_state(const char *state);
static struct sets *open_sets(struct event_base *base,
			      const struct config *cfg);

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

int serve_run(const struct config *cfg, uid_t uid, gid_t gid)
{
	static const int signals[] = {SIGTERM, SIGINT, SIGUSR1};
	struct event *sigev[sizeof(signals) / sizeof(signals[0])] = {NULL};
	struct event_base *base = NULL;
	struct policy *pol = NULL;
	struct upstream *up = NULL;
	struct sets *sets = NULL;
	struct resolver *res = NULL;
	struct server *srv = NULL;
	struct guard *guard = NULL;
	struct observe *obs = NULL;
	char err[512];
	bool ready = false;
	int rc = -EIO;

	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if (cfg->mode == CONFIG_MODE_OFF)
		log_warn("main",
			 "mode is \"off\": NO FENCE. Every name is forwarded "
			 "and nothing is put in the sets; the workload is "
			 "not protected");
	if (privs_preflight(uid, binds_low_port(cfg), err, sizeof(err)) != 0) {
		log_err("privs", "cannot serve: %s", err);
		rc = -EPERM;
		goto out;
	}
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
	if (cfg->mode != CONFIG_MODE_OFF)
		upstream_set_mark(up, cfg->mark);
	if (cfg->mode != CONFIG_MODE_OFF &&
	    (sets = open_sets(base, cfg)) == NULL)
		goto out;
	res = resolver_new(base, cfg, pol, up, sets);
	if (res == NULL)
		goto out;
	srv = server_new(base, cfg, res, err, sizeof(err));
	if (srv == NULL) {
		log_err("server", "%s", err);
		goto out;
	}
	if ((obs = observe_open(base, cfg, uid, gid)) == NULL)
		goto out;
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		sigev[i] = evsignal_new(base, signals[i], on_signal, base);
		if (sigev[i] == NULL || evsignal_add(sigev[i], NULL) != 0)
			goto out;
	}
	if (privs_drop(uid, gid, err, sizeof(err)) != 0) {
		log_err("privs", "cannot drop privileges: %s; not serving",
			err);
		rc = -EPERM;
		goto out;
	}
	log_info("privs",
		 "running as uid %u gid %u, effective capabilities: "
		 "cap_net_admin only",
		 (unsigned)uid, (unsigned)gid);
	if (cfg->mode != CONFIG_MODE_OFF &&
	    (guard = guard_new(base, cfg, uid, sets)) == NULL) {
		log_err("guard", "cannot start: out of memory");
		goto out;
	}
	log_info("main",
		 "dnsfence %s serving, mode %s, %zu allow entries, %zu "
		 "upstream(s)",
		 DNSFENCE_VERSION, config_mode_name(cfg->mode),
		 policy_size(pol), cfg->n_upstreams);
	snprintf(err, sizeof(err),
		 "READY=1\nSTATUS=serving, mode %s, %zu allow entries",
		 config_mode_name(cfg->mode), policy_size(pol));
	notify_state(err);
	ready = true;
	if (event_base_dispatch(base) != 0 || guard_failed(guard))
		goto out;
	rc = 0;
out:
	if (ready)
		notify_state("STOPPING=1\nSTATUS=shutting down");
	/* Order matters: the guard's child goes first, then the transports
	 * (their clients are dropped), then c-ares and the kernel adds
	 * finish their pending work, then the resolver that those callbacks
	 * point at. */
	guard_free(guard);
	observe_close(obs);
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
