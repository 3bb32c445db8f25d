// SPDX-License-Identifier: GPL-2.0-or-later
/* configkeys: the parser of each key of config.c's schema table.
 *
 * config.c walks its table and calls, for each row, the parser named
 * there; everything that knows what one value means lives here: numbers
 * in range, choices, set names, endpoints (listen, upstreams, metrics),
 * names for the allowlist, ports, CIDRs, interfaces and host services of
 * the forward scope, the user and the paths. Each parser writes into the
 * struct config under construction and reports a bad value through
 * configkeys_fail(), which names the key path. A list entry is checked
 * against the entries before it where a duplicate would be an error or a
 * waste (listen, upstreams, ports); the allowlist is deduplicated once at
 * the end instead (configkeys_dedupe), since it may hold 100k names. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <idn2.h>

#include "config/config.h"
#include "config/configkeys.h"
#include "config/policy.h"
#include "config/resolvconf.h"
#include "dns/qtype.h"
#include "sets/sets.h"

#define RESOLV_CONF_DEFAULT "/etc/resolv.conf"
#define USER_NAME_MAX	    255
#define UID_MAX_VALUE	    4294967294.0 /* (uid_t)-1 means "no change" */

static int string_or_default(struct pctx *p, const struct key_spec *k,
			     const cJSON *v, const char **s);
static int each_string(struct pctx *p, const struct key_spec *k,
		       const cJSON *v);
static int push(void *arrp, size_t *n, size_t size, const void *item);
static int item_check_port(struct pctx *p, const char *s, const char *path,
			   uint8_t proto, const char *why,
			   struct config_port **list, size_t *n);
static int add_cidr(struct pctx *p, const char *s, const char *path,
		    struct netcidr **v, size_t *n);
static int add_string(char ***arr, size_t *n, const char *s);
static int append_string(char ***arr, size_t *n, const char *s);
static int cmp_ref(const void *a, const void *b);
static int get_int(struct pctx *p, const char *path, const cJSON *v, double lo,
		   double hi, double *out);
static int get_choice(struct pctx *p, const struct key_spec *k, const cJSON *v,
		      uint32_t *idx);
static bool is_loopback_addr(const struct netaddr *a);
static int add_endpoint(struct config_endpoint **arr, size_t *n,
			const struct sockaddr_storage *ss, socklen_t len);
static bool is_listen_addr(const struct config *c,
			   const struct sockaddr_storage *ss);
static int upstreams_from_resolv(struct pctx *p, const char *path,
				 const char *saved);
static unsigned scheme_port(const char *s, size_t n);
static int name_fix(struct pctx *p, const char *s, const char *path,
		    const char *val);
static int idn_fix(struct pctx *p, const char *s, const char *path,
		   const char *val);

int configkeys_fail(struct pctx *p, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->err, p->errlen, "%s: ", path);

	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Optimal string alignment distance of a and b (lengths below 64),
 * ASCII case ignored; 64 when either is longer. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[64][64];

	if (la >= 64 || lb >= 64)
		return 64;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

const char *configkeys_nearest(const char *s, const char *const *cands,
			       size_t n)
{
	const char *best = NULL;
	size_t best_d = 3, len = strlen(s);

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(s, cands[i]);

		if (d < best_d && 2 * d < len) {
			best = cands[i];
			best_d = d;
		}
	}
	return best;
}

void configkeys_show(const char *s, char *buf, size_t cap)
{
	size_t o = 0;

	for (; *s != '\0' && o + 1 < cap && o < 64; s++)
		buf[o++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
	if (*s != '\0' && o >= 3)
		memcpy(buf + o - 3, "...", 3);
	buf[o] = '\0';
}

/* An entry of a list of strings that is something else: the message
 * shows the form, a bare port number the string it meant. */
static int not_a_string(struct pctx *p, const struct key_spec *k,
			const cJSON *it, const char *path)
{
	double d = cJSON_IsNumber(it) ? it->valuedouble : -1;
	bool tcp = k->type != NULL && strstr(k->type, "\"tcp/N\"") != NULL;
	bool udp = k->type != NULL && strstr(k->type, "\"udp/N\"") != NULL;
	char also[32] = "";

	if ((tcp || udp) && d >= 1 && d <= 65535 && d == (double)(long)d) {
		if (tcp && udp)
			snprintf(also, sizeof(also), " (or \"udp/%ld\")",
				 (long)d);
		return configkeys_fail(p, path,
				       "expected a string: a port is written "
				       "with its protocol, \"%s/%ld\"%s",
				       tcp ? "tcp" : "udp", (long)d, also);
	}
	if (k->type != NULL)
		return configkeys_fail(
		    p, path, "expected a string (the key is an %s)", k->type);
	return configkeys_fail(p, path, "expected a string");
}

/* Call fn for each string of the array v, or of the default list. */
static int each_string(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	char path[CONFIGKEYS_PATH_LEN];
	size_t i = 0;
	int rc;

	if (v == NULL) {
		for (; k->defs != NULL && k->defs[i] != NULL; i++) {
			snprintf(path, sizeof(path), "%s[%zu]", k->path, i);
			if ((rc = k->item(p, k->defs[i], path)) != 0)
				return rc;
		}
		return 0;
	}
	if (!cJSON_IsArray(v))
		return configkeys_fail(p, k->path, "expected an array");
	if (v->child == NULL && k->lo > 0)
		return configkeys_fail(p, k->path, "needs at least one entry");
	for (const cJSON *it = v->child; it != NULL; it = it->next, i++) {
		snprintf(path, sizeof(path), "%s[%zu]", k->path, i);
		if (!cJSON_IsString(it))
			return not_a_string(p, k, it, path);
		if ((rc = k->item(p, it->valuestring, path)) != 0)
			return rc;
	}
	return 0;
}

static int push(void *arrp, size_t *n, size_t size, const void *item)
{
	void **arr = arrp;
	char *grown = reallocarray(*arr, *n + 1, size);

	if (grown == NULL)
		return -ENOMEM;
	memcpy(grown + *n * size, item, size);
	*arr = grown;
	(*n)++;
	return 0;
}

/* Append a copy of s; the array grows by half when full (its capacity is
 * not stored: it is the next power of two at or above *n). */
static int append_string(char ***arr, size_t *n, const char *s)
{
	size_t cap = 16;
	char *copy, **grown;

	while (cap < *n)
		cap *= 2;
	if (*n == cap || *arr == NULL) {
		grown = reallocarray(*arr, *n == cap ? cap * 2 : cap,
				     sizeof(char *));
		if (grown == NULL)
			return -ENOMEM;
		*arr = grown;
	}
	if ((copy = strdup(s)) == NULL)
		return -ENOMEM;
	(*arr)[(*n)++] = copy;
	return 0;
}

struct str_ref {
	const char *s;
	size_t idx;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct str_ref *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c != 0)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Drop every later copy of a string, keeping the order of first
 * occurrences: O(n log n). */
int configkeys_dedupe(char **arr, size_t *n)
{
	struct str_ref *refs;
	bool *dup;
	size_t k = 0;

	if (*n < 2)
		return 0;
	refs = calloc(*n, sizeof(*refs));
	dup = calloc(*n, sizeof(*dup));
	if (refs == NULL || dup == NULL) {
		free(refs);
		free(dup);
		return -ENOMEM;
	}
	for (size_t i = 0; i < *n; i++)
		refs[i] = (struct str_ref){arr[i], i};
	qsort(refs, *n, sizeof(*refs), cmp_ref);
	for (size_t i = 1; i < *n; i++) {
		if (strcmp(refs[i].s, refs[i - 1].s) == 0)
			dup[refs[i].idx] = true;
	}
	for (size_t i = 0; i < *n; i++) {
		if (dup[i])
			free(arr[i]);
		else
			arr[k++] = arr[i];
	}
	*n = k;
	free(refs);
	free(dup);
	return 0;
}

/* Append a copy of s unless it is already there (order kept). */
static int add_string(char ***arr, size_t *n, const char *s)
{
	char *copy;

	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*arr)[i], s) == 0)
			return 0;
	}
	if ((copy = strdup(s)) == NULL)
		return -ENOMEM;
	if (push(arr, n, sizeof(char *), &copy) != 0) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

/* JSON has only one number type: accept integral values in [lo, hi]. */
static int get_int(struct pctx *p, const char *path, const cJSON *v, double lo,
		   double hi, double *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return configkeys_fail(p, path, "expected an integer");
	d = v->valuedouble;
	if (!isfinite(d))
		return configkeys_fail(p, path, "expected an integer");
	if (d < lo || d > hi)
		return configkeys_fail(p, path, "must be between %.0f and %.0f",
				       lo, hi);
	if (d != (double)(int64_t)d) /* in range, so the cast is defined */
		return configkeys_fail(p, path, "expected an integer");
	*out = d;
	return 0;
}

static int get_choice(struct pctx *p, const struct key_spec *k, const cJSON *v,
		      uint32_t *idx)
{
	char known[128] = "", val[72];
	size_t o = 0;

	if (v == NULL) {
		*idx = k->def;
		return 0;
	}
	for (uint32_t i = 0; k->choices[i] != NULL; i++) {
		if (cJSON_IsString(v) &&
		    strcmp(v->valuestring, k->choices[i]) == 0) {
			*idx = i;
			return 0;
		}
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s\"%s\"",
				      i ? ", " : "", k->choices[i]);
	}
	if (!cJSON_IsString(v))
		return configkeys_fail(p, k->path, "expected one of %s", known);
	configkeys_show(v->valuestring, val, sizeof(val));
	return configkeys_fail(p, k->path,
			       "unknown value \"%s\" (expected one of %s)", val,
			       known);
}

int configkeys_list(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	return each_string(p, k, v);
}

int configkeys_choice(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	return get_choice(p, k, v, &p->choice[k - p->specs]);
}

int configkeys_int(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	double d = k->def;
	int rc;

	if (v != NULL && (rc = get_int(p, k->path, v, k->lo, k->hi, &d)) != 0)
		return rc;
	*(uint32_t *)((char *)p->c + k->off) = (uint32_t)d * k->scale;
	return 0;
}

/* The key's string value, or its default when the key is absent. -EINVAL
 * (with the error in p) when the value is not a string. */
static int string_or_default(struct pctx *p, const struct key_spec *k,
			     const cJSON *v, const char **s)
{
	if (v != NULL && !cJSON_IsString(v))
		return configkeys_fail(p, k->path, "expected a string");
	*s = v != NULL ? v->valuestring : k->defs[0];
	return 0;
}

/* Set names: libipset limits them to 31 bytes; a leading '-' would read
 * as an option on an iptables-restore line. */
int configkeys_set_name(struct pctx *p, const struct key_spec *k,
			const cJSON *v)
{
	const char *s = k->defs[0];
	char **field = (char **)((char *)p->c + k->off);

	if (string_or_default(p, k, v, &s) != 0)
		return -EINVAL;
	if (!sets_name_valid(s))
		return configkeys_fail(
		    p, k->path,
		    "set names have 1..31 characters of A-Z a-z 0-9 "
		    "_ . - and do not start with '-'");
	return (*field = strdup(s)) != NULL ? 0 : -ENOMEM;
}

/* A unix socket path: absolute, and short enough for sun_path. Absent:
 * CONFIG_CONTROL_FILE in the state directory (parsed before it), so that
 * a daemon's socket follows its state. */
int configkeys_path(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	char **field = (char **)((char *)p->c + k->off);
	char def[CONFIG_SOCKET_PATH_MAX + 2];
	const char *s = def;

	if (v == NULL) {
		if ((size_t)snprintf(def, sizeof(def), "%s/%s",
				     p->c->state_dir != NULL
					 ? p->c->state_dir
					 : CONFIG_DEFAULT_STATE_DIR,
				     CONFIG_CONTROL_FILE) >= sizeof(def) - 1)
			return configkeys_fail(
			    p, k->path,
			    "state_dir/%s would be longer than %d bytes: "
			    "name a shorter socket path here",
			    CONFIG_CONTROL_FILE, CONFIG_SOCKET_PATH_MAX);
	} else if (string_or_default(p, k, v, &s) != 0) {
		return -EINVAL;
	}
	if (s[0] != '/')
		return configkeys_fail(p, k->path, "expected an absolute path");
	if (strlen(s) > CONFIG_SOCKET_PATH_MAX)
		return configkeys_fail(p, k->path, "longer than %d bytes",
				       CONFIG_SOCKET_PATH_MAX);
	return (*field = strdup(s)) != NULL ? 0 : -ENOMEM;
}

int configkeys_bool(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	if (v != NULL && !cJSON_IsBool(v))
		return configkeys_fail(p, k->path, "expected true or false");
	p->choice[k - p->specs] = v == NULL ? k->def : cJSON_IsTrue(v) ? 1 : 0;
	return 0;
}

static int add_endpoint(struct config_endpoint **arr, size_t *n,
			const struct sockaddr_storage *ss, socklen_t len)
{
	struct config_endpoint e;

	memcpy(&e.sa, ss, sizeof(e.sa));
	e.len = len;
	return push(arr, n, sizeof(e), &e);
}

static bool is_listen_addr(const struct config *c,
			   const struct sockaddr_storage *ss)
{
	struct config_endpoint e = {.sa = *ss};

	for (size_t i = 0; i < c->n_listen; i++) {
		if (netaddr_endpoint_equal(&e, &c->listen[i]))
			return true;
	}
	return false;
}

/* An IPv4-mapped IPv6 endpoint ([::ffff:198.18.0.9]:5300) travels as
 * IPv4: the IPv6 rules that would name it never see its packets, and the
 * IPv4 ones do not name it. Refused, with the IPv4 form to write. */
static int refuse_mapped(struct pctx *p, const char *path, const char *val,
			 const struct sockaddr_storage *ss)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	char v4[INET_ADDRSTRLEN];

	if (ss->ss_family != AF_INET6 ||
	    memcmp(s6->sin6_addr.s6_addr, mapped, 12) != 0)
		return 0;
	inet_ntop(AF_INET, s6->sin6_addr.s6_addr + 12, v4, sizeof(v4));
	return configkeys_fail(p, path,
			       "\"%s\" is an IPv4-mapped IPv6 address: its "
			       "packets are IPv4, which no rule for it would "
			       "see; write %s:%u",
			       val, v4, (unsigned)ntohs(s6->sin6_port));
}

int configkeys_item_listen(struct pctx *p, const char *s, const char *path)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why = "";
	char val[72];

	configkeys_show(s, val, sizeof(val));
	if (netaddr_parse_endpoint(s, true, 0, &ss, &len, &why) != 0)
		return configkeys_fail(p, path, "\"%s\": %s", val, why);
	if (refuse_mapped(p, path, val, &ss) != 0)
		return -EINVAL;
	if (is_listen_addr(p->c, &ss))
		return configkeys_fail(p, path, "\"%s\" is listed twice", val);
	return add_endpoint(&p->c->listen, &p->c->n_listen, &ss, len);
}

int configkeys_item_upstream(struct pctx *p, const char *s, const char *path)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why = "";
	char val[72];
	struct config_endpoint e;

	configkeys_show(s, val, sizeof(val));
	if (netaddr_parse_endpoint(s, false, 53, &ss, &len, &why) != 0)
		return configkeys_fail(p, path, "\"%s\": %s", val, why);
	if (refuse_mapped(p, path, val, &ss) != 0)
		return -EINVAL;
	if (is_listen_addr(p->c, &ss))
		return configkeys_fail(
		    p, path,
		    "\"%s\" is one of our listen addresses (a "
		    "forwarding loop)",
		    val);
	e.sa = ss;
	e.len = len;
	for (size_t i = 0; i < p->c->n_upstreams; i++) {
		if (netaddr_endpoint_equal(&e, &p->c->upstreams[i]))
			return configkeys_fail(p, path,
					       "\"%s\" is listed twice", val);
	}
	return add_endpoint(&p->c->upstreams, &p->c->n_upstreams, &ss, len);
}

/* The default upstreams: the nameservers of resolv.conf but our own; when
 * it names only us (a container entrypoint has pointed it at us), those
 * of the original it saved. */
static int upstreams_from_resolv(struct pctx *p, const char *path,
				 const char *saved)
{
	int r = resolvconf_read(path, p->c->listen, p->c->n_listen,
				&p->c->upstreams, &p->c->n_upstreams);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return configkeys_fail(p, "upstreams",
				       "not set, and %s cannot be read: %s",
				       path, strerror(-r));
	p->upstreams_file = path;
	if (p->c->n_upstreams == 0) {
		p->upstreams_file = saved;
		free(p->c->upstreams);
		r = resolvconf_read_trusted(saved, p->c->listen, p->c->n_listen,
					    &p->c->upstreams,
					    &p->c->n_upstreams);
		if (r < 0)
			return r;
	}
	if (p->c->n_upstreams == 0)
		return configkeys_fail(
		    p, "upstreams",
		    "not set, and %s names no nameserver but our own "
		    "listen addresses (nor does a saved original in %s)",
		    path, saved);
	return 0;
}

int configkeys_upstreams(struct pctx *p, const struct key_spec *k,
			 const cJSON *v)
{
	const char *rc_path = p->env != NULL && p->env->resolv_conf != NULL
				  ? p->env->resolv_conf
				  : RESOLV_CONF_DEFAULT;
	const char *saved = p->env != NULL && p->env->saved_resolv_conf != NULL
				? p->env->saved_resolv_conf
				: CONFIG_SAVED_RESOLV_CONF;

	if (v == NULL)
		return upstreams_from_resolv(p, rc_path, saved);
	return each_string(p, k, v);
}

/* The port a URL's scheme implies, or 0. */
static unsigned scheme_port(const char *s, size_t n)
{
	if (n == 5 && strncasecmp(s, "https", 5) == 0)
		return 443;
	if (n == 4 && strncasecmp(s, "http", 4) == 0)
		return 80;
	return 0;
}

/* A non-ASCII entry: fail with its punycode form. 1 when s is ASCII. */
static int idn_fix(struct pctx *p, const char *s, const char *path,
		   const char *val)
{
	char bare[256], *idn = NULL;
	int rc;

	for (const char *c = s; *c != '\0'; c++) {
		if ((unsigned char)*c < 0x80)
			continue;
		rc = idn2_to_ascii_8z(s, &idn, IDN2_NONTRANSITIONAL);
		if (rc != IDN2_OK)
			return configkeys_fail(
			    p, path,
			    "\"%s\" is not ASCII, and not a name IDNA2008 "
			    "can write in punycode either (%s)",
			    val, idn2_strerror(rc));
		configkeys_show(idn, bare, sizeof(bare));
		idn2_free(idn);
		return configkeys_fail(p, path,
				       "\"%s\" is not ASCII: write its "
				       "punycode form \"%s\" (the name DNS "
				       "carries)",
				       val, bare);
	}
	return 1;
}

/* An allow entry that is not a name but something people write for one
 * (an address, a URL, "host:port", a non-ASCII name): fail with what
 * to write instead. 1 when s is none of these. */
static int name_fix(struct pctx *p, const char *s, const char *path,
		    const char *val)
{
	struct netaddr a;
	struct netcidr cidr;
	const char *why = NULL, *host = s, *colon, *end;
	char bare[256];
	unsigned port = 0;

	if (netaddr_parse(s, &a) == 0 ||
	    netaddr_parse_cidr(s, &cidr, &why) == 0)
		return configkeys_fail(
		    p, path,
		    "\"%s\" is an address, not a name: addresses go in "
		    "\"allow_cidrs\" (\"%s%s\"), names in \"allow\"",
		    val, s,
		    strchr(s, '/') != NULL   ? ""
		    : strchr(s, ':') != NULL ? "/128"
					     : "/32");
	if ((end = strstr(s, "://")) != NULL) {
		port = scheme_port(s, (size_t)(end - s));
		host = end + 3;
	}
	end = host + strcspn(host, "/?#");
	colon = memchr(host, ':', (size_t)(end - host));
	if (colon != NULL) {
		char *pend = NULL;
		unsigned long n = strtoul(colon + 1, &pend, 10);

		if (pend == end && n > 0 && n < 65536)
			port = (unsigned)n;
		else if (host == s)
			return 1; /* not "host:port": the character error */
		end = colon;
	}
	if ((host != s || colon != NULL || *end != '\0') && end > host &&
	    (size_t)(end - host) < sizeof(bare)) {
		memcpy(bare, host, (size_t)(end - host));
		bare[end - host] = '\0';
		if (netaddr_parse(bare, &a) == 0)
			return configkeys_fail(
			    p, path,
			    "\"%s\" names an address, not a name: addresses "
			    "go in \"allow_cidrs\" (\"%s/%s\")%s",
			    val, bare, strchr(bare, ':') ? "128" : "32",
			    port != 0 ? ", their port in \"ports\"" : "");
		if (!policy_pattern_valid(bare, NULL, 0))
			return 1;
		if (port != 0)
			return configkeys_fail(
			    p, path,
			    "\"%s\": write the bare name \"%s\" here; the "
			    "port goes in \"ports\" (\"tcp/%u\")",
			    val, bare, port);
		return configkeys_fail(p, path,
				       "\"%s\": write the bare name \"%s\" "
				       "(no scheme, port or path)",
				       val, bare);
	}
	return idn_fix(p, s, path, val);
}

int configkeys_item_name(struct pctx *p, const char *s, const char *path)
{
	char why[POLICY_WHY_MAX], val[72], *norm;
	size_t n;
	int rc;

	configkeys_show(s, val, sizeof(val));
	if ((norm = strdup(s)) == NULL)
		return -ENOMEM;
	for (char *c = norm; *c != '\0'; c++) {
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	}
	n = strlen(norm);
	if (n > 1 && norm[n - 1] == '.')
		norm[n - 1] = '\0';
	/* The fixes and the preset check judge the entry as it will be
	 * kept ("Crates" and "crates." are "crates", "198.18.0.1." is an
	 * address); the syntax check judges it as written, where one
	 * trailing dot is allowed and two are not. */
	if ((rc = name_fix(p, norm, path, val)) <= 0) {
		free(norm);
		return rc;
	}
	if (policy_preset_exists(norm)) {
		free(norm);
		return configkeys_fail(
		    p, path,
		    "\"%s\" is a single label, and the name of a preset: "
		    "put it in \"ecosystems\": [\"%s\"] (or write the "
		    "names it should allow)",
		    val, val);
	}
	if (s[0] == '.' && s[1] != '\0' && s[1] != '.' &&
	    policy_pattern_valid(s + 1, why, sizeof(why))) {
		free(norm);
		configkeys_show(s + 1, val, sizeof(val));
		return configkeys_fail(
		    p, path,
		    "\".%s\": a leading dot is not a pattern here: write "
		    "\"*.%s\" for every name below %s, and \"%s\" for the name "
		    "itself (list both for both)",
		    val, val, val, val);
	}
	if (!policy_pattern_valid(s, why, sizeof(why))) {
		free(norm);
		return configkeys_fail(p, path, "\"%s\": %s", val, why);
	}
	/* Duplicates are dropped once, in finish(): a check per entry here
	 * would make a 100k-entry list quadratic. */
	rc = append_string(&p->c->allow, &p->c->n_allow, norm);
	free(norm);
	return rc;
}

int configkeys_extra_hosts(struct pctx *p, const char *list)
{
	char path[CONFIGKEYS_PATH_LEN], *copy = strdup(list), *item, *rest;
	size_t idx = 0;
	int rc = 0;

	if (copy == NULL)
		return -ENOMEM;
	for (rest = copy; (item = strsep(&rest, ",")) != NULL; idx++) {
		char *end = item + strlen(item);

		item += strspn(item, " \t\r\n");
		while (end > item && strchr(" \t\r\n", end[-1]) != NULL)
			*--end = '\0';
		if (*item == '\0')
			continue;
		snprintf(path, sizeof(path), "DNSFENCE_EXTRA_HOSTS[%zu]", idx);
		if ((rc = configkeys_item_name(p, item, path)) != 0)
			goto out;
	}
out:
	free(copy);
	return rc;
}

int configkeys_item_ecosystem(struct pctx *p, const char *s, const char *path)
{
	const char *const *names = policy_preset_names();
	char known[1024] = "", val[72], mean[96] = "";
	const char *near;
	size_t o = 0, n = 0;

	if (policy_preset_exists(s))
		return add_string(&p->c->ecosystems, &p->c->n_ecosystems, s);
	for (; names[n] != NULL; n++) {
		int w = snprintf(known + o, sizeof(known) - o, "%s%s",
				 n ? ", " : "", names[n]);

		if (w < 0 || (size_t)w >= sizeof(known) - o)
			return -ENOSPC; /* a longer list than known[] holds */
		o += (size_t)w;
	}
	configkeys_show(s, val, sizeof(val));
	near = configkeys_nearest(s, names, n);
	if (near != NULL)
		snprintf(mean, sizeof(mean), "; did you mean \"%s\"?", near);
	return configkeys_fail(p, path, "unknown preset \"%s\"%s (known: %s)",
			       val, mean, known);
}

int configkeys_item_qtype(struct pctx *p, const char *s, const char *path)
{
	char val[72];
	uint16_t t;

	configkeys_show(s, val, sizeof(val));
	if (qtype_parse(s, &t) != 0)
		return configkeys_fail(p, path,
				       "\"%s\" is not a query type (a mnemonic "
				       "such as \"LOC\", or \"TYPE29\")",
				       val);
	if (qtype_is_meta(t))
		return configkeys_fail(p, path,
				       "\"%s\" is a meta, reserved or "
				       "private-use type: never forwarded",
				       val);
	for (size_t i = 0; i < p->c->n_qtypes; i++) {
		if (p->c->qtypes[i] == t)
			return 0;
	}
	return push(&p->c->qtypes, &p->c->n_qtypes, sizeof(t), &t);
}

int configkeys_item_port(struct pctx *p, const char *s, const char *path)
{
	struct config_port pt;
	int rc = configkeys_parse_port(p, s, path, &pt);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < p->c->n_ports; i++) {
		if (memcmp(&p->c->ports[i], &pt, sizeof(pt)) == 0)
			return 0;
	}
	return push(&p->c->ports, &p->c->n_ports, sizeof(pt), &pt);
}

/* A port of name_check's lists: of protocol proto only (else the error
 * says why), once in *list. */
static int item_check_port(struct pctx *p, const char *s, const char *path,
			   uint8_t proto, const char *why,
			   struct config_port **list, size_t *n)
{
	struct config_port pt;
	char val[72];
	int rc = configkeys_parse_port(p, s, path, &pt);

	if (rc != 0)
		return rc;
	if (pt.proto != proto) {
		configkeys_show(s, val, sizeof(val));
		return configkeys_fail(p, path, "\"%s\": %s", val, why);
	}
	for (size_t i = 0; i < *n; i++) {
		if (memcmp(&(*list)[i], &pt, sizeof(pt)) == 0)
			return 0;
	}
	return push(list, n, sizeof(pt), &pt);
}

/* TLS runs over TCP; QUIC has its own key (quic_ports). */
int configkeys_item_tls_port(struct pctx *p, const char *s, const char *path)
{
	return item_check_port(p, s, path, IPPROTO_TCP,
			       "only tcp ports are checked (QUIC ports go in "
			       "name_check.quic_ports)",
			       &p->c->tls_ports, &p->c->n_tls_ports);
}

/* Plain HTTP runs over TCP, and a port is read as TLS or as HTTP (tls_ports
 * is read first). */
int configkeys_item_http_port(struct pctx *p, const char *s, const char *path)
{
	struct config_port pt;
	char val[72];
	int rc = configkeys_parse_port(p, s, path, &pt);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < p->c->n_tls_ports; i++) {
		if (memcmp(&p->c->tls_ports[i], &pt, sizeof(pt)) != 0)
			continue;
		configkeys_show(s, val, sizeof(val));
		return configkeys_fail(p, path,
				       "\"%s\" is in name_check.tls_ports too: "
				       "a port is read as TLS or as HTTP",
				       val);
	}
	return item_check_port(p, s, path, IPPROTO_TCP,
			       "only tcp ports are read as HTTP (QUIC ports go "
			       "in name_check.quic_ports)",
			       &p->c->http_ports, &p->c->n_http_ports);
}

/* QUIC runs over UDP. */
int configkeys_item_quic_port(struct pctx *p, const char *s, const char *path)
{
	return item_check_port(p, s, path, IPPROTO_UDP,
			       "QUIC runs over udp (a tcp port belongs in "
			       "name_check.tls_ports)",
			       &p->c->quic_ports, &p->c->n_quic_ports);
}

int configkeys_parse_port(struct pctx *p, const char *s, const char *path,
			  struct config_port *out)
{
	struct config_port pt = {0};
	const char *num = s + 4, *dash;
	char val[72];

	configkeys_show(s, val, sizeof(val));
	if (strncmp(s, "tcp/", 4) == 0)
		pt.proto = IPPROTO_TCP;
	else if (strncmp(s, "udp/", 4) == 0)
		pt.proto = IPPROTO_UDP;
	else
		return configkeys_fail(
		    p, path,
		    "\"%s\": expected \"tcp/N\", \"udp/N\" or "
		    "\"tcp/N-M\" (tcp or udp only)",
		    val);
	dash = strchr(num, '-');
	if (netaddr_parse_port(num, dash ? (size_t)(dash - num) : strlen(num),
			       &pt.first) != 0 ||
	    (dash != NULL &&
	     netaddr_parse_port(dash + 1, strlen(dash + 1), &pt.last) != 0))
		return configkeys_fail(p, path, "\"%s\": ports are 1..65535",
				       val);
	if (dash == NULL)
		pt.last = pt.first;
	if (pt.first > pt.last)
		return configkeys_fail(p, path, "\"%s\": range is backwards",
				       val);
	*out = pt;
	return 0;
}

/* One CIDR item into a list of them; a repeat is dropped. */
static int add_cidr(struct pctx *p, const char *s, const char *path,
		    struct netcidr **v, size_t *n)
{
	struct netcidr c;
	const char *why = "";
	char val[72];

	memset(&c, 0, sizeof(c));
	configkeys_show(s, val, sizeof(val));
	if (netaddr_parse_cidr(s, &c, &why) != 0)
		return configkeys_fail(p, path, "\"%s\": %s", val, why);
	for (size_t i = 0; i < *n; i++) {
		if ((*v)[i].prefix == c.prefix &&
		    netaddr_equal(&(*v)[i].addr, &c.addr))
			return 0;
	}
	return push(v, n, sizeof(c), &c);
}

int configkeys_item_cidr(struct pctx *p, const char *s, const char *path)
{
	return add_cidr(p, s, path, &p->c->allow_cidrs, &p->c->n_allow_cidrs);
}

int configkeys_item_source_cidr(struct pctx *p, const char *s, const char *path)
{
	return add_cidr(p, s, path, &p->c->source_cidrs, &p->c->n_source_cidrs);
}

/* Interface names as the kernel and iptables take them (IFNAMSIZ, no '/',
 * ':' or blanks), narrowed to what is safe on an iptables-restore line. */
int configkeys_item_interface(struct pctx *p, const char *s, const char *path)
{
	size_t n = strlen(s), body = n;
	char val[72];

	configkeys_show(s, val, sizeof(val));
	if (n > 0 && s[n - 1] == '+')
		body = n - 1;
	if (n == 0 || n > 15)
		return configkeys_fail(p, path,
				       "\"%s\": interface names have 1..15 "
				       "characters",
				       val);
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		      "0123456789_.-") != body ||
	    s[0] == '-' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return configkeys_fail(
		    p, path,
		    "\"%s\": interface names use A-Z a-z 0-9 _ . - "
		    "(a '+' only at the end) and do not start with "
		    "'-'",
		    val);
	if (body == 0)
		return configkeys_fail(p, path,
				       "\"+\" would match every interface, the "
				       "host's uplink and loopback included");
	if (strcmp(s, "lo") == 0 || (body < n && strncmp("lo", s, body) == 0))
		return configkeys_fail(p, path,
				       "\"%s\" matches loopback: fencing it "
				       "would cut the host off from itself",
				       val);
	return add_string(&p->c->interfaces, &p->c->n_interfaces, s);
}

static bool is_loopback_addr(const struct netaddr *a)
{
	static const uint8_t one[16] = {[15] = 1};

	return a->family == AF_INET ? a->bytes[0] == 127
				    : memcmp(a->bytes, one, 16) == 0;
}

/* One host service, kept as normalized text ("tcp/[fd00::1]:3128"), which
 * fwfwdrules.c reads again for the INPUT rule. */
int configkeys_item_host_allow(struct pctx *p, const char *s, const char *path)
{
	static const uint8_t zero[16];
	char val[72], ep[NETADDR_ENDPOINT_STRLEN],
	    norm[NETADDR_ENDPOINT_STRLEN + 8];
	struct sockaddr_storage ss;
	const char *why = "";
	struct netaddr a;
	socklen_t len;

	configkeys_show(s, val, sizeof(val));
	if (strncmp(s, "tcp/", 4) != 0 && strncmp(s, "udp/", 4) != 0)
		return configkeys_fail(p, path,
				       "\"%s\": expected \"tcp/addr:port\" or "
				       "\"udp/[v6]:port\"",
				       val);
	if (netaddr_parse_endpoint(s + 4, true, 0, &ss, &len, &why) != 0)
		return configkeys_fail(p, path, "\"%s\": %s", val, why);
	netaddr_from_sockaddr((const struct sockaddr *)&ss, &a);
	if (memcmp(a.bytes, zero, a.family == AF_INET ? 4 : 16) == 0)
		return configkeys_fail(
		    p, path,
		    "\"%s\": a wildcard would open every address "
		    "of the host",
		    val);
	if (is_loopback_addr(&a))
		return configkeys_fail(
		    p, path,
		    "\"%s\": loopback is not reachable from the "
		    "fenced interfaces",
		    val);
	netaddr_format_endpoint((const struct sockaddr *)&ss, ep, sizeof(ep));
	snprintf(norm, sizeof(norm), "%.4s%s", s, ep);
	return add_string(&p->c->host_allow, &p->c->n_host_allow, norm);
}

/* Forward scope needs interfaces and listen addresses the containers can
 * reach on the host: loopback is not routable from another namespace, and
 * a wildcard would answer on the host's other interfaces too. */
int configkeys_check_scope(struct pctx *p)
{
	static const uint8_t zero[16];
	char path[CONFIGKEYS_PATH_LEN], val[NETADDR_ENDPOINT_STRLEN];
	struct netaddr a;

	if (p->c->scope == CONFIG_SCOPE_OUTPUT) {
		if (p->c->n_interfaces > 0)
			return configkeys_fail(
			    p, "interfaces",
			    "only used with \"scope\": \"forward\" "
			    "(the output scope fences this namespace "
			    "on every interface)");
		if (p->c->n_host_allow > 0)
			return configkeys_fail(
			    p, "host_allow",
			    "only used with \"scope\": \"forward\"");
		if (p->c->n_source_cidrs > 0)
			return configkeys_fail(
			    p, "source_cidrs",
			    "only used with \"scope\": \"forward\" (the "
			    "output scope fences what this namespace "
			    "sends, whatever its source)");
		return 0;
	}
	if (p->c->n_interfaces == 0)
		return configkeys_fail(
		    p, "interfaces",
		    "required with \"scope\": \"forward\": name "
		    "the bridge or veth the fenced traffic comes in "
		    "on (e.g. [\"br-fenced\"])");
	for (size_t i = 0; i < p->c->n_listen; i++) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&p->c->listen[i].sa;
		size_t len = sa->sa_family == AF_INET ? 4 : 16;

		netaddr_from_sockaddr(sa, &a);
		netaddr_format_endpoint(sa, val, sizeof(val));
		snprintf(path, sizeof(path), "listen[%zu]", i);
		if (is_loopback_addr(&a))
			return configkeys_fail(
			    p, path,
			    "\"%s\" is loopback, which the fenced "
			    "interfaces cannot reach: in forward scope "
			    "listen on the host side of them (the "
			    "bridge's gateway, e.g. \"172.30.0.1:53\"; "
			    "listen defaults to loopback)",
			    val);
		if (memcmp(a.bytes, zero, len) == 0)
			return configkeys_fail(
			    p, path,
			    "\"%s\" is a wildcard: in forward scope "
			    "name the address on the host side of the "
			    "fenced interfaces (a wildcard answers on "
			    "every host interface)",
			    val);
	}
	return 0;
}

/* A name is kept as written (privs resolves it); a uid becomes its
 * decimal text, so the struct has one representation. */
int configkeys_user(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	char buf[16];
	const char *s = k->defs[0];
	double d = 0;
	int rc;

	if (v != NULL && cJSON_IsNumber(v)) {
		if ((rc = get_int(p, k->path, v, 0, UID_MAX_VALUE, &d)) != 0)
			return rc;
		snprintf(buf, sizeof(buf), "%.0f", d);
		s = buf;
	} else if (v != NULL && !cJSON_IsString(v)) {
		return configkeys_fail(p, k->path,
				       "expected a user name or a uid");
	} else if (v != NULL) {
		s = v->valuestring;
		size_t n = strlen(s);
		if (n == 0 || n > USER_NAME_MAX)
			return configkeys_fail(p, k->path,
					       "user names have 1..%d bytes",
					       USER_NAME_MAX);
		for (size_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)s[i];
			if (ch <= 0x20 || ch == 0x7f || ch == ':')
				return configkeys_fail(
				    p, k->path,
				    "user names have no blanks, "
				    "control characters or ':'");
		}
	}
	return (p->c->user = strdup(s)) != NULL ? 0 : -ENOMEM;
}

int configkeys_metrics(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	const char *why = "";
	char val[72];

	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return configkeys_fail(p, k->path,
				       "expected \"addr:port\" or null");
	configkeys_show(v->valuestring, val, sizeof(val));
	if (netaddr_parse_endpoint(v->valuestring, true, 0, &p->c->metrics.sa,
				   &p->c->metrics.len, &why) != 0)
		return configkeys_fail(p, k->path, "\"%s\": %s", val, why);
	if (is_listen_addr(p->c, &p->c->metrics.sa))
		return configkeys_fail(
		    p, k->path, "\"%s\" is also a `listen` endpoint", val);
	p->c->metrics_on = true;
	return 0;
}

/* An absolute path without control characters; trailing '/' go. */
int configkeys_state_dir(struct pctx *p, const struct key_spec *k,
			 const cJSON *v)
{
	const char *s = k->defs[0];
	size_t n;

	if (string_or_default(p, k, v, &s) != 0)
		return -EINVAL;
	if (v == NULL && p->env != NULL && p->env->state_dir != NULL)
		s = p->env->state_dir;
	n = strlen(s);
	/* Judged as stored, without trailing '/': "//" is the root too, and
	 * what validate prints must parse to the same again. */
	while (n > 0 && s[n - 1] == '/')
		n--;
	if (n < 2 || n > 200 || s[0] != '/')
		return configkeys_fail(p, k->path,
				       "expected an absolute path of 2..200 "
				       "bytes, not the root");
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return configkeys_fail(p, k->path,
					       "control characters in path");
	}
	return (p->c->state_dir = strndup(s, n)) != NULL ? 0 : -ENOMEM;
}
