// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the pure parts of the sets module: the timeout clamp, the
 * netlink ADD request, error mapping, set-name checks. No kernel needed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <libipset/linux_ip_set.h>
#include <libipset/nfproto.h>
#include <libipset/linux_ip_set_hash.h>

#include "sets/sets.h"
#include "sets/setserr.h"

#define TB_MAX 64

struct parsed {
	const struct nlattr *tb[TB_MAX];
	const struct nlattr *data[TB_MAX];
	const struct nlattr *ip[TB_MAX];
};

static void timeout_clamp_table(void **state);
static void timeout_min_above_kernel_max_is_capped(void **state);
static void build_add_ipv4_has_every_attribute(void **state);
static void build_add_ipv6_uses_ipv6_attribute(void **state);
static void build_add_rejects_bad_input(void **state);
static void status_maps_kernel_errors(void **state);
static void set_names_are_checked(void **state);
static int cb_attr(const struct nlattr *attr, void *arg);
static void parse(const void *buf, int len, struct parsed *p, int family);

static int cb_attr(const struct nlattr *attr, void *arg)
{
	const struct nlattr **tb = arg;

	if (mnl_attr_get_type(attr) < TB_MAX)
		tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

static void parse(const void *buf, int len, struct parsed *p, int family)
{
	const struct nlmsghdr *nlh = buf;
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);

	memset(p, 0, sizeof(*p));
	assert_int_equal(nlh->nlmsg_len, len);
	assert_int_equal(nlh->nlmsg_type,
			 (NFNL_SUBSYS_IPSET << 8) | IPSET_CMD_ADD);
	assert_int_equal(nlh->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
	assert_int_equal(nfg->nfgen_family, family);
	assert_int_equal(nfg->res_id, 0);
	assert_int_equal(mnl_attr_parse(nlh, sizeof(*nfg), cb_attr, p->tb),
			 MNL_CB_OK);
	assert_non_null(p->tb[IPSET_ATTR_DATA]);
	assert_true(p->tb[IPSET_ATTR_DATA]->nla_type & NLA_F_NESTED);
	assert_int_equal(
	    mnl_attr_parse_nested(p->tb[IPSET_ATTR_DATA], cb_attr, p->data),
	    MNL_CB_OK);
	assert_non_null(p->data[IPSET_ATTR_IP]);
	assert_true(p->data[IPSET_ATTR_IP]->nla_type & NLA_F_NESTED);
	assert_int_equal(
	    mnl_attr_parse_nested(p->data[IPSET_ATTR_IP], cb_attr, p->ip),
	    MNL_CB_OK);
}

static void timeout_clamp_table(void **state)
{
	static const struct {
		uint32_t ttl, min, max, want;
	} t[] = {
	    {0, 60, 86400, 60}, /* 0 is raised: 0 means forever */
	    {1, 60, 86400, 60},
	    {60, 60, 86400, 60},
	    {61, 60, 86400, 61},
	    {86400, 60, 86400, 86400},
	    {86401, 60, 86400, 86400},
	    {UINT32_MAX, 60, 86400, 86400},
	    {0, 0, 86400, 1}, /* min 0 still never sends 0 */
	    {1, 0, 86400, 1},
	    {3000000, 0, UINT32_MAX, SETS_KERNEL_MAX_TIMEOUT},
	    {SETS_KERNEL_MAX_TIMEOUT, 0, UINT32_MAX, SETS_KERNEL_MAX_TIMEOUT},
	    {SETS_KERNEL_MAX_TIMEOUT + 1, 0, UINT32_MAX,
	     SETS_KERNEL_MAX_TIMEOUT},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(sets_timeout(t[i].ttl, t[i].min, t[i].max),
				 t[i].want);
}

static void timeout_min_above_kernel_max_is_capped(void **state)
{
	(void)state;
	assert_int_equal(sets_timeout(5, 3000000, 4000000),
			 SETS_KERNEL_MAX_TIMEOUT);
}

static void build_add_ipv4_has_every_attribute(void **state)
{
	uint8_t buf[SETS_ADD_MSG_MAX];
	struct netaddr a = {.family = AF_INET, .bytes = {198, 18, 0, 7}};
	struct parsed p;
	int len;

	(void)state;
	len = sets_build_add(buf, sizeof(buf), "dnsfence4", &a, 300, 4242);
	assert_true(len > 0 && len <= SETS_ADD_MSG_MAX);
	assert_int_equal(((struct nlmsghdr *)buf)->nlmsg_seq, 4242);
	parse(buf, len, &p, NFPROTO_IPV4);
	assert_int_equal(mnl_attr_get_u8(p.tb[IPSET_ATTR_PROTOCOL]),
			 IPSET_PROTOCOL);
	assert_string_equal(mnl_attr_get_str(p.tb[IPSET_ATTR_SETNAME]),
			    "dnsfence4");
	assert_null(p.tb[IPSET_ATTR_LINENO]);
	assert_non_null(p.data[IPSET_ATTR_TIMEOUT]);
	assert_true(p.data[IPSET_ATTR_TIMEOUT]->nla_type & NLA_F_NET_BYTEORDER);
	assert_int_equal(ntohl(mnl_attr_get_u32(p.data[IPSET_ATTR_TIMEOUT])),
			 300);
	assert_non_null(p.ip[IPSET_ATTR_IPADDR_IPV4]);
	assert_true(p.ip[IPSET_ATTR_IPADDR_IPV4]->nla_type &
		    NLA_F_NET_BYTEORDER);
	assert_int_equal(mnl_attr_get_payload_len(p.ip[IPSET_ATTR_IPADDR_IPV4]),
			 4);
	assert_memory_equal(mnl_attr_get_payload(p.ip[IPSET_ATTR_IPADDR_IPV4]),
			    a.bytes, 4);
}

static void build_add_ipv6_uses_ipv6_attribute(void **state)
{
	uint8_t buf[SETS_ADD_MSG_MAX];
	struct netaddr a = {.family = AF_INET6,
			    .bytes = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
	struct parsed p;
	int len;

	(void)state;
	len =
	    sets_build_add(buf, sizeof(buf), "a234567890123456789012345678901",
			   &a, SETS_KERNEL_MAX_TIMEOUT, 1);
	assert_true(len > 0 && len <= SETS_ADD_MSG_MAX);
	parse(buf, len, &p, NFPROTO_IPV6);
	assert_null(p.ip[IPSET_ATTR_IPADDR_IPV4]);
	assert_int_equal(mnl_attr_get_payload_len(p.ip[IPSET_ATTR_IPADDR_IPV6]),
			 16);
	assert_memory_equal(mnl_attr_get_payload(p.ip[IPSET_ATTR_IPADDR_IPV6]),
			    a.bytes, 16);
	assert_int_equal(ntohl(mnl_attr_get_u32(p.data[IPSET_ATTR_TIMEOUT])),
			 SETS_KERNEL_MAX_TIMEOUT);
}

static void build_add_rejects_bad_input(void **state)
{
	uint8_t buf[SETS_ADD_MSG_MAX];
	struct netaddr a = {.family = AF_INET, .bytes = {198, 18, 0, 1}};
	struct netaddr bad = {.family = AF_UNIX};

	(void)state;
	assert_int_equal(sets_build_add(buf, sizeof(buf), "", &a, 1, 1),
			 -EINVAL);
	assert_int_equal(sets_build_add(buf, sizeof(buf), "x y", &a, 1, 1),
			 -EINVAL);
	assert_int_equal(sets_build_add(buf, sizeof(buf), "s", &bad, 1, 1),
			 -EINVAL);
	assert_int_equal(sets_build_add(buf, sizeof(buf) - 1, "s", &a, 1, 1),
			 -ENOSPC);
}

/* A client set entry: the client as IPSET_ATTR_IP, the port (network
 * order) and protocol, the answered address as IPSET_ATTR_IP2, the
 * timeout; the longest name and IPv6 fit SETS_ADD_MSG_MAX; a family
 * mismatch or another protocol is refused. */
static void build_client_add_has_every_attribute(void **state)
{
	uint8_t buf[SETS_ADD_MSG_MAX];
	struct netaddr c = {.family = AF_INET6,
			    .bytes = {0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
	struct netaddr a = {.family = AF_INET6,
			    .bytes = {0x20, 0x01, 0x0d, 0xb8, 1, [15] = 10}};
	struct netaddr v4 = {.family = AF_INET, .bytes = {198, 18, 0, 7}};
	const struct nlattr *ip2[TB_MAX] = {0};
	struct parsed p;
	int len;

	(void)state;
	len = sets_build_client_add(buf, sizeof(buf),
				    "a234567890123456789012345678901", &c,
				    IPPROTO_TCP, 8080, &a, 300, 7);
	assert_true(len > 0 && len <= SETS_ADD_MSG_MAX);
	parse(buf, len, &p, NFPROTO_IPV6);
	assert_memory_equal(mnl_attr_get_payload(p.ip[IPSET_ATTR_IPADDR_IPV6]),
			    c.bytes, 16);
	assert_true(p.data[IPSET_ATTR_PORT]->nla_type & NLA_F_NET_BYTEORDER);
	assert_int_equal(ntohs(mnl_attr_get_u16(p.data[IPSET_ATTR_PORT])),
			 8080);
	assert_int_equal(mnl_attr_get_u8(p.data[IPSET_ATTR_PROTO]),
			 IPPROTO_TCP);
	assert_non_null(p.data[IPSET_ATTR_IP2]);
	assert_int_equal(
	    mnl_attr_parse_nested(p.data[IPSET_ATTR_IP2], cb_attr, ip2),
	    MNL_CB_OK);
	assert_memory_equal(mnl_attr_get_payload(ip2[IPSET_ATTR_IPADDR_IPV6]),
			    a.bytes, 16);
	assert_int_equal(ntohl(mnl_attr_get_u32(p.data[IPSET_ATTR_TIMEOUT])),
			 300);
	assert_int_equal(sets_build_client_add(buf, sizeof(buf), "s", &v4,
					       IPPROTO_TCP, 1, &a, 1, 1),
			 -EINVAL);
	assert_int_equal(sets_build_client_add(buf, sizeof(buf), "s", &c,
					       IPPROTO_ICMP, 1, &a, 1, 1),
			 -EINVAL);
	assert_int_equal(sets_build_client_add(buf, sizeof(buf) - 1, "s", &c,
					       IPPROTO_UDP, 1, &a, 1, 1),
			 -ENOSPC);
}

static void status_maps_kernel_errors(void **state)
{
	(void)state;
	assert_int_equal(setserr_status(ENOENT), -ENOENT);
	assert_int_equal(setserr_status(IPSET_ERR_HASH_FULL), -ENOSPC);
	assert_int_equal(setserr_status(IPSET_ERR_PROTOCOL), -EIO);
	assert_int_equal(setserr_status(EPERM), -EIO);
	assert_int_equal(setserr_status(ENOBUFS), -EIO);
	assert_non_null(
	    strstr(setserr_strerror(IPSET_ERR_HASH_FULL), "Hash is full"));
	assert_non_null(strstr(setserr_strerror(ENOENT), "does not exist"));
	assert_non_null(strstr(setserr_strerror(IPSET_ERR_TIMEOUT), "timeout"));
	/* An unknown ipset code is named as such, not as some errno. */
	assert_string_equal(setserr_strerror(IPSET_ERR_TYPE_SPECIFIC + 99),
			    "Kernel error received: unknown ipset error code");
	assert_string_equal(setserr_strerror(EACCES), strerror(EACCES));
}

static void set_names_are_checked(void **state)
{
	(void)state;
	assert_true(sets_name_valid("dnsfence4"));
	assert_true(sets_name_valid("a-b_c.d"));
	assert_true(sets_name_valid("a234567890123456789012345678901"));
	assert_false(sets_name_valid("a2345678901234567890123456789012"));
	assert_false(sets_name_valid(""));
	assert_false(sets_name_valid("a b"));
	assert_false(sets_name_valid("a;b"));
	assert_false(sets_name_valid("-exist"));
	assert_false(sets_name_valid("a:b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(timeout_clamp_table),
	    cmocka_unit_test(timeout_min_above_kernel_max_is_capped),
	    cmocka_unit_test(build_add_ipv4_has_every_attribute),
	    cmocka_unit_test(build_add_ipv6_uses_ipv6_attribute),
	    cmocka_unit_test(build_add_rejects_bad_input),
	    cmocka_unit_test(build_client_add_has_every_attribute),
	    cmocka_unit_test(status_maps_kernel_errors),
	    cmocka_unit_test(set_names_are_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
