/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log: the one way dnsfence writes diagnostics (text or JSON lines). */
#ifndef DNSFENCE_LOG_H
#define DNSFENCE_LOG_H

#include <stdbool.h>

/* Not LOG_ERR etc.: <syslog.h> owns those names. */
enum log_level { LOGL_ERR = 0, LOGL_WARN, LOGL_INFO, LOGL_DEBUG };
enum log_format { LOG_FORMAT_TEXT = 0, LOG_FORMAT_JSON };

/* Defaults before log_setup(): info, text, stderr. */
void log_setup(enum log_level level, enum log_format format, bool use_syslog);
bool log_enabled(enum log_level level);
/* sys is a short subsystem tag ("server", "config", "sets"). */
void log_msg(enum log_level level, const char *sys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int log_level_parse(const char *s, enum log_level *out);
const char *log_level_name(enum log_level level);

#define log_err(sys, ...)   log_msg(LOGL_ERR, sys, __VA_ARGS__)
#define log_warn(sys, ...)  log_msg(LOGL_WARN, sys, __VA_ARGS__)
#define log_info(sys, ...)  log_msg(LOGL_INFO, sys, __VA_ARGS__)
#define log_debug(sys, ...) log_msg(LOGL_DEBUG, sys, __VA_ARGS__)

#endif
