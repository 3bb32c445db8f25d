/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policy: the compiled allowlist and the ecosystem presets. */
#ifndef DNSFENCE_POLICY_H
#define DNSFENCE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpsl.h>

struct policy;

/* Names below POLICY_PROBE_DOMAIN are dnsfence's own probes (`probe`,
 * the self-test): denied like any other name, never learned for
 * `suggest`. POLICY_PROBE_NAME is what `dnsfence probe` asks by default;
 * serve leaves it unanswered until it is ready. */
#define POLICY_PROBE_DOMAIN "dnsfence.invalid"
#define POLICY_PROBE_NAME   "probe." POLICY_PROBE_DOMAIN

struct policy *policy_new(void);
void policy_free(struct policy *p);

/* Room for any reason policy_pattern_valid or policy_add gives. */
#define POLICY_WHY_MAX 48

/* Is this a valid allow entry: "example.com" or "*.example.com",
 * LDH-style labels of 1..63 bytes, 253 bytes at most, one trailing dot
 * allowed. Labels are letters, digits, '-' and '_'; '*' only as the whole
 * first label. On false, the reason is written to why (whylen bytes,
 * POLICY_WHY_MAX is enough); why may be NULL. */
bool policy_pattern_valid(const char *pattern, char *why, size_t whylen);
/* Add one entry (a duplicate is ignored). 0, or -EINVAL with *why set;
 * -ENOMEM or -ENOSPC if the list cannot grow. *why points to static text
 * or into p, valid until the next policy_add on p or policy_free(p). */
int policy_add(struct policy *p, const char *pattern, const char **why);
/* Add every host of a preset. 0 or -ENOENT for an unknown preset. */
int policy_add_preset(struct policy *p, const char *preset);

/* The parent P of name (lower case, no trailing dot) when "*.P" is a
 * sound entry for it: P is a registrable domain or below one (Public
 * Suffix List), never "co.uk" or "github.io". NULL otherwise. Points
 * into name. */
const char *policy_wildcard_parent(const char *name);
/* lead, then the entries that would admit name, as an EDE text and
 * `why` say it: `LEADadd "api.example.com" or "*.example.com"` (just the
 * name when no wildcard is sound). */
void policy_admitting(const char *lead, const char *name, char *buf,
		      size_t cap);

bool policy_preset_exists(const char *name);
/* NULL-terminated lists of static strings; NULL for an unknown preset.
 * Preset names are lower case and compared exactly. */
const char *const *policy_preset_hosts(const char *name);
const char *const *policy_preset_names(void);

/* Does the policy allow this name? wire is an uncompressed wire-format
 * name (length-prefixed labels ending in the root label), any case; len
 * bounds the buffer, and bytes after the root label are ignored. A
 * compression pointer, a name without its root label within len, a name
 * over 255 bytes, and the root name itself all give false. Allocates
 * nothing; safe to call from several threads on a policy no longer
 * being added to. */
bool policy_match(const struct policy *p, const uint8_t *wire, size_t len);
/* How policy_match_hit matched: depth 0 for an exact entry; else the
 * nearest wildcard entry, whose suffix starts at byte suffix_off of the
 * name, depth labels below it, the longest of them label_max bytes. */
struct policy_hit {
	size_t depth, suffix_off;
	uint8_t label_max;
};
/* policy_match, and how (hit may be NULL). */
bool policy_match_hit(const struct policy *p, const uint8_t *wire, size_t len,
		      struct policy_hit *hit);
/* The same for a dotted name ("Example.COM."); false if it is not a
 * valid name. */
bool policy_match_text(const struct policy *p, const char *name);
/* As policy_match, and the entry that matched, as written in `allow`
 * (lower case): "api.example.com" (exact wins) or "*.example.com" (the
 * longest wildcard). out of at least 3 bytes; false: no entry. */
bool policy_entry(const struct policy *p, const uint8_t *wire, size_t len,
		  char *out, size_t cap);
/* The same text from a match already made (hit from policy_match_hit for
 * wire); out of at least 3 bytes. */
void policy_entry_text(const uint8_t *wire, size_t len,
		       const struct policy_hit *hit, char *out, size_t cap);
/* The Public Suffix List (libpsl's psl_latest: the newer of its built-in
 * copy and the system's), loaded once; NULL when neither exists. */
const psl_ctx_t *policy_psl(void);
/* Is the parent of this wildcard entry ("*.co.uk": "co.uk") a public
 * suffix, so that the entry allows every domain registered under it?
 * false for an exact entry, or without a list. */
bool policy_wildcard_on_public_suffix(const char *pattern);
/* Does the entry (an allow pattern, lower case) match the dotted name?
 * Exact entries match the name (any case, one trailing dot ignored);
 * "*.parent" every name below parent. For `dnsfence allowed`: a linear
 * walk over the entries is fine there, never on the query path. */
bool policy_entry_matches(const char *pattern, const char *name);

/* Number of distinct entries (exact and wildcard). */
size_t policy_size(const struct policy *p);

#endif
