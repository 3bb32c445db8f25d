/* SPDX-License-Identifier: GPL-2.0-or-later */
/* split: the fork of the DNS process and the watch each of the two
 * processes keeps on the other, so that either one dying takes the other
 * down with one clear log line and the fence stays as it is (fail
 * closed: the rules and sets are the kernel's, nobody removes them).
 *
 * The child dies with its parent through PR_SET_PDEATHSIG (SIGKILL, set
 * before anything else, and checked against a parent that was already
 * gone before it was set). The parent watches SIGCHLD on its loop: when
 * the child ends, it logs how (its exit status, or the signal that
 * killed it: SIGSYS is the seccomp filter's) and stops the loop. */
#ifndef DNSFENCE_SPLIT_H
#define DNSFENCE_SPLIT_H

#include <stdbool.h>
#include <sys/types.h>

struct event_base;
struct split;

/* The child's body: runs in the new process, its return is the exit
 * status. It must not touch the parent's event_base (make its own), and
 * must install its own handlers for the signals the parent's loop
 * watches (their libevent handlers write to the parent's loop; SIGCHLD's
 * is reset to the default before fn runs). */
typedef int (*split_fn)(void *arg);

/* Fork the child running fn(arg), and watch it from base: 0 and *out, or
 * -errno (nothing forked, or forked and killed again when the watch
 * could not be set up). */
int split_fork(struct event_base *base, split_fn fn, void *arg,
	       struct split **out);
pid_t split_pid(const struct split *s);
/* Has the child ended (then *status is its wait status)? */
bool split_ended(const struct split *s, int *status);
/* The loop stopped on a closed channel: up to wait_ms for the child to
 * end (its end logged as on SIGCHLD); has it? */
bool split_wait(struct split *s, int wait_ms);
/* A clean stop: SIGTERM, up to wait_ms for the child to exit, then
 * SIGKILL; reaped. Its wait status (or the one it ended with before). */
int split_stop(struct split *s, int wait_ms);
/* Stops the child the hard way if still running, and frees. */
void split_free(struct split *s);

#endif
