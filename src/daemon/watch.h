/* SPDX-License-Identifier: GPL-2.0-or-later */
/* watch: reload when the config file changes (inotify on its directory,
 * so that an editor's rename and a Kubernetes ConfigMap update, which
 * swaps the "..data" symlink, are seen as well as a write in place). */
#ifndef DNSFENCE_WATCH_H
#define DNSFENCE_WATCH_H

struct event_base;
struct reload;
struct watch;

/* Debounce: events closer together than this make one reload. */
#define WATCH_SETTLE_MS 200

/* Watch the directory of path. NULL (logged) when inotify refuses: the
 * daemon serves on, reload by signal or `dnsfence reload` still works. */
struct watch *watch_new(struct event_base *base, const char *path,
			struct reload *rl);
void watch_free(struct watch *w);

#endif
