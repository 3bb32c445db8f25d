/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sets: the kernel ipsets on the hot path: adds over libmnl netlink,
 * batched, acked, never blocking the event loop. Creating, checking and
 * destroying the sets (blocking, libipset) is setsadm.h. */
#ifndef DNSFENCE_SETS_H
#define DNSFENCE_SETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/ipc.h"
#include "dns/dnsrr.h"

struct event_base;
struct sets;

#define SETS_KERNEL_MAX_TIMEOUT 2147483u
/* An add is skipped when the entry already lives long enough and the
 * kernel confirmed it less than this long ago; otherwise it is sent again
 * with the longest expiry known (never shorter). This bounds how long an
 * answer can hand out an address that someone removed from the set
 * behind the daemon's back (ipset flush, destroy and create). */
#define SETS_FRESH_SECONDS 1
/* A batch whose acks have not all come by then fails (-ETIMEDOUT). */
#define SETS_DEADLINE_MS 2000

/* clamp(ttl, min, max), then at least 1 and at most the kernel maximum. */
uint32_t sets_timeout(uint32_t ttl, uint32_t min, uint32_t max);

/* The largest message sets_build_add or sets_build_client_add writes. */
#define SETS_ADD_MSG_MAX 192
/* The client sets' type (forward scope, "bind": "client"): entries of
 * (client, proto:port, answered address), matched src,dst,dst. */
#define SETS_CLIENT_TYPE "hash:ip,port,ip"
/* One netlink IPSET_CMD_ADD request for a (AF_INET or AF_INET6) into buf:
 * NLM_F_REQUEST|NLM_F_ACK (no NLM_F_EXCL: a re-add refreshes), with
 * IPSET_ATTR_TIMEOUT. Returns its length, -EINVAL for a bad set name or
 * family, -ENOSPC when cap < SETS_ADD_MSG_MAX. Pure; exposed for tests. */
int sets_build_add(void *buf, size_t cap, const char *setname,
		   const struct netaddr *a, uint32_t timeout, uint32_t seq);
/* The same for IPSET_CMD_DEL (no timeout). */
int sets_build_del(void *buf, size_t cap, const char *setname,
		   const struct netaddr *a, uint32_t seq);
/* The same for a client set entry: client, proto (IPPROTO_TCP/UDP), port
 * (host order), address a of the client's family. */
int sets_build_client_add(void *buf, size_t cap, const char *setname,
			  const struct netaddr *client, uint8_t proto,
			  uint16_t port, const struct netaddr *a,
			  uint32_t timeout, uint32_t seq);
/* Set names: 1..31 bytes of [A-Za-z0-9_.-]. */
bool sets_name_valid(const char *name);

/* One port a client set entry is made for. */
struct sets_port {
	uint8_t proto; /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;
};
#define SETS_CLIENT_PORTS_MAX 64

struct sets_params {
	const char *set4, *set6;
	uint32_t ttl_min, ttl_max;
	/* The client sets (forward scope, "bind": "client"), NULL: none.
	 * Over netlink each client entry is sent once per port of ports
	 * (n_ports, at most SETS_CLIENT_PORTS_MAX); the DNS process's
	 * remote sets send it once and the parent's sets expand it. */
	const char *client4, *client6;
	const struct sets_port *ports;
	size_t n_ports;
};

/* Each process's expiry map (expiry_new_window) holds only the acks of
 * the last SETS_FRESH_SECONDS and the adds in flight, at most this many
 * addresses (both families): beyond, an add is sent rather than skipped.
 * What an entry's expiry must never fall below comes from the floor
 * (sets_set_floor), not from the map. The cached benchmark re-adds 2,000
 * addresses a second; at most about 0.7 MiB. */
#define SETS_WINDOW_MAP_MAX 16384

/* Opens the netlink socket (needs CAP_NET_ADMIN for the adds). Its
 * expiry map is a window, as sets_open_remote's: with no floor set (the
 * parent's sets, which serve the DNS process's requests) an add carries
 * what it asks for, or what an entry acked within the window or an add
 * in flight holds if that is longer; the DNS process's adds come with
 * their floor already in. */
struct sets *sets_open(struct event_base *base, const struct sets_params *p,
		       char *err, size_t errlen);
/* The same sets, reached through the privileged parent instead of
 * netlink (the DNS process holds no CAP_NET_ADMIN): every add, del and
 * shorten goes over chan (a non-blocking SOCK_SEQPACKET end, taken over)
 * as IPC frames to the parent's set writer, and completes when its
 * IPC_ADD_DONE comes back; the skips and the deadlines are this
 * process's, as over netlink. Its expiry map is a window
 * (expiry_new_window): the acks of the last SETS_FRESH_SECONDS and the
 * adds in flight, up to SETS_WINDOW_MAP_MAX; an add after the window
 * carries the floor (sets_set_floor), and an entry re-acked after its
 * window claims the expiry this process sent. When the channel
 * fails (the parent is gone) every change in flight and every later one fails
 * with -EIO. NULL (err set) on a bad name or no memory; chan is closed. */
struct sets *sets_open_remote(struct event_base *base,
			      const struct sets_params *p, int chan, char *err,
			      size_t errlen);
/* Drops adds still queued or in flight WITHOUT calling their done: the
 * caller tears its queries down itself. Never call it from a done. */
void sets_close(struct sets *s);
/* New clamp for the timeouts of later adds (reload). */
void sets_set_ttl(struct sets *s, uint32_t ttl_min, uint32_t ttl_max);
/* Addresses the expiry map's window holds per family (expired entries
 * not yet swept included; status counts the kernel's sets, see
 * stats_shared_set_entries). */
void sets_entries(const struct sets *s, size_t *v4, size_t *v6);
/* Forget the expiry map (see expiry.h): the sets were recreated
 * (the guard restored them) and are empty, so no entry outlives anything.
 * Adds in flight still complete normally. */
void sets_forget(struct sets *s);
/* fn(arg) after every sets_forget (the parent tells the DNS process,
 * whose map of the same entries is then as stale as its own). */
void sets_on_forget(struct sets *s, void (*fn)(void *arg), void *arg);
/* The floor of every later add: fn(arg, a, now) is the latest expiry
 * (monotonic seconds, 0: none) that any answer asked for a's entry; an
 * add never sends less, so a shorter TTL never shortens an entry another
 * answer made longer (invariant 4), however long ago that answer came.
 * The DNS process's resolver sets it from prov (prov_expires), which
 * holds every live set entry's answers. NULL: no floor. */
typedef uint64_t (*sets_floor_fn)(void *arg, const struct netaddr *a,
				  uint64_t now);
void sets_set_floor(struct sets *s, sets_floor_fn fn, void *arg);
/* Count failed adds but never log them: the parent's sets, whose
 * failures the DNS process logs once (it has the clients). */
void sets_quiet(struct sets *s);

/* When a's entry expires (monotonic seconds): the later of what the
 * kernel acked within the window and what is in flight; 0 when this
 * process knows of none (never added, deleted, expired, forgotten, or
 * acked more than SETS_FRESH_SECONDS ago). */
uint64_t sets_expires(struct sets *s, const struct netaddr *a);

/* Would sets_add skip every one of addrs (each entry confirmed by the
 * kernel within SETS_FRESH_SECONDS and already living long enough)? Then
 * the caller may answer at once; the skips are counted. */
bool sets_covered(struct sets *s, const struct dns_addr *addrs, size_t n);

/* status 0: every address is in its set; -ENOENT set missing, -ENOSPC set
 * full, -ETIMEDOUT no ack within SETS_DEADLINE_MS, -EIO other failure
 * (logged, rate-limited). */
typedef void (*sets_done_fn)(void *arg, int status);

/* Put addrs (copied) into the sets with timeouts from their TTLs, skipping
 * those whose entry already outlives the new timeout. done is called once,
 * always later from the event loop, never from inside sets_add. Adds
 * queued in one loop iteration go out in one send. 0, -ENOMEM, or -EINVAL
 * (an address neither AF_INET nor AF_INET6; nothing queued, no done).
 * An add for an address whose longer add is still in flight carries that
 * longer timeout, so the order the kernel applies them in cannot shorten
 * the entry. */
int sets_add(struct sets *s, const struct dns_addr *addrs, size_t n,
	     sets_done_fn done, void *arg);
/* Read the acks waiting on the socket (what its read event does; for
 * tests that fake the socket). */
void sets_read(struct sets *s);
/* Requests sent and not yet acked (or failed). */
size_t sets_inflight(const struct sets *s);
/* How far behind the adds are: the age in ms of the oldest batch with
 * requests not all acked (its sojourn so far), 0 when there is none. */
uint64_t sets_behind_ms(const struct sets *s);

/* sets_add, and with the client sets, for each of the clients (n_clients,
 * any family) one entry per port for each of addrs of its family, with
 * the timeout the address's entry is sent with (the floor included):
 * the answer opens its addresses for these clients only (the forward
 * rule matches both sets). Client entries are never skipped (the expiry
 * map knows addresses, not clients): such an add always reaches the
 * kernel. Without client sets, clients are ignored. Returns as sets_add. */
int sets_add_for(struct sets *s, const struct dns_addr *addrs, size_t n,
		 const struct netaddr *clients, size_t n_clients,
		 sets_done_fn done, void *arg);
/* The parent's half: the client entries of pairs (n, from IPC_PAIR
 * frames, each ttl clamped like an add's), no address entries. 0,
 * -ENOMEM, -EINVAL (a family mismatch, or no client sets). */
int sets_add_clients(struct sets *s, const struct ipc_pair *pairs, size_t n,
		     sets_done_fn done, void *arg);
/* Does s keep client sets (sets_params' client4 and client6)? */
bool sets_has_clients(const struct sets *s);

/* Take addrs (copied) out of the sets (reload's eviction); an address
 * already gone counts as done. done as for sets_add, in order with the
 * adds: an add queued later lands after the del. 0, -ENOMEM, -EINVAL. */
int sets_del(struct sets *s, const struct netaddr *addrs, size_t n,
	     sets_done_fn done, void *arg);

/* Set each address's entry to expire at expires[i] (monotonic seconds),
 * sooner than it would: reload, when the names that asked for the longer
 * timeout are no longer allowed or ttl.max went down. The expiry map
 * takes the new expiry as the entry's, and the floor is not applied (the
 * caller cut prov's links first). done, order and returns as
 * for sets_add. */
int sets_shorten(struct sets *s, const struct netaddr *addrs,
		 const uint64_t *expires, size_t n, sets_done_fn done,
		 void *arg);

#endif
