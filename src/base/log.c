// SPDX-License-Identifier: GPL-2.0-or-later
/* log: levelled log lines, as text or JSON lines, to stderr or syslog.
 *
 * Every line carries a subsystem tag. Text lines look like
 *   2026-11-30T04:06:28Z info server: denied www.evil.test A from 198.18.0.2
 * and JSON lines like
 *   {"ts":"2026-11-30T04:06:28Z","level":"info","sys":"server","msg":"..."}
 * The message is escaped for JSON, so a hostile query name cannot forge a
 * field or a line.
 *
 * Where the lines go (log_init): a daemon command under systemd (when
 * JOURNAL_STREAM or NOTIFY_SOCKET is set) writes the sd-daemon form,
 *   <4>guard: DRIFT: ...
 * a syslog priority prefix journald turns into the line's priority, and
 * no timestamp of its own (the journal keeps one); elsewhere it writes
 * the timestamped lines above. A one-shot command (validate, check,
 * teardown, ...) writes what a command-line tool writes,
 *   dnsfence: config: /etc/dnsfence/dnsfence.json: allow[0]: ...
 *   dnsfence: warning: teardown: ...
 * with no timestamp and no level word for errors.
 *
 * A daemon whose stderr is the journal's stream (JOURNAL_STREAM names
 * stderr's device and inode), or told a socket by DNSFENCE_JOURNAL_SOCKET,
 * sends each line to journald's native socket instead, one datagram of
 * KEY=value fields: MESSAGE ("sys: msg"), PRIORITY, SYSLOG_IDENTIFIER,
 * DNSFENCE_SYS and each event field upper-cased (DNSFENCE_EVENT,
 * DNSFENCE_NAME, ...). The socket is opened and connected in log_init,
 * before any privilege drop or seccomp filter, non-blocking: a full
 * journal drops the line (counted, log_journal_dropped) rather than stall
 * the DNS loop, and a send that fails otherwise writes the stderr line.
 *
 * Lines a flood can repeat (denied names, upstream failures, set adds)
 * go through log_limited(): one token bucket per message class, and the
 * count of what was left out is written before the class's next line, so
 * the log volume is bounded whatever the traffic. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

static void json_escape(const char *in, char *out, size_t cap);
static void vlog_msg(enum log_level level, const char *sys, const char *fmt,
		     va_list ap) __attribute__((format(printf, 3, 0)));
static uint64_t mono_ms(void);
static void report_suppressed(enum log_class cls, enum log_level level,
			      const char *sys);
static bool stderr_is_journal(const char *js);
static void journal_open(const char *path);
static int journal_send(enum log_level level, const char *sys, const char *msg);
static size_t journal_put(char *buf, size_t o, size_t cap, const char *key,
			  const char *val);

static enum log_level cur_level = LOGL_INFO;
static enum log_format cur_format = LOG_FORMAT_TEXT;
static bool cur_syslog;
static enum log_dest cur_dest = LOG_DEST_STDERR;
static enum log_dest init_dest = LOG_DEST_STDERR; /* what log_init chose */
/* log_fields's, for the next line of this thread (the reload's parse
 * thread logs too) */
static __thread const struct log_field *pending;
static __thread size_t n_pending;

static const char *const level_names[] = {"error", "warning", "info", "debug"};
static const int syslog_prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
_Static_assert(LOG_ERR == 3 && LOG_WARNING == 4 && LOG_INFO == 6 &&
		   LOG_DEBUG == 7,
	       "the <N> prefixes are syslog priorities");
static const char *const class_names[LOG_CLASS__COUNT] = {
    [LOG_CLASS_DENIED] = "denied names",
    [LOG_CLASS_AUDIT] = "audit",
    [LOG_CLASS_UPSTREAM] = "upstream failures",
    [LOG_CLASS_INTERNAL] = "internal addresses",
    [LOG_CLASS_OVERLOAD] = "queries over the in-flight cap",
    [LOG_CLASS_SETS] = "set adds",
    [LOG_CLASS_CLIENT] = "client errors",
    [LOG_CLASS_QUERIES] = "allowed queries",
};
static struct log_bucket buckets[LOG_CLASS__COUNT];
static uint64_t suppressed_total;
static int journal_fd = -1;	 /* the native socket, connected */
static uint64_t journal_dropped; /* lines a full journal left out */
static struct {
	enum log_level level;
	const char *sys;
} last_of[LOG_CLASS__COUNT];

void log_setup(enum log_level level, enum log_format format, bool use_syslog)
{
	cur_level = level;
	cur_format =
	    format == LOG_FORMAT_JSON ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
	/* "journal": the sd-daemon form without the environment's word
	 * (a runtime that hands stderr to journald); commands stay plain. */
	cur_dest = format == LOG_FORMAT_JOURNAL && init_dest == LOG_DEST_STDERR
		       ? LOG_DEST_JOURNAL
		       : init_dest;
	if (use_syslog && !cur_syslog)
		openlog("dnsfence", LOG_PID, LOG_DAEMON);
	cur_syslog = use_syslog;
}

void log_init(enum log_dest dest)
{
	const char *js = getenv("JOURNAL_STREAM");
	const char *ns = getenv("NOTIFY_SOCKET");
	bool systemd =
	    (js != NULL && *js != '\0') || (ns != NULL && *ns != '\0');

	const char *sock = getenv("DNSFENCE_JOURNAL_SOCKET");

	if (dest == LOG_DEST_AUTO && sock != NULL && *sock != '\0')
		journal_open(sock);
	else if (dest == LOG_DEST_AUTO && stderr_is_journal(js))
		journal_open("/run/systemd/journal/socket");
	if (dest == LOG_DEST_AUTO)
		dest = systemd || journal_fd >= 0 ? LOG_DEST_JOURNAL
						  : LOG_DEST_STDERR;
	else if (dest == LOG_DEST_CLI && systemd)
		dest = LOG_DEST_JOURNAL; /* ExecStartPre=dnsfence setup */
	cur_dest = init_dest = dest;
}

/* systemd.exec(5): JOURNAL_STREAM is "DEV:INODE" of the stream stderr
 * was connected to; stderr may since have been redirected elsewhere. */
static bool stderr_is_journal(const char *js)
{
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	if (js == NULL || sscanf(js, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
	    js[end] != '\0' || fstat(STDERR_FILENO, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

/* Connect the native socket at path; on failure lines stay on stderr. */
static void journal_open(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return;
	}
	journal_fd = fd;
}

uint64_t log_journal_dropped(void)
{
	return __atomic_load_n(&journal_dropped, __ATOMIC_RELAXED);
}

/* One field at o: "KEY=value\n", or for a value with a newline the
 * binary form "KEY\n", its length (64-bit little endian), the value,
 * "\n". The new offset, or cap when it does not fit (the datagram is
 * then cut before this field). */
static size_t journal_put(char *buf, size_t o, size_t cap, const char *key,
			  const char *val)
{
	size_t k = strlen(key), v = strlen(val);

	if (strchr(val, '\n') == NULL) {
		if (k + v + 2 > cap - o)
			return cap;
		memcpy(buf + o, key, k);
		buf[o + k] = '=';
		memcpy(buf + o + k + 1, val, v);
		buf[o + k + 1 + v] = '\n';
		return o + k + v + 2;
	}
	if (k + v + 10 > cap - o)
		return cap;
	memcpy(buf + o, key, k);
	buf[o + k] = '\n';
	for (int i = 0; i < 8; i++)
		buf[o + k + 1 + (size_t)i] = (char)((uint64_t)v >> (8 * i));
	memcpy(buf + o + k + 9, val, v);
	buf[o + k + 9 + v] = '\n';
	return o + k + v + 10;
}

/* The line as one datagram with its pending fields. 0, -EAGAIN (the
 * journal is full: dropped), or another -errno (write it elsewhere). */
static int journal_send(enum log_level level, const char *sys, const char *msg)
{
	char buf[8192], line[1200], key[64], num[24];
	size_t o = 0, next;

	snprintf(line, sizeof(line), "%s: %s", sys, msg);
	snprintf(num, sizeof(num), "%d", syslog_prio[level]);
	o = journal_put(buf, o, sizeof(buf), "MESSAGE", line);
	o = journal_put(buf, o, sizeof(buf), "PRIORITY", num);
	o = journal_put(buf, o, sizeof(buf), "SYSLOG_IDENTIFIER", "dnsfence");
	o = journal_put(buf, o, sizeof(buf), "DNSFENCE_SYS", sys);
	for (size_t i = 0; i < n_pending && pending != NULL && o < sizeof(buf);
	     i++) {
		const struct log_field *f = &pending[i];
		/* journal field names: upper case, digits, underscore */
		size_t j = (size_t)snprintf(key, sizeof(key), "DNSFENCE_");
		for (const char *c = f->key; *c != '\0' && j + 1 < sizeof(key);
		     c++)
			key[j++] = *c >= 'a' && *c <= 'z' ? (char)(*c - 32)
				   : (*c >= 'A' && *c <= 'Z') ||
					   (*c >= '0' && *c <= '9')
				       ? *c
				       : '_';
		key[j] = '\0';
		if (f->str == NULL)
			snprintf(num, sizeof(num), "%" PRId64, f->num);
		next = journal_put(buf, o, sizeof(buf), key,
				   f->str != NULL ? f->str : num);
		if (next < sizeof(buf))
			o = next;
	}
	if (o >= sizeof(buf))
		return -EMSGSIZE;
	if (write(journal_fd, buf, o) == (ssize_t)o)
		return 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
		/* the reload's parse thread logs too */
		__atomic_fetch_add(&journal_dropped, 1, __ATOMIC_RELAXED);
		return -EAGAIN;
	}
	return -errno;
}

enum log_dest log_dest(void)
{
	return cur_dest;
}

bool log_enabled(enum log_level level)
{
	return level <= cur_level;
}

int log_level_parse(const char *s, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]);
	     i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *log_level_name(enum log_level level)
{
	if ((unsigned)level >= sizeof(level_names) / sizeof(level_names[0]))
		return "unknown";
	return level_names[level];
}

/* Control characters become \u00XX; quote and backslash are escaped. */
static void json_escape(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *in != '\0' && o + 7 < cap; in++) {
		unsigned char c = (unsigned char)*in;

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			out[o++] = '\\';
			out[o++] = 'u';
			out[o++] = '0';
			out[o++] = '0';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 0xf];
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
}

void log_msg(enum log_level level, const char *sys, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_msg(level, sys, fmt, ap);
	va_end(ap);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool log_bucket_take(struct log_bucket *b, uint64_t now_ms)
{
	uint64_t add;

	if (!b->primed) {
		b->primed = true;
		b->tokens = LOG_BURST;
		b->last_ms = now_ms;
	}
	add = now_ms > b->last_ms ? (now_ms - b->last_ms) * LOG_RATE / 1000 : 0;
	if (add > 0) {
		b->tokens = add >= LOG_BURST - b->tokens
				? LOG_BURST
				: b->tokens + (uint32_t)add;
		b->last_ms += add * 1000 / LOG_RATE;
	}
	if (b->tokens == LOG_BURST)
		b->last_ms = now_ms;
	if (b->tokens == 0) {
		b->suppressed++;
		return false;
	}
	b->tokens--;
	return true;
}

static void report_suppressed(enum log_class cls, enum log_level level,
			      const char *sys)
{
	struct log_bucket *b = &buckets[cls];

	if (b->suppressed == 0)
		return;
	log_msg(level, sys, "%llu similar messages suppressed (%s)",
		(unsigned long long)b->suppressed, class_names[cls]);
	b->suppressed = 0;
}

bool log_limited_take(enum log_class cls, enum log_level level, const char *sys)
{
	if (!log_enabled(level) || (unsigned)cls >= LOG_CLASS__COUNT)
		return false;
	last_of[cls].level = level;
	last_of[cls].sys = sys;
	if (!log_bucket_take(&buckets[cls], mono_ms())) {
		suppressed_total++;
		return false;
	}
	report_suppressed(cls, level, sys);
	return true;
}

void log_limited(enum log_class cls, enum log_level level, const char *sys,
		 const char *fmt, ...)
{
	va_list ap;

	if (!log_limited_take(cls, level, sys))
		return;
	va_start(ap, fmt);
	vlog_msg(level, sys, fmt, ap);
	va_end(ap);
}

uint64_t log_suppressed_total(void)
{
	return suppressed_total;
}

void log_flush_suppressed(void)
{
	for (int c = 0; c < LOG_CLASS__COUNT; c++)
		report_suppressed((enum log_class)c, last_of[c].level,
				  last_of[c].sys != NULL ? last_of[c].sys
							 : "log");
}

void log_fields(const struct log_field *f, size_t n)
{
	pending = f;
	n_pending = n > LOG_FIELDS_MAX ? LOG_FIELDS_MAX : n;
}

/* The pending fields as JSON members (",\"k\":v..."), then forgotten. */
static void render_fields(char *out, size_t cap)
{
	char esc[256 * 6 + 1], val[256];
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n_pending && pending != NULL; i++) {
		const struct log_field *f = &pending[i];
		int w;

		if (f->str != NULL) {
			snprintf(val, sizeof(val), "%s", f->str);
			json_escape(val, esc, sizeof(esc));
			w = snprintf(out + o, cap - o, ",\"%s\":\"%s\"", f->key,
				     esc);
		} else {
			w = snprintf(out + o, cap - o, ",\"%s\":%lld", f->key,
				     (long long)f->num);
		}
		if (w < 0 || (size_t)w >= cap - o) {
			out[o] = '\0'; /* whole members only */
			break;
		}
		o += (size_t)w;
	}
	pending = NULL;
	n_pending = 0;
}

static void vlog_msg(enum log_level level, const char *sys, const char *fmt,
		     va_list ap)
{
	char msg[1024], esc[sizeof(msg) * 6 + 1], ts[32], fields[2048];
	struct timespec now;
	struct tm tm;
	int saved = errno;
	int jrc = -ENOTCONN;

	if (!log_enabled(level)) {
		render_fields(fields, sizeof(fields));
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (journal_fd >= 0 && !cur_syslog && cur_dest == LOG_DEST_JOURNAL)
		jrc = journal_send(level, sys, msg);
	render_fields(fields, sizeof(fields));
	if (jrc == 0 || jrc == -EAGAIN) {
		errno = saved;
		return;
	}

	if (cur_syslog) {
		syslog(syslog_prio[level], "%s: %s", sys, msg);
		errno = saved;
		return;
	}
	if (cur_dest == LOG_DEST_CLI && cur_format == LOG_FORMAT_TEXT) {
		fprintf(stderr, "dnsfence: %s%s%s: %s\n",
			level == LOGL_ERR ? "" : level_names[level],
			level == LOGL_ERR ? "" : ": ", sys, msg);
		errno = saved;
		return;
	}
	if (cur_dest == LOG_DEST_JOURNAL)
		snprintf(ts, sizeof(ts), "<%d>", syslog_prio[level]);
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	if (cur_dest != LOG_DEST_JOURNAL)
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (cur_format == LOG_FORMAT_JSON && cur_dest == LOG_DEST_JOURNAL) {
		json_escape(msg, esc, sizeof(esc));
		fprintf(
		    stderr,
		    "%s{\"level\":\"%s\",\"sys\":\"%s\",\"msg\":\"%s\"%s}\n",
		    ts, level_names[level], sys, esc, fields);
	} else if (cur_format == LOG_FORMAT_JSON) {
		json_escape(msg, esc, sizeof(esc));
		fprintf(stderr,
			"{\"ts\":\"%s\",\"level\":\"%s\",\"sys\":\"%s\","
			"\"msg\":\"%s\"%s}\n",
			ts, level_names[level], sys, esc, fields);
	} else if (cur_dest == LOG_DEST_JOURNAL) {
		fprintf(stderr, "%s%s: %s\n", ts, sys, msg);
	} else {
		fprintf(stderr, "%s %s %s: %s\n", ts, level_names[level], sys,
			msg);
	}
	errno = saved;
}
