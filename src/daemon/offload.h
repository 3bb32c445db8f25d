/* SPDX-License-Identifier: GPL-2.0-or-later */
/* offload: one slow function at a time run in a thread while the event
 * loop goes on answering, its completion called back from the loop. Both
 * processes' reload parses use it: the DNS process's (reload.c), so that
 * queries are answered meanwhile, and the privileged parent's (serve.c),
 * so that its set writer answers the adds meanwhile. */
#ifndef DNSFENCE_OFFLOAD_H
#define DNSFENCE_OFFLOAD_H

#include <stdbool.h>

struct event_base;
struct offload;

typedef void (*offload_fn)(void *arg);

/* NULL when out of memory or out of descriptors (an eventfd). */
struct offload *offload_new(struct event_base *base);

/* work(arg) in a thread (every signal blocked: they stay with the loop's
 * thread), then done(arg) from the loop once the thread is joined. work
 * must neither log nor touch the loop; what it reads must not change in
 * the loop until done. When no thread can be made, work runs here, before
 * this returns, and done still from the loop. 0, or -EBUSY (nothing runs)
 * while an earlier job is not done. */
int offload_run(struct offload *o, offload_fn work, offload_fn done, void *arg);

/* A job runs, or its done has not been called yet. */
bool offload_busy(const struct offload *o);

/* Waits for a running job's work (its done is never called). */
void offload_free(struct offload *o);

#endif
