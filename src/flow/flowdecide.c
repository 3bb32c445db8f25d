// SPDX-License-Identifier: GPL-2.0-or-later
/* flowdecide: a shared front end serves thousands of names on one
 * address, so an allowed address admits nothing by itself: the name the
 * client asks for must be allowed, and that very name's answer must have
 * carried this address. Another allowed name that merely shares the
 * address does not count (it is the front end's other customers), and a
 * flow that names nothing (an IP-literal connection) or cannot be read
 * is refused: no readable name, no flow (fail closed). */
#include <stdio.h>

#include "config/policy.h"
#include "dns/dnsmsg.h"
#include "flow/flowdecide.h"

static const char *const reason_names[FLOWDECIDE__COUNT] = {
    "ok", "no_name", "not_allowed", "not_answered", "unreadable", "timeout",
};

const char *flowdecide_reason_name(enum flowdecide_reason r)
{
	return (unsigned)r < FLOWDECIDE__COUNT ? reason_names[r] : "unknown";
}

enum flowdecide_reason flowdecide(const char *what, const char *name,
				  const struct netaddr *dst,
				  const struct policy *pol,
				  flowdecide_answered_fn answered, void *arg,
				  char *text, size_t cap)
{
	uint8_t wire[DNS_MAX_NAME];
	char a[NETADDR_STRLEN];
	size_t len = sizeof(wire);

	netaddr_format(dst, a, sizeof(a));
	if (name == NULL || *name == '\0') {
		snprintf(text, cap, "no %s (a connection to the bare address)",
			 what);
		return FLOWDECIDE_NO_NAME;
	}
	if (dns_name_from_text(name, wire, &len) != 0) {
		snprintf(text, cap, "%s is not a DNS name", what);
		return FLOWDECIDE_UNREADABLE;
	}
	dns_name_lower(wire, len);
	if (!policy_match(pol, wire, len)) {
		snprintf(text, cap, "%s %s is not allowed", what, name);
		return FLOWDECIDE_NOT_ALLOWED;
	}
	if (!answered(arg, wire, len, dst)) {
		snprintf(text, cap, "%s %s was not answered with %s", what,
			 name, a);
		return FLOWDECIDE_NOT_ANSWERED;
	}
	snprintf(text, cap, "%s %s was answered with %s", what, name, a);
	return FLOWDECIDE_OK;
}

void flowdecide_explain(enum flowdecide_reason r, const char *what, char *text,
			size_t cap)
{
	if (r == FLOWDECIDE_TIMEOUT)
		snprintf(text, cap, "no complete %s in time", what);
	else
		snprintf(text, cap, "first bytes are not a readable %s", what);
}
