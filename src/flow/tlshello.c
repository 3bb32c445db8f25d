// SPDX-License-Identifier: GPL-2.0-or-later
/* tlshello: TLS records of type handshake (22) are unwrapped into one
 * buffer until the first handshake message is whole; that message must
 * be a ClientHello (RFC 8446 4.1.2), whose extensions are walked for
 * server_name (RFC 6066 3) and encrypted_client_hello. With ECH the
 * server_name read here is the outer, public name, which is what the
 * front end routes on, so the same check applies to it.
 *
 * The stream is read from its start on every call (the caller appends
 * segments and asks again): a ClientHello is a few KiB at most, and
 * keeping no parser state between segments means a retransmission or a
 * segment boundary anywhere cannot put the parser in a state the next
 * bytes did not earn. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "dns/dnsmsg.h"
#include "flow/tlshello.h"

#define REC_HANDSHAKE	22
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0
#define EXT_ECH		0xfe0d
#define EXT_VERSIONS	0x002b
#define REC_CCS		20
#define REC_ALERT	21
#define REC_APP_DATA	23

static int unwrap(const uint8_t *stream, size_t len, struct tlshello *out,
		  size_t *hslen, size_t *end);
static int parse_hello(const uint8_t *p, size_t len, struct tlshello *out);
static int parse_exts(struct dns_reader *r, struct tlshello *out);
static int parse_sni(const uint8_t *p, size_t len, struct tlshello *out);
static int skip_vec8(struct dns_reader *r);
static bool offers_tls13(const uint8_t *p, size_t len);
static int later_hello(const uint8_t *rec, size_t n, struct tlshello *out);

int tlshello_parse(const uint8_t *stream, size_t len, struct tlshello *out)
{
	size_t hslen = 0;
	int rc;

	out->has_name = false;
	out->has_ech = false;
	out->has_tls13 = false;
	out->first_whole = false;
	out->name[0] = '\0';
	rc = unwrap(stream, len, out, &hslen, NULL);
	return rc ? rc : parse_hello(out->hs + 4, hslen, out);
}

int tlshello_parse_messages(const uint8_t *stream, size_t len,
			    struct tlshello *out)
{
	size_t need;

	out->has_name = false;
	out->has_ech = false;
	out->has_tls13 = false;
	out->first_whole = false;
	out->name[0] = '\0';
	if (len >= 1 && stream[0] != HS_CLIENT_HELLO)
		return -EPROTO;
	if (len < 4)
		return -EAGAIN;
	need = (size_t)stream[1] << 16 | (size_t)stream[2] << 8 | stream[3];
	if (need > TLSHELLO_MAX)
		return -EMSGSIZE;
	if (need == 0)
		return -EBADMSG;
	if (len - 4 < need)
		return -EAGAIN;
	return parse_hello(stream + 4, need, out);
}

/* The record layer: fragments of handshake records appended to out->hs
 * until its 4-byte header and the body it announces are there. With end,
 * the record that completes the message must be whole (-EAGAIN) and hold
 * nothing after it (-EBADMSG); *end is then the offset past it. */
static int unwrap(const uint8_t *stream, size_t len, struct tlshello *out,
		  size_t *hslen, size_t *end)
{
	bool partial = false;

	struct dns_reader r;
	size_t have = 0, need = 0;

	dns_reader_init(&r, stream, len);
	for (;;) {
		uint8_t type, major;
		uint16_t rlen;
		const uint8_t *frag;

		if (r.pos < r.len && stream[r.pos] != REC_HANDSHAKE)
			return -EPROTO;
		if (r.len - r.pos >= 2 && stream[r.pos + 1] != 3)
			return -EPROTO; /* TLS 1.x keeps major version 3 */
		if (dns_read_u8(&r, &type) || dns_read_u8(&r, &major) ||
		    dns_skip(&r, 1) || dns_read_u16(&r, &rlen))
			return -EAGAIN;
		if (rlen == 0 || rlen > 16384 + 256)
			return -EBADMSG;
		if (dns_read_bytes(&r, &frag, rlen)) {
			/* Take what there is, to learn the length early. */
			rlen = (uint16_t)(r.len - r.pos);
			frag = stream + r.pos;
			r.pos = r.len;
			partial = true;
		}
		if (rlen > sizeof(out->hs) - have)
			rlen = (uint16_t)(sizeof(out->hs) - have);
		memcpy(out->hs + have, frag, rlen);
		have += rlen;
		if (have >= 4 && need == 0) {
			if (out->hs[0] != HS_CLIENT_HELLO)
				return -EPROTO;
			need = (size_t)out->hs[1] << 16 |
			       (size_t)out->hs[2] << 8 | out->hs[3];
			if (need > TLSHELLO_MAX)
				return -EMSGSIZE;
			if (need == 0)
				return -EBADMSG;
		}
		if (need != 0 && have >= need + 4) {
			*hslen = need;
			if (end == NULL)
				return 0;
			if (partial)
				return -EAGAIN;
			if (have > need + 4)
				return -EBADMSG;
			*end = r.pos;
			return 0;
		}
		if (r.pos >= r.len)
			return -EAGAIN;
	}
}

static int parse_hello(const uint8_t *p, size_t len, struct tlshello *out)
{
	struct dns_reader r;
	uint16_t cs;

	dns_reader_init(&r, p, len);
	if (dns_skip(&r, 2 + 32) || skip_vec8(&r))
		return -EBADMSG;
	if (dns_read_u16(&r, &cs) || cs == 0 || (cs & 1) || dns_skip(&r, cs) ||
	    skip_vec8(&r))
		return -EBADMSG;
	if (r.pos == r.len)
		return 0; /* no extensions: no name */
	return parse_exts(&r, out);
}

static int parse_exts(struct dns_reader *r, struct tlshello *out)
{
	uint16_t total, seen[TLSHELLO_EXTS_MAX];
	size_t nseen = 0, end;

	if (dns_read_u16(r, &total) || total != r->len - r->pos)
		return -EBADMSG;
	end = r->pos + total;
	while (r->pos < end) {
		uint16_t type, elen;
		const uint8_t *data;
		int rc = 0;

		if (dns_read_u16(r, &type) || dns_read_u16(r, &elen) ||
		    dns_read_bytes(r, &data, elen))
			return -EBADMSG;
		/* Every type is remembered: a second server_name, however
		 * many extensions come first, is a duplicate (a front end
		 * may route by either). */
		if (nseen == TLSHELLO_EXTS_MAX)
			return -EBADMSG;
		for (size_t i = 0; i < nseen; i++) {
			if (seen[i] == type)
				return -EBADMSG;
		}
		seen[nseen++] = type;
		if (type == EXT_SERVER_NAME)
			rc = parse_sni(data, elen, out);
		else if (type == EXT_ECH)
			out->has_ech = true;
		else if (type == EXT_VERSIONS)
			out->has_tls13 = offers_tls13(data, elen);
		if (rc)
			return rc;
	}
	return 0;
}

/* ServerNameList: one host_name (type 0). Anything but a host name made
 * of LDH labels (and '_') is malformed: no escaping to print, no name
 * the policy could be fooled with. */
static int parse_sni(const uint8_t *p, size_t len, struct tlshello *out)
{
	struct dns_reader r;
	uint16_t list, nlen;
	uint8_t type;
	const uint8_t *name;

	dns_reader_init(&r, p, len);
	if (dns_read_u16(&r, &list) || list != len - 2 ||
	    dns_read_u8(&r, &type) || type != 0 || dns_read_u16(&r, &nlen) ||
	    dns_read_bytes(&r, &name, nlen) ||
	    tlshello_host_name(name, nlen, out->name) != 0)
		return -EBADMSG;
	out->has_name = true;
	return 0;
}

int tlshello_host_name(const uint8_t *name, size_t n, char *out)
{
	if (n == 0 || n > TLSHELLO_NAME_MAX || name[n - 1] == '.')
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = name[i];

		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			   c == '-' || c == '_' || c == '.'))
			return -EBADMSG;
		if (c == '.' && (i == 0 || name[i - 1] == '.'))
			return -EBADMSG;
		out[i] = (char)c;
	}
	out[n] = '\0';
	return 0;
}

static int skip_vec8(struct dns_reader *r)
{
	uint8_t n;

	return dns_read_u8(r, &n) || dns_skip(r, n) ? -EBADMSG : 0;
}

static bool offers_tls13(const uint8_t *p, size_t len)
{
	if (len < 1 || p[0] != len - 1 || (p[0] & 1))
		return false;
	for (size_t i = 1; i + 1 < len; i += 2) {
		if (p[i] == 3 && p[i + 1] == 4)
			return true;
	}
	return false;
}

int tlshello_flight(const uint8_t *stream, size_t len, struct tlshello *out)
{
	struct dns_reader r;
	char first[TLSHELLO_NAME_MAX + 1];
	bool first_named, ccs = false;
	size_t hslen = 0, pos = 0;
	int rc;

	out->has_name = false;
	out->has_ech = false;
	out->has_tls13 = false;
	out->first_whole = false;
	out->name[0] = '\0';
	rc = unwrap(stream, len, out, &hslen, &pos);
	if (rc == 0)
		rc = parse_hello(out->hs + 4, hslen, out);
	if (rc != 0 || !out->has_tls13)
		return rc; /* no HelloRetryRequest can follow a TLS 1.2 hello */
	out->first_whole = true;
	first_named = out->has_name;
	memcpy(first, out->name, sizeof(first));
	dns_reader_init(&r, stream, len);
	r.pos = pos;
	for (int n = 0; n < TLSHELLO_FLIGHT_RECORDS; n++) {
		uint8_t type, major;
		uint16_t rlen;
		const uint8_t *rec;

		if (r.len - r.pos >= 2 && stream[r.pos + 1] != 3)
			return -EPROTO;
		if (dns_read_u8(&r, &type) || dns_read_u8(&r, &major) ||
		    dns_skip(&r, 1) || dns_read_u16(&r, &rlen))
			return -EAGAIN;
		if (type == REC_APP_DATA || type == REC_ALERT)
			return 0; /* encrypted from here, or the end */
		if (rlen == 0 || rlen > 16384 + 256)
			return -EBADMSG;
		if (dns_read_bytes(&r, &rec, rlen))
			return -EAGAIN;
		if (type == REC_CCS) {
			ccs = true;
			continue;
		}
		if (type != REC_HANDSHAKE)
			return -EPROTO;
		/* A ClientHello again (after a HelloRetryRequest): whole in
		 * its record, naming the same server as the first. */
		if (rlen >= 4 && rec[0] == HS_CLIENT_HELLO &&
		    ((size_t)rec[1] << 16 | (size_t)rec[2] << 8 | rec[3]) + 4 ==
			rlen) {
			rc = later_hello(rec, rlen, out);
			if (rc != 0)
				return rc;
			if (out->has_name != first_named ||
			    strcmp(out->name, first) != 0)
				return -EXDEV;
			continue;
		}
		if (rec[0] == HS_CLIENT_HELLO && !ccs)
			return -EBADMSG; /* a ClientHello split over records */
		if (ccs)
			return 0; /* TLS 1.2's Finished, encrypted */
		/* TLS 1.2's plaintext Certificate, ClientKeyExchange... */
	}
	return -EMSGSIZE;
}

static int later_hello(const uint8_t *rec, size_t n, struct tlshello *out)
{
	if (n - 4 > TLSHELLO_MAX)
		return -EMSGSIZE;
	out->has_name = false;
	out->name[0] = '\0';
	return parse_hello(rec + 4, n - 4, out);
}
