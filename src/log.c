// SPDX-License-Identifier: GPL-2.0-or-later
/* log: levelled log lines, as text or JSON lines, to stderr or syslog.
 *
 * Every line carries a subsystem tag. Text lines look like
 *   2026-11-30T04:06:28Z info server: denied www.evil.test A from 198.18.0.2
 * and JSON lines like
 *   {"ts":"2026-11-30T04:06:28Z","level":"info","sys":"server","msg":"..."}
 * The message is escaped for JSON, so a hostile query name cannot forge a
 * field or a line. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "dnsfence/log.h"

static void json_escape(const char *in, char *out, size_t cap);

static enum log_level cur_level = LOGL_INFO;
static enum log_format cur_format = LOG_FORMAT_TEXT;
static bool cur_syslog;

static const char *const level_names[] = {"error", "warning", "info", "debug"};
static const int syslog_prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};

void log_setup(enum log_level level, enum log_format format, bool use_syslog)
{
	cur_level = level;
	cur_format = format;
	if (use_syslog && !cur_syslog)
		openlog("dnsfence", LOG_PID, LOG_DAEMON);
	cur_syslog = use_syslog;
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
	char msg[1024], esc[sizeof(msg) * 6 + 1], ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;
	int saved = errno;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (cur_syslog) {
		syslog(syslog_prio[level], "%s: %s", sys, msg);
		errno = saved;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (cur_format == LOG_FORMAT_JSON) {
		json_escape(msg, esc, sizeof(esc));
		fprintf(stderr,
			"{\"ts\":\"%s\",\"level\":\"%s\",\"sys\":\"%s\","
			"\"msg\":\"%s\"}\n",
			ts, level_names[level], sys, esc);
	} else {
		fprintf(stderr, "%s %s %s: %s\n", ts, level_names[level], sys,
			msg);
	}
	errno = saved;
}
