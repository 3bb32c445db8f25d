/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ipc: the frames between the unprivileged DNS process and the
 * privileged parent (the set writer), over an AF_UNIX SOCK_SEQPACKET
 * pair: one frame is one message, so a frame's size is what recv says.
 *
 * Every frame is a header (type, count, request id; host order, both ends
 * run on the same machine) and a body whose size the type and count fix
 * exactly. The vocabulary is the enum below; a frame of any other type,
 * size or padding is malformed, and the receiver stops (the peer is
 * broken or compromised). */
#ifndef DNSFENCE_IPC_H
#define DNSFENCE_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

enum ipc_type {
	/* DNS process -> parent: put count addresses (with their TTLs)
	 * into the sets; answered by one IPC_ADD_DONE with the same id */
	IPC_ADD = 1,
	/* parent -> DNS process: the kernel acked (status 0) or refused
	 * (-errno as sets_done_fn says) request id, an IPC_ADD, IPC_DEL or
	 * IPC_SHORTEN; count is 0 */
	IPC_ADD_DONE = 2,
	/* DNS process -> parent: take count addresses out of the sets (a
	 * reload's eviction); each record's ttl is 0 */
	IPC_DEL = 3,
	/* DNS process -> parent: let count entries expire sooner, each in
	 * its record's ttl seconds (1 or more) from now (a reload keeps an
	 * address only as long as its kept names need it) */
	IPC_SHORTEN = 4,
	/* DNS process -> parent: a new upstream socket of family (AF_INET,
	 * AF_INET6) and type (SOCK_DGRAM, SOCK_STREAM); count is 0 */
	IPC_SOCKET = 5,
	/* parent -> DNS process: status 0 and the socket, already carrying
	 * the daemon's mark (and, for UDP, a receive buffer of
	 * IPC_SOCKET_RCVBUF), as the frame's one SCM_RIGHTS descriptor; or
	 * -errno and no descriptor; count is 0 */
	IPC_SOCKET_DONE = 6,
	/* The link channel (the third pair; header only unless said):
	 * DNS process -> parent: serving (listeners bound, sandbox entered);
	 * id is the policy's allow entry count, for the parent's log line */
	IPC_HELLO = 7,
	/* DNS process -> parent: a reload swapped the policy; the parent
	 * reads the config file itself and re-applies its rules (count
	 * IPC_RULES_CHANGED), only takes the new config (IPC_RULES_SAME), or
	 * drops the drained upstreams from its rules (IPC_RULES_DRAINED);
	 * answered by IPC_ADD_DONE with the same id */
	IPC_RULES = 8,
	/* parent -> DNS process: the readiness gate passed (the self-test's
	 * probes are no longer answered apart) */
	IPC_GATE = 9,
	/* parent -> DNS process: the guard restored the sets, so forget
	 * what is in them (sets_forget) */
	IPC_FORGET = 10,
	/* DNS process -> parent: the NFQUEUE socket of queue count as the
	 * frame's one descriptor (sent before the sandbox, once a queue);
	 * id 1 when the kernel gives the queue no conntrack ids */
	IPC_NFQ = 11,
	/* DNS process -> parent: the name check's verdict on packet id of
	 * queue count; body verdict(4) mark(4) */
	IPC_VERDICT = 12,
	/* DNS process -> parent: put count client set entries (the client
	 * that was answered, the address, the TTL; one entry per port of
	 * the parent's) into the client sets; answered by one IPC_ADD_DONE
	 * with the same id. Forward scope, "bind": "client" only. */
	IPC_PAIR = 13,
};

enum ipc_rules {
	IPC_RULES_SAME = 0,
	IPC_RULES_CHANGED = 1,
	IPC_RULES_DRAINED = 2,
};

#define IPC_HDR_SIZE  8
#define IPC_ADDR_SIZE 24  /* family(1) pad(3) ttl(4) bytes(16) */
#define IPC_ADD_MAX   128 /* addresses in one IPC_ADD, IPC_DEL, IPC_SHORTEN */
#define IPC_PAIR_SIZE 40  /* family(1) pad(3) ttl(4) client(16) address(16) */
#define IPC_PAIR_MAX  64  /* records in one IPC_PAIR */
/* The largest frame of the vocabulary; a receiver reads one byte more, so
 * a longer frame is seen as such and refused. */
#define IPC_FRAME_MAX (IPC_HDR_SIZE + IPC_ADD_MAX * IPC_ADDR_SIZE)
/* The receive buffer of an IPC_SOCKET UDP socket. The DNS process keeps
 * up to max_inflight questions on one socket, and a burst of their
 * answers must wait there while it reads: the kernel's default (208 KiB,
 * about 250 small answers) drops the rest, and each costs its client a
 * c-ares retry. c-ares 1.18 sets no option on a socket it did not make,
 * and above net.core.rmem_max takes CAP_NET_ADMIN: the parent sets it. */
#define IPC_SOCKET_RCVBUF (4 << 20)

struct ipc_addr {
	struct netaddr addr;
	uint32_t ttl;
};

/* An IPC_PAIR record: client and addr of one family. */
struct ipc_pair {
	struct netaddr client, addr;
	uint32_t ttl;
};

/* One decoded frame; addrs for IPC_ADD, IPC_DEL and IPC_SHORTEN (whose
 * ttl is the seconds until the entry should expire). */
struct ipc_msg {
	enum ipc_type type;
	uint32_t id;
	uint16_t count;
	int32_t status;		/* IPC_ADD_DONE, IPC_SOCKET_DONE */
	int family, socktype;	/* IPC_SOCKET */
	uint32_t verdict, mark; /* IPC_VERDICT */
	struct ipc_addr addrs[IPC_ADD_MAX];
	struct ipc_pair pairs[IPC_PAIR_MAX]; /* IPC_PAIR */
};

/* Write an IPC_ADD, IPC_DEL or IPC_SHORTEN frame of n (1..IPC_ADD_MAX)
 * addresses into buf (cap >= IPC_FRAME_MAX is always enough): its length,
 * or -EINVAL (another type, n out of range, an address neither AF_INET
 * nor AF_INET6, a del's ttl not 0, a shorten's 0), -ENOSPC. */
int ipc_encode_addrs(uint8_t *buf, size_t cap, enum ipc_type type, uint32_t id,
		     const struct ipc_addr *addrs, size_t n);
/* Write an IPC_PAIR frame of n (1..IPC_PAIR_MAX) records: its length, or
 * -EINVAL (n out of range, a family neither AF_INET nor AF_INET6, the
 * client's family not the address's, a ttl of 0), -ENOSPC. */
int ipc_encode_pairs(uint8_t *buf, size_t cap, uint32_t id,
		     const struct ipc_pair *pairs, size_t n);
/* Write an IPC_ADD_DONE or IPC_SOCKET_DONE frame: its length, or
 * -ENOSPC, -EINVAL (another type). */
int ipc_encode_done(uint8_t *buf, size_t cap, enum ipc_type type, uint32_t id,
		    int32_t status);
/* Write an IPC_SOCKET frame: its length, or -ENOSPC, -EINVAL (a family or
 * type the vocabulary does not have). */
int ipc_encode_socket(uint8_t *buf, size_t cap, uint32_t id, int family,
		      int socktype);

/* Write a header-only frame of the link channel (IPC_HELLO, IPC_RULES,
 * IPC_GATE, IPC_FORGET, IPC_NFQ): its length, or -EINVAL (another type,
 * a count the type does not take), -ENOSPC. */
int ipc_encode_link(uint8_t *buf, size_t cap, enum ipc_type type,
		    uint16_t count, uint32_t id);
/* Write an IPC_VERDICT frame: its length, or -ENOSPC. */
int ipc_encode_verdict(uint8_t *buf, size_t cap, uint16_t queue, uint32_t id,
		       uint32_t verdict, uint32_t mark);

/* Send one frame of len bytes on the channel chan, with fd as its one
 * SCM_RIGHTS descriptor when fd >= 0: 0 or -errno (-EMSGSIZE when it went
 * out short). Never blocks when the channel is non-blocking. */
int ipc_send(int chan, const uint8_t *frame, size_t len, int fd);
/* Receive one frame into buf (cap >= IPC_FRAME_MAX + 1): its true length
 * (more than cap when it was longer), and in *fd the descriptor it
 * carried (close-on-exec) or -1. A frame with more than one descriptor,
 * or cut control data, is -EBADMSG (every descriptor it carried closed);
 * a closed channel 0; else -errno. */
ssize_t ipc_recv(int chan, uint8_t *buf, size_t cap, int flags, int *fd);
/* Send n frames (frames[i] of lens[i] bytes, no descriptors) in one
 * sendmmsg: how many went out whole (a frame cut short ends the count),
 * or -errno when none did (-EAGAIN: the channel is full). */
int ipc_send_many(int chan, uint8_t *const *frames, const size_t *lens,
		  size_t n);

/* Up to IPC_INBOX_FRAMES frames received in one recvmmsg, each read as
 * ipc_recv reads one. */
#define IPC_INBOX_FRAMES 64
struct ipc_inbox;
/* Room for IPC_INBOX_FRAMES frames of up to cap bytes each (a longer one
 * is seen by its true length and refused by the caller); NULL on no
 * memory. */
struct ipc_inbox *ipc_inbox_new(size_t cap);
void ipc_inbox_free(struct ipc_inbox *in);
/* Receive what is waiting on chan (flags as recvmsg's, MSG_TRUNC and
 * MSG_CMSG_CLOEXEC added): the number of frames (a closed channel is one
 * frame of length 0, as ipc_recv says 0), or -errno when none came. */
int ipc_inbox_recv(struct ipc_inbox *in, int chan, int flags);
/* Frame i of the last ipc_inbox_recv: its true length (more than cap
 * when it was longer; 0: the channel closed), *data its bytes and *fd its
 * one descriptor or -1; -EBADMSG as ipc_recv's (every descriptor closed).
 * Take each frame's descriptor once: the inbox forgets it. */
ssize_t ipc_inbox_frame(struct ipc_inbox *in, size_t i, const uint8_t **data,
			int *fd);

/* A blocking request for an upstream socket on a socket channel that
 * carries nothing else, so the next frame is the answer (the tests of
 * the parent's side; the DNS process asks through resolve/sockpool.h,
 * which never blocks for long): the descriptor, or -errno (the parent's
 * status; -EPROTO for an answer that is not this request's
 * IPC_SOCKET_DONE, -EPIPE when the channel closed). */
int ipc_request_socket(int chan, uint32_t id, int family, int socktype);
/* Read one frame of len bytes: 0, or -EINVAL with *why saying what is
 * wrong (a static string: "oversized frame", "unknown type 7", ...). */
int ipc_decode(const uint8_t *buf, size_t len, struct ipc_msg *out,
	       const char **why);

#endif
