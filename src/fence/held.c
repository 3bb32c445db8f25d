// SPDX-License-Identifier: GPL-2.0-or-later
/* held: replaced upstreams' origin lines kept past their drain (see
 * held.h). The file, one endpoint a line, its hold's end in monotonic
 * seconds of the boot that wrote it:
 *   dnsfence-held 1
 *   boot 5f0c...-...
 *   H 198.18.0.1:5300 123456
 *   end
 * A file of another boot is refused: the rules did not survive the
 * reboot, nor did the late answers' entries. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "base/statefs.h"
#include "fence/firewall.h"
#include "fence/fwexec.h"
#include "fence/fwrules.h"
#include "fence/held.h"

#define MAGIC	     "dnsfence-held"
#define HELD_VERSION 1
#define TMP_SUFFIX   ".tmp"
#define FILE_MAX     (64 * 1024)

struct scan {
	struct config *cfg;
	int family;
	uint64_t until;
	size_t added;
	char *list;
	size_t len;
	int rc;
};

static bool named(const struct config_endpoint *v, size_t n,
		  const struct config_endpoint *e);
static bool fenced(const struct config *cfg, const struct config_endpoint *e);
static void append(char *list, size_t len, const struct config_endpoint *e);
static int parse_line(struct config *cfg, const char *line, uint64_t now);
static int scan_line(void *arg, const char *line);

static bool named(const struct config_endpoint *v, size_t n,
		  const struct config_endpoint *e)
{
	for (size_t i = 0; i < n; i++) {
		if (netaddr_endpoint_equal(&v[i], e))
			return true;
	}
	return false;
}

/* Rendered anyway, as an upstream's or a draining one's lines. */
static bool fenced(const struct config *cfg, const struct config_endpoint *e)
{
	return named(cfg->upstreams, cfg->n_upstreams, e) ||
	       named(cfg->retired, cfg->n_retired, e);
}

static void append(char *list, size_t len, const struct config_endpoint *e)
{
	char s[NETADDR_ENDPOINT_STRLEN];
	size_t used;

	if (list == NULL || len == 0)
		return;
	used = strlen(list);
	netaddr_format_endpoint((const struct sockaddr *)&e->sa, s, sizeof(s));
	snprintf(list + used, len - used, "%s%s", used ? " " : "", s);
}

int held_add(struct config *cfg, const struct config_endpoint *e,
	     uint64_t until)
{
	struct config_held *v;
	size_t first = 0;
	uint64_t now;

	if (fenced(cfg, e))
		return 0;
	for (size_t i = 0; i < cfg->n_held; i++) {
		if (!netaddr_endpoint_equal(&cfg->held[i].e, e))
			continue;
		if (cfg->held[i].until >= until)
			return 0;
		cfg->held[i].until = until;
		return 1;
	}
	if (cfg->n_held == HELD_MAX) {
		char s[NETADDR_ENDPOINT_STRLEN];

		for (size_t i = 1; i < cfg->n_held; i++) {
			if (cfg->held[i].until < cfg->held[first].until)
				first = i;
		}
		netaddr_format_endpoint(
		    (const struct sockaddr *)&cfg->held[first].e.sa, s,
		    sizeof(s));
		now = monotime_s();
		log_warn("firewall",
			 "more than %d replaced upstreams held: the hold of "
			 "%s ends now, %llu s early, for a newer one",
			 HELD_MAX, s,
			 (unsigned long long)(cfg->held[first].until > now
						  ? cfg->held[first].until - now
						  : 0));
		cfg->held[first] = (struct config_held){*e, until};
		return 1;
	}
	v = realloc(cfg->held, (cfg->n_held + 1) * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	cfg->held = v;
	cfg->held[cfg->n_held++] = (struct config_held){*e, until};
	return 1;
}

size_t held_expire(struct config *cfg, uint64_t now, char *list, size_t len)
{
	size_t kept = 0, gone = 0;

	if (list != NULL && len > 0)
		list[0] = '\0';
	for (size_t i = 0; i < cfg->n_held; i++) {
		if (cfg->held[i].until > now) {
			cfg->held[kept++] = cfg->held[i];
			continue;
		}
		append(list, len, &cfg->held[i].e);
		gone++;
	}
	cfg->n_held = kept;
	return gone;
}

uint64_t held_next(const struct config *cfg)
{
	uint64_t next = 0;

	for (size_t i = 0; i < cfg->n_held; i++) {
		if (next == 0 || cfg->held[i].until < next)
			next = cfg->held[i].until;
	}
	return next;
}

int held_inherit(const struct config *old, struct config *cfg)
{
	for (size_t i = 0; i < old->n_held; i++) {
		if (held_add(cfg, &old->held[i].e, old->held[i].until) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* "H ENDPOINT UNTIL"; an ended hold is skipped. */
static int parse_line(struct config *cfg, const char *line, uint64_t now)
{
	char ep[NETADDR_ENDPOINT_STRLEN + 1];
	unsigned long long until;
	struct config_endpoint e = {0};
	const char *why = NULL;
	int used = 0;

	if (sscanf(line, "H %56s %llu%n", ep, &until, &used) != 2 ||
	    line[used] != '\0' ||
	    netaddr_parse_endpoint(ep, true, 0, &e.sa, &e.len, &why) != 0)
		return -EINVAL;
	if (until <= now)
		return 0;
	if (until > now + HELD_SECONDS)
		until = now + HELD_SECONDS;
	return held_add(cfg, &e, until) < 0 ? -ENOMEM : 0;
}

int held_parse(struct config *cfg, const char *text, size_t len,
	       const char *boot, uint64_t now, char *err, size_t errlen)
{
	char line[160];
	size_t lineno = 0, at = 0;
	bool ended = false;
	int rc = 0;

	cfg->n_held = 0;
	while (at < len && rc == 0) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;

		lineno++;
		if (n >= sizeof(line) || memchr(text + at, '\0', n) != NULL) {
			rc = -EINVAL;
			break;
		}
		memcpy(line, text + at, n);
		line[n] = '\0';
		at += n + (nl != NULL);
		if (lineno == 1)
			rc = strcmp(line, MAGIC " 1") == 0 ? 0 : -EINVAL;
		else if (lineno == 2)
			rc = boot[0] != '\0' &&
				     strncmp(line, "boot ", 5) == 0 &&
				     strcmp(line + 5, boot) == 0
				 ? 0
				 : -ESTALE;
		else if (ended)
			rc = -EINVAL;
		else if (strcmp(line, "end") == 0)
			ended = true;
		else
			rc = parse_line(cfg, line, now);
	}
	if (rc == 0 && !ended) {
		rc = -EINVAL;
		lineno++;
	}
	if (rc != 0) {
		cfg->n_held = 0;
		snprintf(err, errlen, "line %zu: %s", lineno,
			 rc == -ESTALE	 ? "written in another boot"
			 : rc == -ENOMEM ? "out of memory"
					 : "not a held-upstreams file of "
					   "this version");
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	return 0;
}

int held_load(struct config *cfg, uid_t uid, uint64_t now, char *err,
	      size_t errlen)
{
	char path[4096], boot[MONOTIME_BOOT_LEN + 1], why[256], *text;
	ssize_t n;
	int dfd, fd, rc;

	snprintf(path, sizeof(path), "%s/%s", cfg->state_dir, HELD_FILE);
	dfd = statefs_open_dir(cfg->state_dir, uid, err, errlen);
	if (dfd < 0)
		return dfd == -ENOENT ? 0 : dfd;
	fd =
	    statefs_open_file(dfd, cfg->state_dir, HELD_FILE, uid, err, errlen);
	close(dfd);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	text = malloc(FILE_MAX + 1);
	if (text == NULL) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	n = read(fd, text, FILE_MAX + 1);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (n < 0 || n > FILE_MAX) {
		snprintf(err, errlen, "%s: %s", path,
			 n < 0 ? strerror(-rc) : "larger than 64 KiB");
		free(text);
		return n < 0 ? rc : -EFBIG;
	}
	monotime_boot_id(boot);
	rc = held_parse(cfg, text, (size_t)n, boot, now, why, sizeof(why));
	free(text);
	if (rc != 0)
		snprintf(err, errlen, "%s: %s", path, why);
	return rc;
}

int held_save(const struct config *cfg, int dirfd, uid_t uid, gid_t gid,
	      char *err, size_t errlen)
{
	char path[4096], boot[MONOTIME_BOOT_LEN + 1];
	int dfd = dirfd, fd, rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cfg->state_dir, HELD_FILE);
	if (dfd < 0 &&
	    (dfd = statefs_open_dir(cfg->state_dir, uid, err, errlen)) < 0) {
		rc = dfd;
		return rc == -ENOENT && cfg->n_held == 0 ? 0 : rc;
	}
	if (cfg->n_held == 0) {
		if (unlinkat(dfd, HELD_FILE, 0) != 0 && errno != ENOENT) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		}
		goto out;
	}
	fd = statefs_create(dfd, HELD_FILE TMP_SUFFIX, 0640);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		rc = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s%s: %s", path, TMP_SUFFIX,
			 strerror(-rc));
		goto out;
	}
	if (geteuid() == 0 && fchown(fd, uid, gid) != 0)
		rc = -errno;
	monotime_boot_id(boot);
	fprintf(f, "%s %d\nboot %s\n", MAGIC, HELD_VERSION, boot);
	for (size_t i = 0; i < cfg->n_held; i++) {
		char s[NETADDR_ENDPOINT_STRLEN];

		netaddr_format_endpoint(
		    (const struct sockaddr *)&cfg->held[i].e.sa, s, sizeof(s));
		fprintf(f, "H %s %llu\n", s,
			(unsigned long long)cfg->held[i].until);
	}
	fputs("end\n", f);
	if (rc == 0 && (fflush(f) != 0 || fsync(fd) != 0))
		rc = -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dfd, HELD_FILE TMP_SUFFIX, dfd, HELD_FILE) != 0)
		rc = -errno;
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		(void)unlinkat(dfd, HELD_FILE TMP_SUFFIX, 0);
	}
out:
	if (dfd != dirfd)
		close(dfd);
	return rc;
}

static int scan_line(void *arg, const char *line)
{
	struct scan *sc = arg;
	struct config_endpoint e = {0};
	int r;

	if (!fw_rules_origin_of(line, &e) ||
	    e.sa.ss_family != (sa_family_t)sc->family)
		return 0;
	for (size_t i = 0; i < sc->cfg->n_held; i++) {
		if (netaddr_endpoint_equal(&sc->cfg->held[i].e, &e))
			return 0; /* its hold as the file says */
	}
	r = held_add(sc->cfg, &e, sc->until);
	if (r < 0)
		return r;
	if (r > 0) {
		sc->added++;
		append(sc->list, sc->len, &e);
	}
	return 0;
}

int held_from_rules(struct config *cfg, uint64_t now, size_t *added, char *list,
		    size_t len, char *err, size_t errlen)
{
	static const int families[] = {AF_INET, AF_INET6};
	struct scan sc = {cfg, 0, now + HELD_SECONDS, 0, list, len, 0};
	enum fwexec_backend b;
	int r;

	*added = 0;
	if (list != NULL && len > 0)
		list[0] = '\0';
	r = fwexec_backend(&b, err, errlen);
	if (r)
		return r;
	for (size_t i = 0; i < 2; i++) {
		sc.family = families[i];
		r = fw_saved_read(b, families[i], scan_line, &sc, err, errlen);
		if (r == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		if (r)
			return r;
	}
	*added = sc.added;
	return 0;
}
