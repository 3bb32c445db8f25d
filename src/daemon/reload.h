/* SPDX-License-Identifier: GPL-2.0-or-later */
/* reload: the running policy and how it changes live. It owns the
 * current config and compiled policy, and applies a new config file in
 * steps: load and validate, refuse keys that need a restart, swap the
 * policy between two queries, evict what only removed names put in the
 * sets, re-apply the rules when they changed, and report. */
#ifndef DNSFENCE_RELOAD_H
#define DNSFENCE_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config/config.h"
#include "fence/guard.h"

struct event_base;
struct observe;
struct policy;
struct prov;
struct resolver;
struct sets;
struct sockpool;
struct upstream;
struct reload;

/* Exit-code-like results of a reload. */
#define RELOAD_OK	  0
#define RELOAD_BAD_CONFIG 2 /* kept the running policy; text names the key */
#define RELOAD_FAILED	  3 /* the kernel refused (rules); daemon stops */

/* Called once per request when its reload is over. text: the summary or
 * the error, one line; valid during the call. */
typedef void (*reload_done_fn)(void *arg, int result, const char *text);

/* The rules are the privileged parent's (serve.c): apply(arg, cfg, what,
 * done, done_arg) asks it to take the new config (what: IPC_RULES_SAME),
 * write its rules (IPC_RULES_CHANGED) or drop the drained upstreams from
 * them (IPC_RULES_DRAINED); done, when not NULL, once they are in place
 * (status 0) or not. */
typedef void (*reload_rules_fn)(void *arg, const struct config *cfg, int what,
				guard_applied_fn done, void *done_arg);

struct reload_parts {
	struct event_base *base;
	struct resolver *res;
	struct sets *sets;   /* NULL in mode off */
	struct upstream *up; /* taken over: a reload may replace it */
	struct observe *obs; /* told each new config; may be NULL */
	struct sockpool
	    *pool;	/* the parent's sockets (new upstreams), or NULL */
	pid_t main_pid; /* status's pid: the daemon's (0: this one) */
};

/* Compile cfg's allowlist; NULL (logged, naming the entry) on failure. */
struct policy *reload_build_policy(const struct config *cfg, char *err,
				   size_t errlen);

/* Take over pol and parts->up (freed by reload_free); cfg stays the caller's
 * and must outlive the reload object (later configs are owned here). path: the
 * config file as given to config_load (NULL: its default). Installs the
 * policy and the provenance map into the resolver. NULL on ENOMEM. */
struct reload *reload_new(const struct reload_parts *parts,
			  const struct config *cfg, struct policy *pol,
			  const char *path);
/* The parent's rules (mode off: never set, no rules). */
void reload_set_rules(struct reload *rl, reload_rules_fn fn, void *arg);
/* Free the upstream channels (current, pending, draining): their
 * callbacks run now, so the resolver must still exist. */
void reload_close_upstreams(struct reload *rl);
void reload_free(struct reload *rl);

/* The running config and policy. */
const struct config *reload_config(const struct reload *rl);
const struct policy *reload_policy(const struct reload *rl);
/* The config file path, resolved like config_load does. */
const char *reload_path(const struct reload *rl);
/* The provenance map the resolver notes answers in (which names brought
 * each address): the name check's question, and serve's restore at start
 * and save at exit. */
struct prov *reload_prov(const struct reload *rl);

/* Reload the config file now (trigger: "signal", "control", "watch", for
 * the log). A request while a reload is under way is served by one more
 * reload after it. done may be NULL. Never blocks on the kernel. */
void reload_request(struct reload *rl, const char *trigger, reload_done_fn done,
		    void *arg);
/* A done that must no longer be called (its client went away). */
void reload_forget(struct reload *rl, void *arg);

/* The daemon's state for `dnsfence status`, as JSON (malloc'd) or text
 * lines (malloc'd); NULL on ENOMEM. */
char *reload_status(const struct reload *rl, bool json);
/* What the daemon put in the sets, for `dnsfence entries`: one JSON line
 * {"mode": M, "entries": [{"name": N, "address": A, "expires_in_s": S},
 * ...]}, one element per live (name, address) link of the provenance map,
 * in no order. malloc'd; NULL on ENOMEM. */
char *reload_entries(const struct reload *rl);

/* Do the rules rendered for a and b differ, so that a reload from a to
 * b must re-apply them? (ports, allow_cidrs, upstreams, mode.) The one
 * place to widen when the rules carry more of the policy. */
bool reload_rules_differ(const struct config *a, const struct config *b);

/* cfg->retired: the upstreams of old (and those it still kept) that cfg
 * no longer has, kept in the rules until their questions drain. 0, or
 * -ENOMEM with err set. */
int reload_keep_replaced(const struct config *old, struct config *cfg,
			 char *err, size_t errlen);

#endif
