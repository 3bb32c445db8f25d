/* SPDX-License-Identifier: GPL-2.0-or-later */
/* flowtab: the flows whose first bytes the name check is still reading
 * (their segments reassembled, their queued packets held), and, for a
 * few seconds, the flows just decided, so a packet queued before the
 * kernel saw the verdict is not read as a new flow's first bytes. Bounded in
 * flows, bytes per flow, bytes in total and held packets per flow. Pure (no
 * I/O, time passed in). */
#ifndef DNSFENCE_FLOWTAB_H
#define DNSFENCE_FLOWTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

#define FLOWTAB_HELD_MAX   32 /* queued packets of one flow awaiting verdict */
#define FLOWTAB_RANGES_MAX 16 /* disjoint runs of a stream placed by offset */
#define FLOWTAB_TAG_MAX	   20 /* a connection id inside the flow (QUIC) */

struct flowtab_key {
	struct netaddr src, dst;
	uint16_t sport, dport;
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
};

/* The key's hash under seed (FNV-1a of its bytes), and equality: the flow
 * tables of this folder (flowtab, quicconn, flowshare) key by it. */
uint32_t flowtab_key_hash(const struct flowtab_key *k, uint32_t seed);
bool flowtab_key_equal(const struct flowtab_key *a,
		       const struct flowtab_key *b);

struct flowtab_flow {
	struct flowtab_flow *next; /* hash chain */
	struct flowtab_key key;
	uint32_t hash;
	uint64_t started_ms, decided_ms;
	uint64_t moved_ms;    /* flowtab_append: when the stream last grew */
	bool decided, accept; /* the verdict, once decided */
	/* Accepted, its judged bytes (buf, len) kept until the server has
	 * acknowledged them (flowtab_guard): what the flow sends again over
	 * them must equal them (flowtab_agrees). */
	bool guarded;
	bool has_start; /* isn is the stream's first byte */
	uint32_t isn;
	uint8_t *buf; /* the stream from isn on, len bytes */
	size_t len, cap;
	uint32_t held[FLOWTAB_HELD_MAX];
	size_t n_held;
	bool has_uid;
	uint32_t uid;
	/* flowtab_place: the runs of buf received, sorted, disjoint. */
	uint32_t runs[FLOWTAB_RANGES_MAX][2];
	size_t n_runs;
	/* The caller's name for the connection the flow carries (QUIC: the
	 * Destination Connection ID its Initial keys came from). */
	uint8_t tag[FLOWTAB_TAG_MAX];
	size_t tag_len;
	bool recheck; /* the caller's: a second look at a flow let through */
	/* The caller's: its first bytes were judged and sent on, the rest
	 * of its first flight is still read (a TLS 1.3 handshake). */
	bool first_sent;
	/* The conntrack entry of the flow's first packet (the kernel's
	 * CTA_ID), when it named one: a verdict is that connection's. */
	bool has_conn;
	uint32_t conn_id;
};

struct flowtab;

/* At most max_flows flows, bytes_per_flow of stream each and bytes_total
 * in all. NULL on ENOMEM or a zero bound. */
struct flowtab *flowtab_new(size_t max_flows, size_t bytes_per_flow,
			    size_t bytes_total);
void flowtab_free(struct flowtab *t);

/* The flow of key, created (started now) when create is set; NULL when
 * absent, or when the table is full or out of memory (create). */
struct flowtab_flow *flowtab_get(struct flowtab *t,
				 const struct flowtab_key *key, uint64_t now,
				 bool create);
/* The segment of n bytes at sequence number seq into f's stream (the
 * first segment sets the start), read at now: when it brings new
 * bytes, now is f's moved_ms. 0 (appended, or old bytes again),
 * -EAGAIN (a gap before it: drop it, the sender retransmits),
 * -EBADMSG (bytes sent again differ from the ones read: the server keeps
 * whichever copy reaches it first, and the first may have been dropped
 * here), -EMSGSIZE (over the per-flow or total bound). */
int flowtab_append(struct flowtab *t, struct flowtab_flow *f, uint32_t seq,
		   const uint8_t *p, size_t n, uint64_t now);
/* The n bytes at offset off of f's stream, in any order (QUIC CRYPTO
 * frames). Bytes received before must come again unchanged. 0, -EBADMSG
 * (overlapping bytes that differ: the receiver would keep either),
 * -EMSGSIZE (past the per-flow or total bound, or more than
 * FLOWTAB_RANGES_MAX disjoint runs). */
int flowtab_place(struct flowtab *t, struct flowtab_flow *f, uint64_t off,
		  const uint8_t *p, size_t n);
/* How many bytes from the stream's start flowtab_place has filled. */
size_t flowtab_prefix(const struct flowtab_flow *f);
/* Do the n bytes at sequence number seq equal f's stream where they
 * overlap it? Bytes before its start or past its end are not compared
 * (a server drops the ones before; the ones past were never read). */
bool flowtab_agrees(const struct flowtab_flow *f, uint32_t seq,
		    const uint8_t *p, size_t n);
/* Remember a queued packet of f. 0 or -ENOSPC (FLOWTAB_HELD_MAX). */
int flowtab_hold(struct flowtab_flow *f, uint32_t id);
/* f is decided: its stream and held packets are forgotten (the caller
 * sent their verdicts), the verdict kept until flowtab_expire drops it. */
void flowtab_decide(struct flowtab *t, struct flowtab_flow *f, bool accept,
		    uint64_t now);
/* f is accepted and guarded: its held packets are forgotten, its stream
 * kept (still counted in the byte bound) until flowtab_unguard, and it
 * is never expired by flowtab_expire, only by the caller (the server
 * has acknowledged the stream, or the sender's socket is gone). */
void flowtab_guard(struct flowtab *t, struct flowtab_flow *f, uint64_t now);
/* f's guard ends: its stream is forgotten, the verdict kept as for
 * flowtab_decide. */
void flowtab_unguard(struct flowtab *t, struct flowtab_flow *f);
/* Call fn for each guarded flow; fn returns true to have it removed. */
typedef bool (*flowtab_guard_fn)(void *arg, struct flowtab_flow *f);
void flowtab_each_guarded(struct flowtab *t, flowtab_guard_fn fn, void *arg);

/* Which connection a packet of f's four-tuple is of, by the conntrack id
 * it carries (has_conn false: the kernel named none). */
enum flowtab_conn {
	FLOWTAB_CONN_SAME,  /* f's: both ids equal, or neither while reading */
	FLOWTAB_CONN_OTHER, /* another: the ids differ, or only one is known
			     * while f is read */
	FLOWTAB_CONN_UNKNOWN, /* f is decided and an id is missing: a
			       * verdict is never repeated on a guess */
};
enum flowtab_conn flowtab_conn_of(const struct flowtab_flow *f, bool has_conn,
				  uint32_t conn_id);

/* Forget f now (a new connection on a decided flow's four-tuple). */
void flowtab_remove(struct flowtab *t, struct flowtab_flow *f);

/* Which deadline a flow still being read missed. */
enum flowtab_late {
	FLOWTAB_LATE_IDLE,  /* idle_ms since its stream last grew (moved_ms) */
	FLOWTAB_LATE_TOTAL, /* total_ms since it started */
};
/* Called for a flow still being read past a deadline; it is then
 * decided (refused) by the callback's caller, i.e. flowtab_expire. */
typedef void (*flowtab_timeout_fn)(void *arg, struct flowtab_flow *f,
				   enum flowtab_late why);
/* Hand every flow whose stream has not grown for idle_ms, or read for
 * total_ms in all, to fn, then decide it refused; drop flows decided
 * keep_ms ago or more. */
void flowtab_expire(struct flowtab *t, uint64_t now, uint64_t idle_ms,
		    uint64_t total_ms, uint64_t keep_ms, flowtab_timeout_fn fn,
		    void *arg);

size_t flowtab_count(const struct flowtab *t); /* flows, both kinds */
size_t flowtab_reading(const struct flowtab *t);
size_t flowtab_bytes(const struct flowtab *t);

#endif
