// SPDX-License-Identifier: GPL-2.0-or-later
/* flowshare: every flow the name check reads holds a packet in the
 * kernel's queue until its verdict (no bypass: a full queue drops
 * everyone's packets), and a workload can open flows that send a few
 * bytes and wait. So a new flow becomes pending only when its subject
 * (uid, or source address) holds fewer than its share and has tokens
 * left; the caller refuses the rest at once, which frees their queue
 * slot and resets them. A subject is who the kernel says sent the
 * packet: a uid cannot claim another's share.
 *
 * Two chained hash tables: the pending flows (four-tuple to subject, in
 * admission order for expiry) and the subjects (count and bucket). A
 * subject with nothing pending and a full bucket is forgotten, so the
 * subjects never outnumber the pending flows by much. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/hash.h"
#include "flow/flowshare.h"

struct subject {
	struct subject *next;
	struct flowshare_subject s;
	uint32_t hash;
	size_t pending;
	uint64_t tokens_milli; /* tokens x 1000 */
	uint64_t refilled_ms;
};

struct pending {
	struct pending *next;	       /* hash chain */
	struct pending *newer, *older; /* admission order */
	struct flowtab_key key;
	uint32_t hash;
	struct subject *subj;
	uint64_t admitted_ms;
};

struct flowshare {
	struct flowshare_limits lim;
	struct pending **pb;
	struct subject **sb;
	size_t nb, count, max;
	struct pending *newest, *oldest;
	uint32_t seed;
};

static uint32_t subj_hash(const struct flowshare *t,
			  const struct flowshare_subject *s);
static bool subj_equal(const struct flowshare_subject *a,
		       const struct flowshare_subject *b);
static struct pending *find(const struct flowshare *t,
			    const struct flowtab_key *key, uint32_t h);
static struct subject *subject_of(const struct flowshare *t,
				  const struct flowshare_subject *s,
				  uint32_t h);
static void refill(const struct flowshare *t, struct subject *sj, uint64_t now);
static void forget_subject(struct flowshare *t, struct subject *sj);
static void unlink_pending(struct flowshare *t, struct pending *p);

static uint32_t subj_hash(const struct flowshare *t,
			  const struct flowshare_subject *s)
{
	uint8_t w[1 + 16];
	size_t n;

	if (s->has_uid) {
		w[0] = 1;
		memcpy(w + 1, &s->uid, sizeof(s->uid));
		n = 1 + sizeof(s->uid);
	} else {
		w[0] = (uint8_t)s->src.family;
		n = s->src.family == AF_INET ? 4 : 16;
		memcpy(w + 1, s->src.bytes, n);
		n++;
	}
	return hash_fnv1a(w, n, t->seed);
}

static bool subj_equal(const struct flowshare_subject *a,
		       const struct flowshare_subject *b)
{
	if (a->has_uid != b->has_uid)
		return false;
	return a->has_uid ? a->uid == b->uid : netaddr_equal(&a->src, &b->src);
}

struct flowshare *flowshare_new(size_t max_flows,
				const struct flowshare_limits *lim)
{
	struct flowshare *t;
	size_t nb = 1;

	if (max_flows == 0 || max_flows > SIZE_MAX / 2 ||
	    lim->pending_max == 0 || lim->burst == 0)
		return NULL;
	while (nb < max_flows)
		nb *= 2;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->pb = calloc(nb, sizeof(*t->pb));
	t->sb = calloc(nb, sizeof(*t->sb));
	if (t->pb == NULL || t->sb == NULL) {
		flowshare_free(t);
		return NULL;
	}
	t->lim = *lim;
	t->nb = nb;
	t->max = max_flows;
	(void)hash_seed(&t->seed, sizeof(t->seed));
	return t;
}

void flowshare_free(struct flowshare *t)
{
	if (t == NULL)
		return;
	while (t->oldest != NULL)
		flowshare_release(t, &t->oldest->key);
	for (size_t i = 0; t->sb != NULL && i < t->nb; i++) {
		while (t->sb[i] != NULL) {
			struct subject *sj = t->sb[i];

			t->sb[i] = sj->next;
			free(sj);
		}
	}
	free(t->pb);
	free(t->sb);
	free(t);
}

static struct pending *find(const struct flowshare *t,
			    const struct flowtab_key *key, uint32_t h)
{
	for (struct pending *p = t->pb[h & (t->nb - 1)]; p != NULL;
	     p = p->next) {
		if (p->hash == h && flowtab_key_equal(&p->key, key))
			return p;
	}
	return NULL;
}

static struct subject *subject_of(const struct flowshare *t,
				  const struct flowshare_subject *s, uint32_t h)
{
	for (struct subject *sj = t->sb[h & (t->nb - 1)]; sj != NULL;
	     sj = sj->next) {
		if (sj->hash == h && subj_equal(&sj->s, s))
			return sj;
	}
	return NULL;
}

static void refill(const struct flowshare *t, struct subject *sj, uint64_t now)
{
	uint64_t cap = (uint64_t)t->lim.burst * 1000;

	if (now > sj->refilled_ms) {
		uint64_t add = (now - sj->refilled_ms) * t->lim.per_s;

		sj->tokens_milli = add >= cap - sj->tokens_milli
				       ? cap
				       : sj->tokens_milli + add;
		sj->refilled_ms = now;
	}
}

int flowshare_admit(struct flowshare *t, const struct flowtab_key *key,
		    const struct flowshare_subject *s, uint64_t now_ms)
{
	uint32_t kh = flowtab_key_hash(key, t->seed), sh = subj_hash(t, s);
	struct subject *sj;
	struct pending *p;

	if (find(t, key, kh) != NULL)
		return 0;
	if (t->count >= t->max)
		return -ENOSPC;
	sj = subject_of(t, s, sh);
	if (sj == NULL) {
		sj = calloc(1, sizeof(*sj));
		if (sj == NULL)
			return -ENOSPC;
		sj->s = *s;
		sj->hash = sh;
		sj->tokens_milli = (uint64_t)t->lim.burst * 1000;
		sj->refilled_ms = now_ms;
		sj->next = t->sb[sh & (t->nb - 1)];
		t->sb[sh & (t->nb - 1)] = sj;
	}
	refill(t, sj, now_ms);
	if (sj->pending >= t->lim.pending_max)
		return -EBUSY;
	if (sj->tokens_milli < 1000)
		return -EAGAIN;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		forget_subject(t, sj);
		return -ENOSPC;
	}
	sj->tokens_milli -= 1000;
	sj->pending++;
	p->key = *key;
	p->hash = kh;
	p->subj = sj;
	p->admitted_ms = now_ms;
	p->next = t->pb[kh & (t->nb - 1)];
	t->pb[kh & (t->nb - 1)] = p;
	p->older = t->newest;
	if (t->newest != NULL)
		t->newest->newer = p;
	t->newest = p;
	if (t->oldest == NULL)
		t->oldest = p;
	t->count++;
	return 0;
}

/* Forget sj when it holds nothing and its bucket says nothing more than
 * a new subject's would. */
static void forget_subject(struct flowshare *t, struct subject *sj)
{
	struct subject **pp = &t->sb[sj->hash & (t->nb - 1)];

	if (sj->pending != 0 ||
	    sj->tokens_milli < (uint64_t)t->lim.burst * 1000)
		return;
	while (*pp != NULL && *pp != sj)
		pp = &(*pp)->next;
	if (*pp == sj)
		*pp = sj->next;
	free(sj);
}

static void unlink_pending(struct flowshare *t, struct pending *p)
{
	struct pending **pp = &t->pb[p->hash & (t->nb - 1)];

	while (*pp != NULL && *pp != p)
		pp = &(*pp)->next;
	if (*pp == p)
		*pp = p->next;
	if (p->newer != NULL)
		p->newer->older = p->older;
	else
		t->newest = p->older;
	if (p->older != NULL)
		p->older->newer = p->newer;
	else
		t->oldest = p->newer;
	t->count--;
}

void flowshare_release(struct flowshare *t, const struct flowtab_key *key)
{
	struct pending *p = find(t, key, flowtab_key_hash(key, t->seed));
	struct subject *sj;

	if (p == NULL)
		return;
	sj = p->subj;
	unlink_pending(t, p);
	free(p);
	sj->pending--;
	forget_subject(t, sj);
}

void flowshare_expire(struct flowshare *t, uint64_t now_ms, uint64_t max_age_ms)
{
	while (t->oldest != NULL &&
	       now_ms - t->oldest->admitted_ms >= max_age_ms)
		flowshare_release(t, &t->oldest->key);
	/* A subject whose bucket refilled is forgotten at its next
	 * release; one with nothing pending is checked here. */
	for (size_t i = 0; i < t->nb; i++) {
		struct subject *sj = t->sb[i], *next;

		for (; sj != NULL; sj = next) {
			next = sj->next;
			refill(t, sj, now_ms);
			forget_subject(t, sj);
		}
	}
}

size_t flowshare_pending(const struct flowshare *t,
			 const struct flowshare_subject *s)
{
	const struct subject *sj = subject_of(t, s, subj_hash(t, s));

	return sj != NULL ? sj->pending : 0;
}

size_t flowshare_count(const struct flowshare *t)
{
	return t->count;
}
