/* SPDX-License-Identifier: GPL-2.0-or-later */
/* setwriter: the privileged parent's half of the set adds. It reads the
 * DNS process's IPC_ADD frames (base/ipc.h) from its end of the channel,
 * judges every address again (invariants 3 and 5: admit_check with the
 * parent's own config; the set is the parent's, chosen by family; the
 * timeout is clamped by the parent's sets), sends the adds over its own
 * netlink socket (sets.c) and answers each request with IPC_ADD_DONE once
 * the kernel has acked, so the client's answer still waits for the
 * kernel (invariant 2). A malformed frame, a refused address or a closed
 * channel stops the parent's loop with one log line: the DNS process is
 * broken, compromised or gone, and the fence stays as it is. */
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
 * when it is an IPC_ADD whose every address may enter a set under cfg;
 * -EINVAL (malformed: size, type, padding) or -EPERM (an address cfg
 * refuses) with why set. */
int setwriter_judge(const struct config *cfg, const uint8_t *buf, size_t len,
		    struct ipc_msg *msg, char *why, size_t whylen);

/* Serve the channel fd (SOCK_SEQPACKET, taken over) with sets; cfg must
 * outlive it or be replaced by setwriter_set_config (a reload). NULL on
 * allocation failure. */
struct setwriter *setwriter_new(struct event_base *base, int fd,
				const struct config *cfg, struct sets *sets);
void setwriter_set_config(struct setwriter *w, const struct config *cfg);
/* Did the writer stop the loop (then the daemon exits 3)? */
bool setwriter_failed(const struct setwriter *w);
/* Drops the requests in flight: call after sets_close. */
void setwriter_free(struct setwriter *w);

#endif
