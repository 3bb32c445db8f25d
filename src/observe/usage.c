// SPDX-License-Identifier: GPL-2.0-or-later
/* usage: per allow entry, how much it is used, so that an allowlist,
 * once learned, can also shrink (`dnsfence prune`).
 *
 * An entry is the text of the policy entry a question matched
 * ("api.example.com", or "*.example.com" for every name it covers; an
 * ecosystem's host is an entry of its own). Per entry: allowed
 * questions, addresses their answers put in the sets, connections that
 * went out to those addresses (conntrack's NEW events, ctevents.c, named
 * through the recent memory), when the daemon
 * first had the entry ("first_seen": an entry unused since then is
 * unused for that long) and when it was last asked for, wall-clock
 * seconds. The table is open addressing over twice USAGE_MAX slots and
 * only grows: an entry removed by a reload keeps its history, in case it
 * comes back. It lives in state_dir/usage.json, read at start, written
 * like suggest.json (a whole new file renamed over the old one) every
 * USAGE_WRITE_SECONDS while something changed, and at exit, so counts
 * survive restarts as well as reloads.
 *
 * Beside the entries, the names asked (`dnsfence report`): per allowed
 * name, its lookups (questions of one name within USAGE_LOOKUP_MS count
 * once, as learn.c counts denied ones), when it was first and last
 * asked, the entry that allowed it last, and the last USAGE_NAME_ADDRS
 * distinct addresses its answers put in the sets. At most
 * USAGE_NAMES_MAX names, over twice as many slots, kept like the
 * entries; a name past the cap is counted in "names_dropped" only. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "base/hash.h"
#include "observe/learn.h"
#include "base/log.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "base/statefs.h"
#include "dns/dnsmsg.h"
#include "dns/dnsrr.h"
#include "config/policy.h"
#include "observe/usage.h"

#define SYS		"usage"
#define SLOTS		(2 * USAGE_MAX)
#define ENTRY_MAX	260 /* "*." and a name */
#define NAME_SLOTS	(2 * USAGE_NAMES_MAX)
#define USAGE_LOOKUP_MS 1000

struct usage_entry {
	char *name;
	uint64_t questions, addresses, flows;
	int64_t first_seen, last_used; /* wall seconds; last 0: never */
};

struct usage_name {
	uint8_t *wire; /* the name, uncompressed wire format, lower case */
	uint8_t len;
	uint32_t hash;
	uint64_t count;
	uint64_t counted_ms;		 /* monotonic: when count last grew */
	int64_t first_seen, last_seen;	 /* wall seconds */
	const struct usage_entry *entry; /* what allowed it last; NULL: none */
	uint8_t n_addrs, next_addr;	 /* addrs is a ring once full */
	struct netaddr addrs[USAGE_NAME_ADDRS];
};

struct usage {
	int dirfd;
	char *dir;
	struct event *timer;
	bool dirty, warned;
	struct usage_entry slots[SLOTS];
	size_t n;
	/* The entry of the last question, and its key: 1 for a wildcard (0
	 * for an exact name), then the wire name it matched on. */
	struct usage_entry *last;
	uint8_t last_key[1 + DNS_MAX_NAME];
	size_t last_len;
	uint64_t dropped;
	const struct policy *pol; /* the running one, for flows' names */
	struct usage_name names[NAME_SLOTS];
	struct usage_name *last_name; /* of the last question or answer */
	size_t n_names;
	uint64_t names_dropped;
};

static struct usage_entry *find(struct usage *u, const char *name, bool add);
static struct usage_name *find_name(struct usage *u, const uint8_t *wire,
				    size_t len);
static void name_address(struct usage_name *n, const struct netaddr *a);
static bool names_json(const struct usage *u, cJSON *root);
static void load_names(struct usage *u, const cJSON *root);
static void on_timer(evutil_socket_t fd, short what, void *arg);
static void load(struct usage *u, uid_t uid);
static cJSON *to_json(const struct usage *u);

struct usage *usage_new(struct event_base *base, int dirfd, const char *dir,
			uid_t uid)
{
	struct usage *u = calloc(1, sizeof(*u));
	struct timeval tv = {USAGE_WRITE_SECONDS, 0};

	if (u == NULL || (u->dir = strdup(dir)) == NULL)
		goto fail;
	u->dirfd = dirfd;
	u->timer = event_new(base, -1, EV_PERSIST, on_timer, u);
	if (u->timer == NULL || event_add(u->timer, &tv) != 0)
		goto fail;
	load(u, uid);
	return u;
fail:
	if (u != NULL) {
		if (u->timer != NULL)
			event_free(u->timer);
		free(u->dir);
		free(u);
	}
	close(dirfd);
	return NULL;
}

void usage_free(struct usage *u)
{
	if (u == NULL)
		return;
	if (u->dirty)
		(void)usage_write(u);
	event_free(u->timer);
	for (size_t i = 0; i < SLOTS; i++)
		free(u->slots[i].name);
	for (size_t i = 0; i < NAME_SLOTS; i++)
		free(u->names[i].wire);
	close(u->dirfd);
	free(u->dir);
	free(u);
}

/* The slot of name; with add, a new one when there is room. */
static struct usage_entry *find(struct usage *u, const char *name, bool add)
{
	size_t i = hash_fnv1a(name, strlen(name), 0) % SLOTS;

	for (; u->slots[i].name != NULL; i = (i + 1) % SLOTS) {
		if (strcmp(u->slots[i].name, name) == 0)
			return &u->slots[i];
	}
	if (!add)
		return NULL;
	if (u->n >= USAGE_MAX || (u->slots[i].name = strdup(name)) == NULL) {
		u->dropped++;
		return NULL;
	}
	u->n++;
	u->dirty = true;
	return &u->slots[i];
}

/* The slot of wire (len bytes, lower case), a new one when there is
 * room; NULL past USAGE_NAMES_MAX (counted) or on ENOMEM. The name of
 * the one before (a question's answer, the AAAA after the A) costs no
 * lookup. */
static struct usage_name *find_name(struct usage *u, const uint8_t *wire,
				    size_t len)
{
	struct usage_name *last = u->last_name;
	uint32_t h;
	size_t i;

	if (last != NULL && last->len == len &&
	    memcmp(last->wire, wire, len) == 0)
		return last;
	if (len == 0 || len > DNS_MAX_NAME)
		return NULL;
	h = hash_fnv1a(wire, len, 0);
	for (i = h % NAME_SLOTS; u->names[i].wire != NULL;
	     i = (i + 1) % NAME_SLOTS) {
		if (u->names[i].hash == h && u->names[i].len == len &&
		    memcmp(u->names[i].wire, wire, len) == 0)
			return u->last_name = &u->names[i];
	}
	if (u->n_names >= USAGE_NAMES_MAX ||
	    (u->names[i].wire = malloc(len)) == NULL) {
		u->names_dropped++;
		return NULL;
	}
	memcpy(u->names[i].wire, wire, len);
	u->names[i].len = (uint8_t)len;
	u->names[i].hash = h;
	u->n_names++;
	u->dirty = true;
	return u->last_name = &u->names[i];
}

/* a among n's addresses: the oldest one replaced once there are
 * USAGE_NAME_ADDRS. */
static void name_address(struct usage_name *n, const struct netaddr *a)
{
	for (uint8_t i = 0; i < n->n_addrs; i++) {
		if (netaddr_equal(&n->addrs[i], a))
			return;
	}
	if (n->n_addrs < USAGE_NAME_ADDRS) {
		n->addrs[n->n_addrs++] = *a;
		return;
	}
	n->addrs[n->next_addr] = *a;
	n->next_addr = (uint8_t)((n->next_addr + 1) % USAGE_NAME_ADDRS);
}

void usage_track(struct usage *u, const struct config *cfg,
		 const struct policy *pol)
{
	int64_t now = (int64_t)time(NULL);
	struct usage_entry *e;

	if (u == NULL)
		return;
	u->pol = pol;
	for (size_t i = 0; i < cfg->n_allow; i++) {
		if ((e = find(u, cfg->allow[i], true)) != NULL &&
		    e->first_seen == 0)
			e->first_seen = now;
	}
	for (size_t i = 0; i < cfg->n_ecosystems; i++) {
		const char *const *h = policy_preset_hosts(cfg->ecosystems[i]);

		for (; h != NULL && *h != NULL; h++) {
			if ((e = find(u, *h, true)) != NULL &&
			    e->first_seen == 0)
				e->first_seen = now;
		}
	}
}

struct usage_entry *usage_question(struct usage *u, const uint8_t *lname,
				   size_t len, const struct policy_hit *hit)
{
	size_t off = hit != NULL && hit->depth > 0 ? hit->suffix_off : 0;
	char name[ENTRY_MAX];
	struct usage_entry *e;

	if (u == NULL || hit == NULL || off >= len || len > DNS_MAX_NAME)
		return NULL;
	if (u->last != NULL && u->last_len == 1 + len - off &&
	    u->last_key[0] == (off > 0) &&
	    memcmp(u->last_key + 1, lname + off, len - off) == 0) {
		e = u->last;
	} else {
		policy_entry_text(lname, len, hit, name, sizeof(name));
		if ((e = find(u, name, true)) == NULL)
			return NULL;
		u->last = e;
		u->last_key[0] = off > 0;
		memcpy(u->last_key + 1, lname + off, len - off);
		u->last_len = 1 + len - off;
	}
	e->questions++;
	e->last_used = (int64_t)time(NULL);
	if (e->first_seen == 0)
		e->first_seen = e->last_used;
	u->dirty = true;
	usage_name_asked(u, e, lname, len);
	return e;
}

void usage_name_asked(struct usage *u, const struct usage_entry *e,
		      const uint8_t *lname, size_t len)
{
	struct usage_name *n;
	uint64_t now = monotime_ms();

	if (u == NULL || (n = find_name(u, lname, len)) == NULL)
		return;
	n->entry = e;
	n->last_seen = e != NULL ? e->last_used : (int64_t)time(NULL);
	if (n->first_seen == 0)
		n->first_seen = n->last_seen;
	if (n->count == 0 || now - n->counted_ms >= USAGE_LOOKUP_MS) {
		n->count++;
		n->counted_ms = now;
	}
	u->dirty = true;
}

void usage_answered(struct usage *u, struct usage_entry *e,
		    const uint8_t *qname, size_t len,
		    const struct dns_addr *addrs, size_t n_addrs)
{
	struct usage_name *n;

	if (u == NULL || e == NULL || n_addrs == 0)
		return;
	e->addresses += n_addrs;
	u->dirty = true;
	if ((n = find_name(u, qname, len)) == NULL)
		return;
	for (size_t i = 0; i < n_addrs; i++)
		name_address(n, &addrs[i].addr);
}

void usage_flow(struct usage *u, const char *name)
{
	uint8_t wire[DNS_MAX_NAME];
	char entry[ENTRY_MAX];
	size_t len = sizeof(wire);
	struct usage_entry *e;

	if (u == NULL || u->pol == NULL ||
	    dns_name_from_text(name, wire, &len) != 0 ||
	    !policy_entry(u->pol, wire, len, entry, sizeof(entry)) ||
	    (e = find(u, entry, true)) == NULL)
		return;
	e->flows++;
	e->last_used = (int64_t)time(NULL);
	u->dirty = true;
}

cJSON *usage_status(const struct usage *u)
{
	cJSON *o = cJSON_CreateObject(), *e;
	int64_t now = (int64_t)time(NULL);

	for (size_t i = 0; o != NULL && u != NULL && i < SLOTS; i++) {
		const struct usage_entry *s = &u->slots[i];

		if (s->name == NULL ||
		    (e = cJSON_AddObjectToObject(o, s->name)) == NULL)
			continue;
		cJSON_AddNumberToObject(e, "questions", (double)s->questions);
		cJSON_AddNumberToObject(e, "addresses", (double)s->addresses);
		cJSON_AddNumberToObject(e, "flows", (double)s->flows);
		cJSON_AddNumberToObject(
		    e, "last_used_ago_s",
		    s->last_used != 0 ? (double)(now - s->last_used) : -1);
	}
	return o;
}

void usage_counts(const struct usage *u, size_t *used, size_t *unused)
{
	*used = *unused = 0;
	for (size_t i = 0; u != NULL && i < SLOTS; i++) {
		if (u->slots[i].name != NULL)
			(*(u->slots[i].questions > 0 ? used : unused))++;
	}
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct usage *u = arg;

	(void)fd;
	(void)what;
	if (u->dirty)
		(void)usage_write(u);
}

static cJSON *to_json(const struct usage *u)
{
	cJSON *root = cJSON_CreateObject(), *arr, *e;
	bool ok = root != NULL;

	ok = ok && cJSON_AddNumberToObject(root, "version", 1);
	ok = ok && (arr = cJSON_AddArrayToObject(root, "entries")) != NULL;
	for (size_t i = 0; ok && i < SLOTS; i++) {
		const struct usage_entry *s = &u->slots[i];

		if (s->name == NULL)
			continue;
		ok = (e = cJSON_CreateObject()) != NULL &&
		     cJSON_AddItemToArray(arr, e);
		ok = ok && cJSON_AddStringToObject(e, "entry", s->name);
		ok = ok && cJSON_AddNumberToObject(e, "questions",
						   (double)s->questions);
		ok = ok && cJSON_AddNumberToObject(e, "addresses",
						   (double)s->addresses);
		ok =
		    ok && cJSON_AddNumberToObject(e, "flows", (double)s->flows);
		ok = ok && cJSON_AddNumberToObject(e, "first_seen",
						   (double)s->first_seen);
		ok = ok && cJSON_AddNumberToObject(e, "last_used",
						   (double)s->last_used);
	}
	ok = ok && cJSON_AddNumberToObject(root, "entries_dropped",
					   (double)u->dropped);
	ok = ok && names_json(u, root);
	if (!ok) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* "names": [{"name", "count", "first_seen", "last_seen", "entry",
 * "addresses": [...]}, ...] and "names_dropped" added to root. */
static bool names_json(const struct usage *u, cJSON *root)
{
	cJSON *arr = cJSON_AddArrayToObject(root, "names"), *o, *a;
	char addr[NETADDR_STRLEN], name[DNS_NAME_STRLEN];
	bool ok = arr != NULL;

	for (size_t i = 0; ok && i < NAME_SLOTS; i++) {
		const struct usage_name *n = &u->names[i];

		if (n->wire == NULL)
			continue;
		dns_name_to_text(n->wire, n->len, name, sizeof(name));
		ok = (o = cJSON_CreateObject()) != NULL &&
		     cJSON_AddItemToArray(arr, o);
		ok = ok && cJSON_AddStringToObject(o, "name", name);
		ok =
		    ok && cJSON_AddNumberToObject(o, "count", (double)n->count);
		ok = ok && cJSON_AddNumberToObject(o, "first_seen",
						   (double)n->first_seen);
		ok = ok && cJSON_AddNumberToObject(o, "last_seen",
						   (double)n->last_seen);
		ok = ok &&
		     cJSON_AddStringToObject(
			 o, "entry", n->entry != NULL ? n->entry->name : "");
		ok = ok && (a = cJSON_AddArrayToObject(o, "addresses")) != NULL;
		for (uint8_t k = 0; ok && k < n->n_addrs; k++) {
			netaddr_format(&n->addrs[k], addr, sizeof(addr));
			ok = cJSON_AddItemToArray(a, cJSON_CreateString(addr));
		}
	}
	return ok && cJSON_AddNumberToObject(root, "names_dropped",
					     (double)u->names_dropped);
}

char *usage_text(const struct usage *u)
{
	cJSON *root = to_json(u);
	char *text = root != NULL ? cJSON_Print(root) : NULL;

	cJSON_Delete(root);
	return text;
}

int usage_write(struct usage *u)
{
	int rc =
	    learn_save(u->dirfd, u->dir, USAGE_FILE, to_json(u), &u->warned);

	if (rc == 0)
		u->dirty = false;
	return rc;
}

/* What an earlier run left; a file that does not parse is said once and
 * replaced. */
static void load(struct usage *u, uid_t uid)
{
	char *text = learn_read_file(u->dirfd, u->dir, USAGE_FILE, uid, SYS);
	cJSON *root = text != NULL ? cJSON_Parse(text) : NULL;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "entries");
	const cJSON *it;
	struct usage_entry *e;

	if (text != NULL && !cJSON_IsArray(arr))
		log_warn(SYS, "%s/%s is not a usage file: starting afresh",
			 u->dir, USAGE_FILE);
	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "entry");

		if (!cJSON_IsString(n) || strlen(n->valuestring) >= ENTRY_MAX ||
		    (e = find(u, n->valuestring, true)) == NULL)
			continue;
		e->questions = (uint64_t)learn_num(it, "questions");
		e->addresses = (uint64_t)learn_num(it, "addresses");
		e->flows = (uint64_t)learn_num(it, "flows");
		e->first_seen = (int64_t)learn_num(it, "first_seen");
		e->last_used = (int64_t)learn_num(it, "last_used");
	}
	load_names(u, root);
	u->dirty = false;
	cJSON_Delete(root);
	free(text);
}

/* The names an earlier run left (a malformed one is skipped). */
static void load_names(struct usage *u, const cJSON *root)
{
	const cJSON *it, *a;
	struct usage_name *n;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "names"))
	{
		const char *name = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "name"));
		const char *entry = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "entry"));
		uint8_t wire[DNS_MAX_NAME];
		size_t len = sizeof(wire);
		char lower[DNS_NAME_STRLEN];
		struct netaddr addr;

		size_t nlen = name != NULL ? strlen(name) : 0;

		if (nlen == 0 || nlen >= sizeof(lower))
			continue;
		/* Lower case as the text is (the escapes are digits). */
		for (size_t k = 0; k <= nlen; k++)
			lower[k] = name[k] >= 'A' && name[k] <= 'Z'
				       ? (char)(name[k] - 'A' + 'a')
				       : name[k];
		if (dns_name_from_text(lower, wire, &len) != 0 ||
		    (n = find_name(u, wire, len)) == NULL)
			continue;
		n->count = (uint64_t)learn_num(it, "count");
		n->first_seen = (int64_t)learn_num(it, "first_seen");
		n->last_seen = (int64_t)learn_num(it, "last_seen");
		if (entry != NULL && entry[0] != '\0' &&
		    strlen(entry) < ENTRY_MAX)
			n->entry = find(u, entry, true);
		cJSON_ArrayForEach(
		    a, cJSON_GetObjectItemCaseSensitive(it, "addresses"))
		{
			if (cJSON_IsString(a) &&
			    netaddr_parse(a->valuestring, &addr) == 0)
				name_address(n, &addr);
		}
	}
	u->names_dropped = (uint64_t)learn_num(root, "names_dropped");
}
