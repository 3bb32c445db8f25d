// SPDX-License-Identifier: GPL-2.0-or-later
/* suggest: the command half of the learned allowlist.
 *
 * Collapsing: names are grouped by their parent (the name minus its first
 * label); a parent with SUGGEST_SIBLINGS or more distinct children
 * becomes `*.parent`, which then also covers deeper names below it. A
 * parent qualifies only when the child is strictly below its registrable
 * domain (libpsl's psl_registrable_domain), so the parent is that domain
 * or below it: `a.co.uk`, `b.co.uk`, `c.co.uk` stay three exact names,
 * since each is itself a registrable domain. The Public Suffix List is
 * psl_latest(): the newest of libpsl's built-in copy and the system's
 * (Debian's publicsuffix package). A wildcard covered by a broader chosen
 * one goes. The order of the output is sorted, so it diffs well.
 *
 * Presets come before collapsing: a preset two of whose hosts were
 * learned (all, for a smaller one) is proposed in "ecosystems" and takes
 * the names it holds, and only those, out of the list; the rest collapse
 * as above. prune judges a preset by its hosts, each an entry of its own
 * in usage.json.
 *
 * The names come from the running daemon over its control socket (so the
 * last lookup is in), else from STATE_DIR/suggest.json, which the daemon
 * rewrites every few seconds and at its end: after the run. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <libpsl.h>

#include "daemon/control.h"
#include "daemon/privs.h"
#include "base/statefs.h"
#include "base/log.h"
#include "config/policy.h"
#include "cli/suggest.h"
#include "observe/usage.h"

#define SYS	  "suggest"
#define STATE_MAX (16u << 20)

/* The record of a learned name beside its suggest_name (same index). */
struct seen {
	int64_t first_seen; /* wall clock; 0: not recorded */
	uint32_t uid;
	bool has_uid;
};

#define EXPLAIN_NAMES_MAX 64 /* names listed behind one wildcard */
#define EXPLAIN_UIDS_MAX  16

static const psl_ctx_t *psl(void);
static int cmp_str(const void *a, const void *b);
static bool covered(const char *name, char *const *wild, size_t n_wild);
static int push(char ***v, size_t *n, size_t *cap, const char *s);
static int pick_wildcards(const struct suggest_name *in, size_t n,
			  uint64_t min_count, char ***wild, size_t *n_wild);
static char *ask_daemon(const char *socket);
static char *read_state(const char *path, int *rc, char *err, size_t errlen);
static char *read_stream(FILE *f, const char *path, int *rc, char *err,
			 size_t errlen);
static int load_names(const cJSON *root, struct suggest_name **names,
		      struct seen **seen, size_t *n);
static void port_entry(double proto, double port, char *buf, size_t cap);
static size_t note_flows(const cJSON *root, char ports[][16]);
static void print_ports(FILE *out, const struct config *cfg, char ports[][16],
			size_t n);
static bool listed(const char *name, char *const *list, size_t n);
static size_t bare_len(const char *name);
static void print_allow(FILE *out, char *const *cfg_allow, size_t n_cfg,
			char *const *learned, size_t n_learned);
static int run(const struct config *cfg, uint64_t min_count, bool with_json,
	       FILE *out, char *err, size_t errlen);

static const psl_ctx_t *psl(void)
{
	return policy_psl();
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool suggest_never_proposed(const char *name)
{
	/* RFC 6761/7686/6762 names no upstream can answer: the probe and
	 * readiness names (*.dnsfence.invalid), localhost, Tor, mDNS.
	 * ".test" and ".example" are left: test networks serve them. */
	static const char *const tlds[] = {"invalid", "localhost", "onion",
					   "local", NULL};
	const char *dot = strrchr(name, '.');
	const char *tld = dot != NULL ? dot + 1 : name;

	for (size_t i = 0; tlds[i] != NULL; i++) {
		if (strcasecmp(tld, tlds[i]) == 0)
			return true;
	}
	return false;
}

/* One run of a label (between hyphens): NULL, "hex" or "base32/base64". */
static const char *run_kind(const char *r, size_t n)
{
	unsigned freq[256] = {0};
	size_t digits = 0, letters = 0, vowels = 0;
	bool hex = true;
	double bits = 0;

	if (n < SUGGEST_ENCODED_RUN)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)r[i];

		freq[c]++;
		if (isdigit(c))
			digits++;
		else if (isalpha(c) && ++letters > 0 &&
			 strchr("aeiouAEIOU", c) != NULL)
			vowels++;
		if (!isxdigit(c))
			hex = false;
	}
	if (hex && digits > 0 && letters > 0)
		return "hex";
	for (size_t c = 0; c < 256; c++) {
		double p = (double)freq[c] / (double)n;

		if (freq[c] > 0)
			bits -= p * log2(p);
	}
	if (bits >= SUGGEST_ENCODED_BITS &&
	    (digits >= 2 || (letters > 0 && vowels * 4 < letters)))
		return "base32/base64";
	return NULL;
}

bool suggest_looks_encoded(const char *name, char *label, size_t cap,
			   const char **kind)
{
	for (const char *l = name; *l != '\0';) {
		size_t len = strcspn(l, ".");

		for (size_t at = 0; at < len;) {
			size_t run = strcspn(l + at, "-.");

			if (run > len - at)
				run = len - at;
			*kind = run_kind(l + at, run);
			if (*kind != NULL) {
				snprintf(label, cap, "%.*s", (int)len, l);
				return true;
			}
			at += run + 1;
		}
		l += len;
		if (*l == '.')
			l++;
	}
	return false;
}

/* Does `*.w` for some w in wild match name (at any depth)? */
static bool covered(const char *name, char *const *wild, size_t n_wild)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < n_wild; i++) {
		const char *w = wild[i] + 2; /* past "*." */
		size_t wl = strlen(w);

		if (nl > wl + 1 && name[nl - wl - 1] == '.' &&
		    strcmp(name + nl - wl, w) == 0)
			return true;
	}
	return false;
}

static int push(char ***v, size_t *n, size_t *cap, const char *s)
{
	char *dup;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **nv = reallocarray(*v, c, sizeof(*nv));

		if (nv == NULL)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	if ((dup = strdup(s)) == NULL)
		return -ENOMEM;
	(*v)[(*n)++] = dup;
	return 0;
}

/* Parents with enough distinct children, as "*.parent", sorted, and none
 * covered by another. */
static int pick_wildcards(const struct suggest_name *in, size_t n,
			  uint64_t min_count, char ***wild, size_t *n_wild)
{
	const char **parents = calloc(n + 1, sizeof(*parents));
	size_t np = 0, cap = 0, run;
	char buf[300];
	int rc = 0;

	if (parents == NULL)
		return -ENOMEM;
	/* Distinct children: the eligible names, sorted, duplicates out. */
	for (size_t i = 0; i < n; i++) {
		if (in[i].count >= min_count &&
		    policy_wildcard_parent(in[i].name) != NULL)
			parents[np++] = in[i].name;
	}
	qsort(parents, np, sizeof(*parents), cmp_str);
	for (size_t i = 0, k = 0; i < np; i++) {
		if (k == 0 || strcmp(parents[k - 1], parents[i]) != 0)
			parents[k++] = parents[i];
		if (i + 1 == np)
			np = k;
	}
	for (size_t i = 0; i < np; i++)
		parents[i] = policy_wildcard_parent(parents[i]);
	qsort(parents, np, sizeof(*parents), cmp_str);
	for (size_t i = 0; i < np && rc == 0; i += run) {
		for (run = 1;
		     i + run < np && strcmp(parents[i], parents[i + run]) == 0;)
			run++;
		if (run < SUGGEST_SIBLINGS ||
		    (size_t)snprintf(buf, sizeof(buf), "*.%s", parents[i]) >=
			sizeof(buf))
			continue;
		rc = push(wild, n_wild, &cap, buf);
	}
	free(parents);
	/* Drop a wildcard that a broader one covers. */
	for (size_t i = 0; rc == 0 && i < *n_wild;) {
		if (covered((*wild)[i] + 2, *wild, *n_wild)) {
			free((*wild)[i]);
			memmove(&(*wild)[i], &(*wild)[i + 1],
				(*n_wild - i - 1) * sizeof(**wild));
			(*n_wild)--;
		} else {
			i++;
		}
	}
	return rc;
}

int suggest_collapse(const struct suggest_name *in, size_t n,
		     uint64_t min_count, char ***out, size_t *n_out)
{
	char **v = NULL;
	size_t nv = 0, cap, k = 0;
	int rc;

	*out = NULL;
	*n_out = 0;
	if (psl() == NULL)
		return -ENOENT;
	rc = pick_wildcards(in, n, min_count, &v, &nv);
	cap = nv;
	for (size_t i = 0, n_wild = nv; i < n && rc == 0; i++) {
		if (in[i].count < min_count ||
		    psl_is_public_suffix(psl(), in[i].name) ||
		    covered(in[i].name, v, n_wild))
			continue;
		rc = push(&v, &nv, &cap, in[i].name);
	}
	if (rc != 0) {
		suggest_free_list(v, nv);
		return rc;
	}
	if (nv > 0)
		qsort(v, nv, sizeof(*v), cmp_str);
	for (size_t i = 0; i < nv; i++) { /* unique */
		if (k > 0 && strcmp(v[k - 1], v[i]) == 0)
			free(v[i]);
		else
			v[k++] = v[i];
	}
	*out = v;
	*n_out = k;
	return 0;
}

void suggest_free_list(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

bool suggest_preset_holds(const char *preset, const char *name)
{
	const char *const *h = policy_preset_hosts(preset);

	for (; h != NULL && *h != NULL; h++) {
		if (policy_entry_matches(*h, name))
			return true;
	}
	return false;
}

size_t suggest_presets(const struct suggest_name *in, size_t n,
		       uint64_t min_count, const char **presets, size_t cap,
		       bool *taken)
{
	const char *const *names = policy_preset_names();
	size_t n_pre = 0;

	for (size_t i = 0; i < n; i++)
		taken[i] = false;
	for (; *names != NULL && n_pre < cap; names++) {
		const char *const *h = policy_preset_hosts(*names);
		size_t hosts = 0, seen = 0;

		/* Distinct hosts with a learned name each. */
		for (; h != NULL && *h != NULL; h++, hosts++) {
			bool any = false;

			for (size_t i = 0; i < n && !any; i++)
				any = in[i].count >= min_count &&
				      policy_entry_matches(*h, in[i].name);
			seen += any;
		}
		if (seen == 0 || seen < (hosts < SUGGEST_PRESET_HOSTS
					     ? hosts
					     : SUGGEST_PRESET_HOSTS))
			continue;
		presets[n_pre++] = *names;
		for (size_t i = 0; i < n; i++) {
			if (in[i].count >= min_count &&
			    suggest_preset_holds(*names, in[i].name))
				taken[i] = true;
		}
	}
	return n_pre;
}

/* The running daemon's state, over its control socket: NULL when no
 * daemon answers there (or it refuses, or says too much). */
static char *ask_daemon(const char *socket)
{
	char *text = NULL, err[256];
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	int rc;

	if (mem == NULL)
		return NULL;
	rc = control_call(socket, "suggest", CONTROL_IO_TIMEOUT * 2, mem, err,
			  sizeof(err));
	if (fclose(mem) != 0 || rc != 0 || len == 0 || len > STATE_MAX) {
		if (rc > 0)
			log_debug(SYS, "the daemon on %s: %s", socket, err);
		free(text);
		return NULL;
	}
	return text;
}

static char *read_state(const char *path, int *rc, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		*rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	return read_stream(f, path, rc, err, errlen);
}

char *suggest_read_state(const struct config *cfg, const char *name, int *rc,
			 char *err, size_t errlen)
{
	char path[512], why[256];
	uid_t uid = 0;
	gid_t gid = 0;
	int dfd, fd;
	FILE *f;

	if (cfg->user == NULL ||
	    privs_lookup(cfg->user, &uid, &gid, why, sizeof(why)) != 0)
		uid = 0; /* then root's (or ours) only */
	snprintf(path, sizeof(path), "%s/%s", cfg->state_dir, name);
	dfd = statefs_open_dir(cfg->state_dir, uid, err, errlen);
	if (dfd < 0) {
		*rc = dfd;
		return NULL;
	}
	fd = statefs_open_file(dfd, cfg->state_dir, name, uid, err, errlen);
	close(dfd);
	if (fd < 0 || (f = fdopen(fd, "r")) == NULL) {
		*rc = fd < 0 ? fd : -errno;
		if (fd >= 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
		}
		return NULL;
	}
	return read_stream(f, path, rc, err, errlen);
}

/* f's text (f closed), at most STATE_MAX bytes. */
static char *read_stream(FILE *f, const char *path, int *rc, char *err,
			 size_t errlen)
{
	char *text = NULL;
	size_t len = 0, n;

	*rc = -EIO;
	text = malloc(STATE_MAX + 1);
	if (text != NULL) {
		while ((n = fread(text + len, 1, STATE_MAX - len, f)) > 0)
			len += n;
		text[len] = '\0';
	}
	if (text == NULL || ferror(f) || len == STATE_MAX) {
		snprintf(err, errlen, "%s: cannot read it (over %u bytes?)",
			 path, STATE_MAX);
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

static int load_names(const cJSON *root, struct suggest_name **names,
		      struct seen **seen, size_t *n)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "names");
	const cJSON *it;
	int size = cJSON_GetArraySize(arr);

	*n = 0;
	*names = calloc((size_t)size + 1, sizeof(**names));
	*seen = calloc((size_t)size + 1, sizeof(**seen));
	if (*names == NULL || *seen == NULL)
		return -ENOMEM;
	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "count");

		if (!cJSON_IsString(nm) || !cJSON_IsNumber(c) ||
		    c->valuedouble < 0 ||
		    suggest_never_proposed(nm->valuestring))
			continue;
		const cJSON *f =
		    cJSON_GetObjectItemCaseSensitive(it, "first_seen");
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, "uid");

		(*seen)[*n].first_seen =
		    cJSON_IsNumber(f) ? (int64_t)f->valuedouble : 0;
		(*seen)[*n].has_uid = cJSON_IsNumber(u) && u->valuedouble >= 0;
		(*seen)[*n].uid =
		    (*seen)[*n].has_uid ? (uint32_t)u->valuedouble : 0;
		(*names)[*n].name = nm->valuestring;
		(*names)[(*n)++].count = (uint64_t)c->valuedouble;
	}
	return 0;
}

/* "tcp/22" for a flow's protocol number and port. */
static void port_entry(double proto, double port, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%.0f",
		 proto == IPPROTO_TCP	? "tcp"
		 : proto == IPPROTO_UDP ? "udp"
					: "proto",
		 port);
}

/* Each blocked flow, said as what it is, in the log; a flow refused by
 * its port, to an address answered for a name, is what a `ports` entry
 * fixes: those entries go to ports (at most SUGGEST_PORTS_MAX). */
static size_t note_flows(const cJSON *root, char ports[][16])
{
	const cJSON *it, *arr = cJSON_GetObjectItemCaseSensitive(root, "flows");
	size_t n_ports = 0;

	cJSON_ArrayForEach(it, arr)
	{
		const char *dst = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "dst"));
		const char *why = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "reason"));
		const char *name = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "name"));
		const cJSON *port =
		    cJSON_GetObjectItemCaseSensitive(it, "port");
		const cJSON *proto =
		    cJSON_GetObjectItemCaseSensitive(it, "proto");
		const cJSON *cnt =
		    cJSON_GetObjectItemCaseSensitive(it, "count");
		char pe[16];
		bool fresh = true;

		if (dst == NULL || why == NULL || !cJSON_IsNumber(port) ||
		    !cJSON_IsNumber(proto) || !cJSON_IsNumber(cnt))
			continue;
		port_entry(proto->valuedouble, port->valuedouble, pe,
			   sizeof(pe));
		if (strcmp(why, "dns") == 0) {
			log_warn(
			    SYS,
			    "%.0f DNS quer%s went straight to %s port "
			    "%.0f, bypassing dnsfence: no allow entry or "
			    "port fixes that; point the program's resolver "
			    "at dnsfence (resolv.conf, or its own DNS "
			    "setting)",
			    cnt->valuedouble,
			    cnt->valuedouble == 1 ? "y" : "ies", dst,
			    port->valuedouble);
			continue;
		}
		if (strcmp(why, "port") == 0 && name != NULL &&
		    name[0] != '\0') {
			log_warn(SYS,
				 "%.0f blocked flow(s) to %s %s, answered for "
				 "%s: its port is not in `ports`; the "
				 "suggestion adds \"%s\" to \"ports\"",
				 cnt->valuedouble, dst, pe, name, pe);
			for (size_t k = 0; k < n_ports && fresh; k++)
				fresh = strcmp(ports[k], pe) != 0;
			if (fresh && n_ports < SUGGEST_PORTS_MAX)
				snprintf(ports[n_ports++], 16, "%s", pe);
			continue;
		}
		log_warn(SYS,
			 "%.0f blocked flow(s) to %s %s (%s): no name the "
			 "workload asked dnsfence for explains them (an "
			 "address it never looked up here); `allow_cidrs` "
			 "admits an address without DNS",
			 cnt->valuedouble, dst, pe, why);
	}
	return n_ports;
}

/* "ports": the config's entries, then the ones the flows need. */
static void print_ports(FILE *out, const struct config *cfg, char ports[][16],
			size_t n)
{
	fprintf(out, ",\n  \"ports\": [");
	for (size_t i = 0; i < cfg->n_ports; i++) {
		const struct config_port *p = &cfg->ports[i];
		const char *pn = p->proto == IPPROTO_TCP ? "tcp" : "udp";

		if (p->first == p->last)
			fprintf(out, "%s\"%s/%u\"", i ? ", " : "", pn,
				(unsigned)p->first);
		else
			fprintf(out, "%s\"%s/%u-%u\"", i ? ", " : "", pn,
				(unsigned)p->first, (unsigned)p->last);
	}
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s\"%s\"", cfg->n_ports + i ? ", " : "",
			ports[i]);
	fprintf(out, "]");
}

static void print_allow(FILE *out, char *const *cfg_allow, size_t n_cfg,
			char *const *learned, size_t n_learned)
{
	size_t k = 0;

	fprintf(out, "{\n  \"allow\": [");
	for (size_t i = 0; i < n_cfg + n_learned; i++) {
		const char *s = i < n_cfg ? cfg_allow[i] : learned[i - n_cfg];
		bool dup = false;
		cJSON *js;
		char *q;

		for (size_t j = 0; i >= n_cfg && j < n_cfg && !dup; j++)
			dup = strcmp(cfg_allow[j], s) == 0;
		if (dup)
			continue;
		js = cJSON_CreateString(s);
		q = js != NULL ? cJSON_PrintUnformatted(js) : NULL;
		fprintf(out, "%s\n    %s", k++ ? "," : "", q ? q : "\"\"");
		free(q);
		cJSON_Delete(js);
	}
	fprintf(out, "%s]", k ? "\n  " : "");
}

/* Is in (a learned name) behind entry (exact, or "*.parent")? */
static bool behind(const char *entry, const char *name)
{
	char *w = (char *)entry;

	if (strncmp(entry, "*.", 2) == 0)
		return covered(name, &w, 1);
	return strcasecmp(entry, name) == 0;
}

static void iso_time(int64_t t, char *buf, size_t cap)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, cap, "unknown");
}

/* entry's names that look encoded: said on stderr (always: a wildcard
 * never hides them silently); the warning text in warn ("" when none). */
static void encoded_warning(const char *entry, const struct suggest_name *in,
			    size_t n, uint64_t min_count, char *warn,
			    size_t cap)
{
	char label[64], first[96] = "";
	const char *kind = NULL, *first_kind = "";
	size_t behind_n = 0, enc = 0;

	warn[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (in[i].count < min_count || !behind(entry, in[i].name))
			continue;
		behind_n++;
		if (!suggest_looks_encoded(in[i].name, label, sizeof(label),
					   &kind))
			continue;
		if (enc++ == 0) {
			snprintf(first, sizeof(first), "%s", label);
			first_kind = kind;
		}
	}
	if (enc == 0)
		return;
	if (strncmp(entry, "*.", 2) == 0)
		snprintf(warn, cap,
			 "%zu of the %zu names behind %s have labels that look "
			 "like encoded data (%s, such as '%s'): the "
			 "exfiltration pattern; allow it only if you know "
			 "what sends them",
			 enc, behind_n, entry, first_kind, first);
	else
		snprintf(warn, cap,
			 "%s has a label that looks like encoded data (%s, "
			 "'%s'): the exfiltration pattern; allow it only if "
			 "you know what sends it",
			 entry, first_kind, first);
	log_warn(SYS, "%s", warn);
}

/* One learned entry's record for --explain, or with preset that
 * preset's ("ecosystem", entry its name, and the names it covers); NULL
 * on ENOMEM. */
static cJSON *explain_entry(const char *entry, bool preset,
			    const struct suggest_name *in,
			    const struct seen *seen, size_t n,
			    uint64_t min_count, const char *warn)
{
	cJSON *o = cJSON_CreateObject(), *names = NULL, *uids;
	uint32_t uid[EXPLAIN_UIDS_MAX];
	size_t n_uid = 0, n_names = 0;
	uint64_t count = 0;
	int64_t first = 0;
	char when[32];
	bool wild = preset || strncmp(entry, "*.", 2) == 0;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, preset ? "ecosystem" : "entry", entry);
	uids = cJSON_AddArrayToObject(o, "uids");
	if (wild)
		names = cJSON_AddArrayToObject(o, "names");
	for (size_t i = 0; i < n; i++) {
		bool known = false;

		if (in[i].count < min_count ||
		    !(preset ? suggest_preset_holds(entry, in[i].name)
			     : behind(entry, in[i].name)))
			continue;
		count += in[i].count;
		if (seen[i].first_seen > 0 &&
		    (first == 0 || seen[i].first_seen < first))
			first = seen[i].first_seen;
		for (size_t k = 0; k < n_uid && seen[i].has_uid; k++)
			known = known || uid[k] == seen[i].uid;
		if (seen[i].has_uid && !known && n_uid < EXPLAIN_UIDS_MAX) {
			uid[n_uid++] = seen[i].uid;
			cJSON_AddItemToArray(uids,
					     cJSON_CreateNumber(seen[i].uid));
		}
		if (names != NULL && n_names++ < EXPLAIN_NAMES_MAX)
			cJSON_AddItemToArray(names,
					     cJSON_CreateString(in[i].name));
	}
	cJSON_AddNumberToObject(o, "count", (double)count);
	iso_time(first, when, sizeof(when));
	cJSON_AddStringToObject(o, "first_seen", when);
	if (wild && n_names > EXPLAIN_NAMES_MAX)
		cJSON_AddNumberToObject(o, "names_not_listed",
					(double)(n_names - EXPLAIN_NAMES_MAX));
	if (warn[0] != '\0')
		cJSON_AddStringToObject(o, "warning", warn);
	return o;
}

/* What was learned: the allow entries from the names no proposed preset
 * took (rest), the proposed presets from all of them. */
struct learned {
	char **allow;
	size_t n_allow;
	const char *presets[SUGGEST_PRESETS_MAX];
	size_t n_presets;
	const struct suggest_name *in, *rest;
	const struct seen *seen, *rest_seen;
	size_t n, n_rest;
};

/* The warnings for every learned entry (stderr), and with explain the
 * "explain" array on out: the allow entries, then the presets. */
static int explain(FILE *out, bool with_json, const struct learned *l,
		   uint64_t min_count)
{
	char warn[512];

	if (with_json)
		fprintf(out, ",\n  \"explain\": [");
	for (size_t i = 0; i < l->n_allow + l->n_presets; i++) {
		bool pre = i >= l->n_allow;
		cJSON *o;
		char *text;

		warn[0] = '\0';
		if (!pre)
			encoded_warning(l->allow[i], l->rest, l->n_rest,
					min_count, warn, sizeof(warn));
		if (!with_json)
			continue;
		o = pre ? explain_entry(l->presets[i - l->n_allow], true, l->in,
					l->seen, l->n, min_count, warn)
			: explain_entry(l->allow[i], false, l->rest,
					l->rest_seen, l->n_rest, min_count,
					warn);
		text = o != NULL ? cJSON_PrintUnformatted(o) : NULL;
		cJSON_Delete(o);
		if (text == NULL)
			return -ENOMEM;
		fprintf(out, "%s\n    %s", i > 0 ? "," : "", text);
		free(text);
	}
	if (with_json)
		fprintf(out, "%s]",
			l->n_allow + l->n_presets > 0 ? "\n  " : "");
	return 0;
}

/* "ecosystems": cfg's, then those in add it lacks. */
static void print_ecosystems(FILE *out, const struct config *cfg,
			     const char *const *add, size_t n_add)
{
	size_t k = 0;

	fprintf(out, ",\n  \"ecosystems\": [");
	for (size_t i = 0; i < cfg->n_ecosystems; i++)
		fprintf(out, "%s\"%s\"", k++ ? ", " : "", cfg->ecosystems[i]);
	for (size_t i = 0; i < n_add; i++) {
		bool dup = false;

		for (size_t j = 0; j < cfg->n_ecosystems && !dup; j++)
			dup = strcmp(cfg->ecosystems[j], add[i]) == 0;
		if (!dup)
			fprintf(out, "%s\"%s\"", k++ ? ", " : "", add[i]);
	}
	fprintf(out, "]");
}

int suggest_run(const struct config *cfg, uint64_t min_count, FILE *out,
		char *err, size_t errlen)
{
	return run(cfg, min_count, false, out, err, errlen);
}

int suggest_run_explained(const struct config *cfg, uint64_t min_count,
			  FILE *out, char *err, size_t errlen)
{
	return run(cfg, min_count, true, out, err, errlen);
}

/* rc (-ENOMEM, or -ENOENT: no Public Suffix List), said in err. */
static int failed(int rc, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s",
		 rc == -ENOENT ? "cannot load the Public Suffix List"
			       : "out of memory");
	return rc;
}

static int run(const struct config *cfg, uint64_t min_count, bool with_json,
	       FILE *out, char *err, size_t errlen)
{
	char path[512], *text = NULL;
	char ports[SUGGEST_PORTS_MAX][16];
	struct suggest_name *names = NULL, *rest = NULL;
	struct seen *seen = NULL, *rest_seen = NULL;
	struct learned l = {0};
	bool *taken = NULL;
	size_t n = 0, n_ports;
	cJSON *root = NULL;
	int rc = -EINVAL;

	snprintf(path, sizeof(path), "%s/suggest.json", cfg->state_dir);
	text = ask_daemon(cfg->control_socket);
	if (text != NULL)
		snprintf(path, sizeof(path), "%s", cfg->control_socket);
	else if ((text = suggest_read_state(cfg, "suggest.json", &rc, err,
					    errlen)) == NULL)
		goto out;
	rc = -EINVAL;
	root = cJSON_Parse(text);
	if (!cJSON_IsObject(root)) {
		snprintf(err, errlen, "%s: not a dnsfence state file", path);
		goto out;
	}
	if ((rc = load_names(root, &names, &seen, &n)) == 0) {
		rc = -ENOMEM;
		taken = calloc(n + 1, sizeof(*taken));
		rest = calloc(n + 1, sizeof(*rest));
		rest_seen = calloc(n + 1, sizeof(*rest_seen));
	}
	if (taken == NULL || rest == NULL || rest_seen == NULL) {
		rc = failed(rc, err, errlen);
		goto out;
	}
	/* The presets first; the names they do not hold are collapsed. */
	l.n_presets = suggest_presets(names, n, min_count, l.presets,
				      SUGGEST_PRESETS_MAX, taken);
	for (size_t i = 0; i < n; i++) {
		if (taken[i])
			continue;
		rest_seen[l.n_rest] = seen[i];
		rest[l.n_rest++] = names[i];
	}
	l.in = names;
	l.seen = seen;
	l.n = n;
	l.rest = rest;
	l.rest_seen = rest_seen;
	if ((rc = suggest_collapse(rest, l.n_rest, min_count, &l.allow,
				   &l.n_allow)) != 0) {
		rc = failed(rc, err, errlen);
		goto out;
	}
	n_ports = note_flows(root, ports);
	print_allow(out, cfg->allow, cfg->n_allow, l.allow, l.n_allow);
	if (cfg->n_ecosystems + l.n_presets > 0)
		print_ecosystems(out, cfg, l.presets, l.n_presets);
	if (n_ports > 0)
		print_ports(out, cfg, ports, n_ports);
	if ((rc = explain(out, with_json, &l, min_count)) != 0)
		rc = failed(rc, err, errlen);
	else
		fprintf(out, "\n}\n");
out:
	suggest_free_list(l.allow, l.n_allow);
	free(rest_seen);
	free(rest);
	free(taken);
	free(seen);
	free(names);
	cJSON_Delete(root);
	free(text);
	return rc;
}

/* name's clock in usage.json's entries: its last use (a question or a
 * flow), or when the daemon first had it; -1 when the file does not know
 * it. */
static double last_use(const cJSON *arr, const char *name)
{
	const cJSON *it;
	double ref = -1;

	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "entry");
		const cJSON *f =
		    cJSON_GetObjectItemCaseSensitive(it, "first_seen");
		const cJSON *l =
		    cJSON_GetObjectItemCaseSensitive(it, "last_used");

		if (cJSON_IsString(n) && cJSON_IsNumber(f) &&
		    cJSON_IsNumber(l) && strcmp(n->valuestring, name) == 0)
			ref = l->valuedouble > f->valuedouble ? l->valuedouble
							      : f->valuedouble;
	}
	return ref;
}

/* cfg's ecosystems without those none of whose hosts usage.json (arr)
 * says was used for unused_s (each host an entry of its own there; a
 * preset with a host it does not know is kept), as "ecosystems". */
static int prune_presets(const struct config *cfg, const cJSON *arr,
			 int64_t unused_s, int64_t now, FILE *out,
			 FILE *err_out)
{
	const char **kept = calloc(cfg->n_ecosystems + 1, sizeof(*kept));
	size_t n_kept = 0;

	if (kept == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->n_ecosystems; i++) {
		const char *const *h = policy_preset_hosts(cfg->ecosystems[i]);
		double newest = -1, ref;
		size_t hosts = 0;
		bool unused = h != NULL && *h != NULL;

		for (; unused && *h != NULL; h++, hosts++) {
			ref = last_use(arr, *h);
			unused =
			    ref > 0 && (double)now - ref >= (double)unused_s;
			newest = ref > newest ? ref : newest;
		}
		if (unused) {
			fprintf(err_out,
				"pruned ecosystem %s: none of its %zu hosts "
				"used for %.0f s\n",
				cfg->ecosystems[i], hosts,
				(double)now - newest);
			continue;
		}
		kept[n_kept++] = cfg->ecosystems[i];
	}
	fprintf(out, ",\n  \"ecosystems\": [");
	for (size_t i = 0; i < n_kept; i++)
		fprintf(out, "%s\"%s\"", i ? ", " : "", kept[i]);
	fprintf(out, "]");
	free(kept);
	return 0;
}

/* `dnsfence prune`: cfg's allow without what usage.json says has gone
 * unused for unused_s (last_use's clock). An entry the file does not
 * know is kept; so is a preset with such a host. */
int suggest_prune(const struct config *cfg, int64_t unused_s, FILE *out,
		  FILE *err_out, char *err, size_t errlen)
{
	char path[512], *text = NULL, **kept = NULL;
	int64_t now = (int64_t)time(NULL);
	const cJSON *arr;
	cJSON *root = NULL;
	size_t n_kept = 0;
	int rc = -EINVAL;

	snprintf(path, sizeof(path), "%s/" USAGE_FILE, cfg->state_dir);
	if ((text = suggest_read_state(cfg, USAGE_FILE, &rc, err, errlen)) ==
	    NULL)
		goto out;
	rc = -EINVAL;
	root = cJSON_Parse(text);
	arr = cJSON_GetObjectItemCaseSensitive(root, "entries");
	if (!cJSON_IsArray(arr)) {
		snprintf(err, errlen, "%s: not a dnsfence usage file", path);
		goto out;
	}
	rc = -ENOMEM;
	if (cfg->n_allow > 0 &&
	    (kept = calloc(cfg->n_allow, sizeof(*kept))) == NULL)
		goto out;
	for (size_t i = 0; i < cfg->n_allow; i++) {
		double ref = last_use(arr, cfg->allow[i]);

		if (ref > 0 && (double)now - ref >= (double)unused_s) {
			fprintf(err_out, "pruned %s: unused for %.0f s\n",
				cfg->allow[i], (double)now - ref);
			continue;
		}
		kept[n_kept++] = cfg->allow[i];
	}
	print_allow(out, kept, n_kept, NULL, 0);
	if (cfg->n_ecosystems > 0 &&
	    prune_presets(cfg, arr, unused_s, now, out, err_out) != 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	fprintf(out, "\n}\n");
	rc = 0;
out:
	free(kept);
	cJSON_Delete(root);
	free(text);
	return rc;
}

/* A name's length without its trailing dot. */
static size_t bare_len(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && name[len - 1] == '.' ? len - 1 : len;
}

/* Is name in list? Any case; a trailing dot on either side ignored. */
static bool listed(const char *name, char *const *list, size_t n)
{
	size_t len = bare_len(name);

	for (size_t i = 0; i < n; i++) {
		if (bare_len(list[i]) == len &&
		    strncasecmp(list[i], name, len) == 0)
			return true;
	}
	return false;
}

/* "+ WHATNAME" for each string of arr that mine lacks, "- WHATNAME" for
 * each of mine arr lacks (what: "" or "ecosystem "). The number of
 * differences, or -errno with err set (key names arr there). */
static int diff_list(FILE *out, const char *what, char *const *mine,
		     size_t n_mine, const cJSON *arr, const char *path,
		     const char *key, char *err, size_t errlen)
{
	char **other =
	    calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*other));
	const cJSON *it;
	size_t n = 0;
	int rc = -ENOMEM, diffs = 0;

	if (other == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(it, arr)
	{
		if (!cJSON_IsString(it)) {
			rc = -EINVAL;
			snprintf(err, errlen, "%s: %s[%zu] is not a string",
				 path, key, n);
			goto out;
		}
		other[n++] = it->valuestring;
	}
	for (size_t i = 0; i < n; i++) {
		if (!listed(other[i], mine, n_mine) &&
		    !listed(other[i], other, i)) {
			fprintf(out, "+ %s%s\n", what, other[i]);
			diffs++;
		}
	}
	for (size_t i = 0; i < n_mine; i++) {
		if (!listed(mine[i], other, n)) {
			fprintf(out, "- %s%s\n", what, mine[i]);
			diffs++;
		}
	}
	rc = diffs;
out:
	free(other);
	return rc;
}

int suggest_diff(const struct config *cfg, const char *path, FILE *out,
		 char *err, size_t errlen)
{
	const cJSON *arr, *eco;
	char *text = NULL;
	cJSON *root = NULL;
	int rc = -EINVAL, more = 0;

	if ((text = read_state(path, &rc, err, errlen)) == NULL)
		goto out;
	rc = -EINVAL;
	root = cJSON_Parse(text);
	arr = cJSON_GetObjectItemCaseSensitive(root, "allow");
	eco = cJSON_GetObjectItemCaseSensitive(root, "ecosystems");
	if (!cJSON_IsArray(arr) || (eco != NULL && !cJSON_IsArray(eco))) {
		snprintf(err, errlen, "%s: %s", path,
			 cJSON_IsArray(arr) ? "\"ecosystems\" is not an array"
					    : "no \"allow\" array");
		goto out;
	}
	rc = diff_list(out, "", cfg->allow, cfg->n_allow, arr, path, "allow",
		       err, errlen);
	if (rc >= 0 && eco != NULL)
		more = diff_list(out, "ecosystem ", cfg->ecosystems,
				 cfg->n_ecosystems, eco, path, "ecosystems",
				 err, errlen);
	rc = more < 0 ? more : rc + more;
out:
	cJSON_Delete(root);
	free(text);
	return rc;
}
