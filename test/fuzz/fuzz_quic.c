// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_quic: a UDP payload to a QUIC port as the name check reads it.
 * The input's first byte picks the reader: even, the datagram itself
 * (quic_initial_parse: header, header protection, AEAD; random bytes
 * rarely authenticate, so the seeds are real Initials to mutate); odd,
 * the rest as an already decrypted payload (quic_frames), whose CRYPTO
 * frames are then placed by offset (flowtab_place) and the stream read
 * as bare handshake messages (tlshello_parse_messages). An even input
 * is also read as the name check reads a datagram: split into its
 * coalesced packets (quic_packets), every Initial opened under its own
 * DCID's keys, else under the first packet's DCID's (a connection's
 * later Initial), and its CRYPTO frames placed against a connection let
 * through (quicconn_place: compared with the judged bytes, kept past
 * them, a second hello read). Results must be the documented ones, every
 * packet and CRYPTO frame inside the buffer it came from, the placed
 * prefix within the flow's bound. Any violation abort()s. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flowtab.h"
#include "flow/quic.h"
#include "flow/quicconn.h"
#include "flow/tlshello.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct quic_initial *qip;
#define qi (*qip)
static struct tlshello h;

static void check_frames(const uint8_t *lo, const uint8_t *hi)
{
	if (qi.n_crypto > QUIC_CRYPTO_MAX)
		abort();
	for (size_t i = 0; i < qi.n_crypto; i++) {
		const struct quic_crypto *c = &qi.crypto[i];

		if (c->len == 0 || c->data < lo || c->data + c->len > hi)
			abort();
	}
}

static void reassemble(void)
{
	struct flowtab *t = flowtab_new(1, TLSHELLO_MAX, TLSHELLO_MAX);
	struct flowtab_key key = {.proto = 17};
	struct flowtab_flow *f = t ? flowtab_get(t, &key, 0, true) : NULL;
	int rc;

	if (f == NULL) {
		flowtab_free(t);
		return;
	}
	for (size_t i = 0; i < qi.n_crypto; i++) {
		rc = flowtab_place(t, f, qi.crypto[i].off, qi.crypto[i].data,
				   qi.crypto[i].len);
		if (rc != 0 && rc != -EBADMSG && rc != -EMSGSIZE)
			abort();
	}
	if (flowtab_prefix(f) > f->len || f->len > TLSHELLO_MAX)
		abort();
	rc = tlshello_parse_messages(f->buf, flowtab_prefix(f), &h);
	if (rc != 0 && rc != -EAGAIN && rc != -EPROTO && rc != -EMSGSIZE &&
	    rc != -EBADMSG)
		abort();
	if (rc != 0 && h.has_name && rc != -EBADMSG)
		abort();
	flowtab_free(t);
}

/* The judged stream the datagram's frames meet: its first 64 bytes. */
static void place(const uint8_t *judged, size_t n)
{
	struct quicconn_tab *t = quicconn_new(1, 1 << 20);
	struct flowtab_key key = {.proto = 17};
	struct quicconn *c = t ? quicconn_add(t, &key, judged, n < 8 ? n : 8,
					      judged, n, "a.test", 0)
			       : NULL;
	const uint8_t *p;
	size_t pend;
	int rc;

	if (c == NULL) {
		quicconn_free(t);
		return;
	}
	for (size_t i = 0; i < qi.n_crypto; i++) {
		rc = quicconn_place(t, c, qi.crypto[i].off, qi.crypto[i].data,
				    qi.crypto[i].len);
		if (rc != 0 && rc != -EAGAIN && rc != -EBADMSG &&
		    rc != -EMSGSIZE)
			abort();
	}
	pend = quicconn_pending(c, &p);
	if (pend > QUICCONN_STREAM_MAX - c->judged || p != c->bytes + n)
		abort();
	rc = tlshello_parse_messages(p, pend, &h);
	if (rc == 0 && pend >= 4) {
		size_t m = 4 + ((size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3]);

		quicconn_judge(c, m);
		if (c->judged > QUICCONN_STREAM_MAX)
			abort();
	}
	quicconn_free(t);
}

static void datagram(const uint8_t *p, size_t len)
{
	struct quic_packet pk[QUIC_PACKETS_MAX];
	int n = quic_packets(p, len, pk, QUIC_PACKETS_MAX), rc;
	size_t at = 0;

	if (n < 0) {
		if (n != -EBADMSG)
			abort();
		return;
	}
	quic_initial_reset(qip);
	for (int i = 0; i < n; i++) {
		if (pk[i].p != p + at || pk[i].len == 0 ||
		    pk[i].len > len - at || pk[i].dcid_len > QUIC_CID_MAX ||
		    (pk[i].dcid != NULL &&
		     (pk[i].dcid < p || pk[i].dcid + pk[i].dcid_len > p + len)))
			abort();
		at += pk[i].len;
		rc = quic_packet_open(qip, &pk[i], NULL, 0);
		if (rc == -EACCES && pk[0].dcid != NULL)
			rc = quic_packet_open(qip, &pk[i], pk[0].dcid,
					      pk[0].dcid_len);
		if (rc != 0 && rc != -EPROTO && rc != -EBADMSG &&
		    rc != -EACCES && rc != -EIO)
			abort();
	}
	check_frames(qi.plain, qi.plain + sizeof(qi.plain));
	if (qi.used > sizeof(qi.plain))
		abort();
	place(p, len < 64 ? len : 64);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int rc;

	if (size < 1)
		return 0;
	if (qip == NULL && (qip = quic_initial_new()) == NULL)
		abort();
	if (data[0] & 1) {
		qi.n_crypto = 0;
		rc = quic_frames(data + 1, size - 1, &qi);
		if (rc != 0 && rc != -EBADMSG)
			abort();
		check_frames(data + 1, data + size);
		if (rc == 0)
			reassemble();
		return 0;
	}
	rc = quic_initial_parse(data + 1, size - 1, &qi);
	if (rc != 0 && rc != -EPROTO && rc != -EBADMSG && rc != -EACCES &&
	    rc != -EIO)
		abort();
	if (qi.dcid_len > QUIC_CID_MAX)
		abort();
	if (rc == 0) {
		check_frames(qi.plain, qi.plain + sizeof(qi.plain));
		reassemble();
	}
	datagram(data + 1, size - 1);
	return 0;
}
