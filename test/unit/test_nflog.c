// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of nflog_parse: a packet message as nfnetlink_log sends it
 * (prefix, uid, gid, IPv4/TCP and IPv6/UDP payloads), several messages in
 * one datagram, other message types skipped, a payload cut short (the
 * packet still reported, without ports), and lengths that lie.
 */
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "observe/nflog.h"

struct msg {
	uint8_t b[512];
	size_t len;
};

struct got {
	struct nflog_pkt p[4];
	int n;
};

static void put(struct msg *m, const void *p, size_t n);
static void attr(struct msg *m, uint16_t type, const void *val, size_t n);
static void begin(struct msg *m, uint8_t family, uint16_t type);
static void end(struct msg *m, size_t start);
static size_t ipv4_tcp(uint8_t *out, uint8_t last, uint16_t dport);
static void collect(void *arg, const struct nflog_pkt *p);
static void tcp4_with_uid(void **state);
static void udp6_and_a_skipped_message(void **state);
static void cut_payload_has_no_ports(void **state);
static void lying_lengths_are_refused(void **state);

static size_t msg_start;

static void put(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

static void attr(struct msg *m, uint16_t type, const void *val, size_t n)
{
	uint16_t hdr[2] = {(uint16_t)(4 + n), type};
	static const uint8_t pad[4];

	put(m, hdr, sizeof(hdr));
	put(m, val, n);
	put(m, pad, (4 - n % 4) % 4);
}

static void begin(struct msg *m, uint8_t family, uint16_t type)
{
	uint32_t zero = 0, len = 0;
	uint16_t t = type, flags = 0;
	uint8_t nfg[4] = {family, 0, 0, 0};

	msg_start = m->len;
	put(m, &len, 4);
	put(m, &t, 2);
	put(m, &flags, 2);
	put(m, &zero, 4);
	put(m, &zero, 4);
	put(m, nfg, 4);
}

static void end(struct msg *m, size_t start)
{
	uint32_t len = (uint32_t)(m->len - start);

	memcpy(m->b + start, &len, 4);
}

static size_t ipv4_tcp(uint8_t *out, uint8_t last, uint16_t dport)
{
	static const uint8_t hdr[20] = {0x45, 0, 0,   40, 0, 1, 0,   0,	 64, 6,
					0,    0, 198, 18, 0, 2, 198, 18, 1,  0};

	memcpy(out, hdr, 20);
	out[19] = last;
	out[20] = 0x9c; /* sport 40000 */
	out[21] = 0x40;
	out[22] = (uint8_t)(dport >> 8);
	out[23] = (uint8_t)dport;
	memset(out + 24, 0, 16);
	return 40;
}

static void collect(void *arg, const struct nflog_pkt *p)
{
	struct got *g = arg;

	if (g->n < 4)
		g->p[g->n++] = *p;
}

static void tcp4_with_uid(void **state)
{
	struct msg m = {0};
	struct got g = {0};
	uint8_t ip[40];
	uint32_t uid = htonl(12345), gid = htonl(100);
	char a[NETADDR_STRLEN];

	(void)state;
	begin(&m, AF_INET, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PREFIX, "dnsfence-block", 15);
	attr(&m, NFULA_UID, &uid, 4);
	attr(&m, NFULA_GID, &gid, 4);
	attr(&m, NFULA_PAYLOAD, ip, ipv4_tcp(ip, 11, 80));
	end(&m, msg_start);
	assert_int_equal(nflog_parse(m.b, m.len, collect, &g), 1);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.p[0].prefix, "dnsfence-block");
	assert_true(g.p[0].has_uid && g.p[0].has_gid);
	assert_int_equal(g.p[0].uid, 12345);
	assert_int_equal(g.p[0].gid, 100);
	assert_true(g.p[0].has_addrs && g.p[0].has_ports);
	assert_int_equal(g.p[0].proto, IPPROTO_TCP);
	assert_int_equal(g.p[0].sport, 40000);
	assert_int_equal(g.p[0].dport, 80);
	netaddr_format(&g.p[0].dst, a, sizeof(a));
	assert_string_equal(a, "198.18.1.11");
	assert_false(g.p[0].has_indev || g.p[0].has_physindev);
}

/* A forwarded packet: no socket, the interface it came in on and its
 * bridge port. */
static void forwarded_with_interfaces(void **state)
{
	struct msg m = {0};
	struct got g = {0};
	uint8_t ip[40];
	uint32_t in = htonl(7), phys = htonl(42);

	(void)state;
	begin(&m, AF_INET, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PREFIX, "dnsfence-block", 15);
	attr(&m, NFULA_IFINDEX_INDEV, &in, 4);
	attr(&m, NFULA_IFINDEX_PHYSINDEV, &phys, 4);
	attr(&m, NFULA_PAYLOAD, ip, ipv4_tcp(ip, 11, 80));
	end(&m, msg_start);
	assert_int_equal(nflog_parse(m.b, m.len, collect, &g), 1);
	assert_false(g.p[0].has_uid);
	assert_true(g.p[0].has_indev && g.p[0].has_physindev);
	assert_int_equal(g.p[0].indev, 7);
	assert_int_equal(g.p[0].physindev, 42);
	/* A short ifindex is malformed. */
	memset(&m, 0, sizeof(m));
	g.n = 0;
	begin(&m, AF_INET, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET);
	attr(&m, NFULA_IFINDEX_INDEV, &in, 2);
	end(&m, msg_start);
	assert_int_equal(nflog_parse(m.b, m.len, collect, &g), -EBADMSG);
	assert_int_equal(g.n, 0);
}

static void udp6_and_a_skipped_message(void **state)
{
	struct msg m = {0};
	struct got g = {0};
	uint8_t ip[48] = {0x60, 0, 0, 0, 0, 8, IPPROTO_UDP, 64};
	char a[NETADDR_STRLEN];

	(void)state;
	ip[8] = 0x20, ip[9] = 0x01, ip[10] = 0x0d, ip[11] = 0xb8, ip[23] = 2;
	ip[24] = 0x20, ip[25] = 0x01, ip[26] = 0x0d, ip[27] = 0xb8, ip[39] = 1;
	ip[42] = 0, ip[43] = 53;
	begin(&m, AF_INET6, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG);
	end(&m, msg_start);
	begin(&m, AF_INET6, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PREFIX, "dnsfence-dns", 13);
	attr(&m, NFULA_PAYLOAD, ip, sizeof(ip));
	end(&m, msg_start);
	assert_int_equal(nflog_parse(m.b, m.len, collect, &g), 1);
	assert_false(g.p[0].has_uid);
	assert_int_equal(g.p[0].proto, IPPROTO_UDP);
	assert_int_equal(g.p[0].dport, 53);
	netaddr_format(&g.p[0].dst, a, sizeof(a));
	assert_string_equal(a, "2001:db8::1");
}

static void cut_payload_has_no_ports(void **state)
{
	struct msg m = {0};
	struct got g = {0};
	uint8_t ip[40];

	(void)state;
	ipv4_tcp(ip, 10, 22);
	begin(&m, AF_INET, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET);
	attr(&m, NFULA_PAYLOAD, ip, 22); /* IP header and half a port */
	end(&m, msg_start);
	assert_int_equal(nflog_parse(m.b, m.len, collect, &g), 1);
	assert_true(g.p[0].has_addrs);
	assert_false(g.p[0].has_ports);
	assert_string_equal(g.p[0].prefix, "");
}

static void lying_lengths_are_refused(void **state)
{
	struct msg m = {0};
	struct got g = {0};
	uint32_t big = 4096;
	uint16_t nla[2] = {200, NFULA_PAYLOAD};

	(void)state;
	begin(&m, AF_INET, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET);
	put(&m, nla, sizeof(nla));
	end(&m, msg_start);
	assert_int_equal(nflog_parse(m.b, m.len, collect, &g), -EBADMSG);
	memcpy(m.b, &big, 4); /* the message claims more than was read */
	assert_int_equal(nflog_parse(m.b, m.len, collect, &g), -EBADMSG);
	assert_int_equal(g.n, 0);
	assert_int_equal(nflog_parse(m.b, 10, collect, &g), 0);
}

static void icmp_errors_carry_type_and_code(void **state)
{
	/* IPv4, IHL 5, protocol 1, 198.18.0.2 -> 198.18.0.1, type 3 code 3 */
	static const uint8_t v4[] = {0x45, 0,  0, 56, 0,   0,  0, 0,
				     64,   1,  0, 0,  198, 18, 0, 2,
				     198,  18, 0, 1,  3,   3,  0, 0};
	/* IPv6, next header 58, type 1 code 4 */
	uint8_t v6[44] = {0x60, [6] = 58, [40] = 1, [41] = 4};
	struct nflog_pkt p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(nflog_parse_ip(v4, sizeof(v4), AF_INET, &p), 0);
	assert_true(p.has_icmp);
	assert_int_equal(p.icmp_type, 3);
	assert_int_equal(p.icmp_code, 3);
	assert_false(p.has_ports);
	memset(&p, 0, sizeof(p));
	assert_int_equal(nflog_parse_ip(v6, sizeof(v6), AF_INET6, &p), 0);
	assert_true(p.has_icmp);
	assert_int_equal(p.icmp_type, 1);
	assert_int_equal(p.icmp_code, 4);
	/* cut before the type: no ICMP fields */
	memset(&p, 0, sizeof(p));
	assert_int_equal(nflog_parse_ip(v4, 20, AF_INET, &p), 0);
	assert_false(p.has_icmp);
}

/* IPv6 option headers are walked to the upper-layer protocol: an MLDv2
 * report behind its hop-by-hop router alert, TCP behind destination
 * options; an option header cut short leaves no ICMP type or ports. */
static void ipv6_option_headers_walked(void **state)
{
	/* fe80::1 -> ff02::16, hop-by-hop (next 58, 8 bytes), ICMPv6 143 */
	uint8_t mld[52] = {
	    0x60,	 [6] = 0,     [8] = 0xfe,  [9] = 0x80, [23] = 1,
	    [24] = 0xff, [25] = 0x02, [39] = 0x16, [40] = 58,  [41] = 0,
	    [42] = 5,	 [43] = 2,    [48] = 143};
	/* destination options (next 6, 16 bytes), then TCP 40000 -> 443 */
	uint8_t tcp[60] = {0x60,	[6] = 60,    [40] = 6,	  [41] = 1,
			   [56] = 0x9c, [57] = 0x40, [58] = 0x01, [59] = 0xbb};
	struct nflog_pkt p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(nflog_parse_ip(mld, sizeof(mld), AF_INET6, &p), 0);
	assert_int_equal(p.proto, IPPROTO_ICMPV6);
	assert_true(p.has_icmp);
	assert_int_equal(p.icmp_type, 143);
	memset(&p, 0, sizeof(p));
	assert_int_equal(nflog_parse_ip(tcp, sizeof(tcp), AF_INET6, &p), 0);
	assert_int_equal(p.proto, IPPROTO_TCP);
	assert_true(p.has_ports);
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 443);
	/* the hop-by-hop header cut short: its value stays, nothing more */
	memset(&p, 0, sizeof(p));
	assert_int_equal(nflog_parse_ip(mld, 44, AF_INET6, &p), 0);
	assert_int_equal(p.proto, 0);
	assert_false(p.has_icmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(icmp_errors_carry_type_and_code),
	    cmocka_unit_test(ipv6_option_headers_walked),
	    cmocka_unit_test(tcp4_with_uid),
	    cmocka_unit_test(forwarded_with_interfaces),
	    cmocka_unit_test(udp6_and_a_skipped_message),
	    cmocka_unit_test(cut_payload_has_no_ports),
	    cmocka_unit_test(lying_lengths_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
