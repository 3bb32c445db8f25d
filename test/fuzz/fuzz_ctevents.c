// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_ctevents: a datagram from the conntrack event socket as the daemon
 * handles it. ctevents_parse walks it; each flow must come out with an
 * IPv4 or IPv6 destination, and the count returned must be the number of
 * flows handed over (or an error). Any violation abort()s.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>

#include "observe/ctevents.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_flow(void *arg, const struct ct_flow *f);

static void on_flow(void *arg, const struct ct_flow *f)
{
	int *n = arg;

	if (f->dst.family != AF_INET && f->dst.family != AF_INET6)
		abort();
	(*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int n = 0;
	int r = ctevents_parse(data, size, on_flow, &n);

	if (r != -EBADMSG && r != n)
		abort();
	if (r == -EBADMSG && n < 0)
		abort();
	return 0;
}
