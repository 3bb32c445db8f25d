/* SPDX-License-Identifier: GPL-2.0-or-later */
/* setwriter: the privileged parent's half of the IPC. It reads
 * the DNS process's IPC_ADD, IPC_DEL and IPC_SHORTEN frames (base/ipc.h)
 * from its end of the channel, judges every address of an add again
 * (invariants 3 and 5: admit_check with the parent's own config; the set
 * is the parent's, chosen by family; the timeout is clamped by the
 * parent's sets), lets a shorten only shorten, sends the changes over its
 * own netlink socket (sets.c) and answers each request with IPC_ADD_DONE
 * once the kernel has acked, so the client's answer still waits for the
 * kernel (invariant 2). On IPC_SOCKET (the DNS process's socket channel)
 * it makes a UDP or TCP socket, marks it with cfg->mark (SO_MARK needs
 * CAP_NET_ADMIN) and passes it back (IPC_SOCKET_DONE). A malformed
 * frame, a refused address or a closed channel stops the parent's loop
 * with one log line: the DNS process is broken, compromised or gone, and
 * the fence stays as it is. */
#ifndef DNSFENCE_SETWRITER_H
#define DNSFENCE_SETWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/ipc.h"
#include "config/config.h"

struct event_base;
struct sets;
struct setwriter;

/* Requests the parent holds for the kernel at once; more is abuse. */
#define SETWRITER_INFLIGHT_MAX 8192

/* The reader's judgement of one frame of len bytes, pure (no kernel): 0
 * when it is an IPC_ADD whose every address may enter a set under cfg, an
 * IPC_DEL (a del only narrows the fence) or an IPC_SHORTEN (judged per
 * address by setwriter_shorten_ok); -EINVAL (malformed: size, type,
 * padding, a del's timeout, a shorten's zero) or -EPERM (an add of an
 * address cfg refuses) with why set. */
int setwriter_judge(const struct config *cfg, const uint8_t *buf, size_t len,
		    struct ipc_msg *msg, char *why, size_t whylen);

/* May a's entry, expiring at current (monotonic seconds; 0 or not after
 * now: the parent knows no entry), be set to expire a->ttl seconds from
 * now? Only sooner than it would (never longer); on an unknown entry the
 * shorten is an add, so only of an address cfg admits, its timeout
 * clamped as an add's. *expires is the new expiry. Pure. */
bool setwriter_shorten_ok(const struct config *cfg, const struct ipc_addr *a,
			  uint64_t now, uint64_t current, uint64_t *expires);

/* Serve the channel fd (SOCK_SEQPACKET, non-blocking, taken over) with
 * sets, or with none (the socket channel: a set request there stops the
 * writer); cfg must outlive it or be replaced by setwriter_set_config (a
 * reload). NULL on allocation failure. */
struct setwriter *setwriter_new(struct event_base *base, int fd,
				const struct config *cfg, struct sets *sets);
void setwriter_set_config(struct setwriter *w, const struct config *cfg);
/* Did the writer stop the loop (then the daemon exits 3)? */
bool setwriter_failed(const struct setwriter *w);
/* Drops the requests in flight: call after sets_close. */
void setwriter_free(struct setwriter *w);

#endif
