// SPDX-License-Identifier: GPL-2.0-or-later
/* provenance: the policy fingerprint, and flushing the sets when the
 * policy that filled them is not the one being installed.
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

#include "dnsfence/firewall.h"
#include "dnsfence/fwforward.h"
#include "dnsfence/hash.h"
#include "dnsfence/log.h"
#include "dnsfence/netaddr.h"
#include "dnsfence/provenance.h"
#include "dnsfence/setsadm.h"

#define SYS "policy"

static int cmp_str(const void *a, const void *b);
static void fnv(uint64_t *h, const char *s);
static int hash_sorted(uint64_t *h, const char *tag, char **v, size_t n);
static int hash_cidrs(uint64_t *h, const struct config *cfg);
static int hash_upstreams(uint64_t *h, const struct config *cfg);

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

static int hash_cidrs(uint64_t *h, const struct config *cfg)
{
	size_t n = cfg->n_allow_cidrs;
	char **v = n ? calloc(n, sizeof(*v)) : NULL;
	int ret = 0;

	if (n && !v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = malloc(NETADDR_STRLEN + 8);
		if (!v[i]) {
			ret = -ENOMEM;
			goto out;
		}
		netaddr_format_cidr(&cfg->allow_cidrs[i], v[i],
				    NETADDR_STRLEN + 8);
	}
	ret = hash_sorted(h, "allow_cidrs", v, n);
out:
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	return ret;
}

/* Addresses only: the port does not change what may enter a set. */
static int hash_upstreams(uint64_t *h, const struct config *cfg)
{
	size_t n = cfg->n_upstreams;
	char **v = n ? calloc(n, sizeof(*v)) : NULL;
	struct netaddr a;
	int ret = 0;

	if (n && !v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = calloc(1, NETADDR_STRLEN);
		if (!v[i]) {
			ret = -ENOMEM;
			goto out;
		}
		if (netaddr_from_sockaddr(
			(const struct sockaddr *)&cfg->upstreams[i].sa, &a))
			netaddr_format(&a, v[i], NETADDR_STRLEN);
	}
	ret = hash_sorted(h, "upstreams", v, n);
out:
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	return ret;
}

int provenance_fingerprint(const struct config *cfg,
			   char hex[PROVENANCE_HEXLEN])
{
	uint64_t h = HASH_FNV64_BASIS;
	int ret;

	fnv(&h, "dnsfence " DNSFENCE_VERSION);
	fnv(&h, config_mode_name(cfg->mode));
	ret = hash_sorted(&h, "allow", cfg->allow, cfg->n_allow);
	if (!ret)
		ret = hash_sorted(&h, "ecosystems", cfg->ecosystems,
				  cfg->n_ecosystems);
	if (!ret)
		ret = hash_cidrs(&h, cfg);
	if (!ret)
		ret = hash_upstreams(&h, cfg);
	if (!ret)
		snprintf(hex, PROVENANCE_HEXLEN, "%016llx",
			 (unsigned long long)h);
	return ret;
}

int provenance_reconcile(const struct config *cfg, char *err, size_t errlen)
{
	char want[PROVENANCE_HEXLEN], have[PROVENANCE_HEXLEN];
	int ret = provenance_fingerprint(cfg, want);

	if (ret) {
		snprintf(err, errlen, "policy fingerprint: %s", strerror(-ret));
		return ret;
	}
	ret = cfg->scope == CONFIG_SCOPE_FORWARD
		  ? fwfwd_stored_policy(have, sizeof(have), err, errlen)
		  : fw_stored_policy(have, sizeof(have), err, errlen);
	if (ret)
		return ret;
	if (strcmp(have, want) == 0) {
		log_info(SYS, "policy %s unchanged: set entries kept", want);
		return 0;
	}
	ret = setsadm_flush(cfg->set4, cfg->set6, err, errlen);
	if (ret)
		return ret;
	if (have[0])
		log_warn(SYS,
			 "policy %s replaces %s: sets %s and %s flushed, so "
			 "no entry of the old policy stays reachable",
			 want, have, cfg->set4, cfg->set6);
	else
		log_info(SYS,
			 "policy %s: no policy recorded with the rules, sets "
			 "%s and %s flushed",
			 want, cfg->set4, cfg->set6);
	return 0;
}
