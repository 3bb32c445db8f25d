/* SPDX-License-Identifier: GPL-2.0-or-later */
/* flowdecide: the name check's verdict on one flow (invariant 11), a pure
 * function of the name its first bytes carry, its destination, the
 * policy and the answers (through a callback onto the provenance map). */
#ifndef DNSFENCE_FLOWDECIDE_H
#define DNSFENCE_FLOWDECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

struct policy;

enum flowdecide_reason {
	FLOWDECIDE_OK = 0,	 /* allowed, and answered with this address */
	FLOWDECIDE_NO_NAME,	 /* a ClientHello without a server name */
	FLOWDECIDE_NOT_ALLOWED,	 /* the name is not on the allowlist */
	FLOWDECIDE_NOT_ANSWERED, /* allowed, but never answered with dst */
	FLOWDECIDE_UNREADABLE,	 /* not TLS, malformed, or too long */
	FLOWDECIDE_TIMEOUT,	 /* the first bytes never completed */
	FLOWDECIDE__COUNT
};

/* Was dst among the live answers for name (wire format, lower case)? */
typedef bool (*flowdecide_answered_fn)(void *arg, const uint8_t *wire,
				       size_t len, const struct netaddr *dst);

/* Short stable name: "ok", "no_name", "not_allowed", "not_answered",
 * "unreadable", "timeout" (metric labels, suggest.json). */
const char *flowdecide_reason_name(enum flowdecide_reason r);

/* The verdict on a flow to dst whose first bytes named name ("" or NULL:
 * none). what says where the name came from ("TLS server name"). The
 * explanation goes to text ("TLS server name evil.test is not allowed"),
 * also for FLOWDECIDE_OK. Only FLOWDECIDE_OK lets the flow through. */
enum flowdecide_reason flowdecide(const char *what, const char *name,
				  const struct netaddr *dst,
				  const struct policy *pol,
				  flowdecide_answered_fn answered, void *arg,
				  char *text, size_t cap);

/* The explanation of a flow refused before any name was read (reason
 * FLOWDECIDE_UNREADABLE or FLOWDECIDE_TIMEOUT), into text. */
void flowdecide_explain(enum flowdecide_reason r, const char *what, char *text,
			size_t cap);

#endif
