/* SPDX-License-Identifier: GPL-2.0-or-later */
/* attrib: "why was this blocked?" Each packet the fence's NFLOG rules
 * copy to the daemon is explained (reason, name, uid), deduplicated per
 * (destination, reason) and logged as one line per blocked flow. */
#ifndef DNSFENCE_ATTRIB_H
#define DNSFENCE_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "observe/nflog.h"
#include "observe/recent.h"

enum attrib_reason {
	ATTRIB_NEVER = 0, /* address was never answered by dnsfence */
	ATTRIB_EXPIRED,	  /* answered, but its set entry has expired */
	ATTRIB_PORT,	  /* address allowed, port not in `ports` */
	ATTRIB_DNS,	  /* DNS to another resolver */
	ATTRIB_NOTSET,	  /* answered, entry should live, not in the set */
	ATTRIB_PROTO,	  /* neither TCP nor UDP */
	ATTRIB_SOURCE,	  /* forward scope: a source not of the interface's */
	ATTRIB_NAME,	  /* the name check refused the flow's first bytes */
	ATTRIB_ANSWERER,  /* a socket here answered the daemon's upstream */
	ATTRIB_CLIENT,	  /* forward, "bind": "client": answered to another */
	ATTRIB__COUNT
};

/* Dedup window and table, and the log budget (lines per window). */
#define ATTRIB_DEDUP_MS	    60000
#define ATTRIB_DEDUP_SLOTS  1024
#define ATTRIB_BUDGET_MS    10000
#define ATTRIB_BUDGET_LINES 20
#define ATTRIB_TEXT_MAX	    (RECENT_NAME_MAX + 160)

struct attrib;

/* Short stable name of a reason ("never_answered", "expired", "port",
 * "dns", "not_in_set", "protocol"): metric labels and suggest.json. Here,
 * not in attrib.c, so that learn reads suggest.json's reasons back
 * without linking the attribution (compare the text, not the pointer). */
static inline const char *attrib_reason_name(enum attrib_reason r)
{
	static const char *const names[ATTRIB__COUNT] = {
	    [ATTRIB_NEVER] = "never_answered",
	    [ATTRIB_EXPIRED] = "expired",
	    [ATTRIB_PORT] = "port",
	    [ATTRIB_DNS] = "dns",
	    [ATTRIB_NOTSET] = "not_in_set",
	    [ATTRIB_PROTO] = "protocol",
	    [ATTRIB_SOURCE] = "source",
	    [ATTRIB_NAME] = "name",
	    [ATTRIB_ANSWERER] = "answerer",
	    [ATTRIB_CLIENT] = "other_client",
	};

	return (unsigned)r < ATTRIB__COUNT ? names[r] : "unknown";
}
/* Explain one packet (pure): known is the recent memory's entry for its
 * destination, NULL when unknown; now_ms is monotime_ms()'s clock and
 * wall_now the matching real time (times print as HH:MM:SS UTC). The
 * explanation goes to text, without the "blocked"/"would block" head. */
enum attrib_reason attrib_explain(const struct config *cfg,
				  const struct nflog_pkt *pkt,
				  const struct recent_info *known,
				  uint64_t now_ms, int64_t wall_now, char *text,
				  size_t cap);

/* cfg must outlive it, or be replaced by attrib_set_config (a reload);
 * the recent memory is recent_global(). */
struct attrib *attrib_new(const struct config *cfg);
void attrib_set_config(struct attrib *a, const struct config *cfg);
void attrib_free(struct attrib *a);
/* Flows sent by uid are neither logged, counted nor learned until
 * until_ms (monotonic): the readiness gate's prober, whose refusals are
 * the expected ones and would otherwise take the dedup slots a
 * workload's first flows need. */
void attrib_quiet(struct attrib *a, uid_t uid, uint64_t until_ms);
/* The nflog_pkt_fn: explain, count, dedup, log, and tell learn.c. */
void attrib_packet(void *arg, const struct nflog_pkt *pkt);
/* A forwarded packet (no socket) is also counted by the interface it came
 * in on: the first ATTRIB_IFACES names seen, then "other". fn gets each
 * interface and reason counted so far, n > 0 (the metrics' labels). */
#define ATTRIB_IFACES 32
typedef void (*attrib_iface_fn)(void *arg, const char *ifname,
				const char *reason, uint64_t n);
void attrib_each_interface(const struct attrib *a, attrib_iface_fn fn,
			   void *arg);
/* A flow the name check refused (audit: would refuse) with the reason in
 * text ("TLS server name evil.test is not allowed"), reason its short
 * name ("not_allowed") and name the name read (NULL: none), as the
 * event namecheck_refused: one line within the
 * same budget as the packets above (no dedup: each refused flow is one
 * decision, not a stream of packets). a NULL: logged unbudgeted. */
void attrib_flow(struct attrib *a, const struct nflog_pkt *pkt, bool audit,
		 const char *reason, const char *name, const char *text);

/* `dnsfence why ADDR[:PORT]`: lines on f saying which name answered ADDR
 * and when (rc, may be NULL), why a TCP flow to PORT is refused and what
 * change to the config would let it through. -EINVAL for an operand
 * that is not "ADDR", "ADDR:PORT", "[V6]:PORT". */
int attrib_why(const struct config *cfg, const struct recent *rc,
	       const char *arg, FILE *f);

#endif
