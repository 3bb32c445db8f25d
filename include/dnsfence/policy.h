/* SPDX-License-Identifier: GPL-2.0-or-later */
/* policy: the compiled allowlist and the ecosystem presets. */
#ifndef DNSFENCE_POLICY_H
#define DNSFENCE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct policy;

struct policy *policy_new(void);
void policy_free(struct policy *p);

/* Is this a valid allow entry: "example.com" or "*.example.com",
 * LDH-style labels of 1..63 bytes, 253 bytes at most, one trailing dot
 * allowed. On false, *why says what is wrong. */
bool policy_pattern_valid(const char *pattern, const char **why);
/* Add one entry. 0, or -EINVAL with *why set. */
int policy_add(struct policy *p, const char *pattern, const char **why);
/* Add every host of a preset. 0 or -ENOENT for an unknown preset. */
int policy_add_preset(struct policy *p, const char *preset);

bool policy_preset_exists(const char *name);
/* NULL-terminated lists; NULL for an unknown preset. */
const char *const *policy_preset_hosts(const char *name);
const char *const *policy_preset_names(void);

/* Does the policy allow this name? wire is an uncompressed wire-format
 * name (length-prefixed labels ending in the root label), any case. */
bool policy_match(const struct policy *p, const uint8_t *wire, size_t len);
/* The same for a dotted name ("Example.COM."); false if it is not a
 * valid name. */
bool policy_match_text(const struct policy *p, const char *name);
size_t policy_size(const struct policy *p);

#endif
