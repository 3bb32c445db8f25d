// SPDX-License-Identifier: GPL-2.0-or-later
/* config: the JSON file turned into an immutable struct config.
 *
 * One static table, specs[], lists every key (nested ones as "ttl.min"):
 * its handler, its range or choices, its default and its documentation.
 * Parsing walks the JSON once to match every member to a row (unknown keys,
 * keys given twice and non-objects where an object belongs fail here),
 * then calls each row's handler in table order with the member, or with
 * NULL when the key is absent so that the handler applies the default
 * through the same code path as input. Table order matters: listen comes
 * before upstreams (the loop check and the resolv.conf default need it).
 * config_print_reference() renders the same table as Markdown, so the
 * documentation cannot drift from the parser.
 *
 * Errors are written to the caller's buffer as "KEY.PATH: reason", never
 * logged: main decides. Values echoed in errors are cut and stripped of
 * control bytes, since they may come from anywhere. cJSON keeps duplicate
 * members and decodes \u0000 into a string terminator, so both are caught
 * here: the first by the table walk, the second by a scan of the text. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "dnsfence/config.h"
#include "dnsfence/policy.h"
#include "dnsfence/resolvconf.h"
#include "dnsfence/sets.h"

#define RESOLV_CONF_DEFAULT "/etc/resolv.conf"
#define PATH_LEN	    96
#define USER_NAME_MAX	    255
#define UID_MAX_VALUE	    4294967294.0 /* (uid_t)-1 means "no change" */

enum kind { K_GROUP, K_INT, K_CHOICE, K_LIST, K_STRING };

struct pctx;
struct key_spec;
typedef int (*key_fn)(struct pctx *p, const struct key_spec *k, const cJSON *v);
typedef int (*item_fn)(struct pctx *p, const char *s, const char *path);

struct key_spec {
	const char *path;
	enum kind kind;
	key_fn parse;	      /* NULL for K_GROUP */
	uint32_t lo, hi, def; /* K_INT range and default; K_CHOICE index */
	uint32_t scale;	      /* K_INT: stored value = input * scale */
	size_t off;	      /* K_INT: uint32_t field; K_STRING: char * */
	item_fn item;	      /* K_LIST: one entry; lo = 1: not empty */
	const char *const *choices; /* K_CHOICE, NULL-terminated */
	const char *const *defs;    /* K_LIST/K_STRING default, as input */
	const char *type;	    /* NULL: generated from kind */
	const char *def_doc;	    /* NULL: generated from the default */
	const char *meaning;
};

struct pctx {
	const struct config_env *env;
	struct config *c;
	char *err;
	size_t errlen;
	const cJSON **given; /* per spec row */
	uint32_t *choice;    /* per spec row: index into choices */
};

static int fail(struct pctx *p, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void show(const char *s, char *buf, size_t cap);
static int find_spec(const char *prefix, const char *key);
static int collect(struct pctx *p, const cJSON *obj, const char *prefix);
static int known_keys(const char *prefix, char *buf, size_t cap);
static int each_string(struct pctx *p, const struct key_spec *k,
		       const cJSON *v);
static int push(void *arrp, size_t *n, size_t size, const void *item);
static int add_string(char ***arr, size_t *n, const char *s);
static int append_string(char ***arr, size_t *n, const char *s);
static int dedupe_strings(char **arr, size_t *n);
static int cmp_ref(const void *a, const void *b);
static int get_int(struct pctx *p, const char *path, const cJSON *v, double lo,
		   double hi, double *out);
static int get_choice(struct pctx *p, const struct key_spec *k, const cJSON *v,
		      uint32_t *idx);
static int h_int(struct pctx *p, const struct key_spec *k, const cJSON *v);
static int h_string(struct pctx *p, const struct key_spec *k, const cJSON *v);
static int h_list(struct pctx *p, const struct key_spec *k, const cJSON *v);
static int h_choice(struct pctx *p, const struct key_spec *k, const cJSON *v);
static int h_upstreams(struct pctx *p, const struct key_spec *k,
		       const cJSON *v);
static int h_user(struct pctx *p, const struct key_spec *k, const cJSON *v);
static int h_metrics(struct pctx *p, const struct key_spec *k, const cJSON *v);
static int h_state_dir(struct pctx *p, const struct key_spec *k,
		       const cJSON *v);
static int h_path(struct pctx *p, const struct key_spec *k, const cJSON *v);
static int h_bool(struct pctx *p, const struct key_spec *k, const cJSON *v);
static int item_listen(struct pctx *p, const char *s, const char *path);
static int item_upstream(struct pctx *p, const char *s, const char *path);
static int item_name(struct pctx *p, const char *s, const char *path);
static int item_ecosystem(struct pctx *p, const char *s, const char *path);
static int item_port(struct pctx *p, const char *s, const char *path);
static int item_cidr(struct pctx *p, const char *s, const char *path);
static int item_interface(struct pctx *p, const char *s, const char *path);
static int check_scope(struct pctx *p);
static bool is_loopback_addr(const struct netaddr *a);
static int item_host_allow(struct pctx *p, const char *s, const char *path);
static int add_endpoint(struct config_endpoint **arr, size_t *n,
			const struct sockaddr_storage *ss, socklen_t len);
static bool is_listen_addr(const struct config *c,
			   const struct sockaddr_storage *ss);
static int upstreams_from_resolv(struct pctx *p, const char *path,
				 const char *saved);
static int extra_hosts(struct pctx *p, const char *list);
static int finish(struct pctx *p);
static uint32_t choice_of(const struct pctx *p, const char *path);
static int check_nul_escape(const char *text, size_t len, char *err,
			    size_t errlen);
static void err_at(const char *text, size_t off, const char *what, char *err,
		   size_t errlen);
static bool endpoint_eq(const struct config_endpoint *a,
			const struct config_endpoint *b);
static void print_cell_default(FILE *f, const struct key_spec *k);
static void print_cell_type(FILE *f, const struct key_spec *k);

static const char *const mode_names[] = {"enforce", "audit", "off", NULL};
static const char *const deny_names[] = {"nxdomain", "refused", NULL};
static const char *const inbound_names[] = {"allow", "deny", NULL};
static const char *const level_names[] = {"error", "warning", "info", "debug",
					  NULL};
static const char *const format_names[] = {"text", "json", NULL};
static const char *const listen_defs[] = {"127.0.0.1:53", "[::1]:53", NULL};
static const char *const ports_defs[] = {"tcp/80", "tcp/443", NULL};
static const char *const set4_defs[] = {"dnsfence4", NULL};
static const char *const set6_defs[] = {"dnsfence6", NULL};
static const char *const user_defs[] = {"dnsfence", NULL};
static const char *const state_dir_defs[] = {CONFIG_DEFAULT_STATE_DIR, NULL};
static const char *const scope_names[] = {"output", "forward", NULL};
static const char *const control_defs[] = {CONFIG_DEFAULT_CONTROL, NULL};
static const char *const bool_names[] = {"false", "true", NULL};

#define OFF(f) offsetof(struct config, f)

static const struct key_spec specs[] = {
    {"listen", K_LIST, h_list, 1, .item = item_listen, .defs = listen_defs,
     .type = "array of \"addr:port\" / \"[v6]:port\"",
     .meaning = "UDP and TCP listeners; a port is required, each entry "
		"once. On a wildcard address (`0.0.0.0`, `::`) each UDP reply "
		"leaves from the address its query was sent to"},
    {"upstreams", K_LIST, h_upstreams, 1, .item = item_upstream,
     .type = "array of \"addr[:port]\" / \"[v6][:port]\"",
     .def_doc = "the `nameserver` lines of /etc/resolv.conf at start "
		"(port 53), minus our own listen addresses; when it names "
		"only those, the ones of the original that the container "
		"entrypoint saved in /run/dnsfence/resolv.conf.orig (used "
		"only if root's and not group- or world-writable)",
     .meaning = "where allowed names are resolved; one of our own listen "
		"endpoints is an error (a loop)"},
    {"allow", K_LIST, h_list, .item = item_name, .type = "array of names",
     .meaning = "`example.com` matches that name only; `*.example.com` "
		"matches every name below it, at any depth, but not "
		"example.com itself. Lower-cased, one trailing dot "
		"removed, duplicates dropped"},
    {"ecosystems", K_LIST, h_list, .item = item_ecosystem,
     .type = "array of preset names",
     .meaning = "named host lists added to `allow`: npm, pypi, crates, "
		"go, maven, rubygems, nuget, github, debian, ubuntu, "
		"alpine, ..."},
    {"deny_rcode", K_CHOICE, h_choice, .choices = deny_names,
     .meaning = "answer to a name not allowed. With `\"refused\"`, "
		"musl (Alpine) waits its whole timeout (5 s) on each denied "
		"name and stops walking the search list at the first "
		"REFUSED, which breaks Kubernetes-style search domains; "
		"`validate` warns about it"},
    {"sets", K_GROUP, NULL, .type = "object",
     .meaning = "the kernel ipsets (hash:ip with timeout)"},
    {"sets.ipv4", K_STRING, h_string, .off = OFF(set4), .defs = set4_defs,
     .type = "set name",
     .meaning = "IPv4 set: 1..31 of `A-Z a-z 0-9 _ . -`, not starting "
		"with `-`"},
    {"sets.ipv6", K_STRING, h_string, .off = OFF(set6), .defs = set6_defs,
     .type = "set name", .meaning = "IPv6 set; must differ from sets.ipv4"},
    {"sets.maxelem", K_INT, h_int, 1, 2147483647, 65536, 1, OFF(maxelem),
     .meaning = "capacity of each set when dnsfence creates it"},
    {"ttl", K_GROUP, NULL, .type = "object",
     .meaning = "clamp for set timeouts"},
    {"ttl.min", K_INT, h_int, 1, 2147483, 60, 1, OFF(ttl_min),
     .meaning = "shortest set timeout, seconds (0 would mean \"forever\" "
		"to the kernel)"},
    {"ttl.max", K_INT, h_int, 1, 2147483, 86400, 1, OFF(ttl_max),
     .meaning = "longest set timeout, seconds; at least ttl.min"},
    {"ports", K_LIST, h_list, .item = item_port, .defs = ports_defs,
     .type = "array of \"tcp/N\", \"udp/N\", \"tcp/N-M\"",
     .meaning = "where set members may be reached"},
    {"allow_cidrs", K_LIST, h_list, .item = item_cidr, .type = "array of CIDRs",
     .meaning = "always reachable (on `ports`), no DNS needed; answers in "
		"these ranges are admitted even when internal. Host "
		"bits must be zero"},
    {"user", K_STRING, h_user, .defs = user_defs, .type = "name or uid",
     .def_doc = "`\"dnsfence\"`, falling back to `nobody`",
     .meaning = "the daemon's uid after setup; give it a user of its own "
		"(a warning names nobody; uid 0 is refused). The rules trust "
		"the socket `mark`, not the uid. A name has no blanks, control "
		"characters or ':'; a uid is 0..4294967294 and is printed "
		"back as a string"},
    {"mark", K_INT, h_int, 1, 2147483647, 0x64000000, 1, OFF(mark),
     .meaning = "socket mark (SO_MARK) of the daemon's sockets to the "
		"upstreams. The fence lets traffic to an upstream address "
		"leave only when a packet's whole mark equals this value, "
		"which only a holder of CAP_NET_ADMIN can set. The default, "
		"0x64000000 (1677721600), keeps clear of the bits kube-proxy "
		"(0x4000, 0x8000), Cilium (0x0f00), Istio (0x539) and the "
		"AWS VPC CNI (0x80) use; change it if another program in the "
		"namespace marks packets with it"},
    {"inbound", K_CHOICE, h_choice, .choices = inbound_names,
     .meaning = "allow: a connection a peer opens into this namespace gets "
		"its replies (the ESTABLISHED accept works both ways); deny: "
		"only connections the namespace opened itself get packets "
		"out, so no server in it can answer a peer outside (health "
		"probes and services included). See docs/security.md"},
    {"mode", K_CHOICE, h_choice, .choices = mode_names,
     .meaning = "audit: allow and log what enforce would block; off: "
		"install no rules"},
    {"upstream_timeout", K_INT, h_int, 1, 60, 3, 1000, OFF(upstream_timeout_ms),
     .meaning = "seconds before an upstream query fails (SERVFAIL), c-ares' "
		"retries included. Below the 5 s a stub resolver (glibc, "
		"musl, Go) waits before its first retry, so the client gets "
		"the failure instead of asking again"},
    {"max_inflight", K_INT, h_int, 16, 60000, 2048, 1, OFF(max_inflight),
     .meaning = "upstream questions in flight at most; a query beyond it "
		"gets SERVFAIL at once (Extended DNS Error 0 \"too many "
		"queries in flight\"). One client address may hold 3/4 of "
		"them. Denied names and cache hits are answered whatever the "
		"count"},
    {"failure_ttl", K_INT, h_int, 1, 300, 5, 1, OFF(failure_ttl),
     .meaning = "seconds an upstream failure (timeout, unreachable, "
		"SERVFAIL, REFUSED, malformed answer) is remembered for its "
		"question: repeats get SERVFAIL at once (RFC 9520)"},
    {"serve_stale", K_INT, h_int, 0, 604800, 86400, 1, OFF(serve_stale),
     .meaning = "seconds past its TTL an answer may still be served when "
		"the upstream fails (RFC 8767), with a TTL of 30 s and its "
		"addresses put back in the sets first; 0 turns it off"},
    {"guard_interval", K_INT, h_int, 1, 3600, 5, 1, OFF(guard_interval),
     .meaning = "seconds between checks that the rules and sets are "
		"still in place"},
    {"log", K_GROUP, NULL, .type = "object", .meaning = "logging"},
    {"log.level", K_CHOICE, h_choice, .choices = level_names, .def = 2,
     .meaning = "least severe level logged"},
    {"log.format", K_CHOICE, h_choice, .choices = format_names,
     .meaning = "text lines, or one JSON object per line"},
    {"metrics", K_STRING, h_metrics,
     .type = "\"addr:port\" / \"[v6]:port\" or null", .def_doc = "`null` (off)",
     .meaning = "serve Prometheus metrics over HTTP at `/metrics` "
		"(docs/metrics.md); anything that can reach the address "
		"can read them, so keep it on loopback"},
    {"state_dir", K_STRING, h_state_dir, .defs = state_dir_defs,
     .type = "absolute path",
     .meaning = "where the daemon keeps `suggest.json`, the names and "
		"blocked flows `dnsfence suggest` reads; created (mode "
		"0750, owned by `user`) when missing"},
    {"scope", K_CHOICE, h_choice, .choices = scope_names,
     .meaning = "output: fence this network namespace's own egress (the "
		"OUTPUT chain). forward: run on the host and fence what "
		"comes in on `interfaces` (a container bridge or veth): "
		"forwarded traffic (FORWARD, or Docker's DOCKER-USER) and "
		"traffic to the host itself (INPUT, where only DNS to our "
		"`listen` addresses passes); the host's own OUTPUT is left "
		"alone. `listen` must then name addresses on the host side "
		"of those interfaces, not loopback or a wildcard. See "
		"docs/firewall.md"},
    {"interfaces", K_LIST, h_list, .item = item_interface,
     .type = "array of interface names",
     .meaning = "scope forward only, and required there: the bridge or "
		"veth names fenced traffic comes in on, 1..15 of `A-Z a-z "
		"0-9 _ . -`, not starting with `-`; a trailing `+` matches "
		"every name with that prefix (`veth+`). `lo`, and a "
		"wildcard that matches it or every name, are refused"},
    {"host_allow", K_LIST, h_list, .item = item_host_allow,
     .type = "array of \"tcp/addr:port\" / \"udp/[v6]:port\"",
     .meaning = "scope forward only: services of the host itself that the "
		"fenced interfaces may reach besides dnsfence's DNS (a "
		"proxy on the gateway address, say). One address each, not "
		"loopback or a wildcard; everything else on the host stays "
		"out of reach"},
    {"control", K_GROUP, NULL, .type = "object",
     .meaning = "the running daemon's control socket and config watch "
		"(`dnsfence reload`, `dnsfence status`)"},
    {"control.socket", K_STRING, h_path, .off = OFF(control_socket),
     .defs = control_defs, .type = "absolute path",
     .meaning = "unix socket of `reload` and `status`, mode 0660, owned by "
		"root and the daemon's group; only uid 0 and the daemon's "
		"uid or gid are served. Cannot change on reload"},
    {"control.watch", K_CHOICE, h_bool, .choices = bool_names, .def = 1,
     .type = "boolean", .def_doc = "`true`",
     .meaning = "reload when the config file changes (inotify on its "
		"directory, so a Kubernetes ConfigMap update is seen)"},
};

#define N_SPECS (sizeof(specs) / sizeof(specs[0]))

static const struct {
	const char *name, *meaning;
} env_specs[] = {
    {"DNSFENCE_CONFIG", "the config file when `-c` is not given "
			"(default " CONFIG_DEFAULT_PATH ")"},
    {"DNSFENCE_MODE", "overrides `mode` (`enforce`, `audit` or `off`); "
		      "empty means unset"},
    {"DNSFENCE_EXTRA_HOSTS",
     "comma-separated names appended to `allow` (blanks trimmed, empty "
     "items skipped, each validated like `allow`; errors name "
     "`DNSFENCE_EXTRA_HOSTS[i]`, counting every comma-separated item "
     "from 0)"},
};

static int fail(struct pctx *p, const char *path, const char *fmt, ...)
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

/* A value fit to echo: control bytes as '?', at most 64 bytes. */
static void show(const char *s, char *buf, size_t cap)
{
	size_t o = 0;

	for (; *s != '\0' && o + 1 < cap && o < 64; s++)
		buf[o++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
	if (*s != '\0' && o >= 3)
		memcpy(buf + o - 3, "...", 3);
	buf[o] = '\0';
}

static int find_spec(const char *prefix, const char *key)
{
	size_t pl = strlen(prefix);

	for (size_t i = 0; i < N_SPECS; i++) {
		const char *sp = specs[i].path;

		if (pl > 0 && (strncmp(sp, prefix, pl) != 0 || sp[pl] != '.'))
			continue;
		if (pl > 0)
			sp += pl + 1;
		else if (strchr(sp, '.') != NULL)
			continue;
		if (strcmp(sp, key) == 0)
			return (int)i;
	}
	return -1;
}

static int known_keys(const char *prefix, char *buf, size_t cap)
{
	size_t pl = strlen(prefix), o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_SPECS; i++) {
		const char *sp = specs[i].path;

		if (pl > 0 && (strncmp(sp, prefix, pl) != 0 || sp[pl] != '.'))
			continue;
		sp += pl > 0 ? pl + 1 : 0;
		if (strchr(sp, '.') != NULL)
			continue;
		int n = snprintf(buf + o, cap - o, "%s%s", o ? ", " : "", sp);
		if (n < 0 || (size_t)n >= cap - o)
			return -ENOSPC;
		o += (size_t)n;
	}
	return 0;
}

/* Match each member of obj to a row of specs[]; recurse into groups. */
static int collect(struct pctx *p, const cJSON *obj, const char *prefix)
{
	char path[PATH_LEN], key[72], known[256];

	for (const cJSON *it = obj->child; it != NULL; it = it->next) {
		int i = find_spec(prefix, it->string);

		show(it->string, key, sizeof(key));
		snprintf(path, sizeof(path), "%s%s%s", prefix,
			 *prefix ? "." : "", key);
		if (i < 0) {
			known_keys(prefix, known, sizeof(known));
			return fail(p, path, "unknown key (known: %s)", known);
		}
		if (p->given[i] != NULL)
			return fail(p, path, "given twice");
		p->given[i] = it;
		if (specs[i].kind != K_GROUP)
			continue;
		if (!cJSON_IsObject(it))
			return fail(p, path, "expected an object");
		int rc = collect(p, it, specs[i].path);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Call fn for each string of the array v, or of the default list. */
static int each_string(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	char path[PATH_LEN];
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
		return fail(p, k->path, "expected an array");
	if (v->child == NULL && k->lo > 0)
		return fail(p, k->path, "needs at least one entry");
	for (const cJSON *it = v->child; it != NULL; it = it->next, i++) {
		snprintf(path, sizeof(path), "%s[%zu]", k->path, i);
		if (!cJSON_IsString(it))
			return fail(p, path, "expected a string");
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
static int dedupe_strings(char **arr, size_t *n)
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
		return fail(p, path, "expected an integer");
	d = v->valuedouble;
	if (!isfinite(d))
		return fail(p, path, "expected an integer");
	if (d < lo || d > hi)
		return fail(p, path, "must be between %.0f and %.0f", lo, hi);
	if (d != (double)(int64_t)d) /* in range, so the cast is defined */
		return fail(p, path, "expected an integer");
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
		return fail(p, k->path, "expected one of %s", known);
	show(v->valuestring, val, sizeof(val));
	return fail(p, k->path, "unknown value \"%s\" (expected one of %s)",
		    val, known);
}

static int h_list(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	return each_string(p, k, v);
}

static int h_choice(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	return get_choice(p, k, v, &p->choice[k - specs]);
}

static int h_int(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	double d = k->def;
	int rc;

	if (v != NULL && (rc = get_int(p, k->path, v, k->lo, k->hi, &d)) != 0)
		return rc;
	*(uint32_t *)((char *)p->c + k->off) = (uint32_t)d * k->scale;
	return 0;
}

/* Set names: libipset limits them to 31 bytes; a leading '-' would read
 * as an option on an iptables-restore line. */
static int h_string(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	const char *s = k->defs[0];
	char **field = (char **)((char *)p->c + k->off);

	if (v != NULL && !cJSON_IsString(v))
		return fail(p, k->path, "expected a string");
	if (v != NULL)
		s = v->valuestring;
	if (!sets_name_valid(s))
		return fail(p, k->path,
			    "set names have 1..31 characters of A-Z a-z 0-9 "
			    "_ . - and do not start with '-'");
	return (*field = strdup(s)) != NULL ? 0 : -ENOMEM;
}

/* A unix socket path: absolute, and short enough for sun_path. */
static int h_path(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	const char *s = k->defs[0];
	char **field = (char **)((char *)p->c + k->off);

	if (v != NULL && !cJSON_IsString(v))
		return fail(p, k->path, "expected a string");
	if (v != NULL)
		s = v->valuestring;
	if (s[0] != '/')
		return fail(p, k->path, "expected an absolute path");
	if (strlen(s) > CONFIG_SOCKET_PATH_MAX)
		return fail(p, k->path, "longer than %d bytes",
			    CONFIG_SOCKET_PATH_MAX);
	return (*field = strdup(s)) != NULL ? 0 : -ENOMEM;
}

static int h_bool(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	if (v != NULL && !cJSON_IsBool(v))
		return fail(p, k->path, "expected true or false");
	p->choice[k - specs] = v == NULL ? k->def : cJSON_IsTrue(v) ? 1 : 0;
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
		e.len = c->listen[i].len;
		if (endpoint_eq(&e, &c->listen[i]))
			return true;
	}
	return false;
}

static int item_listen(struct pctx *p, const char *s, const char *path)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why = "";
	char val[72];

	show(s, val, sizeof(val));
	if (netaddr_parse_endpoint(s, true, 0, &ss, &len, &why) != 0)
		return fail(p, path, "\"%s\": %s", val, why);
	if (is_listen_addr(p->c, &ss))
		return fail(p, path, "\"%s\" is listed twice", val);
	return add_endpoint(&p->c->listen, &p->c->n_listen, &ss, len);
}

static int item_upstream(struct pctx *p, const char *s, const char *path)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why = "";
	char val[72];
	struct config_endpoint e;

	show(s, val, sizeof(val));
	if (netaddr_parse_endpoint(s, false, 53, &ss, &len, &why) != 0)
		return fail(p, path, "\"%s\": %s", val, why);
	if (is_listen_addr(p->c, &ss))
		return fail(p, path,
			    "\"%s\" is one of our listen addresses (a "
			    "forwarding loop)",
			    val);
	e.sa = ss;
	e.len = len;
	for (size_t i = 0; i < p->c->n_upstreams; i++) {
		if (endpoint_eq(&e, &p->c->upstreams[i]))
			return fail(p, path, "\"%s\" is listed twice", val);
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
		return fail(p, "upstreams",
			    "not set, and %s cannot be read: %s", path,
			    strerror(-r));
	if (p->c->n_upstreams == 0) {
		free(p->c->upstreams);
		r = resolvconf_read_trusted(saved, p->c->listen, p->c->n_listen,
					    &p->c->upstreams,
					    &p->c->n_upstreams);
		if (r < 0)
			return r;
	}
	if (p->c->n_upstreams == 0)
		return fail(
		    p, "upstreams",
		    "not set, and %s names no nameserver but our own "
		    "listen addresses (nor does a saved original in %s)",
		    path, saved);
	return 0;
}

static int h_upstreams(struct pctx *p, const struct key_spec *k, const cJSON *v)
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

static int item_name(struct pctx *p, const char *s, const char *path)
{
	char why[POLICY_WHY_MAX], val[72], *norm;
	size_t n;
	int rc;

	show(s, val, sizeof(val));
	if (!policy_pattern_valid(s, why, sizeof(why)))
		return fail(p, path, "\"%s\": %s", val, why);
	if ((norm = strdup(s)) == NULL)
		return -ENOMEM;
	for (char *c = norm; *c != '\0'; c++) {
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	}
	n = strlen(norm);
	if (n > 1 && norm[n - 1] == '.')
		norm[n - 1] = '\0';
	/* Duplicates are dropped once, in finish(): a check per entry here
	 * would make a 100k-entry list quadratic. */
	rc = append_string(&p->c->allow, &p->c->n_allow, norm);
	free(norm);
	return rc;
}

static int extra_hosts(struct pctx *p, const char *list)
{
	char path[PATH_LEN], *copy = strdup(list), *item, *rest;
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
		if ((rc = item_name(p, item, path)) != 0)
			goto out;
	}
out:
	free(copy);
	return rc;
}

static int item_ecosystem(struct pctx *p, const char *s, const char *path)
{
	const char *const *names = policy_preset_names();
	char known[512] = "", val[72];
	size_t o = 0;

	if (policy_preset_exists(s))
		return add_string(&p->c->ecosystems, &p->c->n_ecosystems, s);
	for (size_t i = 0; names[i] != NULL && o < sizeof(known); i++)
		o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s",
				      i ? ", " : "", names[i]);
	show(s, val, sizeof(val));
	return fail(p, path, "unknown preset \"%s\" (known: %s)", val, known);
}

static int item_port(struct pctx *p, const char *s, const char *path)
{
	struct config_port pt = {0};
	const char *num = s + 4, *dash;
	char val[72];

	show(s, val, sizeof(val));
	if (strncmp(s, "tcp/", 4) == 0)
		pt.proto = IPPROTO_TCP;
	else if (strncmp(s, "udp/", 4) == 0)
		pt.proto = IPPROTO_UDP;
	else
		return fail(p, path,
			    "\"%s\": expected \"tcp/N\", \"udp/N\" or "
			    "\"tcp/N-M\" (tcp or udp only)",
			    val);
	dash = strchr(num, '-');
	if (netaddr_parse_port(num, dash ? (size_t)(dash - num) : strlen(num),
			       &pt.first) != 0 ||
	    (dash != NULL &&
	     netaddr_parse_port(dash + 1, strlen(dash + 1), &pt.last) != 0))
		return fail(p, path, "\"%s\": ports are 1..65535", val);
	if (dash == NULL)
		pt.last = pt.first;
	if (pt.first > pt.last)
		return fail(p, path, "\"%s\": range is backwards", val);
	for (size_t i = 0; i < p->c->n_ports; i++) {
		if (memcmp(&p->c->ports[i], &pt, sizeof(pt)) == 0)
			return 0;
	}
	return push(&p->c->ports, &p->c->n_ports, sizeof(pt), &pt);
}

static int item_cidr(struct pctx *p, const char *s, const char *path)
{
	struct netcidr c;
	const char *why = "";
	char val[72];

	memset(&c, 0, sizeof(c));
	show(s, val, sizeof(val));
	if (netaddr_parse_cidr(s, &c, &why) != 0)
		return fail(p, path, "\"%s\": %s", val, why);
	for (size_t i = 0; i < p->c->n_allow_cidrs; i++) {
		if (p->c->allow_cidrs[i].prefix == c.prefix &&
		    netaddr_equal(&p->c->allow_cidrs[i].addr, &c.addr))
			return 0;
	}
	return push(&p->c->allow_cidrs, &p->c->n_allow_cidrs, sizeof(c), &c);
}

/* Interface names as the kernel and iptables take them (IFNAMSIZ, no '/',
 * ':' or blanks), narrowed to what is safe on an iptables-restore line. */
static int item_interface(struct pctx *p, const char *s, const char *path)
{
	size_t n = strlen(s), body = n;
	char val[72];

	show(s, val, sizeof(val));
	if (n > 0 && s[n - 1] == '+')
		body = n - 1;
	if (n == 0 || n > 15)
		return fail(p, path,
			    "\"%s\": interface names have 1..15 "
			    "characters",
			    val);
	if (strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		      "0123456789_.-") != body ||
	    s[0] == '-' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return fail(p, path,
			    "\"%s\": interface names use A-Z a-z 0-9 _ . - "
			    "(a '+' only at the end) and do not start with "
			    "'-'",
			    val);
	if (body == 0)
		return fail(p, path,
			    "\"+\" would match every interface, the "
			    "host's uplink and loopback included");
	if (strcmp(s, "lo") == 0 || (body < n && strncmp("lo", s, body) == 0))
		return fail(p, path,
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
static int item_host_allow(struct pctx *p, const char *s, const char *path)
{
	static const uint8_t zero[16];
	char val[72], ep[NETADDR_ENDPOINT_STRLEN],
	    norm[NETADDR_ENDPOINT_STRLEN + 8];
	struct sockaddr_storage ss;
	const char *why = "";
	struct netaddr a;
	socklen_t len;

	show(s, val, sizeof(val));
	if (strncmp(s, "tcp/", 4) != 0 && strncmp(s, "udp/", 4) != 0)
		return fail(p, path,
			    "\"%s\": expected \"tcp/addr:port\" or "
			    "\"udp/[v6]:port\"",
			    val);
	if (netaddr_parse_endpoint(s + 4, true, 0, &ss, &len, &why) != 0)
		return fail(p, path, "\"%s\": %s", val, why);
	netaddr_from_sockaddr((const struct sockaddr *)&ss, &a);
	if (memcmp(a.bytes, zero, a.family == AF_INET ? 4 : 16) == 0)
		return fail(p, path,
			    "\"%s\": a wildcard would open every address "
			    "of the host",
			    val);
	if (is_loopback_addr(&a))
		return fail(p, path,
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
static int check_scope(struct pctx *p)
{
	static const uint8_t zero[16];
	char path[PATH_LEN], val[NETADDR_ENDPOINT_STRLEN];
	struct netaddr a;

	p->c->scope =
	    choice_of(p, "scope") ? CONFIG_SCOPE_FORWARD : CONFIG_SCOPE_OUTPUT;
	if (p->c->scope == CONFIG_SCOPE_OUTPUT) {
		if (p->c->n_interfaces > 0)
			return fail(p, "interfaces",
				    "only used with \"scope\": \"forward\" "
				    "(the output scope fences this namespace "
				    "on every interface)");
		if (p->c->n_host_allow > 0)
			return fail(p, "host_allow",
				    "only used with \"scope\": \"forward\"");
		return 0;
	}
	if (p->c->n_interfaces == 0)
		return fail(p, "interfaces",
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
			return fail(p, path,
				    "\"%s\" is loopback, which the fenced "
				    "interfaces cannot reach: in forward scope "
				    "listen on the host side of them (the "
				    "bridge's gateway, e.g. \"172.30.0.1:53\"; "
				    "listen defaults to loopback)",
				    val);
		if (memcmp(a.bytes, zero, len) == 0)
			return fail(p, path,
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
static int h_user(struct pctx *p, const struct key_spec *k, const cJSON *v)
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
		return fail(p, k->path, "expected a user name or a uid");
	} else if (v != NULL) {
		s = v->valuestring;
		size_t n = strlen(s);
		if (n == 0 || n > USER_NAME_MAX)
			return fail(p, k->path, "user names have 1..%d bytes",
				    USER_NAME_MAX);
		for (size_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)s[i];
			if (ch <= 0x20 || ch == 0x7f || ch == ':')
				return fail(p, k->path,
					    "user names have no blanks, "
					    "control characters or ':'");
		}
	}
	return (p->c->user = strdup(s)) != NULL ? 0 : -ENOMEM;
}

static int h_metrics(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	const char *why = "";
	char val[72];

	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v))
		return fail(p, k->path, "expected \"addr:port\" or null");
	show(v->valuestring, val, sizeof(val));
	if (netaddr_parse_endpoint(v->valuestring, true, 0, &p->c->metrics.sa,
				   &p->c->metrics.len, &why) != 0)
		return fail(p, k->path, "\"%s\": %s", val, why);
	if (is_listen_addr(p->c, &p->c->metrics.sa))
		return fail(p, k->path, "\"%s\" is also a `listen` endpoint",
			    val);
	p->c->metrics_on = true;
	return 0;
}

/* An absolute path without control characters; one trailing '/' goes. */
static int h_state_dir(struct pctx *p, const struct key_spec *k, const cJSON *v)
{
	const char *s = k->defs[0];
	size_t n;

	if (v != NULL && !cJSON_IsString(v))
		return fail(p, k->path, "expected a string");
	if (v != NULL)
		s = v->valuestring;
	n = strlen(s);
	if (n < 2 || n > 200 || s[0] != '/')
		return fail(p, k->path,
			    "expected an absolute path of 2..200 "
			    "bytes, not the root");
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return fail(p, k->path, "control characters in path");
	}
	if ((p->c->state_dir = strdup(s)) == NULL)
		return -ENOMEM;
	if (p->c->state_dir[n - 1] == '/')
		p->c->state_dir[n - 1] = '\0';
	return 0;
}

static uint32_t choice_of(const struct pctx *p, const char *path)
{
	for (size_t i = 0; i < N_SPECS; i++) {
		if (strcmp(specs[i].path, path) == 0)
			return p->choice[i];
	}
	return 0;
}

/* What needs more than one key, or the environment. The file's mode is
 * validated even when DNSFENCE_MODE overrides it. */
static int finish(struct pctx *p)
{
	const char *env_mode = p->env != NULL ? p->env->mode : NULL;
	const uint32_t level = choice_of(p, "log.level");
	uint32_t mode = choice_of(p, "mode");
	char val[72];
	int rc;

	if (p->env != NULL && p->env->extra_hosts != NULL &&
	    (rc = extra_hosts(p, p->env->extra_hosts)) != 0)
		return rc;
	if ((rc = dedupe_strings(p->c->allow, &p->c->n_allow)) != 0)
		return rc;
	if (env_mode != NULL && *env_mode != '\0') {
		for (mode = 0; mode_names[mode] != NULL; mode++) {
			if (strcmp(env_mode, mode_names[mode]) == 0)
				break;
		}
		show(env_mode, val, sizeof(val));
		if (mode_names[mode] == NULL)
			return fail(p, "DNSFENCE_MODE",
				    "unknown mode \"%s\" (expected enforce, "
				    "audit or off)",
				    val);
	}
	p->c->mode = mode == 2	 ? CONFIG_MODE_OFF
		     : mode == 1 ? CONFIG_MODE_AUDIT
				 : CONFIG_MODE_ENFORCE;
	p->c->deny_rcode = choice_of(p, "deny_rcode") ? CONFIG_DENY_REFUSED
						      : CONFIG_DENY_NXDOMAIN;
	p->c->inbound_deny = choice_of(p, "inbound") == 1;
	p->c->log_level = level == 0   ? LOGL_ERR
			  : level == 1 ? LOGL_WARN
			  : level == 2 ? LOGL_INFO
				       : LOGL_DEBUG;
	p->c->log_format =
	    choice_of(p, "log.format") ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
	p->c->control_watch = choice_of(p, "control.watch") != 0;
	if (p->c->ttl_min > p->c->ttl_max)
		return fail(p, "ttl.min", "%u is greater than ttl.max (%u)",
			    p->c->ttl_min, p->c->ttl_max);
	if (strcmp(p->c->set4, p->c->set6) == 0)
		return fail(p, "sets.ipv6", "same name as sets.ipv4");
	return check_scope(p);
}

static void err_at(const char *text, size_t off, const char *what, char *err,
		   size_t errlen)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(err, errlen, "line %zu, column %zu: %s", line, col, what);
}

/* An escaped backslash before "u0000" is not an escape. */
static int check_nul_escape(const char *text, size_t len, char *err,
			    size_t errlen)
{
	for (size_t i = 0; i + 6 <= len; i++) {
		if (text[i] != '\\')
			continue;
		if (strncmp(text + i + 1, "u0000", 5) == 0) {
			err_at(text, i, "parse error (\\u0000 is not allowed)",
			       err, errlen);
			return -EINVAL;
		}
		i++; /* skip the escaped character */
	}
	return 0;
}

int config_parse(const char *text, size_t len, const struct config_env *env,
		 struct config **out, char *err, size_t errlen)
{
	const cJSON *given[N_SPECS] = {0};
	uint32_t choice[N_SPECS] = {0};
	struct pctx p = {env, NULL, err, errlen, given, choice};
	char *buf = NULL;
	const char *end = NULL;
	cJSON *root = NULL;
	int rc = -EINVAL;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((buf = malloc(len + 1)) == NULL ||
	    (p.c = calloc(1, sizeof(*p.c))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	if ((rc = check_nul_escape(buf, len, err, errlen)) != 0)
		goto out;
	root = cJSON_ParseWithLengthOpts(buf, len, &end, false);
	if (root != NULL && end != NULL) {
		end += strspn(end, " \t\r\n");
		if (end < buf + len) {
			err_at(buf, (size_t)(end - buf),
			       "parse error (data after the JSON value)", err,
			       errlen);
			rc = -EINVAL;
			goto out;
		}
	}
	if (root == NULL) {
		if (end == NULL || end < buf || end > buf + len)
			end = buf + len;
		err_at(buf, (size_t)(end - buf), "parse error", err, errlen);
		rc = -EINVAL;
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		rc = fail(&p, "top level", "expected a JSON object");
		goto out;
	}
	if ((rc = collect(&p, root, "")) != 0)
		goto out;
	for (size_t i = 0; i < N_SPECS; i++) {
		if (specs[i].parse == NULL)
			continue;
		if ((rc = specs[i].parse(&p, &specs[i], given[i])) != 0)
			goto out;
	}
	if ((rc = finish(&p)) != 0)
		goto out;
	*out = p.c;
	p.c = NULL;
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	cJSON_Delete(root);
	config_free(p.c);
	free(buf);
	return rc;
}

int config_load(const char *path, struct config **out, char *err, size_t errlen)
{
	const char *state = getenv("DNSFENCE_STATE_DIR");
	char saved[PATH_MAX];
	struct config_env env = {getenv("DNSFENCE_MODE"),
				 getenv("DNSFENCE_EXTRA_HOSTS"), NULL, NULL};
	char *text = NULL;
	size_t len = 0;
	FILE *f = NULL, *mem = NULL;
	char chunk[4096];
	size_t n;
	int rc;

	*out = NULL;
	if (state != NULL && *state != '\0' &&
	    snprintf(saved, sizeof(saved), "%s/resolv.conf.orig", state) <
		(int)sizeof(saved))
		env.saved_resolv_conf = saved;
	if (path == NULL)
		path = getenv("DNSFENCE_CONFIG");
	if (path == NULL || *path == '\0')
		path = CONFIG_DEFAULT_PATH;
	if ((f = fopen(path, "re")) == NULL) {
		rc = errno == ENOENT ? -ENOENT : -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if ((mem = open_memstream(&text, &len)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, mem);
	if (ferror(f)) {
		rc = -EIO;
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (fclose(mem) != 0) {
		mem = NULL;
		rc = -ENOMEM;
		goto out;
	}
	mem = NULL;
	rc = config_parse(text, len, &env, out, err, errlen);
	if (rc != 0) { /* name the file too */
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%s", err);
		snprintf(err, errlen, "%s: %s", path, tmp);
	}
out:
	if (mem != NULL)
		fclose(mem);
	if (f != NULL)
		fclose(f);
	free(text);
	return rc;
}

void config_free(struct config *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n_allow; i++)
		free(c->allow[i]);
	for (size_t i = 0; i < c->n_ecosystems; i++)
		free(c->ecosystems[i]);
	free(c->allow);
	free(c->ecosystems);
	free(c->listen);
	free(c->upstreams);
	free(c->ports);
	free(c->allow_cidrs);
	free(c->set4);
	free(c->set6);
	free(c->user);
	free(c->state_dir);
	for (size_t i = 0; i < c->n_interfaces; i++)
		free(c->interfaces[i]);
	free(c->interfaces);
	for (size_t i = 0; i < c->n_host_allow; i++)
		free(c->host_allow[i]);
	free(c->host_allow);
	free(c->control_socket);
	free(c);
}

const char *config_mode_name(enum config_mode m)
{
	return (unsigned)m < 3 ? mode_names[m] : "unknown";
}

const char *config_deny_name(enum config_deny d)
{
	return (unsigned)d < 2 ? deny_names[d] : "unknown";
}

const char *config_log_format_name(enum log_format f)
{
	return format_names[f == LOG_FORMAT_JSON];
}

const char *config_scope_name(enum config_scope s)
{
	return (unsigned)s < 2 ? scope_names[s] : "unknown";
}

/* Endpoints are built from zeroed storage, so bytes compare. */
static bool endpoint_eq(const struct config_endpoint *a,
			const struct config_endpoint *b)
{
	return a->len == b->len && memcmp(&a->sa, &b->sa, a->len) == 0;
}

static void print_cell_type(FILE *f, const struct key_spec *k)
{
	if (k->type != NULL)
		fprintf(f, "%s", k->type);
	else if (k->kind == K_INT)
		fprintf(f, "integer, %u..%u", k->lo, k->hi);
	else
		for (size_t i = 0; k->choices[i] != NULL; i++)
			fprintf(f, "%s`\"%s\"`", i ? " / " : "", k->choices[i]);
}

static void print_cell_default(FILE *f, const struct key_spec *k)
{
	if (k->def_doc != NULL)
		fprintf(f, "%s", k->def_doc);
	else if (k->kind == K_INT)
		fprintf(f, "`%u`", k->def);
	else if (k->kind == K_CHOICE)
		fprintf(f, "`\"%s\"`", k->choices[k->def]);
	else if (k->kind == K_STRING)
		fprintf(f, "`\"%s\"`", k->defs[0]);
	else if (k->kind == K_LIST) {
		fprintf(f, "`[");
		for (size_t i = 0; k->defs != NULL && k->defs[i] != NULL; i++)
			fprintf(f, "%s\"%s\"", i ? ", " : "", k->defs[i]);
		fprintf(f, "]`");
	}
}

void config_print_reference(FILE *f)
{
	fprintf(f,
		"# dnsfence configuration reference\n\n"
		"<!-- Generated from the key table in src/config.c "
		"(config_print_reference). Edit the table, not this file. -->"
		"\n\n"
		"The configuration is one JSON object, read from `-c FILE`, "
		"else `$DNSFENCE_CONFIG`, else `" CONFIG_DEFAULT_PATH "`. "
		"Every key is optional: the defaults give a working deny-all "
		"fence. Unknown keys, keys given twice, and values of the "
		"wrong type are errors (exit 2), and the message names the "
		"key path and the reason, for example "
		"`ttl.min: expected an integer` or "
		"`ports[0]: \"tcp/99999\": ports are 1..65535`. A key path "
		"`ttl.min` is the key `min` inside the object `ttl`.\n\n"
		"Integers are JSON numbers without a fraction. `dnsfence "
		"validate` prints the normalized configuration, with every "
		"default filled in.\n\n"
		"## Keys\n\n"
		"| key | type | default | meaning |\n"
		"|---|---|---|---|\n");
	for (size_t i = 0; i < N_SPECS; i++) {
		fprintf(f, "| `%s` | ", specs[i].path);
		print_cell_type(f, &specs[i]);
		fprintf(f, " | ");
		if (specs[i].kind != K_GROUP)
			print_cell_default(f, &specs[i]);
		fprintf(f, " | %s |\n", specs[i].meaning);
	}
	fprintf(f, "\n## Environment\n\n"
		   "| variable | meaning |\n"
		   "|---|---|\n");
	for (size_t i = 0; i < sizeof(env_specs) / sizeof(env_specs[0]); i++)
		fprintf(f, "| `%s` | %s |\n", env_specs[i].name,
			env_specs[i].meaning);
}
