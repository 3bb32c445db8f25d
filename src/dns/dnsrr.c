// SPDX-License-Identifier: GPL-2.0-or-later
/* dnsrr: what dnsfence does with an upstream answer. It rewrites the
 * answer for the client and snoops the addresses it hands out.
 *
 * The rewrite never forwards upstream bytes wholesale: it parses every
 * record through the reader and writes a new message, so a malformed
 * answer is rejected as a whole, names are decompressed on read and
 * compressed again against what we wrote (pointers can only reach our own
 * output), counts always match the records written, and the upstream OPT
 * is replaced by ours. Records the caller's keep() refuses (addresses in
 * the internal ranges, invariant 3) are simply not written.
 *
 * The snoop follows the CNAME chain from the question name (in whatever
 * order the records come, at most DNS_MAX_CNAME_CHAIN links, stopping at a
 * loop), then collects A/AAAA records and HTTPS/SVCB address hints owned
 * by names on that chain, from the answer section only. Any malformed
 * record makes the whole answer -EBADMSG with no address (invariant 8). */
#include <errno.h>
#include <string.h>

#include "dns/dnsmsg.h"
#include "dns/dnsrr.h"

#define OPT_LEN 11 /* our OPT record, no options */

struct chain {
	uint8_t name[DNS_MAX_CNAME_CHAIN + 1][DNS_MAX_NAME];
	size_t len[DNS_MAX_CNAME_CHAIN + 1];
	size_t n;
};

struct snoop_ctx {
	struct dns_addr *out;
	size_t cap, n;
	unsigned int flags; /* DNS_SNOOP_* */
	uint32_t ttl;
	uint16_t rec;	   /* of the addresses being added */
	uint16_t n_hinted; /* HTTPS/SVCB records read */
};

static int copy_rdata(const struct dns_reader *msg, const struct dns_rr *rr,
		      struct dns_writer *w);
static void write_head(struct dns_writer *w, const struct dns_query *q,
		       uint16_t up_flags, uint16_t extra_flags);
static void write_question(struct dns_writer *w, const struct dns_query *q);
static void write_opt(struct dns_writer *w, const struct dns_query *q);
static int rewrite_records(struct dns_reader *r, const struct dns_header *h,
			   dns_rr_keep_fn keep, void *arg, struct dns_writer *w,
			   uint16_t counts[3]);
static ssize_t truncated_reply(const struct dns_query *q, uint16_t up_flags,
			       uint8_t *out, size_t cap);
static int skip_questions(struct dns_reader *r, uint16_t qd);
static bool chain_has(const struct chain *c, const uint8_t *name, size_t len);
static int chain_follow(const struct dns_reader *r, size_t an_pos, uint16_t an,
			struct chain *c);
static void snoop_add(struct snoop_ctx *s, const struct netaddr *a);
static int snoop_hint(const struct netaddr *a, void *arg);
static int snoop_record(struct snoop_ctx *s, const struct dns_rr *rr);
static uint32_t ttl_value(uint32_t ttl);
static int svcb_skip_target(struct dns_reader *r);
static bool svcb_mandatory_has(const uint8_t *v, uint16_t vlen, uint16_t key);

/* Copy rr's rdata to w. Names in NS, CNAME, PTR, MX and SOA rdata are
 * decompressed and may be compressed again (RFC 3597 section 4); the SRV
 * target is written uncompressed (RFC 2782); other rdata is opaque. The
 * names must fill the rdata exactly. */
static int copy_rdata(const struct dns_reader *msg, const struct dns_rr *rr,
		      struct dns_writer *w)
{
	struct dns_reader rd;
	uint8_t name[DNS_MAX_NAME];
	size_t nlen, off = (size_t)(rr->rdata - msg->buf), lenpos = w->pos;
	const uint8_t *p;
	size_t fixed = 0, names = 0;
	bool compress = true;

	rd.buf = msg->buf;
	rd.len = off + rr->rdlen;
	rd.pos = off;
	switch (rr->type) {
	case DNS_TYPE_NS:
	case DNS_TYPE_CNAME:
	case DNS_TYPE_PTR:
		names = 1;
		break;
	case DNS_TYPE_MX:
		fixed = 2;
		names = 1;
		break;
	case DNS_TYPE_SRV:
		fixed = 6;
		names = 1;
		compress = false;
		break;
	case DNS_TYPE_SOA:
		names = 2;
		break;
	default:
		dns_write_u16(w, rr->rdlen);
		dns_write_bytes(w, rr->rdata, rr->rdlen);
		return 0;
	}
	dns_write_u16(w, 0); /* rdlength, set below */
	if (dns_read_bytes(&rd, &p, fixed) < 0)
		return -EBADMSG;
	dns_write_bytes(w, p, fixed);
	for (size_t i = 0; i < names; i++) {
		if (dns_read_name(&rd, name, &nlen) < 0)
			return -EBADMSG;
		dns_write_name(w, name, nlen, compress);
	}
	if (rr->type == DNS_TYPE_SOA) {
		if (dns_read_bytes(&rd, &p, 20) < 0)
			return -EBADMSG;
		dns_write_bytes(w, p, 20);
	}
	if (rd.pos != rd.len)
		return -EBADMSG;
	if (!w->err)
		dns_write_u16_at(w, lenpos, (uint16_t)(w->pos - lenpos - 2));
	return 0;
}

static void write_head(struct dns_writer *w, const struct dns_query *q,
		       uint16_t up_flags, uint16_t extra_flags)
{
	const struct dns_header h = {
	    .id = q->id,
	    .flags = DNS_FLAG_QR | extra_flags |
		     (up_flags &
		      (DNS_FLAG_AA | DNS_FLAG_TC | DNS_FLAG_RA | DNS_FLAG_AD)) |
		     (q->flags & (DNS_FLAG_RD | DNS_FLAG_CD)) |
		     DNS_RCODE(up_flags),
	    .qd = 1,
	    .ar = q->edns ? 1 : 0,
	};

	dns_write_header(w, &h);
}

static void write_question(struct dns_writer *w, const struct dns_query *q)
{
	dns_write_name(w, q->name, q->name_len, true);
	dns_write_u16(w, q->qtype);
	dns_write_u16(w, q->qclass);
}

static void write_opt(struct dns_writer *w, const struct dns_query *q)
{
	if (!q->edns)
		return;
	dns_write_opt_head(w, 0, q->edns_do);
	dns_write_u16(w, 0);
}

/* Reads every record of the three sections (so a malformed answer fails
 * even when the output has already overflowed), writes those kept. */
static int rewrite_records(struct dns_reader *r, const struct dns_header *h,
			   dns_rr_keep_fn keep, void *arg, struct dns_writer *w,
			   uint16_t counts[3])
{
	const uint16_t n[3] = {h->an, h->ns, h->ar};

	for (int s = 0; s < 3; s++) {
		for (uint16_t i = 0; i < n[s]; i++) {
			struct dns_rr rr;
			uint8_t owner[DNS_MAX_NAME];

			if (dns_read_rr(r, s + 1, &rr, owner) < 0)
				return -EBADMSG;
			if (rr.type == DNS_TYPE_OPT ||
			    (keep && !keep(&rr, arg)))
				continue;
			dns_write_name(w, owner, rr.owner_len, true);
			dns_write_u16(w, rr.type);
			dns_write_u16(w, rr.rclass);
			dns_write_u32(w, rr.ttl);
			if (copy_rdata(r, &rr, w) < 0)
				return -EBADMSG;
			if (!w->err)
				counts[s]++;
		}
	}
	return 0;
}

static ssize_t truncated_reply(const struct dns_query *q, uint16_t up_flags,
			       uint8_t *out, size_t cap)
{
	struct dns_writer w;

	dns_writer_init(&w, out, cap);
	write_head(&w, q, up_flags, DNS_FLAG_TC);
	write_question(&w, q);
	write_opt(&w, q);
	return w.err ? w.err : (ssize_t)w.pos;
}

ssize_t dnsmsg_rewrite_answer(const uint8_t *ans, size_t len,
			      const struct dns_query *q, size_t max,
			      dns_rr_keep_fn keep, void *arg, uint8_t *out,
			      size_t cap)
{
	struct dns_reader r;
	struct dns_writer w;
	struct dns_header h;
	uint8_t qname[DNS_MAX_NAME];
	size_t qlen, limit = max < cap ? max : cap;
	uint16_t qtype, qclass, counts[3] = {0, 0, 0};
	size_t reserve = q->edns ? OPT_LEN : 0;
	int ret;

	dns_reader_init(&r, ans, len);
	if (dns_read_header(&r, &h) < 0 || !(h.flags & DNS_FLAG_QR) ||
	    h.qd != 1)
		return -EBADMSG;
	if (dns_read_name(&r, qname, &qlen) < 0 ||
	    dns_read_u16(&r, &qtype) < 0 || dns_read_u16(&r, &qclass) < 0)
		return -EBADMSG;
	if (!dns_name_equal(qname, qlen, q->lname, q->name_len) ||
	    qtype != q->qtype || qclass != q->qclass)
		return -EBADMSG;

	dns_writer_init(&w, out, limit > reserve ? limit - reserve : 0);
	write_head(&w, q, h.flags, 0);
	write_question(&w, q);
	ret = rewrite_records(&r, &h, keep, arg, &w, counts);
	if (ret < 0)
		return ret;
	if (w.err) {
		if (max > cap)
			return -ENOSPC; /* it might fit max: caller's buffer */
		return truncated_reply(q, h.flags, out, cap);
	}
	w.cap = limit; /* the room kept for our OPT */
	write_opt(&w, q);
	for (int s = 0; s < 3; s++)
		dns_write_u16_at(&w, 6 + 2 * (size_t)s, counts[s]);
	if (q->edns)
		dns_write_u16_at(&w, 10, (uint16_t)(counts[2] + 1));
	return w.err ? w.err : (ssize_t)w.pos;
}

/* ---- snooping ---- */

static uint32_t ttl_value(uint32_t ttl)
{
	return ttl > 0x7fffffffu ? 0 : ttl; /* RFC 2181 section 8 */
}

static int skip_questions(struct dns_reader *r, uint16_t qd)
{
	uint8_t name[DNS_MAX_NAME];
	size_t nlen;

	for (uint16_t i = 0; i < qd; i++)
		if (dns_read_name(r, name, &nlen) < 0 || dns_skip(r, 4) < 0)
			return -EBADMSG;
	return 0;
}

static bool chain_has(const struct chain *c, const uint8_t *name, size_t len)
{
	for (size_t i = 0; i < c->n; i++)
		if (dns_name_equal(c->name[i], c->len[i], name, len))
			return true;
	return false;
}

/* Extend the chain from its last name, rescanning the answer section for
 * each link, so CNAMEs may come in any order. */
static int chain_follow(const struct dns_reader *r, size_t an_pos, uint16_t an,
			struct chain *c)
{
	while (c->n <= DNS_MAX_CNAME_CHAIN) {
		struct dns_reader s = *r;
		bool grew = false;

		s.pos = an_pos;
		for (uint16_t i = 0; i < an && !grew; i++) {
			struct dns_rr rr;
			uint8_t owner[DNS_MAX_NAME], target[DNS_MAX_NAME];
			size_t tlen, off;
			struct dns_reader rd;

			if (dns_read_rr(&s, 1, &rr, owner) < 0)
				return -EBADMSG;
			if (rr.type != DNS_TYPE_CNAME ||
			    !dns_name_equal(owner, rr.owner_len,
					    c->name[c->n - 1],
					    c->len[c->n - 1]))
				continue;
			off = (size_t)(rr.rdata - r->buf);
			rd.buf = r->buf;
			rd.len = off + rr.rdlen;
			rd.pos = off;
			if (dns_read_name(&rd, target, &tlen) < 0 ||
			    rd.pos != rd.len)
				return -EBADMSG;
			if (chain_has(c, target, tlen))
				return 0; /* loop */
			memcpy(c->name[c->n], target, tlen);
			c->len[c->n++] = tlen;
			grew = true;
		}
		if (!grew)
			break;
	}
	return 0;
}

static void snoop_add(struct snoop_ctx *s, const struct netaddr *a)
{
	if (s->n < s->cap) {
		s->out[s->n].addr = *a;
		s->out[s->n].rec = s->rec;
		s->out[s->n].ttl = s->ttl;
	}
	s->n++;
}

static int snoop_hint(const struct netaddr *a, void *arg)
{
	snoop_add(arg, a);
	return 0;
}

/* An answer record on the CNAME chain: its address (A, AAAA of class
 * IN), or the address hints of an HTTPS/SVCB record. Nonzero when the
 * hints are malformed. */
static int snoop_record(struct snoop_ctx *s, const struct dns_rr *rr)
{
	struct netaddr a = {0};

	s->ttl = ttl_value(rr->ttl);
	s->rec = 0;
	if (rr->rclass == 1 && rr->type == DNS_TYPE_A) {
		a.family = AF_INET;
		memcpy(a.bytes, rr->rdata, 4);
		snoop_add(s, &a);
	} else if (rr->rclass == 1 && rr->type == DNS_TYPE_AAAA) {
		a.family = AF_INET6;
		memcpy(a.bytes, rr->rdata, 16);
		snoop_add(s, &a);
	} else if (rr->type == DNS_TYPE_HTTPS || rr->type == DNS_TYPE_SVCB) {
		if (s->n_hinted < UINT16_MAX)
			s->n_hinted++;
		s->rec = s->n_hinted;
		if ((s->flags & DNS_SNOOP_STRIP_ECH) &&
		    dnsmsg_svcb_without(rr->rdata, rr->rdlen, SVCB_KEY_ECH,
					NULL, NULL) == -EPERM)
			return 0; /* the client's copy leaves it out */
		return dnsmsg_svcb_hints(rr->rdata, rr->rdlen, snoop_hint, s);
	}
	return 0;
}

int dnsmsg_snoop(const uint8_t *ans, size_t len, const uint8_t *qname,
		 size_t qname_len, unsigned int flags, struct dns_addr *out,
		 size_t cap, size_t *n)
{
	struct dns_reader r;
	struct dns_header h;
	struct chain chain, *c = &chain;
	struct snoop_ctx s = {.out = out, .cap = cap, .flags = flags};
	size_t an_pos;
	int ret = -EBADMSG;

	*n = 0;
	if (qname_len == 0 || qname_len > DNS_MAX_NAME)
		return -EINVAL;
	dns_reader_init(&r, ans, len);
	if (dns_read_header(&r, &h) < 0 || skip_questions(&r, h.qd) < 0)
		goto out;
	an_pos = r.pos;
	/* Validate every record of every section first. */
	for (uint32_t i = 0; i < (uint32_t)h.an + h.ns + h.ar; i++) {
		struct dns_rr rr;
		uint8_t owner[DNS_MAX_NAME];

		if (dns_read_rr(&r, 1, &rr, owner) < 0)
			goto out;
	}
	memcpy(c->name[0], qname, qname_len);
	c->len[0] = qname_len;
	c->n = 1;
	if (chain_follow(&r, an_pos, h.an, c) < 0)
		goto out;
	r.pos = an_pos;
	for (uint16_t i = 0; i < h.an; i++) {
		struct dns_rr rr;
		uint8_t owner[DNS_MAX_NAME];

		if (dns_read_rr(&r, 1, &rr, owner) < 0)
			goto out;
		if (!chain_has(c, owner, rr.owner_len))
			continue;
		if (snoop_record(&s, &rr) != 0)
			goto out;
	}
	*n = s.n;
	ret = s.n > cap ? -E2BIG : 0;
out:
	if (ret == -EBADMSG)
		*n = 0;
	return ret;
}

/* RFC 9460: SvcPriority, an uncompressed TargetName, then SvcParams in
 * strictly increasing key order. AliasMode (priority 0) records carry no
 * meaningful params, so their hints are not reported. */
/* The TargetName of SVCB/HTTPS rdata: uncompressed (RFC 9460 section
 * 2.2), at most DNS_MAX_NAME bytes. 0 or -EBADMSG. */
static int svcb_skip_target(struct dns_reader *r)
{
	size_t nlen = 0;

	for (;;) {
		uint8_t l;

		if (dns_read_u8(r, &l) < 0 || (l & 0xc0) ||
		    (size_t)l + 1 > DNS_MAX_NAME - nlen || dns_skip(r, l) < 0)
			return -EBADMSG;
		nlen += (size_t)l + 1;
		if (l == 0)
			return 0;
	}
}

/* Does the value of a "mandatory" SvcParam (a list of keys) name key? */
static bool svcb_mandatory_has(const uint8_t *v, uint16_t vlen, uint16_t key)
{
	for (size_t i = 0; i + 1 < vlen; i += 2)
		if ((uint16_t)(v[i] << 8 | v[i + 1]) == key)
			return true;
	return false;
}

int dnsmsg_svcb_without(const uint8_t *rdata, size_t rdlen, uint16_t key,
			uint8_t *out, size_t *outlen)
{
	struct dns_reader r;
	uint16_t prio;
	int32_t prev = -1;
	size_t n;

	dns_reader_init(&r, rdata, rdlen);
	if (dns_read_u16(&r, &prio) < 0 || svcb_skip_target(&r) < 0)
		return -EBADMSG;
	if (out != NULL)
		memcpy(out, rdata, r.pos);
	n = r.pos;
	while (r.pos < r.len) {
		size_t start = r.pos;
		uint16_t k, vlen;
		const uint8_t *v;

		if (dns_read_u16(&r, &k) < 0 || dns_read_u16(&r, &vlen) < 0 ||
		    dns_read_bytes(&r, &v, vlen) < 0 || (int32_t)k <= prev ||
		    (k == SVCB_KEY_MANDATORY && vlen % 2 != 0))
			return -EBADMSG;
		prev = k;
		if (k == SVCB_KEY_MANDATORY && svcb_mandatory_has(v, vlen, key))
			return -EPERM;
		if (k == key)
			continue;
		if (out != NULL)
			memcpy(out + n, rdata + start, r.pos - start);
		n += r.pos - start;
	}
	if (outlen != NULL)
		*outlen = n;
	return 0;
}

int dnsmsg_svcb_hints(const uint8_t *rdata, size_t rdlen,
		      int (*fn)(const struct netaddr *a, void *arg), void *arg)
{
	struct dns_reader r;
	uint16_t prio;
	int32_t prev = -1;

	dns_reader_init(&r, rdata, rdlen);
	if (dns_read_u16(&r, &prio) < 0 || svcb_skip_target(&r) < 0)
		return -EBADMSG;
	while (r.pos < r.len) {
		uint16_t key, vlen;
		size_t step;
		const uint8_t *v;

		if (dns_read_u16(&r, &key) < 0 || dns_read_u16(&r, &vlen) < 0 ||
		    dns_read_bytes(&r, &v, vlen) < 0 || (int32_t)key <= prev)
			return -EBADMSG;
		prev = key;
		if (key != 4 && key != 6)
			continue;
		step = key == 4 ? 4 : 16;
		if (vlen == 0 || vlen % step != 0)
			return -EBADMSG;
		for (size_t i = 0; prio != 0 && i < vlen; i += step) {
			struct netaddr a = {0};
			int ret;

			a.family = key == 4 ? AF_INET : AF_INET6;
			memcpy(a.bytes, v + i, step);
			ret = fn(&a, arg);
			if (ret != 0)
				return ret;
		}
	}
	return 0;
}

int dnsmsg_cache_ttl(const uint8_t *ans, size_t len, uint32_t *ttl)
{
	struct dns_reader r;
	struct dns_header h;
	uint32_t min = UINT32_MAX;
	uint16_t rcode;

	dns_reader_init(&r, ans, len);
	if (dns_read_header(&r, &h) < 0 || skip_questions(&r, h.qd) < 0)
		return -EBADMSG;
	rcode = DNS_RCODE(h.flags);
	if ((h.flags & DNS_FLAG_TC) ||
	    (rcode != DNS_RCODE_NOERROR && rcode != DNS_RCODE_NXDOMAIN))
		return -ENOENT;
	for (uint32_t i = 0; i < (uint32_t)h.an + h.ns; i++) {
		struct dns_rr rr;
		uint8_t owner[DNS_MAX_NAME];

		if (dns_read_rr(&r, i < h.an ? 1 : 2, &rr, owner) < 0)
			return -EBADMSG;
		if (rr.type != DNS_TYPE_OPT && ttl_value(rr.ttl) < min)
			min = ttl_value(rr.ttl);
	}
	/* Nothing says how long an empty answer stays true. */
	if (min == UINT32_MAX || min == 0)
		return -ENOENT;
	*ttl = min;
	return 0;
}
