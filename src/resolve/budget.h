/* SPDX-License-Identifier: GPL-2.0-or-later */
/* budget: the token buckets on new upstream questions below an allowed
 * wildcard, per wildcard entry and per (entry, client address), so that
 * `*.example.com` is not an unbounded channel to example.com's servers. */
#ifndef DNSFENCE_BUDGET_H
#define DNSFENCE_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* A wildcard entry's bucket holds BUDGET_ENTRY_FACTOR times a client's:
 * four clients at full speed, and no more however many addresses one
 * workload sends from (any 127.0.0.0/8 source is its own). */
#define BUDGET_ENTRY_FACTOR 4
#define BUDGET_WINDOW_MS    60000 /* one log line per bucket and window */

struct budget;

struct budget_params {
	uint32_t burst;	     /* a client's bucket size, questions */
	uint32_t per_minute; /* its refill rate */
};

/* What budget_take says about a refusal. */
struct budget_refusal {
	bool by_entry;	 /* the entry's bucket was empty (else the client's) */
	bool log_now;	 /* the first refusal of this bucket's window */
	uint64_t before; /* refusals of the bucket since its last line */
};

/* clients: how many (entry, client) buckets are kept (the least recently
 * used of a probe window gives way; a fresh bucket is full). NULL on
 * ENOMEM. */
struct budget *budget_new(size_t clients);
void budget_free(struct budget *b);
/* One new upstream question below the wildcard whose lower-case wire
 * suffix is suffix[0..slen), from peer (its address, not its port), at
 * now_ms: true when both buckets had a token (both are charged), false
 * with *why filled (nothing charged). */
bool budget_take(struct budget *b, const struct budget_params *bp,
		 const uint8_t *suffix, size_t slen,
		 const struct sockaddr *peer, uint64_t now_ms,
		 struct budget_refusal *why);
/* The same with the entry's bucket and the client's kept per ingress
 * interface ifindex (the forward scope: one fenced interface's clients
 * cannot spend another's budget); ifindex 0 is budget_take. */
bool budget_take_on(struct budget *b, const struct budget_params *bp,
		    const uint8_t *suffix, size_t slen,
		    const struct sockaddr *peer, unsigned ifindex,
		    uint64_t now_ms, struct budget_refusal *why);

#endif
