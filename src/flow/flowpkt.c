// SPDX-License-Identifier: GPL-2.0-or-later
/* flowpkt: the IP and TCP or UDP headers of a queued packet, through dns_reader
 * (the one bounds-checked reader). The kernel hands us the packet as it
 * leaves, so its lengths are trusted only as far as the bytes reach: the
 * payload ends at the IP total length or the captured end, whichever
 * comes first. */
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "dns/dnsmsg.h"
#include "flow/flowpkt.h"

static int parse_ip4(struct dns_reader *r, struct flowpkt *out, size_t *end);
static int parse_ip6(struct dns_reader *r, struct flowpkt *out, size_t *end);
static int parse_tcp(struct dns_reader *r, size_t end, struct flowpkt *out);
static int parse_udp(struct dns_reader *r, size_t end, struct flowpkt *out);
static bool transport(uint8_t proto);
static bool ip6_option(uint8_t next);

int flowpkt_parse(const uint8_t *p, size_t len, struct flowpkt *out)
{
	struct dns_reader r;
	size_t end = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len < 1)
		return -EBADMSG;
	dns_reader_init(&r, p, len);
	if (p[0] >> 4 == 4)
		rc = parse_ip4(&r, out, &end);
	else if (p[0] >> 4 == 6)
		rc = parse_ip6(&r, out, &end);
	else
		rc = -EBADMSG;
	if (rc)
		return rc;
	return out->proto == IPPROTO_TCP ? parse_tcp(&r, end, out)
					 : parse_udp(&r, end, out);
}

static bool transport(uint8_t proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP;
}

/* *end: where the IP packet ends in the buffer. */
static int parse_ip4(struct dns_reader *r, struct flowpkt *out, size_t *end)
{
	uint8_t vihl, proto;
	uint16_t total, frag;
	const uint8_t *a;
	size_t ihl;

	if (dns_read_u8(r, &vihl) || dns_skip(r, 1) ||
	    dns_read_u16(r, &total) || dns_skip(r, 2) ||
	    dns_read_u16(r, &frag) || dns_skip(r, 1) ||
	    dns_read_u8(r, &proto) || dns_skip(r, 2) ||
	    dns_read_bytes(r, &a, 8))
		return -EBADMSG;
	ihl = (size_t)(vihl & 0xf) * 4;
	/* More fragments or an offset: not a whole segment. */
	if (ihl < 20 || !transport(proto) || (frag & 0x3fff) != 0 ||
	    total < ihl || dns_skip(r, ihl - 20))
		return -EBADMSG;
	out->proto = proto;
	out->src.family = out->dst.family = AF_INET;
	memcpy(out->src.bytes, a, 4);
	memcpy(out->dst.bytes, a + 4, 4);
	*end = total < r->len ? total : r->len;
	return 0;
}

static int parse_ip6(struct dns_reader *r, struct flowpkt *out, size_t *end)
{
	uint16_t plen;
	uint8_t next;
	const uint8_t *a;

	if (dns_skip(r, 4) || dns_read_u16(r, &plen) || dns_read_u8(r, &next) ||
	    dns_skip(r, 1) || dns_read_bytes(r, &a, 32))
		return -EBADMSG;
	out->src.family = out->dst.family = AF_INET6;
	memcpy(out->src.bytes, a, 16);
	memcpy(out->dst.bytes, a + 16, 16);
	*end = 40 + (size_t)plen < r->len ? 40 + (size_t)plen : r->len;
	if (flowpkt_ip6_options(r, &next) != 0)
		return -EBADMSG;
	out->proto = next;
	return transport(next) ? 0 : -EBADMSG;
}

static bool ip6_option(uint8_t next)
{
	return next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING ||
	       next == IPPROTO_DSTOPTS;
}

int flowpkt_ip6_options(struct dns_reader *r, uint8_t *next)
{
	/* Each: (next header, length in 8-byte units past the first 8). */
	for (int i = 0; i < 8 && ip6_option(*next); i++) {
		uint8_t n, units;

		if (dns_read_u8(r, &n) || dns_read_u8(r, &units) ||
		    dns_skip(r, (size_t)units * 8 + 6))
			return -EBADMSG;
		*next = n;
	}
	return ip6_option(*next) ? -EBADMSG : 0;
}

static int parse_tcp(struct dns_reader *r, size_t end, struct flowpkt *out)
{
	size_t start = r->pos, off;
	uint8_t doff, flags;

	if (dns_read_u16(r, &out->sport) || dns_read_u16(r, &out->dport) ||
	    dns_read_u32(r, &out->seq) || dns_skip(r, 4) ||
	    dns_read_u8(r, &doff) || dns_read_u8(r, &flags) || dns_skip(r, 4) ||
	    dns_read_u16(r, &out->urgent))
		return -EBADMSG;
	off = (size_t)(doff >> 4) * 4;
	if (off < 20 || end < start || end - start < off)
		return -EBADMSG;
	out->flags =
	    flags & (FLOWPKT_FIN | FLOWPKT_SYN | FLOWPKT_RST | FLOWPKT_URG);
	out->payload = r->buf + start + off;
	out->payload_len = end - start - off;
	return 0;
}

static int parse_udp(struct dns_reader *r, size_t end, struct flowpkt *out)
{
	size_t start = r->pos;
	uint16_t ulen;

	if (dns_read_u16(r, &out->sport) || dns_read_u16(r, &out->dport) ||
	    dns_read_u16(r, &ulen) || dns_skip(r, 2))
		return -EBADMSG;
	if (ulen < 8 || end < start || end - start < ulen)
		return -EBADMSG;
	out->payload = r->buf + start + 8;
	out->payload_len = (size_t)ulen - 8;
	return 0;
}
