/* SPDX-License-Identifier: GPL-2.0-or-later */
/* exec: `dnsfence exec -- CMD`, one command fenced alone (exec.c). */
#ifndef DNSFENCE_EXEC_H
#define DNSFENCE_EXEC_H

/* Run argv (after exec's own options: --user, --allow, --help) fenced
 * by a private dnsfence instance built from config_path (NULL: none),
 * then remove that instance. Returns the command's exit status (128 +
 * signal when a signal ended it), 125 when exec itself failed, 126/127
 * when the command could not be run; the message is on stderr. */
int exec_main(const char *config_path, int argc, char **argv);

#endif
