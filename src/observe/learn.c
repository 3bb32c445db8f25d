// SPDX-License-Identifier: GPL-2.0-or-later
/* learn: the daemon's half of `dnsfence suggest`.
 *
 * Two bounded tables: names the policy refused (LEARN_NAMES_MAX, open
 * addressing over twice as many slots, never deleted: once full, new
 * names are counted as dropped), and attributed blocked flows
 * (LEARN_FLOWS_MAX, keyed by destination, protocol, port and reason).
 * Both only grow for the daemon's life; they are small enough for that,
 * and start from what the last run saved when it ran in the same mode
 * (a denial and a "would be denied" are not the same record), so a
 * restart keeps the egress report and `suggest`, as usage.json does.
 *
 * The state file is JSON, written to a temporary name in the state
 * directory, fsync'ed and renamed over suggest.json, so a reader sees the
 * old or the new file, never half of one. It goes through a directory
 * descriptor opened before the privilege drop: after it, only the
 * directory itself must be writable by `user`, not every parent. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <event2/event.h>
#include <netinet/in.h>

#include "base/hash.h"
#include "observe/learn.h"
#include "base/log.h"
#include "base/monotime.h"
#include "base/netaddr.h"
#include "base/statefs.h"
#include "dns/dnsmsg.h"
#include "observe/attrib.h"
#include "observe/recent.h"

#define SYS	   "learn"
#define NAME_SLOTS (2 * LEARN_NAMES_MAX)
/* A count is questions, not processes: every question of a name counts,
 * whoever asks and however soon after the last. One lookup asks for A and
 * AAAA (and HTTPS) at once, so the questions are counted per type (A,
 * AAAA, any other) and the name's count is its most asked type's; a stub's
 * retry (the same type and id within LEARN_RETRY_MS) is not a question. */
#define LEARN_RETRY_MS 15000
#define QCLASSES       3 /* A, AAAA, any other type */

struct name_slot {
	char *name;
	uint32_t hash;		    /* name_hash(name): most probes end on it */
	uint32_t count;		    /* the most asked type's questions */
	uint32_t asked[QCLASSES];   /* questions of each type class */
	uint16_t last_id[QCLASSES]; /* the last question's id of each */
	uint64_t last_ms[QCLASSES]; /* and when it came (0: none yet) */
	int64_t first_seen;	    /* wall clock of the first question */
	uint32_t uid;		    /* the first asker's, when known */
	bool has_uid;
};

struct flow {
	struct netaddr dst;
	uint8_t proto;
	uint16_t port;
	const char *reason; /* static string (compared as text) */
	char name[RECENT_NAME_MAX];
	uint32_t uid;
	bool has_uid;
	uint64_t count;
};

struct learn {
	int dirfd;
	char *dir;
	const char *mode;
	struct event *timer;
	bool dirty, warned;
	struct name_slot names[NAME_SLOTS];
	size_t n_names;
	uint64_t names_dropped;
	struct flow flows[LEARN_FLOWS_MAX];
	size_t n_flows;
	uint64_t flows_dropped;
};

static uint32_t name_hash(const char *s);
static void on_timer(evutil_socket_t fd, short what, void *arg);
static struct flow *find_flow(struct learn *l, const struct nflog_pkt *pkt,
			      const char *reason);
struct text;
static char *to_text(const struct learn *l);
static bool text_build(const struct learn *l, struct text *t);
static void learn_saved(const char *dir, const char *name, int rc,
			bool *warned);
static cJSON *flow_json(const struct flow *f);
static struct name_slot *name_slot(struct learn *l, const char *name,
				   uint32_t h, bool *found);
static void load(struct learn *l, uid_t uid);
static void load_names(struct learn *l, const cJSON *names);
static void load_flows(struct learn *l, const cJSON *flows);

static struct learn *global;

struct learn *learn_new(struct event_base *base, int dirfd, const char *dir,
			const char *mode, uid_t uid)
{
	struct learn *l = calloc(1, sizeof(*l));
	struct timeval tv = {LEARN_WRITE_SECONDS, 0};

	if (l == NULL || (l->dir = strdup(dir)) == NULL)
		goto fail;
	l->dirfd = dirfd;
	l->mode = mode;
	l->timer = event_new(base, -1, EV_PERSIST, on_timer, l);
	if (l->timer == NULL || event_add(l->timer, &tv) != 0)
		goto fail;
	load(l, uid);
	l->dirty = true; /* the file says this run's mode, whatever it held */
	return l;
fail:
	if (l != NULL) {
		if (l->timer != NULL)
			event_free(l->timer);
		free(l->dir);
		free(l);
	}
	close(dirfd);
	return NULL;
}

void learn_set_mode(struct learn *l, const char *mode)
{
	if (strcmp(l->mode, mode) != 0)
		l->dirty = true;
	l->mode = mode;
}

void learn_free(struct learn *l)
{
	if (l == NULL)
		return;
	if (global == l)
		global = NULL;
	(void)learn_write(l);
	event_free(l->timer);
	for (size_t i = 0; i < NAME_SLOTS; i++)
		free(l->names[i].name);
	close(l->dirfd);
	free(l->dir);
	free(l);
}

void learn_set_global(struct learn *l)
{
	global = l;
}

size_t learn_names(const struct learn *l)
{
	return l != NULL ? l->n_names : 0;
}

static uint32_t name_hash(const char *s)
{
	return hash_fnv1a(s, strlen(s), 0);
}

/* Count one question of slot s: false for a retry. */
static bool count_question(struct name_slot *s, uint16_t qtype, uint16_t id,
			   uint64_t now)
{
	size_t c = qtype == 1 ? 0 : qtype == 28 ? 1 : 2;

	if (s->last_ms[c] != 0 && s->last_id[c] == id &&
	    now - s->last_ms[c] < LEARN_RETRY_MS)
		return false;
	s->last_ms[c] = now != 0 ? now : 1;
	s->last_id[c] = id;
	if (s->asked[c] < UINT32_MAX)
		s->asked[c]++;
	if (s->asked[c] > s->count)
		s->count = s->asked[c];
	return true;
}

/* name's slot (*found), or the empty one where it goes (!*found). */
static struct name_slot *name_slot(struct learn *l, const char *name,
				   uint32_t h, bool *found)
{
	size_t i;

	for (i = h % NAME_SLOTS; l->names[i].name != NULL;
	     i = (i + 1) % NAME_SLOTS) {
		struct name_slot *s = &l->names[i];

		if (s->hash == h && strcmp(s->name, name) == 0) {
			*found = true;
			return s;
		}
	}
	*found = false;
	return &l->names[i];
}

bool learn_name(const char *name, uint16_t qtype, uint16_t id)
{
	struct learn *l = global;
	uint64_t now = monotime_ms();
	struct name_slot *s;
	uint32_t h;
	bool found;

	if (l == NULL)
		return false;
	h = name_hash(name);
	s = name_slot(l, name, h, &found);
	if (found) {
		if (count_question(s, qtype, id, now))
			l->dirty = true;
		return false;
	}
	if (l->n_names >= LEARN_NAMES_MAX || (s->name = strdup(name)) == NULL) {
		l->names_dropped++;
		return false;
	}
	s->hash = h;
	s->first_seen = (int64_t)time(NULL);
	(void)count_question(s, qtype, id, now);
	l->n_names++;
	l->dirty = true;
	return true;
}

void learn_name_uid(const char *name, uint32_t uid)
{
	struct learn *l = global;
	struct name_slot *s;
	bool found;

	if (l == NULL)
		return;
	s = name_slot(l, name, name_hash(name), &found);
	if (!found)
		return;
	if (!s->has_uid)
		l->dirty = true;
	s->uid = uid;
	s->has_uid = true;
}

static struct flow *find_flow(struct learn *l, const struct nflog_pkt *pkt,
			      const char *reason)
{
	for (size_t i = 0; i < l->n_flows; i++) {
		struct flow *f = &l->flows[i];

		if (f->proto == pkt->proto && f->port == pkt->dport &&
		    strcmp(f->reason, reason) == 0 &&
		    netaddr_equal(&f->dst, &pkt->dst))
			return f;
	}
	return NULL;
}

void learn_flow(const struct nflog_pkt *pkt, const char *reason,
		const char *name)
{
	struct learn *l = global;
	struct flow *f;

	if (l == NULL)
		return;
	f = find_flow(l, pkt, reason);
	if (f == NULL && l->n_flows >= LEARN_FLOWS_MAX) {
		l->flows_dropped++;
		return;
	}
	if (f == NULL) {
		f = &l->flows[l->n_flows++];
		memset(f, 0, sizeof(*f));
		f->dst = pkt->dst;
		f->proto = pkt->proto;
		f->port = pkt->dport;
		f->reason = reason;
	}
	if (name != NULL)
		snprintf(f->name, sizeof(f->name), "%s", name);
	f->has_uid = pkt->has_uid;
	f->uid = pkt->uid;
	f->count++;
	l->dirty = true;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct learn *l = arg;

	(void)fd;
	(void)what;
	if (l->dirty)
		(void)learn_write(l);
}

static cJSON *flow_json(const struct flow *f)
{
	cJSON *o = cJSON_CreateObject();
	char a[NETADDR_STRLEN];
	bool ok = o != NULL;

	netaddr_format(&f->dst, a, sizeof(a));
	ok = ok && cJSON_AddStringToObject(o, "dst", a);
	ok = ok && cJSON_AddNumberToObject(o, "proto", f->proto);
	ok = ok && cJSON_AddNumberToObject(o, "port", f->port);
	ok = ok && cJSON_AddStringToObject(o, "reason", f->reason);
	ok = ok && cJSON_AddStringToObject(o, "name", f->name);
	if (f->has_uid)
		ok = ok && cJSON_AddNumberToObject(o, "uid", f->uid);
	ok = ok && cJSON_AddNumberToObject(o, "count", (double)f->count);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* A text that grows; a failed growth or write sticks (the text is then
 * NULL). With fd >= 0 it goes to fd a TEXT_CHUNK at a time instead of
 * growing: 4,096 names are about 400 KiB of text, which stayed on the
 * heap between writes. */
struct text {
	char *s;
	size_t len, cap;
	int fd; /* -1: keep it all */
	int err;
	bool failed;
};

#define TEXT_CHUNK 16384

static int write_all(int fd, const char *s, size_t len);
static void text_flush(struct text *t);

static void text_flush(struct text *t)
{
	int rc;

	if (t->failed || t->fd < 0 || t->len == 0)
		return;
	rc = write_all(t->fd, t->s, t->len);
	if (rc != 0) {
		t->err = rc;
		t->failed = true;
	}
	t->len = 0;
}

static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->failed)
		return;
	if (t->fd >= 0 && t->len + n + 1 > TEXT_CHUNK)
		text_flush(t);
	if (t->failed)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap != 0 ? t->cap : 4096;
		char *ns;

		while (cap < t->len + n + 1)
			cap *= 2;
		ns = realloc(t->s, cap);
		if (ns == NULL) {
			t->failed = true;
			return;
		}
		t->s = ns;
		t->cap = cap;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
}

static void text_cat(struct text *t, const char *s)
{
	text_add(t, s, strlen(s));
}

static void text_fmt(struct text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void text_fmt(struct text *t, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= 0)
		text_add(t, buf,
			 (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* s as a JSON string, escaped as cJSON_Print escapes it. */
static void text_str(struct text *t, const char *s)
{
	text_cat(t, "\"");
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		const char *e = NULL;
		char u[8];

		switch (c) {
		case '"':
			e = "\\\"";
			break;
		case '\\':
			e = "\\\\";
			break;
		case '\b':
			e = "\\b";
			break;
		case '\f':
			e = "\\f";
			break;
		case '\n':
			e = "\\n";
			break;
		case '\r':
			e = "\\r";
			break;
		case '\t':
			e = "\\t";
			break;
		default:
			if (c < 0x20) {
				snprintf(u, sizeof(u), "\\u%04x", c);
				e = u;
			}
		}
		if (e != NULL)
			text_cat(t, e);
		else
			text_add(t, (const char *)&c, 1);
	}
	text_cat(t, "\"");
}

/* suggest.json's text, made as it goes: a cJSON tree of 4096 names
 * took about 1 MiB for a moment at every write, the whole text takes a
 * fifth of that (what the control socket's suggest sends), and the file
 * is written a TEXT_CHUNK at a time. The flows (at most LEARN_FLOWS_MAX)
 * still go through cJSON. */
static char *to_text(const struct learn *l)
{
	struct text t = {.fd = -1};

	return text_build(l, &t) ? t.s : NULL;
}

/* Build l's text into t: false (t's text freed) on failure. */
static bool text_build(const struct learn *l, struct text *t)
{
	bool first = true;

	text_cat(t, "{\n\t\"version\":\t1,\n\t\"mode\":\t");
	text_str(t, l->mode);
	text_cat(t, ",\n\t\"names\":\t[");
	for (size_t i = 0; i < NAME_SLOTS; i++) {
		if (l->names[i].name == NULL)
			continue;
		text_cat(t, first ? "{\n\t\t\t\"name\":\t"
				  : ", {\n\t\t\t\"name\":\t");
		text_str(t, l->names[i].name);
		text_fmt(t, ",\n\t\t\t\"count\":\t%llu",
			 (unsigned long long)l->names[i].count);
		text_fmt(t, ",\n\t\t\t\"first_seen\":\t%lld",
			 (long long)l->names[i].first_seen);
		if (l->names[i].has_uid)
			text_fmt(t, ",\n\t\t\t\"uid\":\t%lu",
				 (unsigned long)l->names[i].uid);
		text_cat(t, "\n\t\t}");
		first = false;
	}
	text_fmt(t, "],\n\t\"names_dropped\":\t%llu,\n\t\"flows\":\t[",
		 (unsigned long long)l->names_dropped);
	for (size_t i = 0; i < l->n_flows; i++) {
		cJSON *f = flow_json(&l->flows[i]);
		char *ft = f != NULL ? cJSON_Print(f) : NULL;

		cJSON_Delete(f);
		if (ft == NULL)
			t->failed = true;
		else
			text_cat(t, i > 0 ? ", " : "");
		if (ft != NULL)
			text_cat(t, ft);
		free(ft);
	}
	text_fmt(t, "],\n\t\"flows_dropped\":\t%llu\n}",
		 (unsigned long long)l->flows_dropped);
	if (t->failed) {
		free(t->s);
		t->s = NULL;
		return false;
	}
	return true;
}

static int write_all(int fd, const char *s, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, s + off, len - off);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			off += (size_t)n;
	}
	return 0;
}

/* Write name's file in dirfd as fill writes it to the descriptor it is
 * given (0 or -errno): to a temporary name created exclusively
 * (statefs_create), fsync'ed, renamed over. */
static int write_file_by(int dirfd, const char *name,
			 int (*fill)(int fd, const void *arg), const void *arg)
{
	char tmp[64];
	int fd, rc;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = statefs_create(dirfd, tmp, 0640);
	if (fd < 0)
		return fd;
	rc = fill(fd, arg);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) != 0)
		rc = -errno;
	if (rc != 0)
		(void)unlinkat(dirfd, tmp, 0);
	return rc;
}

static int fill_text(int fd, const void *arg)
{
	const char *text = arg;

	return write_all(fd, text, strlen(text));
}

/* l's text, written as it is built. */
static int fill_learn(int fd, const void *arg)
{
	struct text t = {.fd = fd};
	bool ok = text_build(arg, &t);

	if (ok)
		text_flush(&t);
	free(t.s);
	if (t.err != 0)
		return t.err;
	return ok && !t.failed ? 0 : -ENOMEM;
}

int learn_write_file(int dirfd, const char *name, const char *text)
{
	return write_file_by(dirfd, name, fill_text, text);
}

/* The first failure after a success is logged (*warned remembers it). */
static void learn_saved(const char *dir, const char *name, int rc, bool *warned)
{
	if (rc == 0) {
		*warned = false;
	} else if (!*warned) {
		*warned = true;
		log_warn(SYS, "cannot write %s/%s: %s", dir, name,
			 strerror(-rc));
	}
}

int learn_save(int dirfd, const char *dir, const char *name, cJSON *root,
	       bool *warned)
{
	char *text = root != NULL ? cJSON_Print(root) : NULL;
	int rc = text != NULL ? learn_write_file(dirfd, name, text) : -ENOMEM;

	cJSON_Delete(root);
	free(text);
	learn_saved(dir, name, rc, warned);
	return rc;
}

char *learn_text(const struct learn *l)
{
	return to_text(l);
}

int learn_write(struct learn *l)
{
	int rc = write_file_by(l->dirfd, LEARN_FILE, fill_learn, l);

	learn_saved(l->dir, LEARN_FILE, rc, &l->warned);
	if (rc == 0)
		l->dirty = false;
	return rc;
}

char *learn_read_file(int dirfd, const char *dir, const char *name, uid_t uid,
		      const char *sys)
{
	char err[512];
	int fd = statefs_open_file(dirfd, dir, name, uid, err, sizeof(err));
	char *text = NULL;
	size_t len = 0;
	ssize_t n = 0;

	if (fd == -EPERM)
		log_warn(sys, "%s: starting afresh", err);
	if (fd < 0)
		return NULL;
	text = malloc(LEARN_READ_MAX + 1);
	while (text != NULL && len < LEARN_READ_MAX &&
	       ((n = read(fd, text + len, LEARN_READ_MAX - len)) > 0 ||
		(n < 0 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	close(fd);
	if (text == NULL || n < 0 || len == LEARN_READ_MAX) {
		free(text);
		return NULL;
	}
	text[len] = '\0';
	return text;
}

double learn_num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) ||
	    v->valuedouble > 9007199254740992.0)
		return 0;
	return v->valuedouble;
}

/* What an earlier run saved, when it ran in this run's mode; a file that
 * is refused or does not parse is said once and replaced. */
static void load(struct learn *l, uid_t uid)
{
	char *text = learn_read_file(l->dirfd, l->dir, LEARN_FILE, uid, SYS);
	cJSON *root = text != NULL ? cJSON_Parse(text) : NULL;
	const char *mode = cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(root, "mode"));
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(root, "names");
	const cJSON *flows = cJSON_GetObjectItemCaseSensitive(root, "flows");

	if (text == NULL)
		goto out;
	if (mode == NULL || !cJSON_IsArray(names) || !cJSON_IsArray(flows)) {
		log_warn(SYS, "%s/%s is not a suggest file: starting afresh",
			 l->dir, LEARN_FILE);
		goto out;
	}
	if (strcmp(mode, l->mode) != 0) {
		log_info(SYS,
			 "%s/%s was saved in mode %.16s, this run is in mode "
			 "%s: its denied names and blocked flows are not "
			 "kept, starting afresh",
			 l->dir, LEARN_FILE, mode, l->mode);
		goto out;
	}
	load_names(l, names);
	load_flows(l, flows);
	l->names_dropped += (uint64_t)learn_num(root, "names_dropped");
	l->flows_dropped += (uint64_t)learn_num(root, "flows_dropped");
out:
	cJSON_Delete(root);
	free(text);
}

/* The saved names (a malformed one is skipped, one past LEARN_NAMES_MAX
 * counted as dropped); every type's count restarts at the name's. */
static void load_names(struct learn *l, const cJSON *names)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, names)
	{
		const char *name = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "name"));
		const cJSON *uid = cJSON_GetObjectItemCaseSensitive(it, "uid");
		uint64_t count = (uint64_t)learn_num(it, "count");
		struct name_slot *s;
		uint32_t h;
		bool found;

		if (name == NULL || name[0] == '\0' ||
		    strlen(name) >= DNS_NAME_STRLEN)
			continue;
		h = name_hash(name);
		s = name_slot(l, name, h, &found);
		if (found)
			continue;
		if (l->n_names >= LEARN_NAMES_MAX ||
		    (s->name = strdup(name)) == NULL) {
			l->names_dropped++;
			continue;
		}
		s->hash = h;
		s->count = count < UINT32_MAX ? (uint32_t)count : UINT32_MAX;
		for (size_t c = 0; c < QCLASSES; c++)
			s->asked[c] = s->count;
		s->first_seen = (int64_t)learn_num(it, "first_seen");
		if (cJSON_IsNumber(uid) && learn_num(it, "uid") <= UINT32_MAX) {
			s->uid = (uint32_t)learn_num(it, "uid");
			s->has_uid = true;
		}
		l->n_names++;
	}
}

/* reason's static string (learn keys flows by it), or NULL. */
static const char *reason_of(const char *text)
{
	for (int r = 0; text != NULL && r < ATTRIB__COUNT; r++) {
		const char *known = attrib_reason_name((enum attrib_reason)r);

		if (strcmp(text, known) == 0)
			return known;
	}
	return NULL;
}

/* The saved blocked flows (one with an unknown reason or a malformed
 * field is skipped, one past LEARN_FLOWS_MAX counted as dropped). */
static void load_flows(struct learn *l, const cJSON *flows)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, flows)
	{
		const char *dst = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "dst"));
		const char *name = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "name"));
		const char *reason = reason_of(cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(it, "reason")));
		const cJSON *uid = cJSON_GetObjectItemCaseSensitive(it, "uid");
		struct nflog_pkt pkt = {0};
		struct flow *f;

		if (dst == NULL || netaddr_parse(dst, &pkt.dst) != 0 ||
		    reason == NULL || learn_num(it, "proto") > UINT8_MAX ||
		    learn_num(it, "port") > UINT16_MAX ||
		    (name != NULL && strlen(name) >= RECENT_NAME_MAX))
			continue;
		pkt.proto = (uint8_t)learn_num(it, "proto");
		pkt.dport = (uint16_t)learn_num(it, "port");
		if (find_flow(l, &pkt, reason) != NULL)
			continue;
		if (l->n_flows >= LEARN_FLOWS_MAX) {
			l->flows_dropped++;
			continue;
		}
		f = &l->flows[l->n_flows++];
		memset(f, 0, sizeof(*f));
		f->dst = pkt.dst;
		f->proto = pkt.proto;
		f->port = pkt.dport;
		f->reason = reason;
		if (name != NULL)
			snprintf(f->name, sizeof(f->name), "%s", name);
		if (cJSON_IsNumber(uid) && learn_num(it, "uid") <= UINT32_MAX) {
			f->uid = (uint32_t)learn_num(it, "uid");
			f->has_uid = true;
		}
		f->count = (uint64_t)learn_num(it, "count");
	}
}
