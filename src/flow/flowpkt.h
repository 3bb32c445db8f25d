/* SPDX-License-Identifier: GPL-2.0-or-later */
/* flowpkt: one queued IP packet read as far as the name check needs it:
 * addresses, ports, the TCP sequence number and flags, and the payload
 * (of TCP or UDP). Pure. */
#ifndef DNSFENCE_FLOWPKT_H
#define DNSFENCE_FLOWPKT_H

#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

#define FLOWPKT_FIN 0x01
#define FLOWPKT_SYN 0x02
#define FLOWPKT_RST 0x04
#define FLOWPKT_URG 0x20

struct flowpkt {
	struct netaddr src, dst;
	uint8_t proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t sport, dport;	/* host order */
	uint32_t seq;		/* TCP: of the first payload byte */
	uint8_t flags;		/* TCP flags (FIN, SYN, RST, URG) */
	uint16_t urgent;	/* TCP: the urgent pointer */
	const uint8_t *payload; /* into the packet */
	size_t payload_len;
};

/* Read an IPv4 or IPv6 packet (family from its version nibble) carrying
 * TCP or UDP (a UDP payload ends where the UDP length says). The urgent
 * pointer is read whether or not URG is set: a receiver may act on either. IPv6
 * extension headers before TCP are walked (hop-by-hop, routing, destination
 * options); a fragment, another protocol or any truncation is -EBADMSG. 0 with
 * out filled.
 */
int flowpkt_parse(const uint8_t *p, size_t len, struct flowpkt *out);

struct dns_reader;
/* Past IPv6 hop-by-hop, routing and destination options headers, at most
 * 8, r just past the fixed header and *next its next-header value: 0 with
 * *next the protocol after them and r at its header; -EBADMSG when one is
 * cut short or there are more. */
int flowpkt_ip6_options(struct dns_reader *r, uint8_t *next);

#endif
