/* SPDX-License-Identifier: GPL-2.0-or-later */
/* control: the daemon's control socket (a unix stream socket, one
 * command line per connection: "reload", "status", "status json",
 * "entries", "suggest", "report") and the client side the `reload`, `status`,
 * `entries` and `suggest` commands use. */
#ifndef DNSFENCE_CONTROL_H
#define DNSFENCE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct event_base;
struct reload;
struct control;
struct learn;
struct usage;

#define CONTROL_LINE_MAX    64 /* a command line, newline included */
#define CONTROL_CLIENTS_MAX 8  /* connections served at once */
#define CONTROL_IO_TIMEOUT  2  /* seconds to send the line / read reply */

/* Bind path (a stale socket there is replaced; one a live process
 * answers on is -EADDRINUSE, never taken over), owned by root and gid
 * (when the process may chown), mode 0660; a missing parent directory is
 * created, 0770 root:gid. Served: peers with uid 0, uid or gid (checked
 * with SO_PEERCRED on every connection). Call before the privilege drop.
 * NULL with err set on failure. */
struct control *control_new(struct event_base *base, const char *path,
			    uid_t uid, gid_t gid, struct reload *rl, char *err,
			    size_t errlen);
/* The socket alone, bound and listening as control_new says: its fd, or
 * -errno with err set. For a process that forks the one serving it: a
 * client's SO_PEERCRED names the process that listened (this one). */
int control_bind(const char *path, gid_t gid, char *err, size_t errlen);
/* control_new on fd, control_bind's socket for path (taken over). */
struct control *control_new_on(struct event_base *base, const char *path,
			       int fd, uid_t uid, gid_t gid, struct reload *rl,
			       char *err, size_t errlen);
/* Answer `suggest` with what l has learned (learn_text); NULL: refuse. */
void control_set_learn(struct control *c, const struct learn *l);
/* Answer `report` with l's and u's records (learn_text, usage_text). */
void control_set_usage(struct control *c, const struct usage *u);
/* Closes the clients and removes the socket file, if it is still the one
 * control_new bound (best effort). */
void control_free(struct control *c);

/* The protocol's command check, pure (for tests): 0 and *json for
 * "status"/"status json", 1 for "reload", 2 for "entries" (reload.h's
 * reload_entries), 3 for "suggest", 4 for "report", -EINVAL otherwise. */
int control_parse(const char *line, size_t len, bool *json);

/* Client: send cmd, copy the reply's body to out. Returns the daemon's
 * result (0, or the exit code it gave: 2 bad config, 3 failure) with its
 * message in err; -ENOENT/-ECONNREFUSED when no daemon listens on path,
 * -EACCES, -ETIMEDOUT, -EPIPE (closed without an answer: it stopped?),
 * -EPROTO (reply not understood) with err set. */
int control_call(const char *path, const char *cmd, int timeout_s, FILE *out,
		 char *err, size_t errlen);

/* Client: does a daemon listen on path? instance_socket_owner's answer
 * (1 with *pid, 0 none, -errno cannot tell). */
int control_listener(const char *path, pid_t *pid);

/* The control.socket a config file names, read without validating the
 * rest (a reload is often asked for a file with an error in it), else
 * the default, into buf. config_path as for config_load. */
void control_socket_of(const char *config_path, char *buf, size_t cap);

#endif
