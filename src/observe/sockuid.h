/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sockuid: which uid owns a loopback client's socket (sock_diag). */
#ifndef DNSFENCE_SOCKUID_H
#define DNSFENCE_SOCKUID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* Slots of the answer table, and how long an answer is kept. */
#define SOCKUID_SLOTS	64
#define SOCKUID_KEEP_MS 2000
/* recv calls of one dump (16 KiB each, about 80 sockets) at most */
#define SOCKUID_READS_MAX 64

/* The uid of the socket that sent from peer (a loopback address) over
 * UDP or TCP (local, where it arrived, is not needed): 0 and *uid,
 * -ENOENT when the kernel knows no such socket (gone already),
 * -EAFNOSUPPORT when peer is not loopback, or another -errno. Asks the
 * kernel (NETLINK_SOCK_DIAG, never /proc) at most once per
 * SOCKUID_KEEP_MS for one client socket; never blocks. */
int sockuid_lookup(const struct sockaddr *peer, const struct sockaddr *local,
		   bool tcp, uint32_t *uid);
/* Close the netlink socket (at exit; the next lookup opens it again). */
void sockuid_close(void);

#endif
