/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sockpool: the DNS process's end of the socket channel (base/ipc.h
 * IPC_SOCKET, IPC_SOCKET_DONE), where the privileged parent makes every
 * upstream socket.
 *
 * The channel is non-blocking and read from a libevent event: replies
 * are matched to their request by id, so the loop never waits for the
 * parent to ask for a socket ahead of need. Each family keeps one ready
 * spare UDP socket, asked for right after the last one was taken: the
 * next burst of questions after an idle moment (c-ares 1.18 closes its
 * sockets when no query is in flight) takes it without a round trip.
 * A spare is what the parent gave: unconnected, unbound and marked, so
 * its source port is still chosen at connect time.
 *
 * With no spare ready (the first question of a family, TCP, a spare
 * already taken), sockpool_take waits for its own reply, but at most
 * wait_ms, then fails (its query fails as when the parent refuses). At
 * most one request of each family and type is outstanding: a take finds
 * the one in flight and waits for it, and once a waiter gave up on it,
 * the next takes of that kind fail at once until its reply comes (a
 * stopped parent costs the loop one bounded wait, not one per question).
 * A late reply is kept as its family's spare (UDP) or closed (TCP),
 * never handed to another kind of request. Ids count up from 1. */
#ifndef DNSFENCE_SOCKPOOL_H
#define DNSFENCE_SOCKPOOL_H

#include <stdint.h>

#include <event2/event.h>

/* The longest a take waits for the parent's reply. The parent answers
 * with one socket() and two setsockopt() calls, microseconds, once its
 * loop is free: a netlink batch or a restore holds it for some tens of
 * milliseconds at worst. A wait of 250 ms outlasts that several times,
 * and is a quarter of the least upstream_timeout a question has in all
 * (1 s; 3 s by default) and of a stub resolver's shortest retry (1 s), so
 * the loop it holds (the DNS process's only one) shows a stalled parent
 * once, as a short pause that costs no client a retry, not as a freeze
 * (later takes of that kind fail at once, see above). */
#define SOCKPOOL_WAIT_MS 250

struct sockpool;

/* The pool on chan (the socket channel's DNS-process end, not owned;
 * made non-blocking here) with takes waiting at most wait_ms; NULL on no
 * memory or an event that cannot be added. */
struct sockpool *sockpool_new(struct event_base *base, int chan,
			      uint32_t wait_ms);
/* The spares are closed; a reply still to come is never read. */
void sockpool_free(struct sockpool *p);
/* A socket of family (AF_INET, AF_INET6) and type (SOCK_DGRAM,
 * SOCK_STREAM), close-on-exec, blocking as the parent made it: the
 * descriptor, or -errno: the parent's status, -ETIMEDOUT (no reply within
 * the wait, or one already given up on), -EPIPE (the channel closed),
 * -EPROTO (the parent sent a frame that is no reply to a request in
 * flight: the pool is broken and every later take fails the same). */
int sockpool_take(struct sockpool *p, int family, int socktype);

#endif
