// SPDX-License-Identifier: GPL-2.0-or-later
/* control: the control socket (see control.h).
 *
 * Who may talk to it: the socket file is mode 0660, root and the
 * daemon's group, in a directory the workload cannot write; on top of
 * that every connection's peer credentials (SO_PEERCRED) must be uid 0,
 * the daemon's uid or its gid, so a socket that leaked through a shared
 * volume or a wrong mode still refuses a workload running under another
 * uid. A root workload in the same mount and user namespace is not kept
 * out by either; it could rewrite the rules anyway (docs/security.md).
 *
 * The protocol is one line per connection, at most CONTROL_LINE_MAX
 * bytes, then one reply and close: "ok[ TEXT]\n" followed by a body
 * (status, entries), or "error CODE TEXT\n" (CODE an exit code: 2 bad config, 3
 * failure). Bounded: CONTROL_CLIENTS_MAX connections at once (more are
 * closed at accept), CONTROL_IO_TIMEOUT seconds to send the line and to
 * take the reply, bufferevents so that no client blocks the loop. A
 * reload is answered when it is over (rules written, deletes acked). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "observe/attrib.h"
#include "config/config.h"
#include "daemon/control.h"
#include "base/instance.h"
#include "observe/learn.h"
#include "base/log.h"
#include "observe/recent.h"
#include "observe/usage.h"
#include "daemon/reload.h"

#define SYS "control"

struct conn {
	struct control *ctl;
	struct bufferevent *bev;
	bool replied;
};

struct control {
	struct event_base *base;
	struct evconnlistener *lis;
	struct reload *rl;
	const struct learn *learn;
	const struct usage *usage;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uid_t uid;
	gid_t gid;
	dev_t dev; /* the socket file we bound, the only one we remove */
	ino_t ino;
	struct conn *conns[CONTROL_CLIENTS_MAX];
};

static int make_dir(const char *path, gid_t gid);
static void give_group(const char *path, gid_t gid);
static void on_accept(struct evconnlistener *lis, evutil_socket_t fd,
		      struct sockaddr *sa, int len, void *arg);
static bool peer_allowed(const struct control *c, int fd, char *why,
			 size_t cap);
static struct conn *conn_new(struct control *c, evutil_socket_t fd);
static void conn_free(struct conn *k);
static void on_read(struct bufferevent *bev, void *arg);
static void on_event(struct bufferevent *bev, short what, void *arg);
static void on_drained(struct bufferevent *bev, void *arg);
static void handle(struct conn *k, const char *line, size_t len);
static void handle_why(struct conn *k, const char *arg);
static void reply(struct conn *k, const char *head, const char *body);
static void handle_report(struct conn *k);
static void on_reloaded(void *arg, int result, const char *text);
static int read_reply(int fd, FILE *out, char *err, size_t errlen);

int control_parse(const char *line, size_t len, bool *json)
{
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	*json = false;
	if (len == 6 && memcmp(line, "reload", 6) == 0)
		return 1;
	if (len == 6 && memcmp(line, "status", 6) == 0)
		return 0;
	if (len == 7 && memcmp(line, "suggest", 7) == 0)
		return 3;
	if (len == 11 && memcmp(line, "status json", 11) == 0) {
		*json = true;
		return 0;
	}
	if (len == 7 && memcmp(line, "entries", 7) == 0)
		return 2;
	if (len == 6 && memcmp(line, "report", 6) == 0)
		return 4;
	return -EINVAL;
}

/* The parent directory, if missing: 0770, root and the daemon's group
 * (the daemon must be able to remove its socket after the drop). */
static int make_dir(const char *path, gid_t gid)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0770) < 0)
		return errno == EEXIST ? 0 : -errno;
	give_group(dir, gid);
	return 0;
}

/* root:gid, when root may chown (a container without CAP_CHOWN may not:
 * then the file stays root's own, and only root can use it). */
static void give_group(const char *path, gid_t gid)
{
	if (geteuid() != 0)
		return;
	if (chown(path, 0, gid) < 0)
		log_warn(SYS,
			 "%s: cannot give it to group %u (%s): only root can "
			 "use it",
			 path, (unsigned)gid, strerror(errno));
}

int control_bind(const char *path, gid_t gid, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	pid_t other;
	int fd = -1, rc;
	mode_t old;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	rc = make_dir(path, gid);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot create its directory: %s",
			 path, strerror(-rc));
		return rc;
	}
	if (instance_socket_owner(path, &other) > 0) {
		snprintf(err, errlen,
			 "%s: another process (pid %ld) listens "
			 "on it",
			 path, (long)other);
		return -EADDRINUSE;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	(void)unlink(path); /* a stale socket of an earlier run */
	old = umask(0117);  /* born 0660: no window with a wider mode */
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	/* listen here: the peer credentials a client sees are this
	 * process's, the daemon's main pid, even when a forked child
	 * serves the socket */
	if (rc < 0 || chmod(path, 0660) < 0 ||
	    listen(fd, CONTROL_CLIENTS_MAX) < 0)
		goto fail;
	give_group(path, gid);
	return fd;
fail:
	rc = -errno;
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

struct control *control_new(struct event_base *base, const char *path,
			    uid_t uid, gid_t gid, struct reload *rl, char *err,
			    size_t errlen)
{
	int fd = control_bind(path, gid, err, errlen);

	return fd < 0
		   ? NULL
		   : control_new_on(base, path, fd, uid, gid, rl, err, errlen);
}

struct control *control_new_on(struct event_base *base, const char *path,
			       int fd, uid_t uid, gid_t gid, struct reload *rl,
			       char *err, size_t errlen)
{
	struct control *c = calloc(1, sizeof(*c));
	struct stat st;

	if (c == NULL || strlen(path) >= sizeof(c->path) ||
	    stat(path, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 c == NULL			   ? "out of memory"
			 : strlen(path) >= sizeof(c->path) ? "path too long"
							   : strerror(errno));
		free(c);
		close(fd);
		return NULL;
	}
	c->base = base;
	c->rl = rl;
	c->uid = uid;
	c->gid = gid;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	snprintf(c->path, sizeof(c->path), "%s", path);
	/* backlog 0: it listens already (control_bind) */
	c->lis = evconnlistener_new(
	    base, on_accept, c, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
	    0, fd);
	if (c->lis == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		close(fd);
		free(c);
		return NULL;
	}
	log_info(SYS, "listening on %s (uid 0, %u and gid %u)", c->path,
		 (unsigned)uid, (unsigned)gid);
	return c;
}

void control_set_learn(struct control *c, const struct learn *l)
{
	if (c != NULL)
		c->learn = l;
}

void control_set_usage(struct control *c, const struct usage *u)
{
	if (c != NULL)
		c->usage = u;
}

void control_free(struct control *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < CONTROL_CLIENTS_MAX; i++)
		conn_free(c->conns[i]);
	if (c->lis != NULL) {
		struct stat st;

		evconnlistener_free(c->lis);
		/* Another daemon's socket in its place is left alone. */
		if (stat(c->path, &st) == 0 && st.st_dev == c->dev &&
		    st.st_ino == c->ino)
			(void)unlink(c->path);
	}
	free(c);
}

static bool peer_allowed(const struct control *c, int fd, char *why, size_t cap)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		snprintf(why, cap, "cannot read the peer's credentials: %s",
			 strerror(errno));
		return false;
	}
	if (cr.uid == 0 || cr.uid == c->uid || cr.gid == c->gid)
		return true;
	snprintf(why, cap,
		 "pid %ld uid %u gid %u is not root, the daemon's uid or its "
		 "group",
		 (long)cr.pid, (unsigned)cr.uid, (unsigned)cr.gid);
	return false;
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd,
		      struct sockaddr *sa, int len, void *arg)
{
	struct control *c = arg;
	char why[160];

	(void)lis;
	(void)sa;
	(void)len;
	if (!peer_allowed(c, fd, why, sizeof(why))) {
		log_warn(SYS, "refused a connection: %s", why);
		close(fd);
		return;
	}
	if (conn_new(c, fd) == NULL) {
		log_warn(SYS, "%d clients already connected: closing a new one",
			 CONTROL_CLIENTS_MAX);
		close(fd);
	}
}

static struct conn *conn_new(struct control *c, evutil_socket_t fd)
{
	struct timeval tv = {.tv_sec = CONTROL_IO_TIMEOUT};
	struct conn *k;
	size_t slot;

	for (slot = 0; slot < CONTROL_CLIENTS_MAX; slot++) {
		if (c->conns[slot] == NULL)
			break;
	}
	if (slot == CONTROL_CLIENTS_MAX || (k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	k->ctl = c;
	k->bev = bufferevent_socket_new(c->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (k->bev == NULL) {
		free(k);
		return NULL;
	}
	bufferevent_setwatermark(k->bev, EV_READ, 0, CONTROL_LINE_MAX);
	bufferevent_set_timeouts(k->bev, &tv, &tv);
	bufferevent_setcb(k->bev, on_read, NULL, on_event, k);
	bufferevent_enable(k->bev, EV_READ);
	c->conns[slot] = k;
	return k;
}

static void conn_free(struct conn *k)
{
	if (k == NULL)
		return;
	for (size_t i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		if (k->ctl->conns[i] == k)
			k->ctl->conns[i] = NULL;
	}
	reload_forget(k->ctl->rl, k);
	bufferevent_free(k->bev);
	free(k);
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct conn *k = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = 0;
	char *line;

	if (k->replied)
		return;
	line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF);
	if (line == NULL) {
		if (evbuffer_get_length(in) >= CONTROL_LINE_MAX)
			reply(k, "error 2 command line too long", NULL);
		return;
	}
	bufferevent_disable(bev, EV_READ);
	handle(k, line, len);
	free(line);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & BEV_EVENT_TIMEOUT)
		log_debug(SYS, "client timed out");
	conn_free(arg);
}

static void on_drained(struct bufferevent *bev, void *arg)
{
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		conn_free(arg);
}

/* "why ADDR[:PORT]": attribution's view of one address. */
static void handle_why(struct conn *k, const char *arg)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	int r = -ENOMEM;

	if (f != NULL) {
		r = attrib_why(reload_config(k->ctl->rl), recent_global(), arg,
			       f);
		fclose(f);
	}
	if (r == -EINVAL)
		reply(k, "error 2 expected ADDR, ADDR:PORT or [V6]:PORT", NULL);
	else
		reply(k, r == 0 ? "ok" : "error 3 out of memory", text);
	free(text);
}

static void handle(struct conn *k, const char *line, size_t len)
{
	bool json;
	char *body;
	int cmd;

	if (len > 4 && strncmp(line, "why ", 4) == 0) {
		handle_why(k, line + 4);
		return;
	}
	cmd = control_parse(line, len, &json);

	if (cmd < 0) {
		reply(k,
		      "error 2 unknown command (expected reload, status, "
		      "status json, entries, suggest, report, why ADDR[:PORT])",
		      NULL);
		return;
	}
	if (cmd == 3) {
		body = k->ctl->learn != NULL ? learn_text(k->ctl->learn) : NULL;
		reply(k,
		      body != NULL ? "ok"
		      : k->ctl->learn != NULL
			  ? "error 3 out of memory"
			  : "error 3 this daemon learns nothing (mode off, or "
			    "no state directory)",
		      body);
		free(body);
		return;
	}
	if (cmd == 4) {
		handle_report(k);
		return;
	}
	if (cmd == 1) {
		/* The read timeout no longer applies: a reload may take as
		 * long as writing the rules does. */
		bufferevent_set_timeouts(k->bev, NULL, NULL);
		reload_request(k->ctl->rl, "control", on_reloaded, k);
		return;
	}
	body = cmd == 2 ? reload_entries(k->ctl->rl)
			: reload_status(k->ctl->rl, json);
	reply(k, body != NULL ? "ok" : "error 3 out of memory", body);
	free(body);
}

/* `report`: {"suggest": what learn holds, "usage": what usage holds},
 * each as its state file would say it now (null when the daemon keeps
 * none). The texts are built as the files' writes build them. */
static void handle_report(struct conn *k)
{
	const struct control *c = k->ctl;
	char *learned = c->learn != NULL ? learn_text(c->learn) : NULL;
	char *used = c->usage != NULL ? usage_text(c->usage) : NULL;
	const char *l = learned != NULL ? learned : "null";
	const char *u = used != NULL ? used : "null";
	size_t cap = strlen(l) + strlen(u) + 32;
	char *body = NULL;

	if ((c->learn == NULL || learned != NULL) &&
	    (c->usage == NULL || used != NULL))
		body = malloc(cap);
	if (body != NULL)
		snprintf(body, cap, "{\"suggest\": %s,\n\"usage\": %s}\n", l,
			 u);
	reply(k, body != NULL ? "ok" : "error 3 out of memory", body);
	free(body);
	free(learned);
	free(used);
}

static void on_reloaded(void *arg, int result, const char *text)
{
	struct conn *k = arg;
	char head[CONTROL_LINE_MAX + 1024];

	if (result == RELOAD_OK)
		snprintf(head, sizeof(head), "ok %s", text);
	else
		snprintf(head, sizeof(head), "error %d %s", result, text);
	reply(k, head, NULL);
}

/* Queue the reply; the connection closes once it is written. */
static void reply(struct conn *k, const char *head, const char *body)
{
	struct timeval tv = {.tv_sec = CONTROL_IO_TIMEOUT};
	struct evbuffer *out = bufferevent_get_output(k->bev);

	k->replied = true;
	evbuffer_add_printf(out, "%s\n", head);
	if (body != NULL)
		evbuffer_add(out, body, strlen(body));
	bufferevent_set_timeouts(k->bev, NULL, &tv);
	bufferevent_setcb(k->bev, NULL, on_drained, on_event, k);
	bufferevent_enable(k->bev, EV_WRITE);
}

/* ---- client side (the CLI; blocking is fine there) ---- */

int control_call(const char *path, const char *cmd, int timeout_s, FILE *out,
		 char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = timeout_s};
	char line[CONTROL_LINE_MAX];
	int fd, rc, n;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	n = snprintf(line, sizeof(line), "%s\n", cmd);
	if (send(fd, line, (size_t)n, MSG_NOSIGNAL) != n) {
		rc = -errno;
		snprintf(err, errlen, "%s: send: %s", path, strerror(errno));
		goto out;
	}
	rc = read_reply(fd, out, err, errlen);
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* "ok[ TEXT]\n" BODY, or "error CODE TEXT\n", until the daemon closes. */
static int read_reply(int fd, FILE *out, char *err, size_t errlen)
{
	char buf[4096], head[1536];
	size_t hlen = 0;
	bool in_body = false;
	ssize_t n;
	int code;

	head[0] = '\0';
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		size_t off = 0;

		while (!in_body && off < (size_t)n) {
			char ch = buf[off++];

			if (ch == '\n')
				in_body = true;
			else if (hlen < sizeof(head) - 1)
				head[hlen++] = ch;
		}
		head[hlen] = '\0';
		if (in_body && off < (size_t)n)
			fwrite(buf + off, 1, (size_t)n - off, out);
	}
	if (n < 0) {
		snprintf(err, errlen, "reading the reply: %s",
			 errno == EAGAIN ? "timed out" : strerror(errno));
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	}
	if (strncmp(head, "ok", 2) == 0 &&
	    (head[2] == '\0' || head[2] == ' ')) {
		snprintf(err, errlen, "%s", head[2] ? head + 3 : "");
		return 0;
	}
	if (sscanf(head, "error %d", &code) == 1 && code > 0 && code < 64) {
		const char *text = strchr(head + 6, ' ');

		snprintf(err, errlen, "%s", text != NULL ? text + 1 : "");
		return code;
	}
	if (hlen == 0 && !in_body) {
		snprintf(err, errlen,
			 "the daemon closed the connection without an answer: "
			 "did it stop? (its log says why)");
		return -EPIPE;
	}
	snprintf(err, errlen, "reply not understood: \"%.80s\"", head);
	return -EPROTO;
}

void control_socket_of(const char *given, char *buf, size_t cap)
{
	const char *path = config_path(given);
	char *text = NULL;
	size_t len = 0;
	cJSON *root = NULL;
	const cJSON *s;
	FILE *f, *mem;
	char chunk[4096], dir[PATH_MAX];
	size_t n;

	instance_default_dir(dir, sizeof(dir));
	if ((f = fopen(path, "re")) == NULL)
		goto out;
	if ((mem = open_memstream(&text, &len)) != NULL) {
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, n, mem);
		fclose(mem);
	}
	fclose(f);
	if (text != NULL)
		root = cJSON_ParseWithLength(text, len);
	s = cJSON_GetObjectItemCaseSensitive(root, "state_dir");
	if (cJSON_IsString(s) && s->valuestring[0] == '/')
		snprintf(dir, sizeof(dir), "%s", s->valuestring);
	s = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(root, "control"), "socket");
	if (cJSON_IsString(s) && s->valuestring[0] == '/') {
		snprintf(buf, cap, "%s", s->valuestring);
		buf = NULL;
	}
	cJSON_Delete(root);
	free(text);
out:
	/* As config.c defaults it: the state directory's socket (its
	 * trailing slashes dropped). */
	if (buf != NULL) {
		size_t dlen = strlen(dir);

		while (dlen > 1 && dir[dlen - 1] == '/')
			dir[--dlen] = '\0';
		snprintf(buf, cap, "%s/%s", dir, CONFIG_CONTROL_FILE);
	}
}

int control_listener(const char *path, pid_t *pid)
{
	return instance_socket_owner(path, pid);
}
