/* SPDX-License-Identifier: GPL-2.0-or-later */
/* flowcheck: the name check of invariant 11, assembled: each queued
 * packet of an undecided flow is reassembled (flowtab.c), its ClientHello
 * read (tlshello.c), the flow judged (flowdecide.c) against the running
 * policy and the provenance map, and every held packet sent back with
 * the verdict the rules turn into the flow's connmark (flowmark.h). */
#ifndef DNSFENCE_FLOWCHECK_H
#define DNSFENCE_FLOWCHECK_H

#include <stddef.h>

struct attrib;
struct event_base;
struct flowcheck;
struct reload;

/* A flow's first bytes (a ClientHello, a request head) are read while
 * each new byte comes within FLOWCHECK_TIMEOUT_MS of the last, for at
 * most FLOWCHECK_TOTAL_MS since the first; past either the flow is
 * refused. A slow client's hello in a few small segments fits; a trickle
 * holds its place 30 s at most. A QUIC flow: FLOWCHECK_TIMEOUT_MS since
 * its first datagram. */
#define FLOWCHECK_TIMEOUT_MS 5000
#define FLOWCHECK_TOTAL_MS   30000
/* Bounds of the reassembly: flows read at once, bytes per flow, total. */
#define FLOWCHECK_FLOWS_MAX 16384
#define FLOWCHECK_BYTES_MAX (4u * 1024 * 1024)
/* Packets waiting in the kernel's queue at most (beyond: dropped). */
#define FLOWCHECK_QUEUE_MAXLEN 4096

/* Bind the queue (before the privilege drop) and judge with rl's running
 * config, policy and provenance from then on; attrib (may be NULL) logs
 * the refusals. NULL with err set when the queue cannot be bound. */
struct flowcheck *flowcheck_new(struct event_base *base,
				const struct reload *rl, struct attrib *attrib,
				char *err, size_t errlen);
/* Give both queues' sockets to the privileged parent over chan (its link
 * channel: IPC_NFQ frames) and send every verdict from now on as an
 * IPC_VERDICT there: the kernel takes verdicts only from a sender holding
 * CAP_NET_ADMIN. 0 or -errno. */
int flowcheck_hand_over(struct flowcheck *fc, int chan);
void flowcheck_free(struct flowcheck *fc);

#endif
