/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sockdiag: how much of a local TCP socket's stream its peer has
 * acknowledged, from the kernel's socket diagnostics (NETLINK_SOCK_DIAG,
 * the interface `ss` reads; no privilege needed). The name check asks it
 * when a flow it accepted may end its guard (flowcheck.c). */
#ifndef DNSFENCE_SOCKDIAG_H
#define DNSFENCE_SOCKDIAG_H

#include <stddef.h>
#include <stdint.h>

#include "flow/flowtab.h"

struct sockdiag;

/* Open the socket (the DNS process does it before its sandbox). NULL with
 * err set on failure. */
struct sockdiag *sockdiag_open(char *err, size_t errlen);
void sockdiag_close(struct sockdiag *d);

/* The bytes the peer of the TCP socket whose local end is key's source
 * (and remote end its destination) has acknowledged, its SYN counted as
 * one (tcp_info's tcpi_bytes_acked). 0, -ENOENT (no such socket of this
 * namespace, or one without TCP state left: closed), -ETIMEDOUT (no
 * answer within 100 ms), or -errno. */
int sockdiag_acked(struct sockdiag *d, const struct flowtab_key *key,
		   uint64_t *acked);

#endif
