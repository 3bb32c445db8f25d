/* SPDX-License-Identifier: GPL-2.0-or-later */
/* link: the third channel between the two processes, beside the set
 * channel and the socket channel (setwriter.h): the few things the DNS
 * process and the privileged parent tell each other that are neither a
 * set change nor a socket (base/ipc.h's IPC_HELLO .. IPC_VERDICT).
 *
 * The parent's end takes IPC_HELLO (the DNS process serves), IPC_RULES (a
 * reload swapped the policy: the parent reads the config itself, never
 * the DNS process's, and answers with IPC_ADD_DONE), IPC_NFQ (a queue's
 * socket, before the sandbox) and IPC_VERDICT (judged: only accept, drop,
 * or through the chain again with one of the name check's marks, on a
 * queue it was given). Anything else, or a closed channel, stops its loop
 * with one log line. The DNS process's end takes IPC_GATE, IPC_FORGET and
 * the answers to its IPC_RULES; the channel's close is its stop. */
#ifndef DNSFENCE_LINK_H
#define DNSFENCE_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/ipc.h"
#include "daemon/reload.h"

struct event_base;
struct link;

struct link_ops {
	/* parent: the DNS process serves, n allow entries */
	void (*hello)(void *arg, uint32_t n);
	/* parent: re-read the config (what: IPC_RULES_*), then link_reply */
	void (*rules)(void *arg, uint32_t id, int what);
	/* DNS process: IPC_GATE, IPC_FORGET */
	void (*gate)(void *arg);
	void (*forget)(void *arg);
};

/* Serve fd (SOCK_SEQPACKET, non-blocking, taken over) as the parent's end
 * (parent true) or the DNS process's. NULL on allocation failure. */
struct link *link_new(struct event_base *base, int fd, bool parent,
		      const struct link_ops *ops, void *arg);
int link_fd(const struct link *l);
/* Send a header-only frame (IPC_HELLO with n, IPC_GATE, IPC_FORGET):
 * 0 or -errno. */
int link_send(struct link *l, enum ipc_type type, uint32_t n);
/* The parent's answer to IPC_RULES id. */
int link_reply(struct link *l, uint32_t id, int status);
/* A reload_rules_fn for the DNS process (arg: its link). */
void link_rules(void *arg, const struct config *cfg, int what,
		guard_applied_fn done, void *done_arg);
/* Did the link stop the loop (a broken or closed channel)? */
bool link_failed(const struct link *l);
void link_free(struct link *l);

#endif
