/* SPDX-License-Identifier: GPL-2.0-or-later */
/* netaddr: IPv4/IPv6 addresses, CIDRs, "addr:port" parsing, and the
 * address ranges that must never enter the sets (invariant 3). */
#ifndef DNSFENCE_NETADDR_H
#define DNSFENCE_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct netaddr {
	sa_family_t family; /* AF_INET or AF_INET6 */
	uint8_t bytes[16];  /* network order; 4 bytes used for AF_INET */
};

struct netcidr {
	struct netaddr addr; /* host bits are zero */
	uint8_t prefix;
};

/* Bare address, no port, no brackets. 0 or -EINVAL. */
int netaddr_parse(const char *s, struct netaddr *out);
/* "198.18.0.0/15", "2001:db8::/32"; a bare address is a host route.
 * Host bits set is an error. 0 or -EINVAL with *why set. */
int netaddr_parse_cidr(const char *s, struct netcidr *out, const char **why);
/* A port number 1..65535 written in the n bytes at s: decimal digits
 * only, no sign, no blanks. 0 or -EINVAL. */
int netaddr_parse_port(const char *s, size_t n, uint16_t *port);
/* "1.2.3.4:53", "[2001:db8::1]:53", and when port_required is false also
 * "1.2.3.4", "2001:db8::1", "[2001:db8::1]" (then the port is
 * default_port). 0 or -EINVAL with *why set. */
int netaddr_parse_endpoint(const char *s, bool port_required,
			   uint16_t default_port, struct sockaddr_storage *out,
			   socklen_t *outlen, const char **why);
/* An endpoint as the config holds it (the config_ prefix is historical:
 * here so resolvconf.c needs nothing of config.h). */
struct config_endpoint {
	struct sockaddr_storage sa;
	socklen_t len;
};
/* The one endpoint equality: family, address, port (and an IPv6 scope),
 * field by field, so padding and sin6_flowinfo never matter. */
bool netaddr_endpoint_equal(const struct config_endpoint *a,
			    const struct config_endpoint *b);

/* "1.2.3.4:53" / "[2001:db8::1]:53"; buf of at least NETADDR_ENDPOINT_STRLEN.
 */
#define NETADDR_ENDPOINT_STRLEN 56
void netaddr_format_endpoint(const struct sockaddr *sa, char *buf, size_t len);
#define NETADDR_STRLEN 46
void netaddr_format(const struct netaddr *a, char *buf, size_t len);
/* Called with one address (a set's member, an address to evict). */
typedef void (*netaddr_fn)(void *arg, const struct netaddr *a);
void netaddr_format_cidr(const struct netcidr *c, char *buf, size_t len);
bool netaddr_equal(const struct netaddr *a, const struct netaddr *b);
bool netaddr_from_sockaddr(const struct sockaddr *sa, struct netaddr *out);
/* The port of an AF_INET or AF_INET6 socket address, host order. */
uint16_t netaddr_port(const struct sockaddr *sa);

bool netaddr_cidr_contains(const struct netcidr *c, const struct netaddr *a);
/* The IPv4 addresses an IPv6 address may carry: ::ffff:0:0/96, ::/96,
 * 64:ff9b::/96, 2002::/16 one each; 64:ff9b:1::/48 one per RFC 6052
 * layout it fits (at most NETADDR_EMBED_MAX). 0 for any other address. */
#define NETADDR_EMBED_MAX 4
size_t netaddr_embedded_v4(const struct netaddr *a, struct netaddr *v4,
			   size_t max);
/* One of the ranges of invariant 3 (an IPv6 form that carries an IPv4
 * address judged by the IPv4 inside: internal when any reading is). The
 * documentation ranges are ordinary. */
bool netaddr_is_internal(const struct netaddr *a);
/* 127.0.0.0/8, ::1 or an IPv4-mapped 127.x: an address every process of
 * the namespace can bind. */
bool netaddr_is_loopback(const struct netaddr *a);
/* Does a lead to target: the same address, or an IPv6 form carrying it
 * (NAT64, 6to4, mapped, compatible: see netaddr_embedded_v4)? */
bool netaddr_reaches(const struct netaddr *a, const struct netaddr *target);
/* May this address enter a set: not internal, or covered by allow_cidrs. */
bool netaddr_admissible(const struct netaddr *a, const struct netcidr *allow,
			size_t n_allow);

#endif
