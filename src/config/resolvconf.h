/* SPDX-License-Identifier: GPL-2.0-or-later */
/* resolvconf: the nameservers of a resolv.conf, the default upstreams. */
#ifndef DNSFENCE_RESOLVCONF_H
#define DNSFENCE_RESOLVCONF_H

#include <stddef.h>

#include "base/netaddr.h"

/* Longest line read; the rest of a longer line is ignored. */
#define RESOLVCONF_LINE_MAX 512

/* The "nameserver ADDR" lines of the file at path, in file order, each as
 * ADDR port 53, once each. Skipped: comments, other keywords, addresses
 * that do not parse as a bare IPv4/IPv6 address (an IPv6 zone "%eth0", a
 * port, a name), and addresses equal to one of skip[0..nskip) whatever
 * their port (our own listeners: we are usually the nameserver there).
 * 0 with *out malloc'd (NULL when *n is 0), or -errno when the file
 * cannot be read, or -ENOMEM. */
int resolvconf_read(const char *path, const struct config_endpoint *skip,
		    size_t nskip, struct config_endpoint **out, size_t *n);

/* The same for a file another program saved for us (a container
 * entrypoint's copy of the original resolv.conf): read only when it is a
 * regular file of root's that neither group nor others may write, since
 * its nameservers get through the fence. Absent or untrusted: 0 with *n
 * 0. */
int resolvconf_read_trusted(const char *path,
			    const struct config_endpoint *skip, size_t nskip,
			    struct config_endpoint **out, size_t *n);

#endif
