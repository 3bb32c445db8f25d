// SPDX-License-Identifier: GPL-2.0-or-later
/* flowtab: a chained hash table of flows keyed by their four-tuple, with
 * a per-process random seed (the keys are chosen by the workload).
 *
 * Reassembly is in order only: the local stack hands its segments to the
 * queue in sequence, so a segment past the end of what we have means one
 * was dropped, and dropping this one too makes the sender retransmit
 * both. Bytes we have already are compared again: a sender can rewrite
 * a page the kernel still holds (MSG_ZEROCOPY, sendfile), and a copy we
 * dropped (to let the sender go on) reaches the server only as such a
 * retransmission. A flow accepted keeps its stream (guarded) until the
 * server has acknowledged it, for the same comparison. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/hash.h"
#include "flow/flowtab.h"

#define BUCKETS 1024

struct flowtab {
	struct flowtab_flow *b[BUCKETS];
	size_t max_flows, per_flow, total;
	size_t count, reading, bytes;
	uint32_t seed;
};

static void drop_stream(struct flowtab *t, struct flowtab_flow *f);
static int grow(struct flowtab *t, struct flowtab_flow *f, size_t want);
static void unlink_flow(struct flowtab *t, struct flowtab_flow **pp);

uint32_t flowtab_key_hash(const struct flowtab_key *k, uint32_t seed)
{
	uint8_t w[2 * 16 + 6];
	size_t n = k->src.family == AF_INET ? 4 : 16;

	memcpy(w, k->src.bytes, n);
	memcpy(w + n, k->dst.bytes, n);
	w[2 * n] = (uint8_t)(k->sport >> 8);
	w[2 * n + 1] = (uint8_t)k->sport;
	w[2 * n + 2] = (uint8_t)(k->dport >> 8);
	w[2 * n + 3] = (uint8_t)k->dport;
	w[2 * n + 4] = (uint8_t)k->src.family;
	w[2 * n + 5] = k->proto;
	return hash_fnv1a(w, 2 * n + 6, seed);
}

bool flowtab_key_equal(const struct flowtab_key *a, const struct flowtab_key *b)
{
	return a->sport == b->sport && a->dport == b->dport &&
	       a->proto == b->proto && netaddr_equal(&a->src, &b->src) &&
	       netaddr_equal(&a->dst, &b->dst);
}

struct flowtab *flowtab_new(size_t max_flows, size_t bytes_per_flow,
			    size_t bytes_total)
{
	struct flowtab *t;

	if (max_flows == 0 || bytes_per_flow == 0 || bytes_total == 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->max_flows = max_flows;
	t->per_flow = bytes_per_flow;
	t->total = bytes_total;
	(void)hash_seed(&t->seed, sizeof(t->seed));
	return t;
}

void flowtab_free(struct flowtab *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < BUCKETS; i++) {
		while (t->b[i] != NULL)
			unlink_flow(t, &t->b[i]);
	}
	free(t);
}

struct flowtab_flow *flowtab_get(struct flowtab *t,
				 const struct flowtab_key *key, uint64_t now,
				 bool create)
{
	uint32_t h = flowtab_key_hash(key, t->seed);
	struct flowtab_flow *f = t->b[h % BUCKETS];

	for (; f != NULL; f = f->next) {
		if (f->hash == h && flowtab_key_equal(&f->key, key))
			return f;
	}
	if (!create || t->count >= t->max_flows)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->key = *key;
	f->hash = h;
	f->started_ms = now;
	f->moved_ms = now;
	f->next = t->b[h % BUCKETS];
	t->b[h % BUCKETS] = f;
	t->count++;
	t->reading++;
	return f;
}

int flowtab_append(struct flowtab *t, struct flowtab_flow *f, uint32_t seq,
		   const uint8_t *p, size_t n, uint64_t now)
{
	uint32_t off;
	size_t fresh, want;

	if (!f->has_start) {
		f->has_start = true;
		f->isn = seq;
	}
	if (!flowtab_agrees(f, seq, p, n))
		return -EBADMSG;
	off = seq - f->isn; /* modulo 2^32, as TCP counts */
	if (off > (uint32_t)f->len) {
		/* Before the start (a wrapped, negative offset) is old. */
		return off > UINT32_MAX / 2 ? 0 : -EAGAIN;
	}
	if ((size_t)off + n <= f->len)
		return 0;
	fresh = (size_t)off + n - f->len;
	want = f->len + fresh;
	if (grow(t, f, want) != 0)
		return -EMSGSIZE;
	memcpy(f->buf + want - fresh, p + (n - fresh), fresh);
	f->moved_ms = now;
	return 0;
}

bool flowtab_agrees(const struct flowtab_flow *f, uint32_t seq,
		    const uint8_t *p, size_t n)
{
	uint32_t off = seq - f->isn; /* modulo 2^32, as TCP counts */
	size_t skip = 0, over;

	if (!f->has_start)
		return true;
	if (off > UINT32_MAX / 2) { /* starts before the stream */
		skip = (size_t)(f->isn - seq);
		if (skip >= n)
			return true;
		off = 0;
	}
	if (off >= f->len)
		return true;
	over = n - skip;
	if (over > f->len - off)
		over = f->len - off;
	return memcmp(f->buf + off, p + skip, over) == 0;
}

/* Grow f's buffer to want bytes (the gap zeroed), within the bounds. */
static int grow(struct flowtab *t, struct flowtab_flow *f, size_t want)
{
	size_t cap = f->cap ? f->cap : 2048;
	uint8_t *nb;

	if (want <= f->len)
		return 0;
	if (want > t->per_flow || t->bytes + (want - f->len) > t->total)
		return -EMSGSIZE;
	if (want > f->cap) {
		while (cap < want)
			cap *= 2;
		if (cap > t->per_flow)
			cap = t->per_flow;
		nb = realloc(f->buf, cap);
		if (nb == NULL)
			return -EMSGSIZE;
		f->buf = nb;
		f->cap = cap;
	}
	memset(f->buf + f->len, 0, want - f->len);
	t->bytes += want - f->len;
	f->len = want;
	return 0;
}

int flowtab_place(struct flowtab *t, struct flowtab_flow *f, uint64_t off,
		  const uint8_t *p, size_t n)
{
	size_t end, i = 0, j;
	uint32_t lo, hi;

	if (n == 0)
		return 0;
	if (off >= t->per_flow || n > t->per_flow - off)
		return -EMSGSIZE;
	end = (size_t)off + n;
	for (size_t k = 0; k < f->n_runs; k++) {
		size_t a = f->runs[k][0] > off ? f->runs[k][0] : (size_t)off;
		size_t b = f->runs[k][1] < end ? f->runs[k][1] : end;

		if (a < b && memcmp(f->buf + a, p + (a - off), b - a) != 0)
			return -EBADMSG;
	}
	/* The runs that touch [off, end) merge into one, at index i. */
	while (i < f->n_runs && f->runs[i][1] < off)
		i++;
	j = i;
	lo = (uint32_t)off;
	hi = (uint32_t)end;
	while (j < f->n_runs && f->runs[j][0] <= end) {
		if (f->runs[j][0] < lo)
			lo = f->runs[j][0];
		if (f->runs[j][1] > hi)
			hi = f->runs[j][1];
		j++;
	}
	if (j == i && f->n_runs == FLOWTAB_RANGES_MAX)
		return -EMSGSIZE;
	if (grow(t, f, end) != 0)
		return -EMSGSIZE;
	memcpy(f->buf + off, p, n);
	memmove(&f->runs[i + 1], &f->runs[j],
		(f->n_runs - j) * sizeof(f->runs[0]));
	f->n_runs = f->n_runs - (j - i) + 1;
	f->runs[i][0] = lo;
	f->runs[i][1] = hi;
	return 0;
}

size_t flowtab_prefix(const struct flowtab_flow *f)
{
	return f->n_runs > 0 && f->runs[0][0] == 0 ? f->runs[0][1] : 0;
}

int flowtab_hold(struct flowtab_flow *f, uint32_t id)
{
	if (f->n_held >= FLOWTAB_HELD_MAX)
		return -ENOSPC;
	f->held[f->n_held++] = id;
	return 0;
}

static void drop_stream(struct flowtab *t, struct flowtab_flow *f)
{
	t->bytes -= f->len;
	free(f->buf);
	f->buf = NULL;
	f->len = f->cap = 0;
	f->n_held = 0;
	f->n_runs = 0;
}

void flowtab_decide(struct flowtab *t, struct flowtab_flow *f, bool accept,
		    uint64_t now)
{
	if (f->decided)
		return;
	drop_stream(t, f);
	f->decided = true;
	f->accept = accept;
	f->decided_ms = now;
	t->reading--;
}

void flowtab_guard(struct flowtab *t, struct flowtab_flow *f, uint64_t now)
{
	if (f->decided)
		return;
	f->n_held = 0;
	f->decided = true;
	f->accept = true;
	f->guarded = true;
	f->decided_ms = now;
	t->reading--;
}

void flowtab_unguard(struct flowtab *t, struct flowtab_flow *f)
{
	if (!f->guarded)
		return;
	drop_stream(t, f);
	f->guarded = false;
}

void flowtab_each_guarded(struct flowtab *t, flowtab_guard_fn fn, void *arg)
{
	for (size_t i = 0; i < BUCKETS; i++) {
		struct flowtab_flow **pp = &t->b[i];

		while (*pp != NULL) {
			if ((*pp)->guarded && fn(arg, *pp)) {
				unlink_flow(t, pp);
				continue;
			}
			pp = &(*pp)->next;
		}
	}
}

static void unlink_flow(struct flowtab *t, struct flowtab_flow **pp)
{
	struct flowtab_flow *f = *pp;

	*pp = f->next;
	if (!f->decided)
		t->reading--;
	drop_stream(t, f);
	t->count--;
	free(f);
}

enum flowtab_conn flowtab_conn_of(const struct flowtab_flow *f, bool has_conn,
				  uint32_t conn_id)
{
	if (f->has_conn && has_conn)
		return f->conn_id == conn_id ? FLOWTAB_CONN_SAME
					     : FLOWTAB_CONN_OTHER;
	if (f->decided)
		return FLOWTAB_CONN_UNKNOWN;
	return f->has_conn == has_conn ? FLOWTAB_CONN_SAME : FLOWTAB_CONN_OTHER;
}

void flowtab_remove(struct flowtab *t, struct flowtab_flow *f)
{
	struct flowtab_flow **pp = &t->b[f->hash % BUCKETS];

	while (*pp != f)
		pp = &(*pp)->next;
	unlink_flow(t, pp);
}

void flowtab_expire(struct flowtab *t, uint64_t now, uint64_t idle_ms,
		    uint64_t total_ms, uint64_t keep_ms, flowtab_timeout_fn fn,
		    void *arg)
{
	for (size_t i = 0; i < BUCKETS; i++) {
		struct flowtab_flow **pp = &t->b[i];

		while (*pp != NULL) {
			struct flowtab_flow *f = *pp;

			if (!f->decided && (now - f->started_ms >= total_ms ||
					    now - f->moved_ms >= idle_ms)) {
				fn(arg, f,
				   now - f->started_ms >= total_ms
				       ? FLOWTAB_LATE_TOTAL
				       : FLOWTAB_LATE_IDLE);
				flowtab_decide(t, f, false, now);
			}
			if (f->decided && !f->guarded &&
			    now - f->decided_ms >= keep_ms) {
				unlink_flow(t, pp);
				continue;
			}
			pp = &f->next;
		}
	}
}

size_t flowtab_count(const struct flowtab *t)
{
	return t->count;
}

size_t flowtab_reading(const struct flowtab *t)
{
	return t->reading;
}

size_t flowtab_bytes(const struct flowtab *t)
{
	return t->bytes;
}
