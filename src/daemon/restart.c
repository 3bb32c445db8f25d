// SPDX-License-Identifier: GPL-2.0-or-later
/* restart: setup after a policy change, entry by entry (see restart.h).
 *
 * The same judgement a live reload makes (reload.c's evict step:
 * prov_evict with "does the new policy allow this queried name"), made
 * on the map the last daemon saved, then checked against what the
 * kernel holds: every member of both sets is kept or deleted, so an
 * entry the map does not know (added after the file was written, or by
 * hand) goes too. The kept entries' live links are written back under
 * the new policy's fingerprint, for the daemon that serves next. Runs in
 * setup, as root, before the new rules are written: nothing the new
 * policy refuses is reachable once they are. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "resolve/admit.h"
#include "base/log.h"
#include "base/monotime.h"
#include "base/statefs.h"
#include "config/policy.h"
#include "resolve/prov.h"
#include "resolve/provstate.h"
#include "daemon/reload.h"
#include "daemon/restart.h"
#include "sets/setsadm.h"

struct addrs {
	struct netaddr *v;
	size_t n, cap;
};

struct judge {
	const struct config *cfg;
	struct policy *pol;
	struct prov *old, *kept;
	uint64_t now;
	struct addrs del[2]; /* IPv4, IPv6 */
	size_t kept_n;
	int rc;
};

static bool still_allowed(void *arg, const uint8_t *name, size_t len);
static void no_evict(void *arg, const struct netaddr *a);
static void copy_link(void *arg, const uint8_t *name, size_t len,
		      const struct netaddr *a, uint64_t left_s);
static void judge_member(void *arg, const struct netaddr *a);
static int push(struct addrs *s, const struct netaddr *a);
static int judge_sets(struct judge *j, char *why, size_t whylen);

static bool still_allowed(void *arg, const uint8_t *name, size_t len)
{
	const struct judge *j = arg;

	return admit_allowed(j->cfg, j->pol, name, len);
}

/* Deletes are decided per kernel member below, not per map entry. */
static void no_evict(void *arg, const struct netaddr *a)
{
	(void)arg;
	(void)a;
}

static void copy_link(void *arg, const uint8_t *name, size_t len,
		      const struct netaddr *a, uint64_t left_s)
{
	struct judge *j = arg;
	int rc = prov_note(j->kept, name, len, a, j->now + left_s, j->now);

	if (rc != 0 && j->rc == 0)
		j->rc = rc;
}

static int push(struct addrs *s, const struct netaddr *a)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct netaddr *v = reallocarray(s->v, cap, sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *a;
	return 0;
}

static void judge_member(void *arg, const struct netaddr *a)
{
	struct judge *j = arg;
	int rc;

	if (prov_links_of(j->old, a, NULL, NULL, j->now) > 0 &&
	    admit_check(j->cfg, a) == ADMIT_OK) {
		prov_links_of(j->old, a, copy_link, j, j->now);
		j->kept_n++;
		return;
	}
	rc = push(&j->del[a->family == AF_INET ? 0 : 1], a);
	if (rc != 0 && j->rc == 0)
		j->rc = rc;
}

static int judge_sets(struct judge *j, char *why, size_t whylen)
{
	const char *names[2] = {j->cfg->set4, j->cfg->set6};
	int rc;

	for (size_t i = 0; i < 2; i++) {
		rc = setsadm_members(names[i], judge_member, j, why, whylen);
		if (rc == 0 && j->rc != 0) {
			rc = j->rc;
			snprintf(why, whylen, "judging %s: %s", names[i],
				 strerror(-rc));
		}
		if (rc != 0)
			return rc;
	}
	for (size_t i = 0; i < 2; i++) {
		rc = setsadm_del(names[i], j->del[i].v, j->del[i].n, why,
				 whylen);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int restart_keep(void *arg, const struct config *cfg, const char *have,
		 const char *want, size_t *kept, size_t *evicted, char *why,
		 size_t whylen)
{
	const struct restart_owner *owner = arg;
	size_t max = prov_max_for(cfg->maxelem);
	struct judge j = {.cfg = cfg, .now = monotime_s()};
	char err[512];
	int rc = -ENOMEM, dirfd = -1;

	dirfd = statefs_open_dir(cfg->state_dir, owner->uid, why, whylen);
	if (dirfd < 0) {
		rc = dirfd;
		goto out;
	}
	if (have[0] == '\0') {
		rc = -ENOENT;
		snprintf(why, whylen, "the rules name no policy");
		goto out;
	}
	j.old = prov_new(max);
	j.kept = prov_new(max);
	if (j.old == NULL || j.kept == NULL) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	rc = provstate_load(j.old, dirfd, cfg->state_dir, owner->uid, have, why,
			    whylen);
	if (rc != 0)
		goto out;
	j.pol = reload_build_policy(cfg, err, sizeof(err));
	if (j.pol == NULL) {
		rc = -EINVAL;
		snprintf(why, whylen, "%s", err);
		goto out;
	}
	(void)prov_evict(j.old, still_allowed, &j, no_evict, NULL, j.now);
	rc = judge_sets(&j, why, whylen);
	if (rc != 0)
		goto out;
	*kept = j.kept_n;
	*evicted = j.del[0].n + j.del[1].n;
	if (provstate_save(j.kept, dirfd, cfg->state_dir, want, owner->uid,
			   owner->gid, err, sizeof(err)) != 0)
		log_warn("policy",
			 "%s: the next daemon will not know the kept "
			 "entries' names",
			 err);
out:
	/* Whatever failed, the file would only mislead the next run. */
	if (rc != 0 && dirfd >= 0)
		provstate_remove(dirfd, cfg->state_dir);
	if (dirfd >= 0)
		close(dirfd);
	policy_free(j.pol);
	prov_free(j.old);
	prov_free(j.kept);
	free(j.del[0].v);
	free(j.del[1].v);
	return rc;
}
