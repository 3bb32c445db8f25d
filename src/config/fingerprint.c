// SPDX-License-Identifier: GPL-2.0-or-later
/* fingerprint: the policy fingerprint, a pure function of the config
 * (provenance_fingerprint: the prefix is historical). Flushing the sets
 * when the policy that filled them is not the one being installed is
 * fence/provenance.c.
 *
 * A set entry does not say which name put it there, so the question "is
 * every entry still allowed" cannot be answered per entry. Instead the
 * rules carry the fingerprint of the policy they were installed for (a
 * comment on the last rule of our chain, see fwrules.c): whoever fills
 * the sets runs behind those rules, so the fingerprint in the kernel
 * names the policy of the entries. Setup compares it with the config's
 * and flushes both sets when they differ (or when no rules are there to
 * say), and `check` sees another fingerprint as a rule that differs.
 *
 * The fingerprint is FNV-1a 64 over a canonical text: each list sorted,
 * so reordering or repeating the same names is the same policy. It
 * detects change, nothing more: it is no secret and needs no
 * collision resistance against an attacker, who cannot write the config. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/netaddr.h"
#include "config/fingerprint.h"

#define ADDR_TEXT (NETADDR_STRLEN + 8) /* an address and its "/len" */

/* Write entry i of one of cfg's address lists as text into buf. */
typedef void (*format_fn)(const struct config *cfg, size_t i, char *buf,
			  size_t len);

static int cmp_str(const void *a, const void *b);
static void fnv(uint64_t *h, const char *s);
static int hash_sorted(uint64_t *h, const char *tag, char **v, size_t n);
static int hash_formatted(uint64_t *h, const char *tag,
			  const struct config *cfg, size_t n, format_fn format);
static void format_cidr(const struct config *cfg, size_t i, char *buf,
			size_t len);
static void format_upstream(const struct config *cfg, size_t i, char *buf,
			    size_t len);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each string ends with a NUL byte in the hash, so "ab","c" != "a","bc". */
static void fnv(uint64_t *h, const char *s)
{
	*h = hash_fnv1a64(*h, s, strlen(s) + 1);
}

static int hash_sorted(uint64_t *h, const char *tag, char **v, size_t n)
{
	char **copy;

	fnv(h, tag);
	if (n == 0)
		return 0;
	copy = calloc(n, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, v, n * sizeof(*copy));
	qsort(copy, n, sizeof(*copy), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || strcmp(copy[i], copy[i - 1]) != 0)
			fnv(h, copy[i]);
	}
	free(copy);
	return 0;
}

/* tag and the n texts format(cfg, i, ...) writes, as hash_sorted hashes
 * them. 0 or -ENOMEM. */
static int hash_formatted(uint64_t *h, const char *tag,
			  const struct config *cfg, size_t n, format_fn format)
{
	char(*text)[ADDR_TEXT] = n ? calloc(n, sizeof(*text)) : NULL;
	char **v = n ? calloc(n, sizeof(*v)) : NULL;
	int ret = -ENOMEM;

	if (n && (!text || !v))
		goto out;
	for (size_t i = 0; i < n; i++) {
		v[i] = text[i];
		format(cfg, i, text[i], sizeof(text[i]));
	}
	ret = hash_sorted(h, tag, v, n);
out:
	free(text);
	free(v);
	return ret;
}

static void format_cidr(const struct config *cfg, size_t i, char *buf,
			size_t len)
{
	netaddr_format_cidr(&cfg->allow_cidrs[i], buf, len);
}

/* Addresses only: the port does not change what may enter a set. */
static void format_upstream(const struct config *cfg, size_t i, char *buf,
			    size_t len)
{
	struct netaddr a;

	if (netaddr_from_sockaddr(
		(const struct sockaddr *)&cfg->upstreams[i].sa, &a))
		netaddr_format(&a, buf, len);
}

int provenance_fingerprint(const struct config *cfg,
			   char hex[PROVENANCE_HEXLEN])
{
	uint64_t h = HASH_FNV64_BASIS;
	int ret;

	_Static_assert(sizeof(cfg->policy_fp) == PROVENANCE_HEXLEN,
		       "policy_fp holds one fingerprint");
	if (cfg->policy_fp[0] != '\0') {
		memcpy(hex, cfg->policy_fp, PROVENANCE_HEXLEN);
		return 0;
	}
	fnv(&h, "dnsfence " DNSFENCE_VERSION);
	fnv(&h, config_mode_name(cfg->mode));
	ret = hash_sorted(&h, "allow", cfg->allow, cfg->n_allow);
	if (!ret)
		ret = hash_sorted(&h, "ecosystems", cfg->ecosystems,
				  cfg->n_ecosystems);
	if (!ret)
		ret = hash_formatted(&h, "allow_cidrs", cfg, cfg->n_allow_cidrs,
				     format_cidr);
	if (!ret)
		ret = hash_formatted(&h, "upstreams", cfg, cfg->n_upstreams,
				     format_upstream);
	if (!ret)
		snprintf(hex, PROVENANCE_HEXLEN, "%016llx",
			 (unsigned long long)h);
	return ret;
}

int provenance_memoize(struct config *cfg)
{
	char hex[PROVENANCE_HEXLEN];
	int ret = provenance_fingerprint(cfg, hex);

	if (ret == 0)
		memcpy(cfg->policy_fp, hex, PROVENANCE_HEXLEN);
	return ret;
}

int provenance_shed_allow(struct config *cfg)
{
	int ret = provenance_memoize(cfg);

	if (ret != 0)
		return ret;
	for (size_t i = 0; i < cfg->n_allow; i++)
		free(cfg->allow[i]);
	free(cfg->allow);
	cfg->allow = NULL;
	cfg->n_allow = 0;
	return 0;
}
