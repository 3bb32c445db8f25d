/* SPDX-License-Identifier: GPL-2.0-or-later */
/* resolver: what happens to one client query, whatever transport brought
 * it: parse, policy, upstream (shared by identical questions in flight),
 * snoop, sets, and the rewritten answer. */
#ifndef DNSFENCE_RESOLVER_H
#define DNSFENCE_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config/config.h"
#include "resolve/replyfn.h"

struct event_base;
struct policy;
struct upstream;
struct sets;
struct prov;
struct resolver;
struct rquery;

/* sets may be NULL: answers are then relayed without kernel adds. */
struct resolver *resolver_new(struct event_base *base, const struct config *cfg,
			      const struct policy *pol, struct upstream *up,
			      struct sets *sets);
void resolver_free(struct resolver *r);

/* Handle one message from a client. local (or NULL) is given back to fn
 * with the reply. ifindex: the interface it arrived on (0: not known),
 * whose real containers bound its share of the in-flight cap. recv_ns:
 * when it arrived (monotonic ns, the kernel's receive time when known;
 * 0: not known), where its reply's latency is counted from; read_ns:
 * when its transport read it (0: not known). Returns a pending
 * query that will be answered through fn later (the transport keeps it so that
 * it can cancel it), or NULL when fn was already called or no reply is due. */
struct rquery *resolver_handle(struct resolver *r, const uint8_t *msg,
			       size_t len, const struct sockaddr *peer,
			       socklen_t peerlen, const struct sockaddr *local,
			       unsigned ifindex, uint64_t recv_ns,
			       uint64_t read_ns, bool tcp, resolver_reply_fn fn,
			       void *ctx);
/* Drop every waiting client without a reply (the transports are going
 * away). Pending upstream questions and kernel adds finish on their own:
 * free the upstream and the sets after this and before resolver_free. */
void resolver_shutdown(struct resolver *r);
/* Upstream questions in flight (what max_inflight caps). */
uint32_t resolver_inflight(const struct resolver *r);
/* The client is gone: fn will not be called for q, and q is freed. */
/* While serve's readiness gate runs, a query for name (the readiness
 * probe's, PROBE_DEFAULT_NAME) is dropped unanswered, so that `dnsfence
 * probe` fails until READY=1; everything else is served. NULL: off. */
void resolver_set_gated(struct resolver *r, const char *name);
void resolver_cancel(struct rquery *q);

/* Judge every query from now on with cfg and pol (reload's swap; both
 * must stay valid until the next call or resolver_free). Questions
 * already upstream are judged again when their answer arrives. Cached
 * answers for names pol refuses are dropped; returns how many. */
size_t resolver_set_policy(struct resolver *r, const struct config *cfg,
			   const struct policy *pol);
/* Send new questions to up (questions already sent finish on theirs). */
/* Count each allowed question and its answer's addresses per allow
 * entry in u (observe.c owns it; NULL: off), and track the running
 * policy's entries, now and after each resolver_set_policy. */
struct usage;
void resolver_set_usage(struct resolver *r, struct usage *u);
struct usage *resolver_usage(const struct resolver *r);
void resolver_set_upstream(struct resolver *r, struct upstream *up);
/* While the parent still judges set adds with was, the config before a
 * reload (its new rules are not in yet), an answer's address enters the
 * sets only if was admits it as well as the running config: the parent
 * refuses what was refuses, and takes a refusal for a compromised DNS
 * process. NULL (the default): the running config alone. */
void resolver_set_admit_was(struct resolver *r, const struct config *was);
/* Note in prov which name put each address into the sets (NULL: none). */
void resolver_set_prov(struct resolver *r, struct prov *prov);
/* Questions waiting on the upstream or the kernel; cached answers. */
size_t resolver_pending(const struct resolver *r);
size_t resolver_cached(const struct resolver *r);

#endif
