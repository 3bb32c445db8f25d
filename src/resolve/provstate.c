// SPDX-License-Identifier: GPL-2.0-or-later
/* provstate: the provenance map in a file (see provstate.h).
 *
 * The daemon loads the file at start and removes it at once, and writes
 * it again on its way out: a daemon that crashed leaves no file, so the
 * next setup after a policy change cannot trust stale names and flushes
 * (fail closed), while a clean restart keeps every entry a name still
 * allowed brought in. Expiry times are CLOCK_MONOTONIC seconds, which
 * hold only within one boot: the file names the boot id, and another
 * boot's file is refused (the sets did not survive the reboot anyway).
 *
 * Format, one record a line:
 *   dnsfence-prov 1
 *   policy 0123456789abcdef
 *   boot 5f0c...-...
 *   L ADDRESS EXPIRES NAME-HEX     (one per link; NAME-HEX: the wire name)
 *   end
 * "end" proves the file is whole; anything else is refused, whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "base/statefs.h"
#include "resolve/provstate.h"

#define MAGIC	     "dnsfence-prov"
#define TMP_SUFFIX   ".tmp"
#define BOOT_LEN     MONOTIME_BOOT_LEN
#define WIRE_MAX     255
#define LINE_MAX_LEN (2 + NETADDR_STRLEN + 1 + 20 + 1 + 2 * WIRE_MAX + 2)

struct writer {
	FILE *f;
	uint64_t now;
};

static void write_link(void *arg, const uint8_t *name, size_t len,
		       const struct netaddr *a, uint64_t left_s);
static int parse_link(struct prov *p, const char *line, uint64_t now);
static int hexval(char c);
static int read_all(int fd, char **text, size_t *len);
static int check_header(size_t lineno, const char *line, const char *policy,
			const char *boot, char *err, size_t errlen);

static void write_link(void *arg, const uint8_t *name, size_t len,
		       const struct netaddr *a, uint64_t left_s)
{
	struct writer *w = arg;
	char addr[NETADDR_STRLEN];

	netaddr_format(a, addr, sizeof(addr));
	fprintf(w->f, "L %s %llu ", addr,
		(unsigned long long)(w->now + left_s));
	for (size_t i = 0; i < len; i++)
		fprintf(w->f, "%02x", name[i]);
	fputc('\n', w->f);
}

int provstate_save(const struct prov *p, int dirfd, const char *dir,
		   const char *policy, uid_t uid, gid_t gid, char *err,
		   size_t errlen)
{
	char path[4096], tmp[4096 + sizeof(TMP_SUFFIX)], boot[BOOT_LEN + 1];
	struct writer w = {NULL, monotime_s()};
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, PROVSTATE_FILE);
	snprintf(tmp, sizeof(tmp), "%s%s", path, TMP_SUFFIX);
	monotime_boot_id(boot);
	fd = statefs_create(dirfd, PROVSTATE_FILE TMP_SUFFIX, 0640);
	if (fd < 0 || (w.f = fdopen(fd, "w")) == NULL) {
		rc = fd < 0 ? fd : -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s: %s", tmp, strerror(-rc));
		return rc;
	}
	if (geteuid() == 0 && fchown(fd, uid, gid) != 0)
		rc = -errno;
	fprintf(w.f, "%s %d\npolicy %s\nboot %s\n", MAGIC, PROVSTATE_VERSION,
		policy, boot);
	prov_walk(p, write_link, &w, w.now);
	fputs("end\n", w.f);
	if (rc == 0 && (fflush(w.f) != 0 || fsync(fd) != 0))
		rc = -errno;
	if (fclose(w.f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dirfd, PROVSTATE_FILE TMP_SUFFIX, dirfd,
				PROVSTATE_FILE) != 0)
		rc = -errno;
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		(void)unlinkat(dirfd, PROVSTATE_FILE TMP_SUFFIX, 0);
	}
	return rc;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "L ADDRESS EXPIRES HEX" into p; an expired link is skipped. */
static int parse_link(struct prov *p, const char *line, uint64_t now)
{
	char addr[NETADDR_STRLEN];
	uint8_t wire[WIRE_MAX];
	unsigned long long exp;
	struct netaddr a;
	const char *sp, *hex;
	char *end;
	size_t n = 0, alen;

	if (line[0] != 'L' || line[1] != ' ')
		return -EINVAL;
	line += 2;
	sp = strchr(line, ' ');
	alen = sp != NULL ? (size_t)(sp - line) : 0;
	if (alen == 0 || alen >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, line, alen);
	addr[alen] = '\0';
	if (netaddr_parse(addr, &a) != 0 || sp[1] < '0' || sp[1] > '9')
		return -EINVAL;
	errno = 0;
	exp = strtoull(sp + 1, &end, 10);
	if (errno != 0 || *end != ' ' || exp > UINT32_MAX)
		return -EINVAL;
	for (hex = end + 1; hex[0] != '\0'; hex += 2) {
		int hi = hexval(hex[0]), lo = hi < 0 ? -1 : hexval(hex[1]);

		if (lo < 0 || n == sizeof(wire))
			return -EINVAL;
		wire[n++] = (uint8_t)(hi << 4 | lo);
	}
	if (exp <= now)
		return 0;
	return prov_note(p, wire, n, &a, exp, now);
}

/* Header line lineno (1..3): the magic and version, the policy
 * fingerprint, the boot id. 0; -EINVAL malformed; -ESTALE another
 * policy or boot (err says which). */
static int check_header(size_t lineno, const char *line, const char *policy,
			const char *boot, char *err, size_t errlen)
{
	char head[64];

	if (lineno == 1) {
		snprintf(head, sizeof(head), "%s %d", MAGIC, PROVSTATE_VERSION);
		if (strcmp(line, head) == 0)
			return 0;
		snprintf(err, errlen, "not a version %d state file",
			 PROVSTATE_VERSION);
		return -EINVAL;
	}
	if (lineno == 2) {
		if (strncmp(line, "policy ", 7) != 0) {
			snprintf(err, errlen, "line 2: no policy");
			return -EINVAL;
		}
		if (strcmp(line + 7, policy) == 0)
			return 0;
		snprintf(err, errlen, "written for policy %.20s, not %s",
			 line + 7, policy);
		return -ESTALE;
	}
	if (strncmp(line, "boot ", 5) == 0 && boot[0] != '\0' &&
	    strcmp(line + 5, boot) == 0)
		return 0;
	snprintf(err, errlen, "written before the last boot");
	return -ESTALE;
}

int provstate_parse(struct prov *p, const char *text, size_t len,
		    const char *policy, const char *boot, uint64_t now,
		    char *err, size_t errlen)
{
	char line[LINE_MAX_LEN + 1];
	size_t off = 0, lineno = 0;
	bool ended = false;
	int rc;

	while (off < len && !ended) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl != NULL ? (size_t)(nl - (text + off)) : len - off;

		lineno++;
		if (nl == NULL || n > LINE_MAX_LEN ||
		    memchr(text + off, 0, n)) {
			snprintf(err, errlen, "line %zu: malformed", lineno);
			return -EINVAL;
		}
		memcpy(line, text + off, n);
		line[n] = '\0';
		off += n + 1;
		if (lineno <= 3) {
			if ((rc = check_header(lineno, line, policy, boot, err,
					       errlen)) != 0)
				return rc;
		} else if (strcmp(line, "end") == 0) {
			ended = true;
		} else if ((rc = parse_link(p, line, now)) != 0) {
			snprintf(err, errlen, "line %zu: %s", lineno,
				 rc == -ENOSPC ? "more links than the map holds"
				 : rc == -ENOMEM ? "out of memory"
						 : "malformed");
			return rc;
		}
	}
	if (!ended || off != len) {
		snprintf(err, errlen, "%s",
			 ended ? "data after the end"
			       : "truncated (no end line)");
		return -EINVAL;
	}
	return 0;
}

/* fd's text, whole; fd is closed. */
static int read_all(int fd, char **text, size_t *len)
{
	size_t cap = 65536;
	ssize_t n;
	int rc = 0;

	*text = NULL;
	*len = 0;
	*text = malloc(cap);
	while (*text != NULL && (n = read(fd, *text + *len, cap - *len)) != 0) {
		if (n < 0) {
			rc = -errno;
			break;
		}
		*len += (size_t)n;
		if (*len == cap) {
			char *t = cap < PROVSTATE_MAX ? realloc(*text, cap * 2)
						      : NULL;

			if (t == NULL) {
				rc = cap < PROVSTATE_MAX ? -ENOMEM : -EFBIG;
				break;
			}
			*text = t;
			cap *= 2;
		}
	}
	if (*text == NULL && rc == 0)
		rc = -ENOMEM;
	close(fd);
	if (rc != 0) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

int provstate_load(struct prov *p, int dirfd, const char *dir, uid_t uid,
		   const char *policy, char *err, size_t errlen)
{
	char path[4096], boot[BOOT_LEN + 1], why[256] = "";
	char *text = NULL;
	size_t len = 0;
	int rc, fd;

	snprintf(path, sizeof(path), "%s/%s", dir, PROVSTATE_FILE);
	monotime_boot_id(boot);
	fd = statefs_open_file(dirfd, dir, PROVSTATE_FILE, uid, err, errlen);
	if (fd == -EPERM)
		return -EPERM;
	rc = fd < 0 ? fd : read_all(fd, &text, &len);
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", path,
			 rc == -EFBIG ? "too large" : strerror(-rc));
		return rc == -ENOENT ? -ENOENT : rc == -ENOMEM ? rc : -EIO;
	}
	rc = provstate_parse(p, text, len, policy, boot, monotime_s(), why,
			     sizeof(why));
	free(text);
	if (rc != 0) {
		prov_clear(p);
		snprintf(err, errlen, "%s: %s", path, why);
	}
	return rc;
}

void provstate_remove(int dirfd, const char *dir)
{
	if (unlinkat(dirfd, PROVSTATE_FILE, 0) != 0 && errno != ENOENT)
		log_warn("prov", "cannot remove %s/%s: %s", dir, PROVSTATE_FILE,
			 strerror(errno));
}
