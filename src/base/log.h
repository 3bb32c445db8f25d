/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log: the one way dnsfence writes diagnostics (text or JSON lines). */
#ifndef DNSFENCE_LOG_H
#define DNSFENCE_LOG_H

#include <stdbool.h>
#include <stdint.h>

/* Not LOG_ERR etc.: <syslog.h> owns those names. */
enum log_level { LOGL_ERR = 0, LOGL_WARN, LOGL_INFO, LOGL_DEBUG };
/* JOURNAL: text lines in the sd-daemon form ("<N>sys: msg") for the
 * daemon even without JOURNAL_STREAM/NOTIFY_SOCKET ("log.format"). */
enum log_format { LOG_FORMAT_TEXT = 0, LOG_FORMAT_JSON, LOG_FORMAT_JOURNAL };

/* Where lines go. AUTO: JOURNAL when JOURNAL_STREAM or NOTIFY_SOCKET is
 * set (systemd), or when the journal's native socket was connected
 * (log.c: JOURNAL_STREAM is stderr, or DNSFENCE_JOURNAL_SOCKET; the lines
 * then go to that socket with their fields), else STDERR. JOURNAL: "<N>sys:
 * msg", N the syslog priority (sd-daemon(3)), no timestamp. STDERR: timestamped
 * lines. CLI: a one-shot command's "dnsfence: [LEVEL: ]sys: msg" lines, or
 * JOURNAL under systemd (setup as ExecStartPre). */
enum log_dest {
	LOG_DEST_AUTO = 0,
	LOG_DEST_STDERR,
	LOG_DEST_JOURNAL,
	LOG_DEST_CLI
};

/* Once, before the first line (main). The default is STDERR. */
void log_init(enum log_dest dest);
enum log_dest log_dest(void);

/* Defaults before log_setup(): info, text, stderr. log_setup keeps the
 * destination log_init chose. */
void log_setup(enum log_level level, enum log_format format, bool use_syslog);
bool log_enabled(enum log_level level);
/* sys is a short subsystem tag ("server", "config", "sets"). */
void log_msg(enum log_level level, const char *sys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int log_level_parse(const char *s, enum log_level *out);

/* An event's typed fields (docs/logging.md): a string, or with str NULL
 * a number. */
struct log_field {
	const char *key;
	const char *str;
	int64_t num;
};
#define LOG_FIELDS_MAX 16
static inline struct log_field log_str(const char *key, const char *s)
{
	return (struct log_field){.key = key, .str = s};
}
static inline struct log_field log_num(const char *key, int64_t v)
{
	return (struct log_field){.key = key, .num = v};
}
/* The fields the next line this thread writes carries, in JSON lines
 * beside msg (text lines have them in msg already); forgotten after that
 * line, written or not. f must live until then: call it just before the
 * log_msg of the event. */
void log_fields(const struct log_field *f, size_t n);

/* Messages that a flood can repeat: each class has its own token bucket
 * (LOG_BURST lines at once, LOG_RATE a second after that). A line over
 * the limit is counted, not written; the next line of the class that is
 * written is preceded by "N similar messages suppressed". The counters
 * (stats.c) keep the exact numbers. */
enum log_class {
	LOG_CLASS_DENIED = 0, /* a name not on the allowlist */
	LOG_CLASS_AUDIT,      /* audit mode: what enforce would deny */
	LOG_CLASS_UPSTREAM,   /* an upstream failure or error rcode */
	LOG_CLASS_INTERNAL,   /* an internal address left out */
	LOG_CLASS_OVERLOAD,   /* the in-flight cap reached */
	LOG_CLASS_SETS,	      /* a kernel set add failed */
	LOG_CLASS_CLIENT,     /* a misbehaving client (TCP, garbage) */
	LOG_CLASS_QUERIES,    /* log.queries: an allowed question */
	LOG_CLASS__COUNT
};
#define LOG_BURST 20
#define LOG_RATE  5

struct log_bucket {
	uint64_t last_ms; /* when tokens were last added */
	uint32_t tokens;  /* lines that may still be written */
	uint64_t suppressed;
	bool primed;
};

/* Take a token at now_ms; false when the line must be suppressed. */
bool log_bucket_take(struct log_bucket *b, uint64_t now_ms);
void log_limited(enum log_class cls, enum log_level level, const char *sys,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* log_limited in two steps, for a line whose arguments cost more to
 * format than the line is worth when a flood suppresses it: true when
 * the next line of cls at level is to be written (its token is taken,
 * the pending "suppressed" count written), and the caller writes it
 * with log_msg; false when it is left out (and counted). */
bool log_limited_take(enum log_class cls, enum log_level level,
		      const char *sys);
/* Lines suppressed since the start, every class. */
uint64_t log_suppressed_total(void);
/* Lines the journal's native socket was too full to take (dropped, not
 * waited for). */
uint64_t log_journal_dropped(void);
/* Write the pending "suppressed" counts (at exit). */
void log_flush_suppressed(void);
const char *log_level_name(enum log_level level);

#define log_err(sys, ...)   log_msg(LOGL_ERR, sys, __VA_ARGS__)
#define log_warn(sys, ...)  log_msg(LOGL_WARN, sys, __VA_ARGS__)
#define log_info(sys, ...)  log_msg(LOGL_INFO, sys, __VA_ARGS__)
#define log_debug(sys, ...) log_msg(LOGL_DEBUG, sys, __VA_ARGS__)

#endif
