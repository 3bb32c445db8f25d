// SPDX-License-Identifier: GPL-2.0-or-later
/* quicconn: a QUIC server keeps a connection's Initial keys, and reads
 * its client's Initials, until the handshake moves on; the name check
 * judged only the first ClientHello. So each connection let through is
 * remembered here with the stream judged: a later Initial of it must
 * carry those very bytes where it overlaps them (a server keeps either
 * copy), and bytes past them (the second ClientHello after a
 * HelloRetryRequest) are kept until whole and judged. A connection
 * unused for a while is forgotten, as is the least recently used one
 * when a bound is reached; its later Initials then authenticate under
 * no key the caller knows, and the caller drops them (fail closed).
 *
 * A chained hash table keyed by the four-tuple only, so that the
 * connections of one flow sit in one chain (quicconn_list), and a list
 * in use order for eviction and expiry. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/hash.h"
#include "flow/quicconn.h"

#define HAVE_BYTES (QUICCONN_STREAM_MAX / 8)

struct quicconn_tab {
	struct quicconn **b;
	size_t nb, count, max, bytes, bytes_max;
	struct quicconn *newest, *oldest;
	uint32_t seed;
};

static void unuse(struct quicconn_tab *t, struct quicconn *c);
static void use(struct quicconn_tab *t, struct quicconn *c, uint64_t now);
static int grow(struct quicconn_tab *t, struct quicconn *c);
static bool has(const struct quicconn *c, size_t i);

struct quicconn_tab *quicconn_new(size_t max, size_t bytes_max)
{
	struct quicconn_tab *t;
	size_t nb = 1;

	if (max == 0 || bytes_max == 0 || max > SIZE_MAX / 2)
		return NULL;
	while (nb < max)
		nb *= 2;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->b = calloc(nb, sizeof(*t->b));
	if (t->b == NULL) {
		free(t);
		return NULL;
	}
	t->nb = nb;
	t->max = max;
	t->bytes_max = bytes_max;
	(void)hash_seed(&t->seed, sizeof(t->seed));
	return t;
}

void quicconn_free(struct quicconn_tab *t)
{
	if (t == NULL)
		return;
	while (t->oldest != NULL)
		quicconn_remove(t, t->oldest);
	free(t->b);
	free(t);
}

static void unuse(struct quicconn_tab *t, struct quicconn *c)
{
	if (c->newer != NULL)
		c->newer->older = c->older;
	else
		t->newest = c->older;
	if (c->older != NULL)
		c->older->newer = c->newer;
	else
		t->oldest = c->newer;
	c->newer = c->older = NULL;
}

static void use(struct quicconn_tab *t, struct quicconn *c, uint64_t now)
{
	if (t->newest != c) {
		if (c->newer != NULL || c->older != NULL || t->oldest == c)
			unuse(t, c);
		c->older = t->newest;
		if (t->newest != NULL)
			t->newest->newer = c;
		t->newest = c;
		if (t->oldest == NULL)
			t->oldest = c;
	}
	c->used_ms = now;
}

struct quicconn *quicconn_add(struct quicconn_tab *t,
			      const struct flowtab_key *key,
			      const uint8_t *dcid, size_t dcid_len,
			      const uint8_t *stream, size_t n, const char *name,
			      uint64_t now)
{
	struct quicconn *c;
	size_t nlen = strlen(name);

	if (n > TLSHELLO_MAX || dcid_len > QUIC_CID_MAX ||
	    nlen > TLSHELLO_NAME_MAX || n > t->bytes_max)
		return NULL;
	if ((c = quicconn_find(t, key, dcid, dcid_len, now)) != NULL)
		quicconn_remove(t, c);
	while (t->oldest != NULL &&
	       (t->count >= t->max || t->bytes + n > t->bytes_max))
		quicconn_remove(t, t->oldest);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->bytes = malloc(n > 0 ? n : 1);
	if (c->bytes == NULL) {
		free(c);
		return NULL;
	}
	memcpy(c->bytes, stream, n);
	c->judged = c->cap = n;
	c->key = *key;
	c->hash = flowtab_key_hash(key, t->seed);
	memcpy(c->dcid, dcid, dcid_len);
	c->dcid_len = dcid_len;
	memcpy(c->name, name, nlen + 1);
	c->next = t->b[c->hash & (t->nb - 1)];
	t->b[c->hash & (t->nb - 1)] = c;
	t->count++;
	t->bytes += n;
	use(t, c, now);
	return c;
}

struct quicconn *quicconn_find(struct quicconn_tab *t,
			       const struct flowtab_key *key,
			       const uint8_t *dcid, size_t dcid_len,
			       uint64_t now)
{
	uint32_t h = flowtab_key_hash(key, t->seed);

	for (struct quicconn *c = t->b[h & (t->nb - 1)]; c != NULL;
	     c = c->next) {
		if (c->hash == h && c->dcid_len == dcid_len &&
		    memcmp(c->dcid, dcid, dcid_len) == 0 &&
		    flowtab_key_equal(&c->key, key)) {
			use(t, c, now);
			return c;
		}
	}
	return NULL;
}

size_t quicconn_list(struct quicconn_tab *t, const struct flowtab_key *key,
		     struct quicconn **out, size_t max)
{
	uint32_t h = flowtab_key_hash(key, t->seed);
	size_t n = 0;

	for (struct quicconn *c = t->b[h & (t->nb - 1)]; c != NULL && n < max;
	     c = c->next) {
		if (c->hash == h && flowtab_key_equal(&c->key, key))
			out[n++] = c;
	}
	return n;
}

/* Room for the whole stream and the map of what lies past the judged
 * range, at the first byte placed there. */
static int grow(struct quicconn_tab *t, struct quicconn *c)
{
	size_t more = QUICCONN_STREAM_MAX + HAVE_BYTES - c->cap;
	uint8_t *b;

	if (c->have != NULL)
		return 0;
	if (t->bytes + more > t->bytes_max)
		return -EMSGSIZE;
	c->have = calloc(1, HAVE_BYTES);
	b = c->have != NULL ? realloc(c->bytes, QUICCONN_STREAM_MAX) : NULL;
	if (b == NULL) {
		free(c->have);
		c->have = NULL;
		return -ENOMEM;
	}
	c->bytes = b;
	c->cap = QUICCONN_STREAM_MAX;
	t->bytes += more;
	return 0;
}

/* Was the byte at i (past the judged range) placed? */
static bool has(const struct quicconn *c, size_t i)
{
	size_t j = i - c->judged;

	return c->have != NULL && (c->have[j / 8] & (1u << (j % 8))) != 0;
}

int quicconn_place(struct quicconn_tab *t, struct quicconn *c, uint64_t off,
		   const uint8_t *p, size_t n)
{
	size_t lo, i;
	int rc = 0;

	if (off > QUICCONN_STREAM_MAX || n > QUICCONN_STREAM_MAX - off)
		return -EMSGSIZE;
	lo = (size_t)off;
	for (i = 0; i < n && lo + i < c->judged; i++) {
		if (c->bytes[lo + i] != p[i])
			return -EBADMSG;
	}
	if (i == n)
		return 0;
	if ((rc = grow(t, c)) != 0)
		return rc == -ENOMEM ? -EMSGSIZE : rc;
	/* Compared first, placed after: a refused frame changes nothing. */
	for (size_t k = i; k < n; k++) {
		if (has(c, lo + k) && c->bytes[lo + k] != p[k])
			return -EBADMSG;
	}
	for (; i < n; i++) {
		size_t j = lo + i - c->judged;

		c->bytes[lo + i] = p[i];
		c->have[j / 8] |= (uint8_t)(1u << (j % 8));
	}
	return -EAGAIN;
}

size_t quicconn_pending(const struct quicconn *c, const uint8_t **p)
{
	size_t n = 0;

	*p = c->bytes + c->judged;
	while (c->judged + n < c->cap && has(c, c->judged + n))
		n++;
	return n;
}

void quicconn_judge(struct quicconn *c, size_t n)
{
	size_t keep;

	if (c->have == NULL || n == 0)
		return;
	if (n > c->cap - c->judged)
		n = c->cap - c->judged;
	/* The map is relative to the judged end: shift it by n bits. */
	keep = c->cap - c->judged - n;
	for (size_t k = 0; k < keep; k++) {
		size_t from = k + n;
		bool bit = (c->have[from / 8] & (1u << (from % 8))) != 0;

		if (bit)
			c->have[k / 8] |= (uint8_t)(1u << (k % 8));
		else
			c->have[k / 8] &= (uint8_t) ~(1u << (k % 8));
	}
	for (size_t k = keep; k < c->cap - c->judged; k++)
		c->have[k / 8] &= (uint8_t) ~(1u << (k % 8));
	c->judged += n;
}

void quicconn_remove(struct quicconn_tab *t, struct quicconn *c)
{
	struct quicconn **pp = &t->b[c->hash & (t->nb - 1)];

	while (*pp != NULL && *pp != c)
		pp = &(*pp)->next;
	if (*pp == c)
		*pp = c->next;
	unuse(t, c);
	t->count--;
	t->bytes -= c->cap + (c->have != NULL ? HAVE_BYTES : 0);
	free(c->bytes);
	free(c->have);
	free(c);
}

void quicconn_expire(struct quicconn_tab *t, uint64_t now, uint64_t keep_ms)
{
	while (t->oldest != NULL && now - t->oldest->used_ms >= keep_ms)
		quicconn_remove(t, t->oldest);
}

size_t quicconn_count(const struct quicconn_tab *t)
{
	return t->count;
}

size_t quicconn_bytes(const struct quicconn_tab *t)
{
	return t->bytes;
}
