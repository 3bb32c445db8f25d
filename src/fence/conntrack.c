// SPDX-License-Identifier: GPL-2.0-or-later
/* conntrack: forgetting the flows to addresses that stop being upstreams.
 *
 * The fence demands the daemon's mark on every packet whose ORIGINAL
 * destination is an upstream, in any conntrack state (invariant 5). When
 * an address stops being an upstream, its rules go, and the daemon's
 * entries towards it (UDP "assured" for minutes, refreshed by every
 * packet) would then let a workload that binds one of the daemon's old
 * source ports ride the ESTABLISHED accept to it. So before the rules
 * stop naming an address, fw_apply calls conntrack_forget: one dump of
 * the namespace's table (IPCTNL_MSG_CT_GET, NLM_F_DUMP), the matching
 * entries' original tuples copied out, then one IPCTNL_MSG_CT_DELETE per
 * tuple, each acked (ENOENT: it expired meanwhile). While this runs the
 * old rules are still in place, so nothing without the mark can open a
 * new entry to the address.
 *
 * The dump is the kernel's bytes, read like any other through the
 * bounds-checked reader (conntrack_entry_matches, fuzzed by
 * fuzz_conntrack). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include "fence/conntrack.h"
#include "dns/dnsmsg.h"

#define NLMSG_HDRLEN_ 16
#define NFGEN_HDRLEN  4
#define TUPLE_MAX     256 /* an original tuple is about 60 bytes */

struct found {
	uint8_t family;
	bool has_zone;
	uint16_t zone;
	size_t len;
	uint8_t tuple[TUPLE_MAX];
};

struct dump {
	const struct netaddr *addrs;
	size_t n;
	struct found *v;
	size_t count, cap;
	int err;
};

static int next_attr(struct dns_reader *r, uint16_t *type, const uint8_t **val,
		     size_t *len, const uint8_t **whole, size_t *whole_len);
static bool tuple_dst(const uint8_t *val, size_t len, struct netaddr *dst);
static int on_entry(const struct nlmsghdr *nlh, void *arg);
static struct nlmsghdr *request(uint8_t *buf, uint16_t msg, uint16_t flags,
				uint8_t family);
static int dump(struct mnl_socket *nl, struct dump *d);
static int delete_one(struct mnl_socket *nl, const struct found *f);

/* The next attribute of r (padded to 4 bytes): its type without flags,
 * its value, and the whole attribute with its header. 1 at the end, 0,
 * or -EBADMSG. */
static int next_attr(struct dns_reader *r, uint16_t *type, const uint8_t **val,
		     size_t *len, const uint8_t **whole, size_t *whole_len)
{
	size_t start = r->pos;
	uint16_t nla_len, nla_type;

	if (r->len - r->pos < 4)
		return 1;
	if (dns_read_copy(r, &nla_len, sizeof(nla_len)) ||
	    dns_read_copy(r, &nla_type, sizeof(nla_type)))
		return -EBADMSG;
	if (nla_len < 4 || nla_len > r->len - start)
		return -EBADMSG;
	*len = (size_t)nla_len - 4;
	if (dns_read_bytes(r, val, *len) != 0)
		return -EBADMSG;
	*type = nla_type & NLA_TYPE_MASK;
	*whole = r->buf + start;
	*whole_len = nla_len;
	r->pos = start + NLA_ALIGN(nla_len) < r->len
		     ? start + NLA_ALIGN(nla_len)
		     : r->len;
	return 0;
}

/* CTA_TUPLE_ORIG's value: its CTA_TUPLE_IP's destination address. */
static bool tuple_dst(const uint8_t *val, size_t len, struct netaddr *dst)
{
	struct dns_reader t, ip;
	const uint8_t *v, *w, *iv, *iw;
	size_t vl, wl, il, iwl;
	uint16_t type, itype;
	int rc;

	dns_reader_init(&t, val, len);
	while ((rc = next_attr(&t, &type, &v, &vl, &w, &wl)) == 0) {
		if (type != CTA_TUPLE_IP)
			continue;
		dns_reader_init(&ip, v, vl);
		while ((rc = next_attr(&ip, &itype, &iv, &il, &iw, &iwl)) ==
		       0) {
			if (itype == CTA_IP_V4_DST && il == 4) {
				dst->family = AF_INET;
				memset(dst->bytes, 0, sizeof(dst->bytes));
				memcpy(dst->bytes, iv, 4);
				return true;
			}
			if (itype == CTA_IP_V6_DST && il == 16) {
				dst->family = AF_INET6;
				memcpy(dst->bytes, iv, 16);
				return true;
			}
		}
		return false;
	}
	return false;
}

bool conntrack_entry_matches(const void *buf, size_t len,
			     const struct netaddr *addrs, size_t n,
			     const void **tuple, size_t *tuple_len,
			     uint16_t *zone, bool *has_zone)
{
	struct dns_reader r;
	const uint8_t *v, *w, *orig = NULL;
	size_t vl, wl, orig_len = 0;
	uint32_t mlen;
	uint16_t type, nl_type;
	struct netaddr dst;
	bool hit = false;
	int rc;

	*has_zone = false;
	*zone = 0;
	dns_reader_init(&r, buf, len);
	if (dns_read_copy(&r, &mlen, sizeof(mlen)) ||
	    dns_read_copy(&r, &nl_type, sizeof(nl_type)) ||
	    dns_skip(&r, NLMSG_HDRLEN_ - 6) || mlen < NLMSG_HDRLEN_ ||
	    mlen > len)
		return false;
	if (nl_type != ((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW))
		return false;
	dns_reader_init(&r, (const uint8_t *)buf + NLMSG_HDRLEN_,
			mlen - NLMSG_HDRLEN_);
	if (dns_skip(&r, NFGEN_HDRLEN) != 0)
		return false;
	while ((rc = next_attr(&r, &type, &v, &vl, &w, &wl)) == 0) {
		if (type == CTA_TUPLE_ORIG && orig == NULL) {
			orig = w;
			orig_len = wl;
			if (!tuple_dst(v, vl, &dst))
				return false;
			for (size_t i = 0; i < n && !hit; i++)
				hit = netaddr_equal(&dst, &addrs[i]);
		} else if (type == CTA_ZONE && vl == 2) {
			*zone = (uint16_t)(v[0] << 8 | v[1]);
			*has_zone = true;
		}
	}
	if (rc < 0 || !hit || orig_len > TUPLE_MAX)
		return false;
	*tuple = orig;
	*tuple_len = orig_len;
	return true;
}

static int on_entry(const struct nlmsghdr *nlh, void *arg)
{
	struct dump *d = arg;
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	const void *tuple;
	size_t tlen;
	struct found *f;
	uint16_t zone;
	bool has_zone;

	if (nlh->nlmsg_len < NLMSG_HDRLEN_ + NFGEN_HDRLEN ||
	    !conntrack_entry_matches(nlh, nlh->nlmsg_len, d->addrs, d->n,
				     &tuple, &tlen, &zone, &has_zone))
		return MNL_CB_OK;
	if (d->count == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct found *v = reallocarray(d->v, cap, sizeof(*v));

		if (v == NULL) {
			d->err = -ENOMEM;
			return MNL_CB_ERROR;
		}
		d->v = v;
		d->cap = cap;
	}
	f = &d->v[d->count++];
	f->family = nfg->nfgen_family;
	f->has_zone = has_zone;
	f->zone = zone;
	f->len = tlen;
	memcpy(f->tuple, tuple, tlen);
	return MNL_CB_OK;
}

/* A ctnetlink request of type msg (IPCTNL_MSG_*) for family in buf. */
static struct nlmsghdr *request(uint8_t *buf, uint16_t msg, uint16_t flags,
				uint8_t family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	return nlh;
}

static int dump(struct mnl_socket *nl, struct dump *d)
{
	uint8_t buf[32768];
	unsigned int portid = mnl_socket_get_portid(nl);
	/* AF_UNSPEC: both families */
	struct nlmsghdr *nlh =
	    request(buf, IPCTNL_MSG_CT_GET, NLM_F_DUMP, AF_UNSPEC);
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t got;
	int rc;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		got = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (got < 0)
			return -errno;
		rc = mnl_cb_run(buf, (size_t)got, seq, portid, on_entry, d);
		if (rc == MNL_CB_STOP)
			return 0;
		if (rc < 0)
			return d->err ? d->err : -errno;
	}
}

static int delete_one(struct mnl_socket *nl, const struct found *f)
{
	uint8_t buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int portid = mnl_socket_get_portid(nl);
	struct nlmsghdr *nlh =
	    request(buf, IPCTNL_MSG_CT_DELETE, NLM_F_ACK, f->family);
	ssize_t got;
	int rc;

	/* the original tuple exactly as the dump gave it */
	memcpy((uint8_t *)nlh + nlh->nlmsg_len, f->tuple, f->len);
	nlh->nlmsg_len += (uint32_t)NLA_ALIGN(f->len);
	if (f->has_zone)
		mnl_attr_put_u16(nlh, CTA_ZONE, htons(f->zone));
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	got = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (got < 0)
		return -errno;
	rc = mnl_cb_run(buf, (size_t)got, nlh->nlmsg_seq, portid, NULL, NULL);
	if (rc < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int conntrack_forget(const struct netaddr *addrs, size_t n, size_t *deleted,
		     char *err, size_t errlen)
{
	struct dump d = {.addrs = addrs, .n = n};
	struct mnl_socket *nl = NULL;
	int rc = 0;

	*deleted = 0;
	if (n == 0)
		return 0;
	nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		snprintf(err, errlen, "conntrack: cannot open netlink: %s",
			 strerror(-rc));
		goto out;
	}
	rc = dump(nl, &d);
	if (rc != 0) {
		snprintf(err, errlen, "conntrack: cannot read the table: %s",
			 strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < d.count; i++) {
		rc = delete_one(nl, &d.v[i]);
		if (rc != 0) {
			snprintf(err, errlen,
				 "conntrack: cannot delete an entry: %s",
				 strerror(-rc));
			goto out;
		}
		(*deleted)++;
	}
out:
	if (nl != NULL)
		mnl_socket_close(nl);
	free(d.v);
	return rc;
}
