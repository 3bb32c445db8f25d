/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ctevents: the namespace's new connections, from conntrack's NEW
 * events, so the allow entries' usage counts the flows that used them. */
#ifndef DNSFENCE_CTEVENTS_H
#define DNSFENCE_CTEVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

struct event_base;
struct ctevents;

/* One confirmed new connection: where it goes. */
struct ct_flow {
	struct netaddr dst;
	uint8_t proto;	/* IPPROTO_*; 0 when the event had none */
	uint16_t dport; /* host order; 0 for protocols without ports */
};

typedef void (*ct_flow_fn)(void *arg, const struct ct_flow *f);

/* Subscribe to conntrack's NEW events (needs CAP_NET_ADMIN: call before
 * the privilege drop) and hand each flow to fn from the event loop. NULL
 * with err set when the kernel refuses. */
struct ctevents *ctevents_open(struct event_base *base, ct_flow_fn fn,
			       void *arg, char *err, size_t errlen);
void ctevents_close(struct ctevents *c);

/* Parse one datagram of the ctnetlink socket: fn once per IPCTNL_MSG_CT_NEW
 * message with an original-direction destination; other messages are
 * skipped. The number of flows, or -EBADMSG (those before it were
 * delivered). Pure, for the fuzz target. */
int ctevents_parse(const uint8_t *buf, size_t len, ct_flow_fn fn, void *arg);

#endif
