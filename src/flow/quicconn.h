/* SPDX-License-Identifier: GPL-2.0-or-later */
/* quicconn: the QUIC connections the name check let through, each with
 * the keys of its client's Initials (its first DCID), the name judged
 * and the one version of its Initial CRYPTO stream the server may
 * receive. Bounded in connections and bytes; pure (no I/O, time passed
 * in). */
#ifndef DNSFENCE_QUICCONN_H
#define DNSFENCE_QUICCONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow/flowtab.h"
#include "flow/quic.h"
#include "flow/tlshello.h"

/* The CRYPTO stream kept of one connection: the ClientHello judged and
 * a second one (after a HelloRetryRequest). */
#define QUICCONN_STREAM_MAX (2 * TLSHELLO_MAX)

struct quicconn {
	struct quicconn *next;		/* hash chain */
	struct quicconn *newer, *older; /* use order */
	struct flowtab_key key;
	uint32_t hash;
	uint8_t dcid[QUIC_CID_MAX]; /* whose keys protect its Initials */
	size_t dcid_len;
	char name[TLSHELLO_NAME_MAX + 1]; /* the server name judged */
	/* bytes[0, judged): the stream judged; past it, the bytes placed
	 * since (have: one bit per byte past judged), not yet judged. */
	uint8_t *bytes, *have;
	size_t judged, cap;
	uint64_t used_ms;
};

struct quicconn_tab;

/* At most max connections and bytes_max bytes of stream in all. NULL on
 * ENOMEM or a zero bound. */
struct quicconn_tab *quicconn_new(size_t max, size_t bytes_max);
void quicconn_free(struct quicconn_tab *t);

/* Remember a connection on the flow key, its Initials protected with the
 * keys of dcid, judged on the n bytes of stream naming name (replacing
 * one of the same flow and DCID). The least recently used connections
 * are forgotten when a bound is reached. NULL on ENOMEM or n over
 * TLSHELLO_MAX. */
struct quicconn *quicconn_add(struct quicconn_tab *t,
			      const struct flowtab_key *key,
			      const uint8_t *dcid, size_t dcid_len,
			      const uint8_t *stream, size_t n, const char *name,
			      uint64_t now);
/* The connection of key under dcid, marked used now, or NULL. */
struct quicconn *quicconn_find(struct quicconn_tab *t,
			       const struct flowtab_key *key,
			       const uint8_t *dcid, size_t dcid_len,
			       uint64_t now);
/* Up to max connections of the flow key into out; how many. */
size_t quicconn_list(struct quicconn_tab *t, const struct flowtab_key *key,
		     struct quicconn **out, size_t max);
/* The n bytes at offset off of c's stream, as a later Initial carries
 * them: 0 (all inside the judged range and equal to it), -EAGAIN (some
 * lie past it: kept, to be judged), -EBADMSG (bytes that differ from
 * the judged ones or from ones placed before), -EMSGSIZE (past
 * QUICCONN_STREAM_MAX or the table's byte bound). */
int quicconn_place(struct quicconn_tab *t, struct quicconn *c, uint64_t off,
		   const uint8_t *p, size_t n);
/* The bytes placed past the judged range without a gap (*p: the first);
 * how many. */
size_t quicconn_pending(const struct quicconn *c, const uint8_t **p);
/* The next n bytes past the judged range are judged now. */
void quicconn_judge(struct quicconn *c, size_t n);
void quicconn_remove(struct quicconn_tab *t, struct quicconn *c);
/* Forget connections unused for keep_ms or more. */
void quicconn_expire(struct quicconn_tab *t, uint64_t now, uint64_t keep_ms);
size_t quicconn_count(const struct quicconn_tab *t);
size_t quicconn_bytes(const struct quicconn_tab *t);

#endif
