/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report: what a daemon saw (`dnsfence report`) or one `dnsfence exec`
 * (report.c): the names denied, the flows blocked, the allowed names
 * asked and the allow entries used, as text, Markdown or JSON, and for
 * exec a summary on stderr. */
#ifndef DNSFENCE_REPORT_H
#define DNSFENCE_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "config/config.h"

/* Lines of each kind (denied, blocked, allowed) in the summary; the rest
 * are counted ("and N more"). */
#define REPORT_SUMMARY_LINES 20

/* Whether path can take the report, judged before anything is made:
 * not empty, its directory exists, and it is not a directory nor a
 * symbolic link. 0, or -errno with err set (naming --report). */
int report_check_path(const char *path, char *err, size_t errlen);

/* Read cfg's state_dir/suggest.json and usage.json (the trusted readers
 * of suggest: the files the stopped daemon wrote at exit; a missing file
 * is nothing seen), print the summary to summary (only when a name was
 * denied or a flow blocked: a clean run stays quiet) and, when path is
 * not NULL, write the whole report there: Markdown tables when path ends
 * in ".md", JSON otherwise. status is the command's exit status, kept in
 * the report. 0, or -errno with err set. */
int report_exec(const struct config *cfg, int status, const char *path,
		FILE *summary, char *err, size_t errlen);

enum report_format { REPORT_TEXT, REPORT_MD, REPORT_JSON };

/* "text", "md" or "json" into *out: 0, else -EINVAL. */
int report_format_parse(const char *s, enum report_format *out);

/* `dnsfence report`: the running daemon's records (asked on
 * cfg->control_socket), else those in cfg->state_dir (suggest.json and
 * usage.json, through suggest's trusted reader), printed to out in fmt;
 * which source was used is logged (info). 0, or -errno with err set:
 * -ENOENT when no daemon answered and state_dir holds neither file (err
 * names both), -EPERM when state_dir or a file is not trusted. */
int report_run(const struct config *cfg, enum report_format fmt, FILE *out,
	       char *err, size_t errlen);

/* The report of a running daemon's answer to "report" (text: its JSON,
 * {"suggest": ..., "usage": ...}, from the unprivileged DNS process), said
 * to come from source, in fmt: report_run's path with a live daemon, and
 * the fuzz target's. -EPROTO (err set) when text is no such object. */
int report_render(const struct config *cfg, const char *text,
		  const char *source, enum report_format fmt, FILE *out,
		  char *err, size_t errlen);

#endif
