// SPDX-License-Identifier: GPL-2.0-or-later
/* setsadm: the setup half of the sets (setsadm_create, setsadm_check,
 * setsadm_flush, setsadm_destroy), through libipset: one fresh libipset
 * handle per command, with its output and errors captured instead of printed.
 * These run at setup and in the guard's child, never in the event loop,
 * so they may block. An existing set is accepted only when its type,
 * family and timeout support are exactly ours. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libipset/ipset.h>

#include "base/log.h"
#include "base/netaddr.h"
#include "sets/sets.h"
#include "sets/setsadm.h"

#define SYS "sets"

struct capture {
	char *out; /* what libipset printed */
	size_t len, cap;
	bool oom, failed;
	char msg[256]; /* the error it reported */
};

struct set_desc {
	char type[32];
	char family[8];
	bool timeout;
	unsigned long maxelem;
};

static int cap_out(struct ipset_session *session, void *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int cap_custom_err(struct ipset *ipset, void *p, int status,
			  const char *msg, ...)
    __attribute__((format(printf, 4, 5)));
static int cap_std_err(struct ipset *ipset, void *p);
static void load_types(void);
static int ipset_run(const char *line, struct capture *c);
static int set_exists(const char *name, bool *exists, char *err, size_t errlen);
static int set_describe(const char *name, struct set_desc *d, char *err,
			size_t errlen);
static int check_one(const char *name, const char *type, const char *family,
		     struct set_desc *d, char *err, size_t errlen);
static int create_one(const char *name, const char *type, const char *family,
		      uint32_t maxelem, char *err, size_t errlen);
static int run_if_exists(const char *verb, const char *doing, const char *name,
			 char *err, size_t errlen);
static int both(int (*one)(const char *name, char *err, size_t errlen),
		const char *set4, const char *set6, char *err, size_t errlen);
static int destroy_one(const char *name, char *err, size_t errlen);
static int flush_one(const char *name, char *err, size_t errlen);

static int cap_out(struct ipset_session *session, void *p, const char *fmt, ...)
{
	struct capture *c = p;
	va_list ap;
	int n;

	(void)session;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n >= c->cap - c->len || c->out == NULL) {
		size_t ncap = c->cap ? c->cap : 4096;
		char *o;

		while (ncap - c->len <= (size_t)n) {
			if (ncap > SIZE_MAX / 2) {
				c->oom = true;
				return -1;
			}
			ncap *= 2;
		}
		o = realloc(c->out, ncap);
		if (o == NULL) {
			c->oom = true;
			return -1;
		}
		c->out = o;
		c->cap = ncap;
	}
	va_start(ap, fmt);
	vsnprintf(c->out + c->len, c->cap - c->len, fmt, ap);
	va_end(ap);
	c->len += (size_t)n;
	return 0;
}

static int cap_custom_err(struct ipset *ipset, void *p, int status,
			  const char *msg, ...)
{
	struct capture *c = p;
	va_list ap;

	(void)ipset;
	(void)status;
	c->failed = true;
	va_start(ap, msg);
	vsnprintf(c->msg, sizeof(c->msg), msg, ap);
	va_end(ap);
	return -1;
}

static int cap_std_err(struct ipset *ipset, void *p)
{
	struct ipset_session *session = ipset_session(ipset);
	struct capture *c = p;
	size_t n;

	if (ipset_session_report_type(session) == IPSET_ERROR) {
		c->failed = true;
		snprintf(c->msg, sizeof(c->msg), "%s",
			 ipset_session_report_msg(session));
		n = strlen(c->msg);
		while (n > 0 && c->msg[n - 1] == '\n')
			c->msg[--n] = '\0';
	}
	ipset_session_report_reset(session);
	return c->failed ? -1 : 0;
}

/* libipset's set types, registered once per process. */
static void load_types(void)
{
	static bool types_loaded;

	if (!types_loaded) {
		ipset_load_types();
		types_loaded = true;
	}
}

/* One ipset(8) command line through a fresh libipset handle (a handle is
 * not reusable after an error). -EIO with c->msg on failure. */
static int ipset_run(const char *line, struct capture *c)
{
	struct ipset *ip = NULL;
	char buf[256];
	int r;

	memset(c, 0, sizeof(*c));
	if ((size_t)snprintf(buf, sizeof(buf), "%s", line) >= sizeof(buf))
		return -EINVAL;
	load_types();
	ip = ipset_init();
	if (ip == NULL)
		return -ENOMEM;
	ipset_custom_printf(ip, cap_custom_err, cap_std_err, cap_out, c);
	r = ipset_parse_line(ip, buf);
	ipset_fini(ip);
	if (c->oom)
		return -ENOMEM;
	if (c->failed || r < 0) {
		if (c->msg[0] == '\0')
			snprintf(c->msg, sizeof(c->msg), "ipset %s failed",
				 line);
		return -EIO;
	}
	return 0;
}

/* Is there a set of that name? A name sets_name_valid() refuses is
 * -EINVAL: it never reaches libipset's command parser. */
static int set_exists(const char *name, bool *exists, char *err, size_t errlen)
{
	struct capture c;
	size_t nlen = strlen(name);
	const char *p;
	int r;

	*exists = false;
	if (!sets_name_valid(name)) {
		snprintf(err, errlen, "invalid set name \"%s\"", name);
		return -EINVAL;
	}
	r = ipset_run("list -n", &c);
	if (r < 0) {
		snprintf(err, errlen, "listing ipsets: %s", c.msg);
		goto out;
	}
	for (p = c.out; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len == nlen && memcmp(p, name, nlen) == 0)
			*exists = true;
		p = nl ? nl + 1 : NULL;
	}
out:
	free(c.out);
	return r;
}

/* Parse the "create NAME TYPE family F ... maxelem N timeout T ..." line. */
static int set_describe(const char *name, struct set_desc *d, char *err,
			size_t errlen)
{
	struct capture c;
	char line[128], *save = NULL, *tok, *prev = NULL;
	int r, i = 0;

	memset(d, 0, sizeof(*d));
	snprintf(line, sizeof(line), "list -t -o save %s", name);
	r = ipset_run(line, &c);
	if (r < 0) {
		snprintf(err, errlen, "set %s: %s", name, c.msg);
		goto out;
	}
	for (tok = strtok_r(c.out, " \n", &save); tok != NULL;
	     prev = tok, tok = strtok_r(NULL, " \n", &save), i++) {
		if (i == 2)
			snprintf(d->type, sizeof(d->type), "%s", tok);
		else if (i < 3)
			continue;
		else if (strcmp(prev, "family") == 0)
			snprintf(d->family, sizeof(d->family), "%s", tok);
		else if (strcmp(prev, "maxelem") == 0)
			d->maxelem = strtoul(tok, NULL, 10);
		else if (strcmp(tok, "timeout") == 0)
			d->timeout = true;
	}
	if (d->type[0] == '\0') {
		snprintf(err, errlen, "set %s: cannot read its header", name);
		r = -EIO;
	}
out:
	free(c.out);
	return r;
}

static int check_one(const char *name, const char *type, const char *family,
		     struct set_desc *d, char *err, size_t errlen)
{
	bool exists;
	int r;

	r = set_exists(name, &exists, err, errlen);
	if (r < 0)
		return r;
	if (!exists) {
		snprintf(err, errlen, "set %s does not exist", name);
		return -ENOENT;
	}
	r = set_describe(name, d, err, errlen);
	if (r < 0)
		return r;
	if (strcmp(d->type, type) != 0 || strcmp(d->family, family) != 0 ||
	    !d->timeout) {
		snprintf(err, errlen,
			 "set %s exists as %s family %s%s; dnsfence needs "
			 "%s family %s with timeout support",
			 name, d->type, d->family[0] ? d->family : "?",
			 d->timeout ? " with timeout" : " without timeout",
			 type, family);
		return -EEXIST;
	}
	return 0;
}

static int create_one(const char *name, const char *type, const char *family,
		      uint32_t maxelem, char *err, size_t errlen)
{
	struct set_desc d;
	struct capture c = {0};
	char line[160];
	int r;

	r = check_one(name, type, family, &d, err, errlen);
	if (r == 0 && maxelem > d.maxelem)
		log_warn(SYS,
			 "set %s keeps maxelem %lu (config asks %u): "
			 "destroy it to resize",
			 name, d.maxelem, maxelem);
	if (r != -ENOENT)
		return r;
	snprintf(line, sizeof(line),
		 "create %s %s family %s timeout 60 maxelem %u", name, type,
		 family, maxelem ? maxelem : 65536);
	r = ipset_run(line, &c);
	free(c.out);
	if (r < 0) {
		snprintf(err, errlen, "creating set %s: %s", name, c.msg);
		return r;
	}
	log_info(SYS, "created set %s (%s family %s, timeout, maxelem %u)",
		 name, type, family, maxelem ? maxelem : 65536);
	/* Someone may have raced us with another kind of set. */
	return check_one(name, type, family, &d, err, errlen);
}

int setsadm_create(const char *set4, const char *set6, uint32_t maxelem,
		   char *err, size_t errlen)
{
	int r = create_one(set4, "hash:ip", "inet", maxelem, err, errlen);

	if (r == 0)
		r = create_one(set6, "hash:ip", "inet6", maxelem, err, errlen);
	return r;
}

int setsadm_check(const char *set4, const char *set6, char *err, size_t errlen)
{
	struct set_desc d;
	int r = check_one(set4, "hash:ip", "inet", &d, err, errlen);

	if (r == 0)
		r = check_one(set6, "hash:ip", "inet6", &d, err, errlen);
	return r;
}

int setsadm_create_clients(const char *c4, const char *c6, uint32_t maxelem,
			   char *err, size_t errlen)
{
	int r = create_one(c4, SETS_CLIENT_TYPE, "inet", maxelem, err, errlen);

	if (r == 0)
		r = create_one(c6, SETS_CLIENT_TYPE, "inet6", maxelem, err,
			       errlen);
	return r;
}

int setsadm_check_clients(const char *c4, const char *c6, char *err,
			  size_t errlen)
{
	struct set_desc d;
	int r = check_one(c4, SETS_CLIENT_TYPE, "inet", &d, err, errlen);

	if (r == 0)
		r = check_one(c6, SETS_CLIENT_TYPE, "inet6", &d, err, errlen);
	return r;
}

/* `ipset VERB NAME` when the set exists; nothing (0) when it does not.
 * 0, or -errno with err "DOING set NAME: <ipset's message>". */
static int run_if_exists(const char *verb, const char *doing, const char *name,
			 char *err, size_t errlen)
{
	struct capture c = {0};
	char line[64];
	bool exists;
	int r;

	r = set_exists(name, &exists, err, errlen);
	if (r < 0 || !exists)
		return r;
	snprintf(line, sizeof(line), "%s %s", verb, name);
	r = ipset_run(line, &c);
	free(c.out);
	if (r < 0)
		snprintf(err, errlen, "%s set %s: %s", doing, name, c.msg);
	return r;
}

/* one(set4), then one(set6) when that succeeded. */
static int both(int (*one)(const char *name, char *err, size_t errlen),
		const char *set4, const char *set6, char *err, size_t errlen)
{
	int r = one(set4, err, errlen);

	if (r == 0)
		r = one(set6, err, errlen);
	return r;
}

static int destroy_one(const char *name, char *err, size_t errlen)
{
	return run_if_exists("destroy", "destroying", name, err, errlen);
}

int setsadm_destroy(const char *set4, const char *set6, char *err,
		    size_t errlen)
{
	return both(destroy_one, set4, set6, err, errlen);
}

/* "Number of entries: N" of `ipset list -t NAME`. A netlink round trip
 * (header only, no members): the metrics endpoint calls it at most once
 * a second. */
int setsadm_count(const char *name, uint64_t *n)
{
	struct capture c;
	char line[64];
	const char *p;
	int r;

	*n = 0;
	if (!sets_name_valid(name))
		return -EINVAL;
	snprintf(line, sizeof(line), "list -t %s", name);
	r = ipset_run(line, &c);
	if (r == 0) {
		p = c.out != NULL ? strstr(c.out, "Number of entries: ") : NULL;
		if (p != NULL)
			*n = strtoull(p + strlen("Number of entries: "), NULL,
				      10);
		else
			r = -EIO;
	}
	free(c.out);
	return r;
}

static int flush_one(const char *name, char *err, size_t errlen)
{
	if (!sets_name_valid(name)) {
		snprintf(err, errlen, "invalid set name \"%s\"", name);
		return -EINVAL;
	}
	return run_if_exists("flush", "flushing", name, err, errlen);
}

int setsadm_flush(const char *set4, const char *set6, char *err, size_t errlen)
{
	return both(flush_one, set4, set6, err, errlen);
}

/* "add NAME ADDR timeout T" lines of `ipset save NAME`. */
int setsadm_members(const char *name, netaddr_fn fn, void *arg, char *err,
		    size_t errlen)
{
	struct capture c;
	char line[64], addr[NETADDR_STRLEN];
	const char *p;
	size_t nlen = strlen(name);
	struct netaddr a;
	int r;

	if (!sets_name_valid(name)) {
		snprintf(err, errlen, "invalid set name \"%s\"", name);
		return -EINVAL;
	}
	snprintf(line, sizeof(line), "save %s", name);
	r = ipset_run(line, &c);
	if (r < 0) {
		snprintf(err, errlen, "listing %s: %s", name, c.msg);
		goto out;
	}
	for (p = c.out; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n'), *sp;
		size_t len;

		if (strncmp(p, "add ", 4) == 0 &&
		    strncmp(p + 4, name, nlen) == 0 && p[4 + nlen] == ' ') {
			sp = p + 5 + nlen;
			len = strcspn(sp, " \n");
			if (len < sizeof(addr)) {
				memcpy(addr, sp, len);
				addr[len] = '\0';
				if (netaddr_parse(addr, &a) == 0)
					fn(arg, &a);
			}
		}
		p = nl ? nl + 1 : NULL;
	}
out:
	free(c.out);
	return r;
}

/* One `ipset restore` stream of "VERB NAME ADDR -exist" lines. */
static int restore(const char *verb, const char *doing, const char *name,
		   const struct netaddr *addrs, size_t n, char *err,
		   size_t errlen)
{
	struct capture c;
	struct ipset *ip;
	char *text = NULL, astr[NETADDR_STRLEN];
	size_t len = 0;
	FILE *mem, *in;
	int r;

	if (!sets_name_valid(name)) {
		snprintf(err, errlen, "invalid set name \"%s\"", name);
		return -EINVAL;
	}
	if (n == 0)
		return 0;
	if ((mem = open_memstream(&text, &len)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		netaddr_format(&addrs[i], astr, sizeof(astr));
		fprintf(mem, "%s %s %s -exist\n", verb, name, astr);
	}
	if (fclose(mem) != 0 || (in = fmemopen(text, len, "r")) == NULL) {
		free(text);
		return -ENOMEM;
	}
	memset(&c, 0, sizeof(c));
	load_types();
	ip = ipset_init();
	r = -ENOMEM;
	if (ip != NULL) {
		ipset_custom_printf(ip, cap_custom_err, cap_std_err, cap_out,
				    &c);
		r = ipset_parse_stream(ip, in) < 0 || c.failed ? -EIO : 0;
		ipset_fini(ip);
	}
	fclose(in);
	free(text);
	free(c.out);
	if (r != 0)
		snprintf(err, errlen, "%s %s: %s", doing, name,
			 c.msg[0] ? c.msg : "failed");
	return r;
}

int setsadm_del(const char *name, const struct netaddr *addrs, size_t n,
		char *err, size_t errlen)
{
	return restore("del", "deleting from", name, addrs, n, err, errlen);
}

int setsadm_put(const char *name, const struct netaddr *addrs, size_t n,
		char *err, size_t errlen)
{
	return restore("add", "adding to", name, addrs, n, err, errlen);
}

int setsadm_create_plain(const char *name, uint32_t maxelem, char *err,
			 size_t errlen)
{
	struct set_desc d;
	struct capture c = {0};
	char line[128];
	bool exists;
	int r = set_exists(name, &exists, err, errlen);

	if (r < 0 || (exists && (r = set_describe(name, &d, err, errlen)) < 0))
		return r;
	if (exists) {
		if (strcmp(d.type, "hash:ip") == 0 &&
		    strcmp(d.family, "inet6") == 0 && !d.timeout)
			return 0;
		snprintf(err, errlen,
			 "set %s exists as %s family %s%s; dnsfence needs "
			 "hash:ip family inet6 without timeout",
			 name, d.type, d.family[0] ? d.family : "?",
			 d.timeout ? " with timeout" : "");
		return -EEXIST;
	}
	snprintf(line, sizeof(line),
		 "create %s hash:ip family inet6 maxelem %u", name, maxelem);
	r = ipset_run(line, &c);
	free(c.out);
	if (r < 0)
		snprintf(err, errlen, "creating set %s: %s", name, c.msg);
	return r;
}

int setsadm_destroy_one(const char *name, char *err, size_t errlen)
{
	return destroy_one(name, err, errlen);
}
