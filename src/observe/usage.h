/* SPDX-License-Identifier: GPL-2.0-or-later */
/* usage: how much each allow entry (and each ecosystem preset host) is
 * used, and each allowed name asked, kept in state_dir/usage.json across
 * restarts and reloads (`dnsfence prune`, in suggest.c, and `dnsfence
 * report`, in report.c, read it). */
#ifndef DNSFENCE_USAGE_H
#define DNSFENCE_USAGE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config/config.h"

#define USAGE_FILE	    "usage.json"
#define USAGE_MAX	    8192 /* entries remembered, current and past */
#define USAGE_WRITE_SECONDS 5
#define USAGE_NAMES_MAX	    2048 /* allowed names remembered */
#define USAGE_NAME_ADDRS    4	 /* addresses kept per name, the last ones */

struct event_base;
struct policy;
struct usage;
struct cJSON;
struct dns_addr;

/* Read dir's usage.json (through dirfd, which the table then owns; a
 * file statefs_open_file refuses for a daemon running as uid is said and
 * replaced) and write it back every USAGE_WRITE_SECONDS while something
 * changed, and at usage_free. NULL on ENOMEM (dirfd closed). */
struct usage *usage_new(struct event_base *base, int dirfd, const char *dir,
			uid_t uid);
void usage_free(struct usage *u);
int usage_write(struct usage *u);

/* The running policy's entries (cfg's allow, its ecosystems' hosts):
 * those not yet known start their "unused since" clock now. At start and
 * after each reload; pol is what names a flow's entry from then on. */
void usage_track(struct usage *u, const struct config *cfg,
		 const struct policy *pol);
/* A connection went out to an address answered for name: a flow on the
 * entry of the running policy (usage_track's) that admits name. */
void usage_flow(struct usage *u, const char *name);
struct usage_entry;
struct policy_hit;
/* An allowed question for lname (uncompressed wire format, lower case),
 * counted on the entry the policy matched it with, as hit says
 * (policy_match_hit, which the caller does once per query; NULL: no
 * entry matched, nothing is counted). Returns that entry, for
 * usage_answered (entries never move nor go while u lives), or NULL. A
 * question for the entry of the one before costs no lookup. */
struct usage_entry *usage_question(struct usage *u, const uint8_t *lname,
				   size_t len, const struct policy_hit *hit);
/* The name of a question e allowed (lname, wire format, lower case) is
 * asked: a lookup of that name, for the report (usage_question calls
 * it). */
void usage_name_asked(struct usage *u, const struct usage_entry *e,
		      const uint8_t *lname, size_t len);
/* The addresses (n_addrs of addrs) the answer to a question of e for
 * qname (wire format) put in the sets (e NULL: nothing): counted on e,
 * and kept among qname's addresses. */
void usage_answered(struct usage *u, struct usage_entry *e,
		    const uint8_t *qname, size_t len,
		    const struct dns_addr *addrs, size_t n_addrs);
/* {"ENTRY": {"questions": N, "addresses": N, "flows": N,
 * "last_used_ago_s": S or -1}, ...} for `status` (names: the control socket
 * only). */
struct cJSON *usage_status(const struct usage *u);
/* usage.json's text as it would be written now (malloc'd; NULL on
 * ENOMEM): the control socket's answer to `report`. */
char *usage_text(const struct usage *u);
/* Entries with questions, and without, for the metrics (counts only). */
void usage_counts(const struct usage *u, size_t *used, size_t *unused);

#endif
