/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sandbox: what the unprivileged DNS process holds once it has entered
 * it: no capability in any set (effective, permitted, inheritable,
 * ambient; the bounding set too when the caller may still shrink it),
 * no_new_privs, and a seccomp filter that kills the process on any
 * system call outside the list the event loop, c-ares, logging, the
 * reload's thread and the IPC channel need (sandbox.c says which). No
 * execve, no ptrace, no capset or setuid, no mount or namespace calls:
 * a parser bug that runs code runs it in a process that can talk to its
 * sockets, its files and the parent, and nothing else. */
#ifndef DNSFENCE_SANDBOX_H
#define DNSFENCE_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

/* Become uid/gid (when root) holding nothing (privs_shed), then load the
 * filter. Irreversible; a failure leaves the process in an unknown half
 * state, so the caller must exit. 0, or -EPERM / -ENOMEM / -EINVAL with
 * err set. */
int sandbox_enter(uid_t uid, gid_t gid, char *err, size_t errlen);

/* Load only the filter (no_new_privs must already be set, or the caller
 * hold CAP_SYS_ADMIN): for the tests. 0 or as sandbox_enter. */
int sandbox_filter(char *err, size_t errlen);

#endif
