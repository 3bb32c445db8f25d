// SPDX-License-Identifier: GPL-2.0-or-later
/* policy: the compiled allowlist and the ecosystem presets.
 *
 * An entry is either an exact name ("example.com") or a wildcard
 * ("*.example.com": every name strictly below example.com). Both are
 * compiled to lower-cased, uncompressed wire format and kept in two
 * open-addressing hash sets: one of exact names, one of wildcard parents
 * ("suffixes"). A lookup lower-cases the query name into a stack buffer,
 * probes the exact set once, then probes the suffix set with each proper
 * suffix (one label dropped at a time, the root excluded): O(labels),
 * whatever the size of the list, and no allocation per lookup.
 *
 * Matching on wire format keeps it label-aligned: a label that contains a
 * '.' byte stays one label, so "x.allowed" under "test" can never be
 * taken for two labels and match "*.allowed.test".
 *
 * The hash is SipHash-1-3 keyed with a per-process random seed from
 * getrandom(), so nobody can precompute names that collide in our tables.
 * Keys live in one byte arena per set (length byte, then the wire name);
 * a slot holds 32 bits of the hash and the key's offset in the arena, so
 * growing the arena never invalidates a slot.
 *
 * The preset table lives here too (rather than in its own file) so that
 * every module that links "policy" gets the presets with it. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/log.h"
#include "config/policy.h"

#define NAME_WIRE_MAX 255 /* RFC 1035 3.1, root label included */
#define NAME_TEXT_MAX 253 /* without the trailing dot */
#define LABEL_MAX     63
#define SET_MIN_CAP   16
#define SET_MAX_CAP   ((size_t)1 << 30)
#define ARENA_MAX     ((size_t)UINT32_MAX - NAME_WIRE_MAX - 2)

struct slot {
	uint32_t hash; /* low 32 bits of the key's hash */
	uint32_t off;  /* offset of the key in the arena, plus one; 0: empty */
};

struct nameset {
	struct slot *slots;
	size_t cap; /* a power of two, or 0 before the first insert */
	size_t count;
	uint8_t *arena; /* keys: one length byte, then the wire name */
	size_t arena_len, arena_cap;
};

struct policy {
	struct nameset exact;
	struct nameset suffix;	  /* the parents of wildcard entries */
	char why[POLICY_WHY_MAX]; /* policy_add's reason, when not static */
};

struct preset {
	const char *name;
	const char *const *hosts;
};

static void seed_init(void);
static uint64_t name_hash(const uint8_t *key, size_t len);
static int strip_wild(const char *text, size_t len, bool allow_wild, bool *wild,
		      const char **why);
static int text_to_wire(const char *text, bool allow_wild, uint8_t *out,
			size_t *out_len, bool *wild, const char **why,
			char *buf);
static const char *bad_char_reason(unsigned char c, char *buf);
static bool host_char_ok(unsigned char c);
static unsigned char lower(unsigned char c);
static bool set_lookup(const struct nameset *s, const uint8_t *key, size_t len);
static int set_insert(struct nameset *s, const uint8_t *key, size_t len);
static int set_grow(struct nameset *s);
static void set_place(struct slot *slots, size_t cap, uint32_t hash,
		      uint32_t off);
static int arena_append(struct nameset *s, const uint8_t *key, size_t len,
			uint32_t *off);
static void set_free(struct nameset *s);
static bool match_lower(const struct policy *p, const uint8_t *name, size_t len,
			const uint8_t *starts, size_t n_labels,
			struct policy_hit *hit);
static const struct preset *preset_find(const char *name);
static void wire_text(const uint8_t *w, size_t len, char *out, size_t cap);
static void psl_init(void);

/* ---- presets ----
 * The public hostnames each ecosystem's client contacts by default.
 * docs/ecosystems.md says why each host is here; keep the two in step. */

static const char *const hosts_npm[] = {
    "registry.npmjs.org",   /* metadata and tarballs */
    "registry.yarnpkg.com", /* yarn v1's default registry (an npm mirror) */
    "repo.yarnpkg.com",	    /* yarn berry's default npm registry */
    "nodejs.org",	    /* node-gyp downloads the node headers */
    NULL,
};

static const char *const hosts_pypi[] = {
    "pypi.org",		      /* the simple index and JSON API */
    "files.pythonhosted.org", /* sdists and wheels */
    "pypi.python.org",	      /* legacy index URL, redirects to pypi.org */
    NULL,
};

static const char *const hosts_crates[] = {
    "crates.io",	/* web API; git index download redirector */
    "index.crates.io",	/* sparse index (cargo >= 1.70 default) */
    "static.crates.io", /* .crate downloads */
    NULL,
};

static const char *const hosts_go[] = {
    "proxy.golang.org",	      /* GOPROXY default: modules and toolchains */
    "sum.golang.org",	      /* GOSUMDB default: checksum database */
    "storage.googleapis.com", /* proxy.golang.org 302s .zip downloads */
    NULL,
};

static const char *const hosts_maven[] = {
    "repo.maven.apache.org",	    /* Maven Central, Maven's default URL */
    "repo1.maven.org",		    /* Maven Central, Gradle's mavenCentral() */
    "services.gradle.org",	    /* gradle wrapper distributions */
    "downloads.gradle.org",	    /* where services.gradle.org redirects */
    "plugins.gradle.org",	    /* Gradle plugin portal */
    "plugins-artifacts.gradle.org", /* plugin portal artifacts */
    NULL,
};

static const char *const hosts_rubygems[] = {
    "rubygems.org",	  /* API and .gem downloads */
    "index.rubygems.org", /* bundler's compact index */
    NULL,
};

static const char *const hosts_nuget[] = {
    "api.nuget.org", /* v3 service index, flat container */
    "www.nuget.org", /* v2 feed used by older clients */
    NULL,
};

static const char *const hosts_github[] = {
    "github.com",			    /* git over HTTPS, web */
    "api.github.com",			    /* REST/GraphQL API */
    "codeload.github.com",		    /* archive tarballs and zips */
    "objects.githubusercontent.com",	    /* release assets (older) */
    "release-assets.githubusercontent.com", /* release assets */
    "raw.githubusercontent.com",	    /* raw file downloads */
    "media.githubusercontent.com",	    /* Git LFS objects */
    "ghcr.io",				    /* container registry */
    "pkg-containers.githubusercontent.com", /* ghcr.io blobs */
    NULL,
};

static const char *const hosts_debian[] = {
    "deb.debian.org",	   /* default mirror redirector (CDN) */
    "security.debian.org", /* security updates */
    "ftp.debian.org",	   /* older sources.list files */
    NULL,
};

static const char *const hosts_ubuntu[] = {
    "archive.ubuntu.com",   /* amd64/i386 archive */
    "*.archive.ubuntu.com", /* country mirrors: us.archive.ubuntu.com */
    "security.ubuntu.com",  /* security updates */
    "ports.ubuntu.com",	    /* arm64, armhf, ppc64el, riscv64, s390x */
    NULL,
};

static const char *const hosts_alpine[] = {
    "dl-cdn.alpinelinux.org", /* apk's default repositories */
    NULL,
};

static const char *const hosts_docker[] = {
    "registry-1.docker.io",		/* Docker Hub registry API */
    "auth.docker.io",			/* Docker Hub token service */
    "index.docker.io",			/* legacy name of the Hub registry */
    "production.cloudflare.docker.com", /* layer blobs (CDN) */
    "docker-images-prod.6aa30f8b08e16409b46e0173d6de2f56.r2."
    "cloudflarestorage.com", /* layer blobs for anonymous pulls */
    NULL,
};

static const char *const hosts_kubernetes[] = {
    "*.svc.cluster.local", /* services, incl. kubernetes.default.svc */
    NULL,
};

static const struct preset presets[] = {
    {"npm", hosts_npm},
    {"pypi", hosts_pypi},
    {"crates", hosts_crates},
    {"go", hosts_go},
    {"maven", hosts_maven},
    {"rubygems", hosts_rubygems},
    {"nuget", hosts_nuget},
    {"github", hosts_github},
    {"debian", hosts_debian},
    {"ubuntu", hosts_ubuntu},
    {"alpine", hosts_alpine},
    {"docker", hosts_docker},
    {"kubernetes", hosts_kubernetes},
};

static const char *const preset_names[] = {
    "npm",    "pypi",	"crates", "go",	    "maven",  "rubygems",   "nuget",
    "github", "debian", "ubuntu", "alpine", "docker", "kubernetes", NULL,
};

/* ---- hashing ---- */

static pthread_once_t seed_once = PTHREAD_ONCE_INIT;
static pthread_once_t psl_once = PTHREAD_ONCE_INIT;
static psl_ctx_t *psl_ctx;
static uint64_t seed_k0, seed_k1;

static void seed_init(void)
{
	uint64_t k[2] = {0, 0};

	/* Correctness does not depend on the seed, only flooding
	 * resistance; the entries come from the config anyway. */
	if (hash_seed(k, sizeof(k)) != 0)
		log_warn("policy", "getrandom failed, weak hash seed");
	seed_k0 = k[0];
	seed_k1 = k[1];
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                               \
	do {                                                                   \
		v0 += v1;                                                      \
		v1 = ROTL(v1, 13);                                             \
		v1 ^= v0;                                                      \
		v0 = ROTL(v0, 32);                                             \
		v2 += v3;                                                      \
		v3 = ROTL(v3, 16);                                             \
		v3 ^= v2;                                                      \
		v0 += v3;                                                      \
		v3 = ROTL(v3, 21);                                             \
		v3 ^= v0;                                                      \
		v2 += v1;                                                      \
		v1 = ROTL(v1, 17);                                             \
		v1 ^= v2;                                                      \
		v2 = ROTL(v2, 32);                                             \
	} while (0)

/* SipHash-1-3 of key under the process seed. */
static uint64_t name_hash(const uint8_t *key, size_t len)
{
	uint64_t v0 = seed_k0 ^ 0x736f6d6570736575ULL;
	uint64_t v1 = seed_k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = seed_k0 ^ 0x6c7967656e657261ULL;
	uint64_t v3 = seed_k1 ^ 0x7465646279746573ULL;
	uint64_t b = (uint64_t)len << 56;
	size_t i, full = len & ~(size_t)7;

	for (i = 0; i < full; i += 8) {
		uint64_t m = 0;
		for (size_t j = 0; j < 8; j++)
			m |= (uint64_t)key[i + j] << (8 * j);
		v3 ^= m;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t j = 0; i + j < len; j++)
		b |= (uint64_t)key[i + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- names ---- */

/* ASCII only, whatever the locale. */
static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}

static bool host_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* The reason is written to the caller's buf (POLICY_WHY_MAX bytes). */
static const char *bad_char_reason(unsigned char c, char *buf)
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, POLICY_WHY_MAX, "character '%c' not allowed", c);
	else
		snprintf(buf, POLICY_WHY_MAX, "character '\\x%02x' not allowed",
			 c);
	return buf;
}

/* A leading "*." when allow_wild: *wild set, and 2 (where the parent
 * starts); 0 without one; -EINVAL with *why for a '*' anywhere else in
 * the first label. */
static int strip_wild(const char *text, size_t len, bool allow_wild, bool *wild,
		      const char **why)
{
	if (!allow_wild || text[0] != '*')
		return 0;
	if (len == 1) {
		*why = "'*' needs a name after it";
		return -EINVAL;
	}
	if (text[1] != '.') {
		*why = "'*' only allowed as the whole first label";
		return -EINVAL;
	}
	*wild = true;
	return 2;
}

/* Convert a dotted name (one trailing dot allowed) to lower-cased wire
 * format in out (NAME_WIRE_MAX bytes). With allow_wild, a first label "*"
 * is taken off and *wild set; out then holds the parent. Returns 0, or
 * -EINVAL with *why set to a static reason or to buf (POLICY_WHY_MAX
 * bytes), which holds the reason that names a character. */
static int text_to_wire(const char *text, bool allow_wild, uint8_t *out,
			size_t *out_len, bool *wild, const char **why,
			char *buf)
{
	size_t len = strlen(text), pos = 0, lab = 0, i = 0;
	int start;

	*wild = false;
	if (len > 0 && text[len - 1] == '.')
		len--;
	if (len == 0) {
		*why = "empty name";
		return -EINVAL;
	}
	if (len > NAME_TEXT_MAX) {
		*why = "name longer than 253 bytes";
		return -EINVAL;
	}
	if ((start = strip_wild(text, len, allow_wild, wild, why)) < 0)
		return -EINVAL;
	/* out[lab] is the length byte of the label being written. */
	for (pos = 1, i = (size_t)start; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '.') {
			if (pos == lab + 1) {
				*why = "empty label";
				return -EINVAL;
			}
			out[lab] = (uint8_t)(pos - lab - 1);
			lab = pos++;
			continue;
		}
		if (c == '*' && allow_wild) {
			*why = "'*' only allowed as the whole first label";
			return -EINVAL;
		}
		if (!host_char_ok(c)) {
			*why = bad_char_reason(c, buf);
			return -EINVAL;
		}
		if (pos - lab - 1 == LABEL_MAX) {
			*why = "label longer than 63 bytes";
			return -EINVAL;
		}
		out[pos++] = lower(c);
	}
	if (pos == lab + 1) {
		*why = "empty label";
		return -EINVAL;
	}
	out[lab] = (uint8_t)(pos - lab - 1);
	out[pos++] = 0;
	*out_len = pos;
	return 0;
}

/* ---- hash sets ---- */

static bool set_lookup(const struct nameset *s, const uint8_t *key, size_t len)
{
	uint64_t h;
	size_t mask, i;

	if (s->count == 0)
		return false;
	h = name_hash(key, len);
	mask = s->cap - 1;
	for (i = (size_t)h & mask;; i = (i + 1) & mask) {
		const struct slot *sl = &s->slots[i];
		const uint8_t *k;

		if (sl->off == 0)
			return false;
		if (sl->hash != (uint32_t)h)
			continue;
		k = s->arena + sl->off - 1;
		if (k[0] == len && memcmp(k + 1, key, len) == 0)
			return true;
	}
}

static void set_place(struct slot *slots, size_t cap, uint32_t hash,
		      uint32_t off)
{
	size_t mask = cap - 1, i;

	/* The stored hash is only the low 32 bits; cap <= 2^30 so the
	 * probe start needs no more. */
	for (i = hash & mask; slots[i].off != 0; i = (i + 1) & mask)
		;
	slots[i].hash = hash;
	slots[i].off = off;
}

static int set_grow(struct nameset *s)
{
	size_t ncap = s->cap ? s->cap * 2 : SET_MIN_CAP;
	struct slot *ns;

	if (ncap > SET_MAX_CAP)
		return -ENOSPC;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		if (s->slots[i].off != 0)
			set_place(ns, ncap, s->slots[i].hash, s->slots[i].off);
	}
	free(s->slots);
	s->slots = ns;
	s->cap = ncap;
	return 0;
}

static int arena_append(struct nameset *s, const uint8_t *key, size_t len,
			uint32_t *off)
{
	/* Offsets are 32 bits. */
	if (s->arena_len > ARENA_MAX)
		return -ENOSPC;
	if (s->arena_len + len + 1 > s->arena_cap) {
		size_t ncap = s->arena_cap ? s->arena_cap * 2 : 4096;
		uint8_t *na;

		while (ncap < s->arena_len + len + 1)
			ncap *= 2;
		na = realloc(s->arena, ncap);
		if (!na)
			return -ENOMEM;
		s->arena = na;
		s->arena_cap = ncap;
	}
	*off = (uint32_t)s->arena_len + 1;
	s->arena[s->arena_len] = (uint8_t)len;
	memcpy(s->arena + s->arena_len + 1, key, len);
	s->arena_len += len + 1;
	return 0;
}

/* Insert key (lower-cased wire name) unless present. 0 or -errno. */
static int set_insert(struct nameset *s, const uint8_t *key, size_t len)
{
	uint32_t off;
	uint64_t h;
	int ret;

	if (set_lookup(s, key, len))
		return 0;
	/* Keep the load at or below 70%. */
	if ((s->count + 1) * 10 > s->cap * 7) {
		ret = set_grow(s);
		if (ret < 0)
			return ret;
	}
	ret = arena_append(s, key, len, &off);
	if (ret < 0)
		return ret;
	h = name_hash(key, len);
	set_place(s->slots, s->cap, (uint32_t)h, off);
	s->count++;
	return 0;
}

static void set_free(struct nameset *s)
{
	free(s->slots);
	free(s->arena);
	memset(s, 0, sizeof(*s));
}

/* ---- public ---- */

struct policy *policy_new(void)
{
	pthread_once(&seed_once, seed_init);
	pthread_once(&psl_once, psl_init);
	return calloc(1, sizeof(struct policy));
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	set_free(&p->exact);
	set_free(&p->suffix);
	free(p);
}

bool policy_pattern_valid(const char *pattern, char *why, size_t whylen)
{
	uint8_t wire[NAME_WIRE_MAX];
	char buf[POLICY_WHY_MAX];
	const char *reason = "empty name";
	size_t len;
	bool wild;

	if (pattern != NULL &&
	    text_to_wire(pattern, true, wire, &len, &wild, &reason, buf) == 0)
		return true;
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s", reason);
	return false;
}

int policy_add(struct policy *p, const char *pattern, const char **why)
{
	uint8_t wire[NAME_WIRE_MAX];
	const char *dummy;
	size_t len;
	bool wild;
	int ret;

	if (!why)
		why = &dummy;
	if (!p || !pattern) {
		*why = "empty name";
		return -EINVAL;
	}
	ret = text_to_wire(pattern, true, wire, &len, &wild, why, p->why);
	if (ret < 0)
		return ret;
	ret = set_insert(wild ? &p->suffix : &p->exact, wire, len);
	if (ret < 0)
		*why = ret == -ENOMEM ? "out of memory" : "allowlist too large";
	return ret;
}

static const struct preset *preset_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		if (strcmp(presets[i].name, name) == 0)
			return &presets[i];
	}
	return NULL;
}

int policy_add_preset(struct policy *p, const char *preset)
{
	const struct preset *pr = preset_find(preset);

	if (!pr)
		return -ENOENT;
	for (const char *const *h = pr->hosts; *h; h++) {
		const char *why = NULL;
		int ret = policy_add(p, *h, &why);

		if (ret < 0) {
			log_err("policy", "preset %s: %s: %s", preset, *h, why);
			return ret;
		}
	}
	return 0;
}

bool policy_preset_exists(const char *name)
{
	return preset_find(name) != NULL;
}

const char *const *policy_preset_hosts(const char *name)
{
	const struct preset *pr = preset_find(name);

	return pr ? pr->hosts : NULL;
}

const char *const *policy_preset_names(void)
{
	return preset_names;
}

/* name: lower-cased wire name of len bytes (root included); starts: the
 * offset of each of its n_labels labels. */
static bool match_lower(const struct policy *p, const uint8_t *name, size_t len,
			const uint8_t *starts, size_t n_labels,
			struct policy_hit *hit)
{
	if (set_lookup(&p->exact, name, len))
		return true;
	if (p->suffix.count == 0)
		return false;
	/* Proper suffixes only, and never the root alone; the longest (the
	 * nearest wildcard) first. */
	for (size_t i = 1; i < n_labels; i++) {
		if (!set_lookup(&p->suffix, name + starts[i], len - starts[i]))
			continue;
		if (hit != NULL) {
			hit->depth = i;
			hit->suffix_off = starts[i];
			for (size_t j = 0; j < i; j++) {
				if (name[starts[j]] > hit->label_max)
					hit->label_max = name[starts[j]];
			}
		}
		return true;
	}
	return false;
}

bool policy_match(const struct policy *p, const uint8_t *wire, size_t len)
{
	return policy_match_hit(p, wire, len, NULL);
}

bool policy_match_hit(const struct policy *p, const uint8_t *wire, size_t len,
		      struct policy_hit *hit)
{
	uint8_t buf[NAME_WIRE_MAX];
	uint8_t starts[NAME_WIRE_MAX / 2 + 1];
	size_t pos = 0, n = 0;

	if (!p || !wire)
		return false;
	/* Bytes after the root label are not part of the name. */
	for (;;) {
		size_t l;

		if (pos >= len)
			return false;
		l = wire[pos];
		if (l == 0)
			break;
		if (l > LABEL_MAX) /* compression pointer or extended type */
			return false;
		if (pos + 1 + l >= len || pos + 1 + l + 1 > NAME_WIRE_MAX)
			return false;
		starts[n++] = (uint8_t)pos;
		buf[pos] = (uint8_t)l;
		for (size_t j = 1; j <= l; j++)
			buf[pos + j] = lower(wire[pos + j]);
		pos += 1 + l;
	}
	buf[pos++] = 0;
	if (n == 0) /* the root matches nothing */
		return false;
	if (hit != NULL)
		memset(hit, 0, sizeof(*hit));
	return match_lower(p, buf, pos, starts, n, hit);
}

bool policy_match_text(const struct policy *p, const char *name)
{
	uint8_t wire[NAME_WIRE_MAX];
	char buf[POLICY_WHY_MAX];
	const char *why;
	size_t len;
	bool wild;

	if (!p || !name)
		return false;
	if (text_to_wire(name, false, wire, &len, &wild, &why, buf) < 0)
		return false;
	return policy_match(p, wire, len);
}

size_t policy_size(const struct policy *p)
{
	return p ? p->exact.count + p->suffix.count : 0;
}

/* The Public Suffix List (libpsl's newest copy), read once, at the first
 * policy_new: before the daemon drops privileges, never per query. */
static void psl_init(void)
{
	psl_ctx = psl_latest(NULL);
}

const psl_ctx_t *policy_psl(void)
{
	pthread_once(&psl_once, psl_init);
	return psl_ctx;
}

/* The answer depends only on P (name is "LABEL.P"): "*.P" is sound
 * exactly when P has a registrable domain, itself or above it. So the
 * last P asked is remembered with its answer, per thread: a flood of
 * denied names below one parent (each reply's EDE text carries this
 * hint) costs a comparison, not a Public Suffix List walk each (11 % of
 * the denied workload's samples in dnsperf.sh). */
const char *policy_wildcard_parent(const char *name)
{
	static _Thread_local char last[256]; /* longer parents are not kept */
	static _Thread_local bool last_sound;
	const psl_ctx_t *psl = policy_psl();
	const char *dot = strchr(name, '.');
	size_t n;

	if (psl == NULL || dot == NULL || dot[1] == '\0')
		return NULL;
	n = strlen(dot + 1);
	if (last[0] == '\0' || strcmp(last, dot + 1) != 0) {
		last_sound = psl_registrable_domain(psl, dot + 1) != NULL;
		if (n < sizeof(last))
			memcpy(last, dot + 1, n + 1);
		else
			last[0] = '\0';
	}
	return last_sound ? dot + 1 : NULL;
}

void policy_admitting(const char *lead, const char *name, char *buf, size_t cap)
{
	const char *parent = policy_wildcard_parent(name);

	if (parent != NULL)
		snprintf(buf, cap, "%sadd \"%s\" or \"*.%s\"", lead, name,
			 parent);
	else
		snprintf(buf, cap, "%sadd \"%s\"", lead, name);
}

/* The dotted text of the wire name at w, lower case. */
static void wire_text(const uint8_t *w, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len && w[i] != 0 && o + 1 < cap;
	     i += 1u + w[i]) {
		if (o > 0)
			out[o++] = '.';
		for (size_t j = 1; j <= w[i] && o + 1 < cap && i + j < len; j++)
			out[o++] = (char)lower(w[i + j]);
	}
	out[o] = '\0';
}

bool policy_entry(const struct policy *p, const uint8_t *wire, size_t len,
		  char *out, size_t cap)
{
	struct policy_hit hit;

	if (cap < 3 || !policy_match_hit(p, wire, len, &hit))
		return false;
	policy_entry_text(wire, len, &hit, out, cap);
	return true;
}

void policy_entry_text(const uint8_t *wire, size_t len,
		       const struct policy_hit *hit, char *out, size_t cap)
{
	if (hit->depth == 0) {
		wire_text(wire, len, out, cap);
		return;
	}
	out[0] = '*';
	out[1] = '.';
	wire_text(wire + hit->suffix_off, len - hit->suffix_off, out + 2,
		  cap - 2);
}

bool policy_wildcard_on_public_suffix(const char *pattern)
{
	const psl_ctx_t *psl = policy_psl();

	/* Without the implicit "*" rule: a TLD the list does not know
	 * (test, internal, corp) is a private namespace, not a suffix. */
	return psl != NULL && strncmp(pattern, "*.", 2) == 0 &&
	       psl_is_public_suffix2(psl, pattern + 2,
				     PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE) != 0;
}

bool policy_entry_matches(const char *pattern, const char *name)
{
	size_t n = strlen(name), plen;
	const char *parent;

	if (n > 1 && name[n - 1] == '.')
		n--;
	if (strncmp(pattern, "*.", 2) != 0)
		return strlen(pattern) == n &&
		       strncasecmp(pattern, name, n) == 0;
	parent = pattern + 2;
	plen = strlen(parent);
	return n > plen + 1 && name[n - plen - 1] == '.' &&
	       strncasecmp(name + n - plen, parent, plen) == 0;
}
