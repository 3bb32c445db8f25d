// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_nfq: a datagram from the name check's NFQUEUE socket as the daemon
 * reads it. nfq_parse walks its messages; each packet handed on must be
 * consistent: its payload, when present, inside the datagram, and a
 * conntrack id only from an NFQA_CT nest's CTA_ID (checked against a
 * second reading of the same bytes: the parse is a function of them). The
 * payload is then read as flowpkt.c would, and the verdict logic's
 * connection test (flowtab_conn_of) run on the id. Any violation
 * abort()s. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/nfq.h"
#include "flow/flowpkt.h"
#include "flow/flowtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	const uint8_t *buf;
	size_t size;
	size_t n;
	uint32_t ids[64];
	bool has_ct[64];
	uint32_t ct[64];
	bool second;
	bool mismatch;
};

static void on_pkt(void *arg, const struct nfq_pkt *p)
{
	struct seen *s = arg;
	struct flowtab_flow f = {.decided = true};
	struct flowpkt fp;
	size_t i = s->n++;

	if (p->payload != NULL &&
	    (p->payload < s->buf || p->len > s->size ||
	     (size_t)(p->payload - s->buf) > s->size - p->len))
		abort();
	if (p->payload == NULL && p->len != 0)
		abort();
	if (p->payload != NULL)
		(void)flowpkt_parse(p->payload, p->len, &fp);
	f.has_conn = p->has_ct_id;
	f.conn_id = p->ct_id;
	if (p->has_ct_id &&
	    flowtab_conn_of(&f, true, p->ct_id) != FLOWTAB_CONN_SAME)
		abort();
	if (flowtab_conn_of(&f, false, 0) != FLOWTAB_CONN_UNKNOWN)
		abort();
	if (i >= 64)
		return;
	if (!s->second) {
		s->ids[i] = p->id;
		s->has_ct[i] = p->has_ct_id;
		s->ct[i] = p->ct_id;
	} else if (s->ids[i] != p->id || s->has_ct[i] != p->has_ct_id ||
		   s->ct[i] != p->ct_id) {
		s->mismatch = true;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = {.buf = data, .size = size};
	size_t n;

	nfq_parse(data, size, on_pkt, &s);
	n = s.n;
	s.n = 0;
	s.second = true;
	nfq_parse(data, size, on_pkt, &s);
	if (s.n != n || s.mismatch)
		abort();
	return 0;
}
