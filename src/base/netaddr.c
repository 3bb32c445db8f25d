// SPDX-License-Identifier: GPL-2.0-or-later
/* netaddr: addresses, CIDRs and endpoints as the config writes them, and
 * the ranges of invariant 3 that never enter a set.
 *
 * Parsing is strict on purpose: inet_pton() only (no inet_aton shorthand
 * like "10.1" or octal "010.0.0.1"), no scope ids ("fe80::1%eth0" names an
 * interface, which a set entry cannot hold), no whitespace, ports 1..65535
 * in plain decimal. An IPv6 address that carries an IPv4 address (mapped
 * ::ffff:0:0/96, compatible ::/96, NAT64 64:ff9b::/96 and 64:ff9b:1::/48,
 * 6to4 2002::/16) is judged by the IPv4 address inside, both for
 * "internal" and for allow_cidrs, so that no such form smuggles
 * 169.254.169.254 or 127.0.0.1 past the check; a NAT64 form of a public
 * IPv4 address stays ordinary (DNS64 clusters depend on it). In
 * 64:ff9b:1::/48 the operator picks the prefix length (RFC 6052: /48, /56,
 * /64 or /96), so every layout the address fits (u octet and suffix zero;
 * /96 unless its IPv4 would be 0.0.0.0) is tried, and one internal
 * reading is enough; an address there that fits none is internal. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "base/netaddr.h"

struct range {
	uint8_t bytes[16];
	uint8_t prefix;
};

static bool covered(const struct netaddr *a, const struct netcidr *allow,
		    size_t n_allow);
static bool prefix_match(const uint8_t *a, const uint8_t *net, unsigned prefix);
static bool in_ranges(const struct netaddr *a, const struct range *r, size_t n);
static void take_v4(const struct netaddr *a, const uint8_t pos[4],
		    struct netaddr *v4);
static size_t nat64_local(const struct netaddr *a, struct netaddr *v4,
			  size_t max);
static int parse_prefix(const char *s, unsigned max, unsigned *out);
static int split_endpoint(const char *s, const char **host, size_t *hlen,
			  const char **port_s, const char **why);
static int endpoint_host(const char *host, size_t hlen, bool bracketed,
			 struct netaddr *a, const char **why);
static void fill_sockaddr(const struct netaddr *a, uint16_t port,
			  struct sockaddr_storage *out, socklen_t *outlen);

#define MAX_ADDR_TEXT 64 /* longer input cannot be an address */

static const uint8_t nat64_local_pfx[6] = {0, 0x64, 0xff, 0x9b, 0, 1};

static const struct range internal4[] = {
    {{0, 0, 0, 0}, 8},	    {{10, 0, 0, 0}, 8},	    {{100, 64, 0, 0}, 10},
    {{127, 0, 0, 0}, 8},    {{169, 254, 0, 0}, 16}, {{172, 16, 0, 0}, 12},
    {{192, 168, 0, 0}, 16}, {{224, 0, 0, 0}, 4},    {{240, 0, 0, 0}, 4},
};

/* The forms that carry an IPv4 address (netaddr_embedded_v4) are judged
 * apart, by the IPv4 address inside: ::/96 holds :: and ::1 (0.0.0.0 and
 * 0.0.0.1, in 0.0.0.0/8), listed here for the record. */
static const struct range internal6[] = {
    {{0}, 128},		/* :: */
    {{[15] = 1}, 128},	/* ::1 */
    {{0xfc}, 7},	/* unique local */
    {{0xfe, 0x80}, 10}, /* link local */
    {{0xff}, 8},	/* multicast */
};

static bool prefix_match(const uint8_t *a, const uint8_t *net, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (memcmp(a, net, full) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (net[full] & mask);
}

static bool in_ranges(const struct netaddr *a, const struct range *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (prefix_match(a->bytes, r[i].bytes, r[i].prefix))
			return true;
	}
	return false;
}

static void take_v4(const struct netaddr *a, const uint8_t pos[4],
		    struct netaddr *v4)
{
	memset(v4, 0, sizeof(*v4));
	v4->family = AF_INET;
	for (size_t i = 0; i < 4; i++)
		v4->bytes[i] = a->bytes[pos[i]];
}

/* 64:ff9b:1::/48 under each RFC 6052 layout it fits. */
static size_t nat64_local(const struct netaddr *a, struct netaddr *v4,
			  size_t max)
{
	static const struct {
		uint8_t pos[4];
		uint8_t suffix; /* first byte that must be zero, to 16 */
	} layout[] = {
	    {{6, 7, 9, 10}, 11},   /* /48 */
	    {{7, 9, 10, 11}, 12},  /* /56 */
	    {{9, 10, 11, 12}, 13}, /* /64 */
	};
	static const uint8_t pos96[4] = {12, 13, 14, 15};
	size_t n = 0;

	for (size_t i = 0; i < 3 && n < max; i++) {
		bool fits = a->bytes[8] == 0;

		for (size_t k = layout[i].suffix; k < 16; k++)
			fits = fits && a->bytes[k] == 0;
		if (fits)
			take_v4(a, layout[i].pos, &v4[n++]);
	}
	/* 0.0.0.0 is never what a /96 NAT64 address means: zero low 32
	 * bits are a shorter layout's suffix, not an address. */
	if (n < max && memcmp(a->bytes + 12, "\0\0\0\0", 4) != 0)
		take_v4(a, pos96, &v4[n++]);
	return n;
}

size_t netaddr_embedded_v4(const struct netaddr *a, struct netaddr *v4,
			   size_t max)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	static const uint8_t compat[12] = {0};
	static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const uint8_t pos96[4] = {12, 13, 14, 15};
	static const uint8_t pos6to4[4] = {2, 3, 4, 5};

	if (a->family != AF_INET6 || max == 0)
		return 0;
	if (memcmp(a->bytes, mapped, 12) == 0 ||
	    memcmp(a->bytes, compat, 12) == 0 ||
	    memcmp(a->bytes, nat64, 12) == 0) {
		take_v4(a, pos96, v4);
		return 1;
	}
	if (a->bytes[0] == 0x20 && a->bytes[1] == 0x02) {
		take_v4(a, pos6to4, v4);
		return 1;
	}
	if (memcmp(a->bytes, nat64_local_pfx, 6) == 0)
		return nat64_local(a, v4, max);
	return 0;
}

int netaddr_parse(const char *s, struct netaddr *out)
{
	struct netaddr a;

	memset(&a, 0, sizeof(a));
	if (s == NULL || strlen(s) >= MAX_ADDR_TEXT)
		return -EINVAL;
	if (strchr(s, ':') == NULL) {
		if (inet_pton(AF_INET, s, a.bytes) != 1)
			return -EINVAL;
		a.family = AF_INET;
	} else {
		if (inet_pton(AF_INET6, s, a.bytes) != 1)
			return -EINVAL;
		a.family = AF_INET6;
	}
	*out = a;
	return 0;
}

/* Plain decimal, 1..max digits worth; no sign, no blanks, no leading
 * zeros beyond "0" itself. */
static int parse_prefix(const char *s, unsigned max, unsigned *out)
{
	unsigned v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 3 || (n > 1 && s[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int netaddr_parse_cidr(const char *s, struct netcidr *out, const char **why)
{
	char buf[MAX_ADDR_TEXT + 8];
	struct netcidr c;
	unsigned prefix;
	const char *slash;
	size_t alen;

	memset(&c, 0, sizeof(c));
	if (s == NULL || strlen(s) >= sizeof(buf)) {
		*why = "not an address or CIDR";
		return -EINVAL;
	}
	slash = strchr(s, '/');
	alen = slash != NULL ? (size_t)(slash - s) : strlen(s);
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	if (netaddr_parse(buf, &c.addr) != 0) {
		*why = "not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	unsigned max = c.addr.family == AF_INET ? 32 : 128;
	if (slash == NULL) {
		prefix = max;
	} else if (parse_prefix(slash + 1, max, &prefix) != 0) {
		*why = c.addr.family == AF_INET
			   ? "prefix length must be 0..32"
			   : "prefix length must be 0..128";
		return -EINVAL;
	}
	c.prefix = (uint8_t)prefix;
	for (unsigned bit = prefix; bit < max; bit++) {
		if (c.addr.bytes[bit / 8] & (0x80 >> (bit % 8))) {
			*why = "host bits set (the address must be the first "
			       "of its network)";
			return -EINVAL;
		}
	}
	*out = c;
	return 0;
}

int netaddr_parse_port(const char *s, size_t n, uint16_t *port)
{
	unsigned long v = 0;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

static void fill_sockaddr(const struct netaddr *a, uint16_t port,
			  struct sockaddr_storage *out, socklen_t *outlen)
{
	memset(out, 0, sizeof(*out));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)out;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, a->bytes, 4);
		*outlen = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, a->bytes, 16);
		*outlen = sizeof(*sin6);
	}
}

/* Where the host and the port are in s: "[HOST]:PORT", "[HOST]",
 * "HOST:PORT", "HOST" (a bare IPv6 address has no port). *port_s is NULL
 * when there is no port. 0 or -EINVAL with *why set. */
static int split_endpoint(const char *s, const char **host, size_t *hlen,
			  const char **port_s, const char **why)
{
	const char *colon = strchr(s, ':');

	*host = s;
	*hlen = strlen(s);
	*port_s = NULL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL) {
			*why = "missing ']'";
			return -EINVAL;
		}
		*host = s + 1;
		*hlen = (size_t)(close - *host);
		if (close[1] == ':')
			*port_s = close + 2;
		else if (close[1] != '\0') {
			*why = "expected ':PORT' after ']'";
			return -EINVAL;
		}
	} else if (colon != NULL && strchr(colon + 1, ':') == NULL) {
		*hlen = (size_t)(colon - s);
		*port_s = colon + 1;
	}
	return 0;
}

/* The hlen bytes at host as an address; bracketed ones must be IPv6. */
static int endpoint_host(const char *host, size_t hlen, bool bracketed,
			 struct netaddr *a, const char **why)
{
	char text[MAX_ADDR_TEXT];

	if (hlen >= sizeof(text)) {
		*why = "not an address";
		return -EINVAL;
	}
	memcpy(text, host, hlen);
	text[hlen] = '\0';
	if (netaddr_parse(text, a) != 0) {
		*why = "not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	if (bracketed && a->family != AF_INET6) {
		*why = "brackets are for IPv6 addresses only";
		return -EINVAL;
	}
	return 0;
}

int netaddr_parse_endpoint(const char *s, bool port_required,
			   uint16_t default_port, struct sockaddr_storage *out,
			   socklen_t *outlen, const char **why)
{
	const char *port_s, *host;
	size_t hlen;
	struct netaddr a;
	uint16_t port = default_port;

	if (s == NULL || strlen(s) >= MAX_ADDR_TEXT + 8) {
		*why = "not an address";
		return -EINVAL;
	}
	if (strchr(s, '%') != NULL) {
		*why = "scope ids (%...) are not supported";
		return -EINVAL;
	}
	if (split_endpoint(s, &host, &hlen, &port_s, why) != 0 ||
	    endpoint_host(host, hlen, s[0] == '[', &a, why) != 0)
		return -EINVAL;
	if (port_s == NULL && port_required) {
		*why = a.family == AF_INET6 ? "a port is required: [ADDR]:PORT"
					    : "a port is required: ADDR:PORT";
		return -EINVAL;
	}
	if (port_s != NULL &&
	    netaddr_parse_port(port_s, strlen(port_s), &port) != 0) {
		*why = "port must be 1..65535";
		return -EINVAL;
	}
	fill_sockaddr(&a, port, out, outlen);
	return 0;
}

void netaddr_format(const struct netaddr *a, char *buf, size_t len)
{
	char tmp[INET6_ADDRSTRLEN];

	if (inet_ntop(a->family == AF_INET ? AF_INET : AF_INET6, a->bytes, tmp,
		      sizeof(tmp)) == NULL)
		snprintf(tmp, sizeof(tmp), "?");
	snprintf(buf, len, "%s", tmp);
}

void netaddr_format_cidr(const struct netcidr *c, char *buf, size_t len)
{
	char tmp[NETADDR_STRLEN];

	netaddr_format(&c->addr, tmp, sizeof(tmp));
	snprintf(buf, len, "%s/%u", tmp, (unsigned)c->prefix);
}

void netaddr_format_endpoint(const struct sockaddr *sa, char *buf, size_t len)
{
	struct netaddr a;
	char tmp[NETADDR_STRLEN];
	uint16_t port;

	if (!netaddr_from_sockaddr(sa, &a)) {
		snprintf(buf, len, "?");
		return;
	}
	netaddr_format(&a, tmp, sizeof(tmp));
	if (a.family == AF_INET) {
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
		snprintf(buf, len, "%s:%u", tmp, (unsigned)port);
	} else {
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
		snprintf(buf, len, "[%s]:%u", tmp, (unsigned)port);
	}
}

bool netaddr_equal(const struct netaddr *a, const struct netaddr *b)
{
	size_t n = a->family == AF_INET ? 4 : 16;

	return a->family == b->family && memcmp(a->bytes, b->bytes, n) == 0;
}

bool netaddr_endpoint_equal(const struct config_endpoint *a,
			    const struct config_endpoint *b)
{
	const struct sockaddr *sa = (const struct sockaddr *)&a->sa;
	const struct sockaddr *sb = (const struct sockaddr *)&b->sa;
	struct netaddr na, nb;

	if (!netaddr_from_sockaddr(sa, &na) || !netaddr_from_sockaddr(sb, &nb))
		return false;
	if (!netaddr_equal(&na, &nb) || netaddr_port(sa) != netaddr_port(sb))
		return false;
	return sa->sa_family != AF_INET6 ||
	       ((const struct sockaddr_in6 *)sa)->sin6_scope_id ==
		   ((const struct sockaddr_in6 *)sb)->sin6_scope_id;
}

bool netaddr_from_sockaddr(const struct sockaddr *sa, struct netaddr *out)
{
	memset(out, 0, sizeof(*out));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		out->family = AF_INET;
		memcpy(out->bytes, &sin->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 =
		    (const struct sockaddr_in6 *)sa;

		out->family = AF_INET6;
		memcpy(out->bytes, &sin6->sin6_addr, 16);
		return true;
	}
	return false;
}

bool netaddr_cidr_contains(const struct netcidr *c, const struct netaddr *a)
{
	unsigned max = c->addr.family == AF_INET ? 32 : 128;

	if (c->addr.family != a->family || c->prefix > max)
		return false;
	return prefix_match(a->bytes, c->addr.bytes, c->prefix);
}

bool netaddr_is_loopback(const struct netaddr *a)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t one[16] = {[15] = 1};

	if (a->family == AF_INET)
		return a->bytes[0] == 127;
	if (a->family != AF_INET6)
		return false;
	return memcmp(a->bytes, one, 16) == 0 ||
	       (memcmp(a->bytes, mapped, 12) == 0 && a->bytes[12] == 127);
}

bool netaddr_is_internal(const struct netaddr *a)
{
	struct netaddr v4[NETADDR_EMBED_MAX];
	size_t n;

	if (a->family == AF_INET)
		return in_ranges(a, internal4,
				 sizeof(internal4) / sizeof(internal4[0]));
	if (a->family != AF_INET6)
		return true; /* not an address we know: never admit it */
	n = netaddr_embedded_v4(a, v4, NETADDR_EMBED_MAX);
	if (n == 0 && memcmp(a->bytes, nat64_local_pfx, 6) == 0)
		return true; /* in 64:ff9b:1::/48 but fits no NAT64 layout */
	for (size_t i = 0; i < n; i++) {
		if (netaddr_is_internal(&v4[i]))
			return true;
	}
	return n == 0 && in_ranges(a, internal6,
				   sizeof(internal6) / sizeof(internal6[0]));
}

static bool covered(const struct netaddr *a, const struct netcidr *allow,
		    size_t n_allow)
{
	for (size_t i = 0; i < n_allow; i++) {
		if (netaddr_cidr_contains(&allow[i], a))
			return true;
	}
	return false;
}

/* Internal, yet admitted when allow_cidrs covers the address itself, or
 * every internal IPv4 address it may carry. */
bool netaddr_admissible(const struct netaddr *a, const struct netcidr *allow,
			size_t n_allow)
{
	struct netaddr v4[NETADDR_EMBED_MAX];
	size_t n;

	if (!netaddr_is_internal(a) || covered(a, allow, n_allow))
		return true;
	n = netaddr_embedded_v4(a, v4, NETADDR_EMBED_MAX);
	for (size_t i = 0; i < n; i++) {
		if (netaddr_is_internal(&v4[i]) &&
		    !covered(&v4[i], allow, n_allow))
			return false;
	}
	return n > 0;
}

bool netaddr_reaches(const struct netaddr *a, const struct netaddr *target)
{
	struct netaddr v4[NETADDR_EMBED_MAX];
	size_t n = netaddr_embedded_v4(a, v4, NETADDR_EMBED_MAX);

	if (netaddr_equal(a, target))
		return true;
	for (size_t i = 0; i < n; i++) {
		if (netaddr_equal(&v4[i], target))
			return true;
	}
	return false;
}

uint16_t netaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}
