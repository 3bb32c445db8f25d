// SPDX-License-Identifier: GPL-2.0-or-later
/* setserr: what an ipset netlink error means, and the log of failed adds.
 *
 * The kernel answers a request with a positive errno or an IPSET_ERR_*
 * code; setserr_strerror() words it as ipset(8) does, and
 * setserr_status() maps it to the three outcomes a batch reports (the
 * set is missing, the set is full, anything else). A set that refuses
 * adds refuses every one of them, so a failure is counted always but
 * logged once per set and cause, and once more when adds to that set
 * succeed again: a full set under load writes two lines, not one per
 * address. */
#include <errno.h>
#include <string.h>

#include <libipset/linux_ip_set.h>
#include <libipset/linux_ip_set_hash.h>

#include "base/log.h"
#include "sets/setserr.h"
#include "base/stats.h"

#define SYS "sets"

enum cause { FAIL_NOSET = 0, FAIL_FULL, FAIL_OTHER };

const char *setserr_strerror(int code)
{
	switch (code) {
	case ENOENT:
		return "The set with the given name does not exist";
	case EPERM:
		return "Operation not permitted (CAP_NET_ADMIN is needed)";
	case IPSET_ERR_HASH_FULL:
		return "Hash is full, cannot add more elements";
	case IPSET_ERR_HASH_ELEM:
		return "Null-valued element, cannot be stored in a hash set";
	case IPSET_ERR_PROTOCOL:
		return "Kernel error received: ipset protocol error";
	case IPSET_ERR_TIMEOUT:
		return "Timeout cannot be used: set was created without "
		       "timeout support";
	case IPSET_ERR_INVALID_FAMILY:
		return "The value of the family parameter is invalid";
	case IPSET_ERR_IPADDR_IPV4:
		return "An IPv4 address is expected";
	case IPSET_ERR_IPADDR_IPV6:
		return "An IPv6 address is expected";
	case IPSET_ERR_EXIST:
		return "Element cannot be added to the set: it's already added";
	case IPSET_ERR_FIND_TYPE:
		return "Kernel error received: set type not supported";
	case IPSET_ERR_BUSY:
		return "Set is busy";
	}
	if (code > 0 && code < IPSET_ERR_PRIVATE)
		return strerror(code);
	return "Kernel error received: unknown ipset error code";
}

int setserr_status(int code)
{
	if (code == ENOENT)
		return -ENOENT;
	if (code == IPSET_ERR_HASH_FULL)
		return -ENOSPC;
	return -EIO;
}

void setserr_note(struct setserr_log *l, const char *set,
		  const struct netaddr *addr, int code)
{
	static const enum stat_id stat[SETSERR_CAUSES] = {
	    [FAIL_NOSET] = STAT_ADD_FAIL_NOSET,
	    [FAIL_FULL] = STAT_ADD_FAIL_FULL,
	    [FAIL_OTHER] = STAT_ADD_FAIL_OTHER,
	};
	int st = setserr_status(code);
	enum cause c = st == -ENOENT   ? FAIL_NOSET
		       : st == -ENOSPC ? FAIL_FULL
				       : FAIL_OTHER;
	struct setserr_count *f = &l->cause[c];
	struct log_field fl[6];
	char text[NETADDR_STRLEN];
	size_t n = 0;

	stats_inc(stat[c]);
	f->count++;
	/* Once per cause until adds to that set succeed again. */
	if (f->logged != 0 || l->quiet)
		return;
	f->logged = f->count;
	if (!log_limited_take(LOG_CLASS_SETS, LOGL_ERR, SYS))
		return;
	fl[n++] = log_str("event", "set_add_failed");
	fl[n++] = log_str("set", set);
	if (addr != NULL) {
		netaddr_format(addr, text, sizeof(text));
		fl[n++] = log_str("addr", text);
	}
	fl[n++] = log_str("error", setserr_strerror(code));
	fl[n++] = log_num("code", code);
	fl[n++] = log_num("count", (int64_t)f->count);
	log_fields(fl, n);
	log_err(SYS,
		"add to set %s failed: %s (error %d; %llu so far, clients get "
		"SERVFAIL)",
		set, setserr_strerror(code), code,
		(unsigned long long)f->count);
}

void setserr_ok(struct setserr_log *l, const char *set)
{
	int c;

	for (c = 0; c < SETSERR_CAUSES; c++) {
		struct setserr_count *f = &l->cause[c];

		if (f->logged == 0)
			continue;
		log_limited(LOG_CLASS_SETS, LOGL_INFO, SYS,
			    "adds to set %s succeed again after %llu "
			    "failures (%s)",
			    set, (unsigned long long)(f->count - f->logged + 1),
			    c == FAIL_NOSET  ? "set missing"
			    : c == FAIL_FULL ? "set full"
					     : "other");
		f->logged = 0;
	}
}
