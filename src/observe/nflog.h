/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nflog: the NFLOG group the fence's reject rules (and audit mode's log
 * rules) copy packets to, read over nfnetlink with libmnl. */
#ifndef DNSFENCE_NFLOG_H
#define DNSFENCE_NFLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/netaddr.h"

struct event_base;
struct nflog;

/* The NFLOG group of every dnsfence rule (iptables' default, so the rules
 * name none). */
#define NFLOG_GROUP 0
/* Bytes of each packet the kernel copies: IPv6 header and ports fit. */
#define NFLOG_COPY_RANGE 96

/* One logged packet, as far as it could be read. */
struct nflog_pkt {
	char prefix[32]; /* the rule's --nflog-prefix; "" when none */
	bool has_uid, has_gid;
	uint32_t uid, gid; /* of the sending socket, when there was one */
	bool has_addrs;	   /* the IP header was there */
	struct netaddr src, dst;
	uint8_t proto;	       /* IPPROTO_* (IPv6: past its option headers) */
	bool has_ports;	       /* TCP or UDP with its ports */
	uint16_t sport, dport; /* host order */
	bool has_icmp;	       /* ICMP or ICMPv6 with its type and code */
	uint8_t icmp_type, icmp_code;
	/* The interface it came in on, and the bridge port when
	 * br_netfilter saw the frame (forward scope); ifindexes. */
	bool has_indev, has_physindev;
	uint32_t indev, physindev;
};

typedef void (*nflog_pkt_fn)(void *arg, const struct nflog_pkt *pkt);

/* Parse one datagram from the nfnetlink socket: every NFULNL_MSG_PACKET
 * message in it is handed to fn (other messages are skipped). Returns the
 * number of packets, or -EBADMSG at the first malformed message (packets
 * before it were delivered). Pure; every byte goes through dns_reader. */
int nflog_parse(const uint8_t *buf, size_t len, nflog_pkt_fn fn, void *arg);

/* The walk under nflog_parse, for any netfilter netlink socket
 * (ctevents.c too), through the bounds-checked reader: fn once per
 * message of type, with the nfgenmsg family and the attributes after
 * it; fn returns 0 (counted), 1 (skipped) or -EBADMSG (stops the walk).
 * The count, or -EBADMSG. */
typedef int (*nflog_msg_fn)(void *arg, uint8_t family, const uint8_t *attrs,
			    size_t len);
int nflog_each_msg(const uint8_t *buf, size_t len, uint16_t type,
		   nflog_msg_fn fn, void *arg);
/* Each attribute of buf (4-aligned; the type without its flag bits) to
 * fn; a length past the end, or fn's non-zero, is -EBADMSG. */
typedef int (*nflog_attr_fn)(void *arg, uint16_t type, const uint8_t *val,
			     size_t len);
int nflog_each_attr(const uint8_t *buf, size_t len, nflog_attr_fn fn,
		    void *arg);
/* The IP header (and TCP/UDP ports) of a logged packet's payload. 0 or
 * -EBADMSG (no complete IP header of that family). */
int nflog_parse_ip(const uint8_t *p, size_t len, int family,
		   struct nflog_pkt *out);

/* Bind NFLOG_GROUP in this network namespace (needs CAP_NET_ADMIN), with
 * packet copies of NFLOG_COPY_RANGE bytes (the kernel adds the sender's
 * uid/gid when there is a socket), and hand each packet to fn from the
 * event loop.
 * NULL with err set on failure (e.g. another listener holds the group). */
struct nflog *nflog_open(struct event_base *base, nflog_pkt_fn fn, void *arg,
			 char *err, size_t errlen);
void nflog_close(struct nflog *n);

#endif
