// SPDX-License-Identifier: GPL-2.0-or-later
/* reload: the live policy change (see reload.h).
 *
 * Requests (SIGHUP, the control socket, the config watch) only queue a
 * waiter and make one event active, so requests that arrive together
 * cost one reload, and a request during a reload gets one more after
 * it. A reload runs in steps, each a plain function:
 *
 *   load       read and validate the file, compile the allowlist; any
 *              error keeps the running policy (nothing was touched yet)
 *   refuse     keys that cannot change in a running daemon (the
 *              listeners, the sets, the user, the control socket, the
 *              upstream timeout, mode "off" on either side): a restart
 *              is needed
 *   upstreams  a new c-ares channel for new upstreams, used once the new
 *              rules (which let the daemon reach them) are in place; the
 *              old channel finishes the questions it holds and is freed
 *              when idle (their answers come back as established flows).
 *              The replaced addresses stay in the rules as upstreams
 *              (cfg->retired: the mark required) until every old channel
 *              is gone; then the guard's child deletes the conntrack
 *              entries to them and writes the rules without them
 *   swap       resolver, sets' timeout clamp, log level, attribution,
 *              the recent memory and the state file (observe): between
 *              two queries, since the loop runs one callback at a time;
 *              questions already upstream are judged again on arrival
 *   evict      every address only removed names put in the sets is
 *              deleted over netlink (sets_del), their cached answers
 *              dropped (by the swap); an address kept names share gets
 *              the longest expiry among the kept names' links, within
 *              the new ttl.max (sets_shorten), never the removed one's
 *   rules      when reload_rules_differ, the guard writes the new rules
 *              in a child (guard_apply) and checks against them from then
 *              on; it never restores the old ones
 *   complete   when the deletes are acked and the rules written: one log
 *              line, the waiters answered
 *
 * The file is read with the daemon's credentials (after the privilege
 * drop): it must be readable by `user`. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "config/configjson.h"
#include "dns/dnsmsg.h"
#include "fence/firewall.h"
#include "base/ipc.h"
#include "base/log.h"
#include "config/policy.h"
#include "config/subjects.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "resolve/admit.h"
#include "resolve/prov.h"
#include "config/fingerprint.h"
#include "daemon/offload.h"
#include "daemon/reload.h"
#include "fence/held.h"
#include "resolve/resolver.h"
#include "sets/sets.h"
#include "base/stats.h"
#include "observe/metrics.h"
#include "observe/observe.h"
#include "observe/status.h"
#include "resolve/upstream.h"
#include "observe/usage.h"

#define SYS		   "reload"
#define WAITERS_MAX	   16
#define TEXT_MAX	   1024
#define DRAINING_MAX	   4 /* replaced upstream channels still busy */
#define RELOAD_NAMES_SHOWN 5 /* names added / removed a reload names */

/* Who asks for reloads: each one's last record is kept for status. */
static const char *const triggers[] = {"control", "watch", "signal"};
#define RELOAD_TRIGGERS (sizeof(triggers) / sizeof(triggers[0]))

struct waiter {
	reload_done_fn fn;
	void *arg;
};

/* What the slow half of a reload hands to the fast half. */
struct job {
	struct config *cfg;
	struct policy *pol;
	int result; /* RELOAD_OK or RELOAD_BAD_CONFIG (err says why) */
	bool unchanged, rules, upstreams;
	size_t added, removed;
	char names[TEXT_MAX / 2]; /* "(added a, b; removed c)", capped */
	char err[TEXT_MAX];
};

/* One reload's outcome, for status: the last of each trigger is kept, so
 * that a `dnsfence reload` finding nothing to do does not hide what the
 * watch applied a moment before. */
struct record {
	char trigger[16];
	int result;
	char text[TEXT_MAX];
	uint64_t wall, ms;
};

struct reload {
	struct reload_parts p;
	char path[4096];
	const struct config *cfg; /* running */
	struct config *owned;	  /* cfg, when a reload loaded it */
	struct policy *pol;
	struct prov *prov;
	reload_rules_fn rules;
	void *rules_arg;
	struct event *kick_ev;
	struct upstream *up;	  /* the channel new questions go to */
	struct upstream *next_up; /* the reload's, once its rules are in */
	struct upstream *draining[DRAINING_MAX];
	struct event *drain_ev;
	uint64_t started_ms;
	/* the reload under way */
	bool busy;
	struct offload *parse; /* its slow half, in a thread */
	struct job job;
	const char *trigger, *next_trigger;
	struct waiter cur[WAITERS_MAX], next[WAITERS_MAX];
	size_t n_cur, n_next;
	int waits; /* deletes and rules still to come */
	int result;
	char text[TEXT_MAX];
	uint64_t t0_ms;
	struct netaddr *evict;
	size_t n_evict, cap_evict;
	struct netaddr *short_addr; /* entries cut to kept names' expiry */
	uint64_t *short_exp;
	size_t n_short, cap_short;
	/* The config before this reload, kept while the parent still judges
	 * adds with it (the resolver's admit_was), when it is ours to free. */
	struct config *was_owned;
	bool rules_after_del; /* IPC_RULES_CHANGED waits for the deletes */
	size_t n_refused; /* of evict: what the new config refuses as such */
	struct netaddr refused_first;
	/* for status: the last one, and the last of each trigger */
	uint64_t count;
	struct record last;
	struct record by[RELOAD_TRIGGERS];
};

static void on_kick(evutil_socket_t fd, short what, void *arg);
static void run(struct reload *rl);
static int load(const struct reload *rl, struct config **cfg,
		struct policy **pol, char *err, size_t errlen);
static void prepare_job(void *arg);
static void prepare(const struct reload *rl, struct job *j);
static void on_loaded(void *arg);
static void apply(struct reload *rl, struct job *j);
static bool restart_needed(const struct config *a, const struct config *b,
			   char *err, size_t errlen);
static bool same_subjects(const struct config *a, const struct config *b);
static void names_diff(const struct config *a, const struct config *b,
		       struct job *j);
static void name_list(char *buf, size_t cap, const char *what, char *const *v,
		      const size_t *idx, size_t n);
static void describe(const struct reload *rl, const struct job *j,
		     enum config_mode mode_was, size_t evicted, size_t dropped,
		     char *buf, size_t cap);
static void swap(struct reload *rl, struct config *cfg, struct policy *pol);
static size_t evict(struct reload *rl);
static bool still_allowed(void *arg, const uint8_t *name, size_t len);
static bool refused(void *arg, const struct netaddr *a);
static void collect(void *arg, const struct netaddr *a);
static void collect_short(void *arg, const struct netaddr *a, uint64_t expires);
static void on_deleted(void *arg, int status);
static void on_evicted(void *arg, int status);
static void send_rules(struct reload *rl);
static void on_applied(void *arg, int status, const char *detail);
static void step_done(struct reload *rl);
static void finish(struct reload *rl, int result, const char *text);
static int cmp_str(const void *a, const void *b);
static int new_upstream(struct reload *rl, const struct config *cfg, char *err,
			size_t errlen);
static void use_upstream(struct reload *rl);
static void on_drain(evutil_socket_t fd, short what, void *arg);
static bool has_address(const struct config_endpoint *v, size_t n,
			const struct config_endpoint *e);
static void forget_replaced(struct reload *rl);
static bool same_endpoints(const struct config_endpoint *a, size_t na,
			   const struct config_endpoint *b, size_t nb);
static char **sorted_entries(const struct config *c, size_t *n);
static void entry_json(void *arg, const uint8_t *name, size_t len,
		       const struct netaddr *a, uint64_t left_s);

struct policy *reload_build_policy(const struct config *cfg, char *err,
				   size_t errlen)
{
	struct policy *pol = policy_new();
	const char *why = NULL;

	if (pol == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < cfg->n_allow; i++) {
		if (policy_add(pol, cfg->allow[i], &why) != 0) {
			snprintf(err, errlen, "allow: %s: %s", cfg->allow[i],
				 why != NULL ? why : "cannot add");
			goto fail;
		}
	}
	for (size_t i = 0; i < cfg->n_ecosystems; i++) {
		if (policy_add_preset(pol, cfg->ecosystems[i]) != 0) {
			snprintf(err, errlen, "ecosystems: %s: cannot load",
				 cfg->ecosystems[i]);
			goto fail;
		}
	}
	return pol;
fail:
	policy_free(pol);
	return NULL;
}

struct reload *reload_new(const struct reload_parts *parts,
			  const struct config *cfg, struct policy *pol,
			  const char *path)
{
	struct reload *rl = calloc(1, sizeof(*rl));

	if (rl == NULL)
		return NULL;
	rl->p = *parts;
	rl->cfg = cfg;
	rl->pol = pol;
	rl->started_ms = monotime_ms();
	stats_config_loaded(true, (int64_t)time(NULL));
	path = config_path(path);
	snprintf(rl->path, sizeof(rl->path), "%s", path);
	rl->kick_ev = event_new(parts->base, -1, 0, on_kick, rl);
	rl->parse = offload_new(parts->base);
	rl->drain_ev = evtimer_new(parts->base, on_drain, rl);
	rl->prov = prov_new(prov_max_for(cfg->maxelem));
	if (rl->kick_ev == NULL || rl->drain_ev == NULL || rl->prov == NULL ||
	    rl->parse == NULL) {
		reload_free(rl);
		return NULL;
	}
	rl->up = parts->up;
	resolver_set_policy(rl->p.res, cfg, pol);
	if (rl->p.sets != NULL)
		resolver_set_prov(rl->p.res, rl->prov);
	return rl;
}

void reload_set_rules(struct reload *rl, reload_rules_fn fn, void *arg)
{
	rl->rules = fn;
	rl->rules_arg = arg;
}

/* The resolver must be gone (or repointed) first: it holds cfg and pol. */
void reload_free(struct reload *rl)
{
	if (rl == NULL)
		return;
	offload_free(rl->parse); /* a parse under way ends first */
	config_free(rl->job.cfg);
	policy_free(rl->job.pol);
	if (rl->kick_ev != NULL)
		event_free(rl->kick_ev);
	if (rl->drain_ev != NULL)
		event_free(rl->drain_ev);
	reload_close_upstreams(rl);
	prov_free(rl->prov);
	policy_free(rl->pol);
	config_free(rl->owned);
	config_free(rl->was_owned);
	free(rl->evict);
	free(rl->short_addr);
	free(rl->short_exp);
	free(rl);
}

/* Their pending callbacks run now (-ECANCELED): the resolver must still
 * be there. */
void reload_close_upstreams(struct reload *rl)
{
	upstream_free(rl->next_up);
	upstream_free(rl->up);
	rl->next_up = rl->up = NULL;
	for (size_t i = 0; i < DRAINING_MAX; i++) {
		upstream_free(rl->draining[i]);
		rl->draining[i] = NULL;
	}
}

const struct config *reload_config(const struct reload *rl)
{
	return rl->cfg;
}

const struct policy *reload_policy(const struct reload *rl)
{
	return rl->pol;
}

struct prov *reload_prov(const struct reload *rl)
{
	return rl->prov;
}

const char *reload_path(const struct reload *rl)
{
	return rl->path;
}

void reload_request(struct reload *rl, const char *trigger, reload_done_fn done,
		    void *arg)
{
	if (done != NULL && rl->n_next == WAITERS_MAX) {
		done(arg, RELOAD_FAILED, "too many reload requests waiting");
		return;
	}
	if (done != NULL)
		rl->next[rl->n_next++] = (struct waiter){done, arg};
	if (rl->next_trigger == NULL)
		rl->next_trigger = trigger;
	if (!rl->busy)
		event_active(rl->kick_ev, EV_TIMEOUT, 0);
}

void reload_forget(struct reload *rl, void *arg)
{
	for (size_t i = 0; i < rl->n_cur; i++) {
		if (rl->cur[i].arg == arg)
			rl->cur[i].fn = NULL;
	}
	for (size_t i = 0; i < rl->n_next; i++) {
		if (rl->next[i].arg == arg)
			rl->next[i].fn = NULL;
	}
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
	struct reload *rl = arg;

	(void)fd;
	(void)what;
	if (rl->busy || rl->next_trigger == NULL)
		return;
	memcpy(rl->cur, rl->next, rl->n_next * sizeof(rl->next[0]));
	rl->n_cur = rl->n_next;
	rl->n_next = 0;
	rl->trigger = rl->next_trigger;
	rl->next_trigger = NULL;
	run(rl);
}

/* The slow half (read, parse, compile, compare: ~0.1 s for a 100k list)
 * runs in a thread (offload.c), so that queries are answered meanwhile;
 * it only reads the running config, which changes in apply(), after it
 * is joined. */
static void run(struct reload *rl)
{
	rl->busy = true;
	rl->t0_ms = monotime_ms();
	rl->waits = 0;
	memset(&rl->job, 0, sizeof(rl->job));
	if (offload_run(rl->parse, prepare_job, on_loaded, rl) != 0)
		finish(rl, RELOAD_FAILED, "the last reload's parse still runs");
}

static void prepare_job(void *arg)
{
	struct reload *rl = arg;

	prepare(rl, &rl->job);
}

/* No logging and no event loop here: this may run in the thread. */
static void prepare(const struct reload *rl, struct job *j)
{
	if (load(rl, &j->cfg, &j->pol, j->err, sizeof(j->err)) != 0 ||
	    restart_needed(rl->cfg, j->cfg, j->err, sizeof(j->err))) {
		j->result = RELOAD_BAD_CONFIG;
		return;
	}
	j->unchanged = config_equal(rl->cfg, j->cfg);
	if (j->unchanged)
		return;
	/* Upstreams replaced by an earlier reload and still draining stay
	 * fenced as upstreams through this one too, whatever it changes
	 * (the parent keeps them the same way). */
	if (reload_keep_replaced(rl->cfg, j->cfg, j->err, sizeof(j->err)) !=
	    0) {
		j->result = RELOAD_BAD_CONFIG;
		return;
	}
	names_diff(rl->cfg, j->cfg, j);
	j->rules = reload_rules_differ(rl->cfg, j->cfg);
	j->upstreams = !same_endpoints(rl->cfg->upstreams, rl->cfg->n_upstreams,
				       j->cfg->upstreams, j->cfg->n_upstreams);
}

static void on_loaded(void *arg)
{
	struct reload *rl = arg;

	apply(rl, &rl->job);
}

/* The fast half, in the loop: between two queries. */
static void apply(struct reload *rl, struct job *j)
{
	char err[TEXT_MAX];
	size_t evicted, dropped;
	enum config_mode mode_was = rl->cfg->mode;

	if (j->result != RELOAD_OK) {
		finish(rl, j->result, j->err);
		goto out;
	}
	if (j->unchanged) {
		snprintf(err, sizeof(err), "read %.400s: no change", rl->path);
		finish(rl, RELOAD_OK, err);
		goto out;
	}
	if (j->upstreams && new_upstream(rl, j->cfg, err, sizeof(err)) != 0) {
		upstream_free(rl->next_up);
		rl->next_up = NULL;
		finish(rl, RELOAD_BAD_CONFIG, err);
		goto out;
	}
	dropped = resolver_set_policy(rl->p.res, j->cfg, j->pol);
	if (rl->rules != NULL && j->rules) {
		/* Until the parent has the new rules it judges with the old
		 * config: an address only the new one admits (a wider
		 * allow_cidrs, a former upstream) waits for on_applied. */
		resolver_set_admit_was(rl->p.res, rl->cfg);
		rl->was_owned = rl->owned;
		rl->owned = NULL;
	}
	swap(rl, j->cfg, j->pol);
	j->cfg = NULL;
	j->pol = NULL;
	rl->rules_after_del = rl->rules != NULL && j->rules;
	evicted = evict(rl);
	rl->waits++; /* held until the steps below are started */
	if (rl->rules != NULL && j->rules) {
		rl->waits++;
		if (!rl->rules_after_del)
			send_rules(rl);
	} else if (rl->rules != NULL) {
		rl->rules(rl->rules_arg, rl->cfg, IPC_RULES_SAME, NULL, NULL);
	}
	if (rl->next_up != NULL && (rl->rules == NULL || !j->rules))
		use_upstream(rl);
	describe(rl, j, mode_was, evicted, dropped, rl->text, sizeof(rl->text));
	rl->result = RELOAD_OK;
	step_done(rl);
out:
	config_free(j->cfg);
	policy_free(j->pol);
	j->cfg = NULL;
	j->pol = NULL;
}

/* "read FILE: mode audit -> enforce, +1/-2 names (added a; removed b, c),
 * rules re-applied, ...": what the reload changed, for the log line, the
 * reply and status. */
static void describe(const struct reload *rl, const struct job *j,
		     enum config_mode mode_was, size_t evicted, size_t dropped,
		     char *buf, size_t cap)
{
	char mode[64] = "";

	if (mode_was != rl->cfg->mode)
		snprintf(mode, sizeof(mode), "mode %s -> %s, ",
			 config_mode_name(mode_was),
			 config_mode_name(rl->cfg->mode));
	snprintf(buf, cap,
		 "read %.200s: %s+%zu/-%zu names%s%s, rules %s, %zu addresses "
		 "evicted, %zu cached answers dropped",
		 rl->path, mode, j->added, j->removed, j->names[0] ? " " : "",
		 j->names, j->rules ? "re-applied" : "unchanged", evicted,
		 dropped);
}

/* Read, validate, compile. On error nothing has changed. */
static int load(const struct reload *rl, struct config **cfg,
		struct policy **pol, char *err, size_t errlen)
{
	char why[TEXT_MAX - 64];
	int rc = config_load(rl->path, cfg, why, sizeof(why));

	if (rc != 0) {
		snprintf(err, errlen, "%s", why);
		return rc;
	}
	/* The namespace's addresses, as setup checked them (cli/main.c). */
	if (subjects_check_own_addresses(*cfg, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%.200s: %.700s", rl->path, why);
		return -EINVAL;
	}
	*pol = reload_build_policy(*cfg, why, sizeof(why));
	if (*pol == NULL) {
		snprintf(err, errlen, "%.200s: %.250s", rl->path, why);
		return -EINVAL;
	}
	return 0;
}

/* The fenced subjects decide the jumps into the fence, which only setup
 * installs. */
static bool same_subjects(const struct config *a, const struct config *b)
{
	if (a->n_subject_uids != b->n_subject_uids ||
	    a->n_subject_gids != b->n_subject_gids ||
	    a->n_subject_cgroups != b->n_subject_cgroups ||
	    a->n_subject_lo_ports != b->n_subject_lo_ports ||
	    a->subject_lo_listener != b->subject_lo_listener)
		return false;
	for (size_t i = 0; i < a->n_subject_cgroups; i++) {
		if (strcmp(a->subject_cgroups[i], b->subject_cgroups[i]) != 0)
			return false;
	}
	return (a->n_subject_uids == 0 ||
		memcmp(a->subject_uids, b->subject_uids,
		       a->n_subject_uids * sizeof(*a->subject_uids)) == 0) &&
	       (a->n_subject_gids == 0 ||
		memcmp(a->subject_gids, b->subject_gids,
		       a->n_subject_gids * sizeof(*a->subject_gids)) == 0) &&
	       (a->n_subject_lo_ports == 0 ||
		memcmp(a->subject_lo_ports, b->subject_lo_ports,
		       a->n_subject_lo_ports * sizeof(*a->subject_lo_ports)) ==
		    0);
}

/* A key the running daemon cannot take: err names it. */
static bool restart_needed(const struct config *a, const struct config *b,
			   char *err, size_t errlen)
{
	const char *key = NULL;

	if (!same_endpoints(a->listen, a->n_listen, b->listen, b->n_listen))
		key = "listen";
	else if (strcmp(a->set4, b->set4) != 0)
		key = "sets.ipv4";
	else if (strcmp(a->set6, b->set6) != 0)
		key = "sets.ipv6";
	else if (a->maxelem != b->maxelem)
		key = "sets.maxelem";
	else if (strcmp(a->user, b->user) != 0)
		key = "user";
	else if (strcmp(a->control_socket, b->control_socket) != 0)
		key = "control.socket";
	else if (a->upstream_timeout_ms != b->upstream_timeout_ms)
		key = "upstream_timeout";
	else if (a->mark != b->mark)
		key = "mark";
	else if (a->scope != b->scope)
		key = "scope";
	else if (a->bind_interfaces != b->bind_interfaces)
		key = "bind";
	else if (a->client_maxelem != b->client_maxelem)
		key = "sets.client_maxelem";
	else if (a->max_inflight != b->max_inflight)
		key = "max_inflight";
	else if (a->metrics_on != b->metrics_on ||
		 !same_endpoints(&a->metrics, a->metrics_on, &b->metrics,
				 b->metrics_on))
		key = "metrics";
	else if (strcmp(a->state_dir, b->state_dir) != 0)
		key = "state_dir";
	else if (!same_subjects(a, b))
		key = "subjects";
	else if (a->mode != b->mode &&
		 (a->mode == CONFIG_MODE_OFF || b->mode == CONFIG_MODE_OFF))
		key = "mode";
	if (key == NULL)
		return false;
	snprintf(err, errlen,
		 "%s: cannot change while dnsfence runs; restart it to apply "
		 "the new value (the running policy stays)",
		 key);
	return true;
}

bool reload_rules_differ(const struct config *a, const struct config *b)
{
	static const int families[] = {AF_INET, AF_INET6};
	bool differ = !same_endpoints(a->upstreams, a->n_upstreams,
				      b->upstreams, b->n_upstreams);

	/* The rules as the kernel would hold them, fingerprint included:
	 * whatever key they depend on (ports, allow_cidrs, mode, inbound,
	 * interfaces, the policy's fingerprint), they differ exactly when
	 * their text does. A render that fails counts as different. */
	for (size_t i = 0; !differ && i < 2; i++) {
		char *ra = fw_render(a, families[i]);
		char *rb = fw_render(b, families[i]);

		differ = ra == NULL || rb == NULL || strcmp(ra, rb) != 0;
		free(ra);
		free(rb);
	}
	return differ;
}

/* The same endpoints in the same order. */
static bool same_endpoints(const struct config_endpoint *a, size_t na,
			   const struct config_endpoint *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		if (!netaddr_endpoint_equal(&a[i], &b[i]))
			return false;
	}
	return true;
}

/* The resolver already judges with the new pair; the old one goes. */
static void swap(struct reload *rl, struct config *cfg, struct policy *pol)
{
	observe_set_config(rl->p.obs, cfg);
	policy_free(rl->pol);
	config_free(rl->owned);
	rl->pol = pol;
	rl->owned = cfg;
	rl->cfg = cfg;
	if (rl->p.sets != NULL)
		sets_set_ttl(rl->p.sets, cfg->ttl_min, cfg->ttl_max);
	log_setup(cfg->log_level, cfg->log_format, false);
}

/* Queue the deletes of every address only removed names put in the
 * sets; returns how many. */
static size_t evict(struct reload *rl)
{
	uint64_t now = monotime_ms() / 1000;
	const struct prov_shorten sh = {collect_short, rl,
					now + rl->cfg->ttl_max, refused};
	char astr[NETADDR_STRLEN];
	size_t n;
	int rc;

	if (rl->p.sets == NULL)
		return 0;
	rl->n_evict = 0;
	rl->n_short = 0;
	rl->n_refused = 0;
	n = prov_evict_shorten(rl->prov, still_allowed, rl, collect, rl, &sh,
			       now);
	if (rl->n_refused > 0) {
		netaddr_format(&rl->refused_first, astr, sizeof(astr));
		log_info(
		    SYS,
		    "%zu addresses leave the sets because the new config "
		    "refuses them whatever name answered them (internal, "
		    "allow_cidrs no longer covers them, or an upstream's), "
		    "%s first",
		    rl->n_refused, astr);
	}
	if (rl->n_short > 0) {
		rc = sets_shorten(rl->p.sets, rl->short_addr, rl->short_exp,
				  rl->n_short, on_deleted, rl);
		if (rc != 0)
			log_err(SYS, "cannot queue %zu shorter timeouts: %s",
				rl->n_short, strerror(-rc));
		else
			rl->waits++;
	}
	rc = rl->n_evict == 0
		 ? 0
		 : sets_del(rl->p.sets, rl->evict, rl->n_evict, on_evicted, rl);
	if (rc != 0)
		log_err(SYS, "cannot queue %zu deletes: %s", rl->n_evict,
			strerror(-rc));
	if (rl->n_evict > 0 && rc == 0)
		rl->waits++;
	else
		rl->rules_after_del = false;
	return n;
}

/* An address kept names still hold, whose entry must now end sooner:
 * the longest of their expiries, not a removed name's, and within the
 * new ttl.max. */
static void collect_short(void *arg, const struct netaddr *a, uint64_t expires)
{
	struct reload *rl = arg;

	if (rl->n_short == rl->cap_short) {
		size_t cap = rl->cap_short ? rl->cap_short * 2 : 64;
		struct netaddr *v =
		    reallocarray(rl->short_addr, cap, sizeof(*v));
		uint64_t *e;

		if (v == NULL) {
			log_err(SYS, "out of memory: an entry keeps its longer "
				     "timeout");
			return;
		}
		rl->short_addr = v;
		e = reallocarray(rl->short_exp, cap, sizeof(*e));
		if (e == NULL) {
			log_err(SYS, "out of memory: an entry keeps its longer "
				     "timeout");
			return;
		}
		rl->short_exp = e;
		rl->cap_short = cap;
	}
	rl->short_addr[rl->n_short] = *a;
	rl->short_exp[rl->n_short++] = expires;
}

static bool still_allowed(void *arg, const uint8_t *name, size_t len)
{
	const struct reload *rl = arg;

	return rl->cfg->mode == CONFIG_MODE_AUDIT ||
	       policy_match(rl->pol, name, len);
}

/* Invariants 3 and 5 under the new config: an address it refuses
 * leaves the sets, whichever names still hold it (a reload that narrows
 * allow_cidrs or names a new upstream; restart.c judges the same). */
static bool refused(void *arg, const struct netaddr *a)
{
	struct reload *rl = arg;

	if (admit_check(rl->cfg, a) == ADMIT_OK)
		return false;
	if (rl->n_refused++ == 0)
		rl->refused_first = *a;
	return true;
}

static void collect(void *arg, const struct netaddr *a)
{
	struct reload *rl = arg;

	if (rl->n_evict == rl->cap_evict) {
		size_t cap = rl->cap_evict ? rl->cap_evict * 2 : 256;
		struct netaddr *v = reallocarray(rl->evict, cap, sizeof(*v));

		if (v == NULL) {
			log_err(SYS, "out of memory: an address stays");
			return;
		}
		rl->evict = v;
		rl->cap_evict = cap;
	}
	rl->evict[rl->n_evict++] = *a;
}

static void on_deleted(void *arg, int status)
{
	struct reload *rl = arg;

	if (status != 0)
		log_err(SYS, "deleting evicted addresses failed: %s",
			strerror(-status));
	step_done(rl);
}

/* The new rules go to the parent once the deletes are acked: the adds
 * queued before them (admitted under the old config, which the parent
 * judges them by) have all landed by then, so none reaches a parent that
 * already refuses it (an address the new config no longer admits would
 * stop the daemon). */
static void on_evicted(void *arg, int status)
{
	struct reload *rl = arg;

	if (rl->rules_after_del) {
		rl->rules_after_del = false;
		send_rules(rl);
	}
	on_deleted(rl, status);
}

static void send_rules(struct reload *rl)
{
	rl->rules(rl->rules_arg, rl->cfg, IPC_RULES_CHANGED, on_applied, rl);
}

static void on_applied(void *arg, int status, const char *detail)
{
	struct reload *rl = arg;

	resolver_set_admit_was(rl->p.res, NULL);
	config_free(rl->was_owned);
	rl->was_owned = NULL;
	if (status == 0 && rl->next_up != NULL)
		use_upstream(rl);
	if (status != 0) {
		rl->result = RELOAD_FAILED;
		snprintf(rl->text, sizeof(rl->text),
			 "the new rules could not be applied: %s; stopping",
			 detail);
	}
	step_done(rl);
}

static void step_done(struct reload *rl)
{
	if (--rl->waits > 0)
		return;
	stats_inc(STAT_RELOADS);
	finish(rl, rl->result, rl->text);
}

/* Log, remember for status, answer the waiters, start the next. Every
 * reload logs one line, "no change" included: a SIGHUP is always seen. */
static void finish(struct reload *rl, int result, const char *text)
{
	uint64_t ms = monotime_ms() - rl->t0_ms;
	struct record *r = &rl->last;
	struct log_field f[5];
	char line[TEXT_MAX];

	snprintf(line, sizeof(line), "%s", text);
	f[0] = log_str("event", "reload");
	f[1] = log_str("result", result == RELOAD_OK	       ? "ok"
				 : result == RELOAD_BAD_CONFIG ? "bad_config"
							       : "failed");
	f[2] = log_str("trigger", rl->trigger);
	f[3] = log_str("detail", line);
	f[4] = log_num("ms", (int64_t)ms);
	log_fields(f, 5);
	if (result == RELOAD_OK)
		log_info(SYS, "%s: %s, %llu ms", rl->trigger, line,
			 (unsigned long long)ms);
	else
		log_err(SYS, "%s: %s", rl->trigger, line);
	if (result != RELOAD_OK)
		stats_inc(STAT_RELOAD_FAIL);
	stats_config_loaded(result == RELOAD_OK, (int64_t)time(NULL));
	rl->count++;
	*r = (struct record){
	    .result = result, .wall = (uint64_t)time(NULL), .ms = ms};
	snprintf(r->trigger, sizeof(r->trigger), "%s", rl->trigger);
	snprintf(r->text, sizeof(r->text), "%s", line);
	for (size_t i = 0; i < RELOAD_TRIGGERS; i++) {
		if (strcmp(triggers[i], rl->trigger) == 0)
			rl->by[i] = *r;
	}
	for (size_t i = 0; i < rl->n_cur; i++) {
		if (rl->cur[i].fn != NULL)
			rl->cur[i].fn(rl->cur[i].arg, result, line);
	}
	rl->n_cur = 0;
	rl->busy = false;
	/* What the old policy and the parse's temporaries gave back goes to
	 * the kernel, or every reload of a big list leaves it behind (the
	 * daemon runs one arena, serve.c). */
	(void)malloc_trim(0);
	if (rl->next_trigger != NULL)
		event_active(rl->kick_ev, EV_TIMEOUT, 0);
}

/* +N/-M: entries (allow names and ecosystem presets) only in b / only in
 * a, by a merge of the sorted lists; the first RELOAD_NAMES_SHOWN of each
 * named in j->names. */
static void names_diff(const struct config *a, const struct config *b,
		       struct job *j)
{
	size_t na, nb, i = 0, k = 0, add[RELOAD_NAMES_SHOWN],
		       rem[RELOAD_NAMES_SHOWN];
	char **sa = sorted_entries(a, &na), **sb = sorted_entries(b, &nb);
	char added[TEXT_MAX / 4] = "", removed[TEXT_MAX / 4] = "";

	j->added = j->removed = 0;
	j->names[0] = '\0';
	if (sa == NULL || sb == NULL)
		goto out;
	while (i < na || k < nb) {
		int c = i == na ? 1 : k == nb ? -1 : strcmp(sa[i], sb[k]);

		if (c < 0) {
			if (j->removed < RELOAD_NAMES_SHOWN)
				rem[j->removed] = i;
			j->removed++;
			i++;
		} else if (c > 0) {
			if (j->added < RELOAD_NAMES_SHOWN)
				add[j->added] = k;
			j->added++;
			k++;
		} else {
			i++;
			k++;
		}
	}
	name_list(added, sizeof(added), "added", sb, add, j->added);
	name_list(removed, sizeof(removed), "removed", sa, rem, j->removed);
	if (added[0] != '\0' || removed[0] != '\0')
		snprintf(j->names, sizeof(j->names), "(%s%s%s)", added,
			 added[0] && removed[0] ? "; " : "", removed);
out:
	free(sa);
	free(sb);
}

/* "added a, b and 3 more" from the first RELOAD_NAMES_SHOWN of n. */
static void name_list(char *buf, size_t cap, const char *what, char *const *v,
		      const size_t *idx, size_t n)
{
	size_t o = 0, shown = n < RELOAD_NAMES_SHOWN ? n : RELOAD_NAMES_SHOWN;

	buf[0] = '\0';
	for (size_t i = 0; i < shown && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%s%.60s",
				      i == 0 ? what : ",", " ", v[idx[i]]);
	if (n > shown && o < cap)
		snprintf(buf + o, cap - o, " and %zu more", n - shown);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Pointers to c's allow and ecosystem entries, sorted (an ecosystem and
 * a name cannot collide: presets have no dot). */
static char **sorted_entries(const struct config *c, size_t *n)
{
	char **v = calloc(c->n_allow + c->n_ecosystems + 1, sizeof(*v));

	*n = 0;
	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < c->n_allow; i++)
		v[(*n)++] = c->allow[i];
	for (size_t i = 0; i < c->n_ecosystems; i++)
		v[(*n)++] = c->ecosystems[i];
	qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

/* FNV-1a over the sorted allow entries, the mode and allow_cidrs: the
 * same policy gives the same value whatever the order in the file. */
char *reload_status(const struct reload *rl, bool json)
{
	struct status_info si = {
	    .mode = config_mode_name(rl->cfg->mode),
	    .config = rl->path,
	    .allow_entries = policy_size(rl->pol),
	    .uptime_s = (monotime_ms() - rl->started_ms) / 1000,
	    .in_flight = resolver_pending(rl->p.res),
	    .cached = resolver_cached(rl->p.res),
	    .pid = rl->p.main_pid > 0 ? (long)rl->p.main_pid : (long)getpid(),
	    .prov_addresses = prov_addresses(rl->prov),
	    .prov_names = prov_names(rl->prov),
	    .prov_links = prov_links(rl->prov),
	    .reload_requests = rl->count,
	    .usage = usage_status(resolver_usage(rl->p.res)),
	};
	uint64_t now = (uint64_t)time(NULL);
	struct metrics_queue q;

	si.name_check = config_name_check_on(rl->cfg)
			    ? config_name_check_name(rl->cfg->name_check)
			    : "off";
	if (observe_queue(rl->p.obs, &q) == 0) {
		si.has_queue = true;
		si.queue_depth = q.depth;
		si.queue_full_dropped = q.full_dropped;
		si.queue_send_dropped = q.send_dropped;
	}
	for (size_t i = 0;
	     i <= RELOAD_TRIGGERS && si.n_reloads < STATUS_RELOADS; i++) {
		const struct record *r = i == 0 ? &rl->last : &rl->by[i - 1];

		if (r->trigger[0] == '\0')
			continue;
		si.reloads[si.n_reloads++] = (struct status_reload){
		    .key = i == 0 ? NULL : triggers[i - 1],
		    .trigger = r->trigger,
		    .ok = r->result == RELOAD_OK,
		    .text = r->text,
		    .ago_s = now - r->wall,
		    .ms = r->ms,
		};
	}
	/* the fingerprint the rules carry (provenance.c) */
	if (provenance_fingerprint(rl->cfg, si.fingerprint) != 0)
		si.fingerprint[0] = '\0';
	/* the kernel's, counted by the parent each second (-1 before) */
	if (rl->p.sets != NULL && !stats_shared_set_entries(&si.set4, &si.set6))
		si.set4 = si.set6 = -1;
	return status_render(&si, json);
}

static void entry_json(void *arg, const uint8_t *name, size_t len,
		       const struct netaddr *a, uint64_t left_s)
{
	cJSON *e = cJSON_CreateObject();
	char text[DNS_NAME_STRLEN], addr[NETADDR_STRLEN];

	if (e == NULL || !cJSON_AddItemToArray(arg, e))
		return;
	dns_name_to_text(name, len, text, sizeof(text));
	netaddr_format(a, addr, sizeof(addr));
	cJSON_AddStringToObject(e, "name", text);
	cJSON_AddStringToObject(e, "address", addr);
	cJSON_AddNumberToObject(e, "expires_in_s", (double)left_s);
}

char *reload_entries(const struct reload *rl)
{
	cJSON *root = cJSON_CreateObject(), *arr;
	char *text = NULL;

	if (root == NULL)
		return NULL;
	cJSON_AddStringToObject(root, "mode", config_mode_name(rl->cfg->mode));
	arr = cJSON_AddArrayToObject(root, "entries");
	if (arr != NULL) {
		prov_walk(rl->prov, entry_json, arr, monotime_ms() / 1000);
		text = cJSON_PrintUnformatted(root);
	}
	cJSON_Delete(root);
	return text;
}

/* A channel for cfg's upstreams, held in next_up until the rules let the
 * daemon reach them. Refused while DRAINING_MAX replaced channels still
 * hold questions. */
static int new_upstream(struct reload *rl, const struct config *cfg, char *err,
			size_t errlen)
{
	char why[256];
	size_t i;

	for (i = 0; i < DRAINING_MAX && rl->draining[i] != NULL; i++)
		;
	if (i == DRAINING_MAX) {
		snprintf(err, errlen,
			 "upstreams: earlier changes still have questions in "
			 "flight; try again in a few seconds (the running "
			 "policy stays)");
		return -EBUSY;
	}
	rl->next_up = upstream_new(rl->p.base, cfg->upstreams, cfg->n_upstreams,
				   cfg->upstream_timeout_ms, why, sizeof(why));
	if (rl->next_up == NULL) {
		snprintf(err, errlen,
			 "upstreams: %s (the running policy stays)", why);
		return -EIO;
	}
	/* the rules let only the daemon's mark reach an upstream */
	if (cfg->mode != CONFIG_MODE_OFF && rl->p.pool != NULL)
		upstream_use_socket_channel(rl->next_up, rl->p.pool);
	else if (cfg->mode != CONFIG_MODE_OFF)
		upstream_set_mark(rl->next_up, cfg->mark);
	return 0;
}

/* New questions go to next_up; the old channel drains. */
static void use_upstream(struct reload *rl)
{
	struct timeval tv = {.tv_sec = 1};

	for (size_t i = 0; i < DRAINING_MAX; i++) {
		if (rl->draining[i] == NULL) {
			rl->draining[i] = rl->up;
			break;
		}
	}
	rl->up = rl->next_up;
	rl->next_up = NULL;
	resolver_set_upstream(rl->p.res, rl->up);
	evtimer_add(rl->drain_ev, &tv);
	log_info(SYS, "new questions go to the new upstreams");
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
	struct reload *rl = arg;
	struct timeval tv = {.tv_sec = 1};
	bool busy = false;

	(void)fd;
	(void)what;
	for (size_t i = 0; i < DRAINING_MAX; i++) {
		if (rl->draining[i] == NULL)
			continue;
		if (!upstream_idle(rl->draining[i])) {
			busy = true;
			continue;
		}
		upstream_free(rl->draining[i]);
		rl->draining[i] = NULL;
	}
	if (busy || (rl->cfg->n_retired > 0 && rl->busy))
		evtimer_add(rl->drain_ev, &tv);
	else if (rl->cfg->n_retired > 0)
		forget_replaced(rl);
}

static bool has_address(const struct config_endpoint *v, size_t n,
			const struct config_endpoint *e)
{
	struct netaddr a, b;

	if (!netaddr_from_sockaddr((const struct sockaddr *)&e->sa, &a))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (netaddr_from_sockaddr((const struct sockaddr *)&v[i].sa,
					  &b) &&
		    netaddr_equal(&a, &b))
			return true;
	}
	return false;
}

/* The new config keeps fencing (the daemon's mark required) every address
 * the running one fenced as an upstream that it no longer names, until
 * the old channels have drained (on_drain, forget_replaced). */
int reload_keep_replaced(const struct config *old, struct config *cfg,
			 char *err, size_t errlen)
{
	const struct config_endpoint *lists[] = {old->upstreams, old->retired};
	const size_t counts[] = {old->n_upstreams, old->n_retired};
	size_t max = old->n_upstreams + old->n_retired;

	cfg->retired = max ? calloc(max, sizeof(*cfg->retired)) : NULL;
	if (max && cfg->retired == NULL) {
		snprintf(err, errlen,
			 "upstreams: out of memory (the running "
			 "policy stays)");
		return -ENOMEM;
	}
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			const struct config_endpoint *e = &lists[l][i];

			if (has_address(cfg->upstreams, cfg->n_upstreams, e) ||
			    has_address(cfg->retired, cfg->n_retired, e))
				continue;
			cfg->retired[cfg->n_retired++] = *e;
		}
	}
	/* The holds of earlier drains go on; an endpoint whose address
	 * stays an upstream on another port has no drain (the address's
	 * lines stand) but its origin lines go now: held at once. */
	if (held_inherit(old, cfg) != 0)
		goto nomem;
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			if (held_add(cfg, &lists[l][i],
				     monotime_s() + HELD_SECONDS) < 0)
				goto nomem;
		}
	}
	return 0;
nomem:
	snprintf(err, errlen,
		 "upstreams: out of memory (the running policy "
		 "stays)");
	return -ENOMEM;
}

/* Every replaced channel is gone: the guard's child deletes the conntrack
 * entries to the replaced upstreams while their rules still stand, then
 * writes the rules without them (fw_apply). The running config is the
 * reload's own (only a reload fills retired), so it is emptied in place. */
static void forget_replaced(struct reload *rl)
{
	if (rl->owned == NULL || rl->owned != rl->cfg)
		return;
	free(rl->owned->retired);
	rl->owned->retired = NULL;
	rl->owned->n_retired = 0;
	if (rl->rules == NULL)
		return;
	log_info(SYS, "the replaced upstreams have drained: deleting their "
		      "flows, then their rules");
	rl->rules(rl->rules_arg, rl->cfg, IPC_RULES_DRAINED, NULL, NULL);
}
