// SPDX-License-Identifier: GPL-2.0-or-later
/* dnsmsg: the bounds-checked reader and the writer for DNS wire format,
 * names, client query parsing, and the messages dnsfence builds itself
 * (local replies, error replies, upstream queries).
 *
 * Every untrusted byte is read through struct dns_reader: each read checks
 * the bytes left and fails with -EBADMSG, never reads past the end. Names
 * are decompressed with pointers that must point strictly before the
 * start of the label sequence being read, so every hop moves backwards and
 * no loop is possible; the hop count is capped on top of that.
 *
 * Built messages go through struct dns_writer, whose error is sticky, so a
 * builder writes everything and checks once. The upstream query is built
 * afresh from (lname, qtype, qclass): nothing of the client's message but
 * the RD/CD/DO bits travels upstream (invariant 5). The rewrite of upstream
 * answers and the address snooping live in dnsrr.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dns/dnsmsg.h"
#include "dns/qtype.h"

#define DNS_MAX_HOPS   64
#define DNS_EDE_OPT    15 /* RFC 8914 option code */
#define DNS_OPT_COOKIE 10 /* RFC 7873 option code */
#define DNS_BADVERS    16

static uint8_t ascii_lower(uint8_t c);
static bool name_at_equal(const struct dns_writer *w, uint16_t off,
			  const uint8_t *name, size_t len);
static void comp_remember(struct dns_writer *w, size_t len);
static bool comp_find(const struct dns_writer *w, const uint8_t *name,
		      size_t len, uint16_t *off);
static bool text_plain(uint8_t c);
static int parse_escape(const char **p, uint8_t *v);
static int parse_opt(const struct dns_rr *rr, size_t owner_len,
		     struct dns_query *q);
static enum dns_parse parse_additional(struct dns_reader *r, uint16_t arcount,
				       struct dns_query *q);
static void write_reply_head(struct dns_writer *w, const struct dns_query *q,
			     uint16_t rcode, uint16_t arcount);

/* ---- reader ---- */

void dns_reader_init(struct dns_reader *r, const uint8_t *buf, size_t len)
{
	r->buf = buf;
	r->len = len;
	r->pos = 0;
}

int dns_read_bytes(struct dns_reader *r, const uint8_t **p, size_t n)
{
	if (r->pos > r->len || n > r->len - r->pos)
		return -EBADMSG;
	*p = r->buf + r->pos;
	r->pos += n;
	return 0;
}

int dns_read_copy(struct dns_reader *r, void *v, size_t n)
{
	const uint8_t *p;
	int rc = dns_read_bytes(r, &p, n);

	if (rc == 0)
		memcpy(v, p, n);
	return rc;
}

int dns_skip(struct dns_reader *r, size_t n)
{
	const uint8_t *p;

	return dns_read_bytes(r, &p, n);
}

int dns_read_u8(struct dns_reader *r, uint8_t *v)
{
	const uint8_t *p;

	if (dns_read_bytes(r, &p, 1) < 0)
		return -EBADMSG;
	*v = p[0];
	return 0;
}

int dns_read_u16(struct dns_reader *r, uint16_t *v)
{
	const uint8_t *p;

	if (dns_read_bytes(r, &p, 2) < 0)
		return -EBADMSG;
	*v = (uint16_t)(p[0] << 8 | p[1]);
	return 0;
}

int dns_read_u32(struct dns_reader *r, uint32_t *v)
{
	const uint8_t *p;

	if (dns_read_bytes(r, &p, 4) < 0)
		return -EBADMSG;
	*v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
	     p[3];
	return 0;
}

int dns_read_header(struct dns_reader *r, struct dns_header *h)
{
	if (dns_read_u16(r, &h->id) < 0 || dns_read_u16(r, &h->flags) < 0 ||
	    dns_read_u16(r, &h->qd) < 0 || dns_read_u16(r, &h->an) < 0 ||
	    dns_read_u16(r, &h->ns) < 0 || dns_read_u16(r, &h->ar) < 0)
		return -EBADMSG;
	return 0;
}

int dns_read_name(struct dns_reader *r, uint8_t *out, size_t *outlen)
{
	size_t pos = r->pos, start = r->pos, end = 0, n = 0;
	unsigned int hops = 0;

	for (;;) {
		uint8_t c;

		if (pos >= r->len)
			return -EBADMSG;
		c = r->buf[pos];
		if ((c & 0xc0) == 0xc0) {
			size_t target;

			if (r->len - pos < 2 || ++hops > DNS_MAX_HOPS)
				return -EBADMSG;
			target = (size_t)(c & 0x3f) << 8 | r->buf[pos + 1];
			if (target >= start)
				return -EBADMSG;
			if (hops == 1)
				end = pos + 2;
			pos = start = target;
			continue;
		}
		if (c & 0xc0)
			return -EBADMSG; /* 0x40, 0x80: reserved types */
		if ((size_t)c + 1 > DNS_MAX_NAME - n || c >= r->len - pos)
			return -EBADMSG;
		memcpy(out + n, r->buf + pos, (size_t)c + 1);
		n += (size_t)c + 1;
		pos += (size_t)c + 1;
		if (c == 0)
			break;
	}
	r->pos = hops ? end : pos;
	*outlen = n;
	return 0;
}

int dns_read_rr(struct dns_reader *r, int section, struct dns_rr *rr,
		uint8_t *owner)
{
	if (dns_read_name(r, owner, &rr->owner_len) < 0 ||
	    dns_read_u16(r, &rr->type) < 0 ||
	    dns_read_u16(r, &rr->rclass) < 0 || dns_read_u32(r, &rr->ttl) < 0 ||
	    dns_read_u16(r, &rr->rdlen) < 0 ||
	    dns_read_bytes(r, &rr->rdata, rr->rdlen) < 0)
		return -EBADMSG;
	rr->section = section;
	rr->owner = owner;
	if (rr->rclass == 1 && rr->type == DNS_TYPE_A && rr->rdlen != 4)
		return -EBADMSG;
	if (rr->rclass == 1 && rr->type == DNS_TYPE_AAAA && rr->rdlen != 16)
		return -EBADMSG;
	return 0;
}

/* ---- names ---- */

static uint8_t ascii_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + ('a' - 'A')) : c;
}

/* Length octets are at most 63, below 'A', so they are never changed. */
void dns_name_lower(uint8_t *wire, size_t len)
{
	for (size_t i = 0; i < len; i++)
		wire[i] = ascii_lower(wire[i]);
}

bool dns_name_equal(const uint8_t *a, size_t alen, const uint8_t *b,
		    size_t blen)
{
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++)
		if (ascii_lower(a[i]) != ascii_lower(b[i]))
			return false;
	return true;
}

static bool text_plain(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

void dns_name_to_text(const uint8_t *wire, size_t len, char *buf, size_t cap)
{
	size_t i = 0, o = 0;

	if (cap == 0)
		return;
	buf[0] = '\0';
	if (len == 0 || wire[0] == 0) {
		if (cap >= 2)
			memcpy(buf, ".", 2);
		return;
	}
	while (i < len && wire[i] != 0) {
		size_t l = wire[i++];

		if (o > 0) {
			if (cap - o < 2)
				break;
			buf[o++] = '.';
		}
		for (size_t k = 0; k < l && i < len; k++, i++) {
			uint8_t c = wire[i];

			if (text_plain(c)) {
				if (cap - o < 2)
					goto out;
				buf[o++] = (char)c;
			} else {
				if (cap - o < 5)
					goto out;
				snprintf(buf + o, 5, "\\%03u", c);
				o += 4;
			}
		}
	}
out:
	buf[o] = '\0';
}

/* After a backslash: \DDD (decimal, at most 255) or \X. */
static int parse_escape(const char **p, uint8_t *v)
{
	const char *s = *p;

	if (s[0] >= '0' && s[0] <= '9') {
		unsigned int d = 0;

		for (int k = 0; k < 3; k++) {
			if (s[k] < '0' || s[k] > '9')
				return -EINVAL;
			d = d * 10 + (unsigned int)(s[k] - '0');
		}
		if (d > 255)
			return -EINVAL;
		*v = (uint8_t)d;
		*p = s + 3;
		return 0;
	}
	if (s[0] == '\0')
		return -EINVAL;
	*v = (uint8_t)s[0];
	*p = s + 1;
	return 0;
}

int dns_name_from_text(const char *text, uint8_t *out, size_t *outlen)
{
	size_t n = 0;
	const char *p = text;

	if (strcmp(text, ".") == 0) {
		out[0] = 0;
		*outlen = 1;
		return 0;
	}
	if (*p == '\0')
		return -EINVAL;
	while (*p != '\0') {
		size_t lab = n++; /* length octet */

		if (n >= DNS_MAX_NAME)
			return -EINVAL;
		while (*p != '\0' && *p != '.') {
			uint8_t c = (uint8_t)*p++;

			if (c == '\\' && parse_escape(&p, &c) < 0)
				return -EINVAL;
			if (n - lab - 1 >= DNS_MAX_LABEL ||
			    n + 1 >= DNS_MAX_NAME)
				return -EINVAL;
			out[n++] = c;
		}
		if (n - lab - 1 == 0)
			return -EINVAL; /* empty label */
		out[lab] = (uint8_t)(n - lab - 1);
		if (*p == '.')
			p++;
	}
	out[n++] = 0;
	*outlen = n;
	return 0;
}

const char *dns_type_name(uint16_t type, char *buf, size_t cap)
{
	return qtype_name(type, buf, cap);
}

/* ---- writer ---- */

void dns_writer_init(struct dns_writer *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->cap = cap;
	w->pos = 0;
	w->err = 0;
	w->ncomp = 0;
}

void dns_write_bytes(struct dns_writer *w, const void *p, size_t n)
{
	if (w->err)
		return;
	if (n > w->cap - w->pos) {
		w->err = -ENOSPC;
		return;
	}
	if (n > 0)
		memcpy(w->buf + w->pos, p, n);
	w->pos += n;
}

void dns_write_u8(struct dns_writer *w, uint8_t v)
{
	dns_write_bytes(w, &v, 1);
}

void dns_write_u16(struct dns_writer *w, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	dns_write_bytes(w, b, 2);
}

void dns_write_u32(struct dns_writer *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16),
			(uint8_t)(v >> 8), (uint8_t)v};

	dns_write_bytes(w, b, 4);
}

void dns_write_header(struct dns_writer *w, const struct dns_header *h)
{
	dns_write_u16(w, h->id);
	dns_write_u16(w, h->flags);
	dns_write_u16(w, h->qd);
	dns_write_u16(w, h->an);
	dns_write_u16(w, h->ns);
	dns_write_u16(w, h->ar);
}

void dns_write_u16_at(struct dns_writer *w, size_t off, uint16_t v)
{
	if (w->err || off > w->pos || w->pos - off < 2)
		return;
	w->buf[off] = (uint8_t)(v >> 8);
	w->buf[off + 1] = (uint8_t)v;
}

/* Does the name written at off decompress to name (ignoring case)? */
static bool name_at_equal(const struct dns_writer *w, uint16_t off,
			  const uint8_t *name, size_t len)
{
	struct dns_reader r;
	uint8_t tmp[DNS_MAX_NAME];
	size_t tlen;

	dns_reader_init(&r, w->buf, w->pos);
	r.pos = off;
	if (dns_read_name(&r, tmp, &tlen) < 0)
		return false;
	return dns_name_equal(tmp, tlen, name, len);
}

static bool comp_find(const struct dns_writer *w, const uint8_t *name,
		      size_t len, uint16_t *off)
{
	for (size_t i = 0; i < w->ncomp; i++) {
		if (w->comp[i].len == len &&
		    name_at_equal(w, w->comp[i].off, name, len)) {
			*off = w->comp[i].off;
			return true;
		}
	}
	return false;
}

/* A name suffix of uncompressed length len starts at w->pos. */
static void comp_remember(struct dns_writer *w, size_t len)
{
	if (w->err || w->ncomp >= DNS_COMP_MAX || w->pos > 0x3fff)
		return;
	w->comp[w->ncomp].off = (uint16_t)w->pos;
	w->comp[w->ncomp].len = (uint16_t)len;
	w->ncomp++;
}

void dns_write_name(struct dns_writer *w, const uint8_t *name, size_t len,
		    bool compress)
{
	size_t i = 0;

	while (i < len && name[i] != 0 && !w->err) {
		size_t l = name[i];
		uint16_t off;

		if (compress && comp_find(w, name + i, len - i, &off)) {
			dns_write_u16(w, (uint16_t)(0xc000 | off));
			return;
		}
		if (l > len - i - 1) {
			w->err = -EINVAL; /* not a wire name: a caller bug */
			return;
		}
		comp_remember(w, len - i);
		dns_write_bytes(w, name + i, l + 1);
		i += l + 1;
	}
	dns_write_u8(w, 0);
}

void dns_write_opt_head(struct dns_writer *w, uint8_t ext_rcode, bool do_bit)
{
	dns_write_u8(w, 0); /* root owner */
	dns_write_u16(w, DNS_TYPE_OPT);
	dns_write_u16(w, DNS_EDNS_UDPSIZE);
	dns_write_u32(w, (uint32_t)ext_rcode << 24 | (do_bit ? 0x8000u : 0));
}

/* ---- queries ---- */

/* OPT: root owner, class = UDP size, TTL = ext-rcode, version, DO; its
 * options must be well-formed TLVs, and a COOKIE option a client cookie
 * (8 bytes) with or without a server cookie (8 to 32 bytes): any other
 * length is FORMERR (RFC 7873 section 5.2.2). */
static int parse_opt(const struct dns_rr *rr, size_t owner_len,
		     struct dns_query *q)
{
	struct dns_reader o;

	if (q->edns || owner_len != 1)
		return -EBADMSG;
	dns_reader_init(&o, rr->rdata, rr->rdlen);
	while (o.pos < o.len) {
		uint16_t code, olen;

		if (dns_read_u16(&o, &code) < 0 ||
		    dns_read_u16(&o, &olen) < 0 || dns_skip(&o, olen) < 0)
			return -EBADMSG;
		if (code == DNS_OPT_COOKIE && olen != 8 &&
		    (olen < 16 || olen > 40))
			return -EBADMSG;
	}
	q->edns = true;
	q->edns_udp = rr->rclass < 512 ? 512 : rr->rclass;
	q->edns_version = (uint8_t)(rr->ttl >> 16);
	q->edns_do = (rr->ttl & 0x8000) != 0;
	return 0;
}

static enum dns_parse parse_additional(struct dns_reader *r, uint16_t arcount,
				       struct dns_query *q)
{
	for (uint16_t i = 0; i < arcount; i++) {
		struct dns_rr rr;
		uint8_t owner[DNS_MAX_NAME];

		if (dns_read_rr(r, 3, &rr, owner) < 0)
			return DNS_PARSE_FORMERR;
		if (rr.type == DNS_TYPE_OPT &&
		    parse_opt(&rr, rr.owner_len, q) < 0)
			return DNS_PARSE_FORMERR;
	}
	return DNS_PARSE_OK;
}

enum dns_parse dnsmsg_parse_query(const uint8_t *buf, size_t len,
				  struct dns_query *q)
{
	struct dns_reader r;
	struct dns_header h;
	enum dns_parse ret;

	/* Every field but the two name buffers, which are read only up to
	 * name_len: clearing all 540 bytes per query showed in profiles. */
	q->id = q->flags = 0;
	q->name_len = 0;
	q->qtype = q->qclass = 0;
	q->edns = q->edns_do = false;
	q->edns_udp = 0;
	q->edns_version = 0;
	dns_reader_init(&r, buf, len);
	if (dns_read_header(&r, &h) < 0)
		return DNS_PARSE_DROP;
	q->id = h.id;
	q->flags = h.flags;
	if (q->flags & DNS_FLAG_QR)
		return DNS_PARSE_DROP;
	if (DNS_OPCODE(q->flags) != 0)
		return DNS_PARSE_NOTIMP;
	if (h.qd != 1 || h.an != 0 || h.ns != 0)
		return DNS_PARSE_FORMERR;
	if (dns_read_name(&r, q->name, &q->name_len) < 0 ||
	    dns_read_u16(&r, &q->qtype) < 0 || dns_read_u16(&r, &q->qclass) < 0)
		goto formerr;
	ret = parse_additional(&r, h.ar, q);
	if (ret != DNS_PARSE_OK || r.pos != r.len)
		goto formerr;
	memcpy(q->lname, q->name, q->name_len);
	dns_name_lower(q->lname, q->name_len);
	if (q->edns && q->edns_version > 0)
		return DNS_PARSE_BADVERS;
	return DNS_PARSE_OK;
formerr:
	/* No question to echo; keep what a FORMERR reply may use. */
	q->name_len = 0;
	q->qtype = q->qclass = 0;
	return DNS_PARSE_FORMERR;
}

static void write_reply_head(struct dns_writer *w, const struct dns_query *q,
			     uint16_t rcode, uint16_t arcount)
{
	const struct dns_header h = {
	    .id = q->id,
	    .flags = DNS_FLAG_QR | DNS_FLAG_RA |
		     (q->flags & (DNS_FLAG_RD | DNS_FLAG_CD)) | (rcode & 0xf),
	    .qd = q->name_len > 0 ? 1 : 0,
	    .ar = arcount,
	};

	dns_write_header(w, &h);
	if (q->name_len > 0) {
		dns_write_name(w, q->name, q->name_len, false);
		dns_write_u16(w, q->qtype);
		dns_write_u16(w, q->qclass);
	}
}

ssize_t dnsmsg_build_reply(const struct dns_query *q, enum dns_rcode rcode,
			   uint16_t ede_code, const char *ede_text,
			   uint8_t *out, size_t cap)
{
	struct dns_writer w;

	dns_writer_init(&w, out, cap);
	write_reply_head(&w, q, rcode, q->edns ? 1 : 0);
	if (q->edns) {
		size_t tlen = 0, room, limit = q->edns_udp;

		dns_write_opt_head(&w, 0, q->edns_do);
		if (ede_code == DNS_EDE_NONE) {
			dns_write_u16(&w, 0);
			goto out;
		}
		/* The EDE text is cut to fit the client's UDP size, at a
		 * UTF-8 character boundary. */
		if (ede_text)
			tlen = strnlen(ede_text, 1024);
		room = limit > w.pos + 8 ? limit - w.pos - 8 : 0;
		if (tlen > room) {
			tlen = room;
			while (tlen > 0 &&
			       ((uint8_t)ede_text[tlen] & 0xc0) == 0x80)
				tlen--;
		}
		dns_write_u16(&w, (uint16_t)(tlen + 6));
		dns_write_u16(&w, DNS_EDE_OPT);
		dns_write_u16(&w, (uint16_t)(tlen + 2));
		dns_write_u16(&w, ede_code);
		dns_write_bytes(&w, ede_text, tlen);
	}
out:
	return w.err ? w.err : (ssize_t)w.pos;
}

/* RFC 8482 section 4.2: one synthesized HINFO "RFC8482" "" for the
 * question's name, so ANY never goes upstream. */
ssize_t dnsmsg_build_rfc8482(const struct dns_query *q, uint8_t *out,
			     size_t cap)
{
	static const uint8_t rdata[] = {7,   'R', 'F', 'C', '8',
					'4', '8', '2', 0};
	struct dns_writer w;

	dns_writer_init(&w, out, cap);
	write_reply_head(&w, q, DNS_RCODE_NOERROR, q->edns ? 1 : 0);
	dns_write_u16(&w, 0xc000 | DNS_HEADER_LEN); /* the question's name */
	dns_write_u16(&w, DNS_TYPE_HINFO);
	dns_write_u16(&w, q->qclass);
	dns_write_u32(&w, DNSMSG_RFC8482_TTL);
	dns_write_u16(&w, sizeof(rdata));
	dns_write_bytes(&w, rdata, sizeof(rdata));
	if (q->edns) {
		dns_write_opt_head(&w, 0, q->edns_do);
		dns_write_u16(&w, 0);
	}
	if (!w.err && w.pos >= DNS_HEADER_LEN)
		out[7] = 1; /* ANCOUNT */
	return w.err ? w.err : (ssize_t)w.pos;
}

ssize_t dnsmsg_build_badvers(const struct dns_query *q, uint8_t *out,
			     size_t cap)
{
	struct dns_writer w;

	dns_writer_init(&w, out, cap);
	write_reply_head(&w, q, DNS_BADVERS & 0xf, 1);
	dns_write_opt_head(&w, DNS_BADVERS >> 4, q->edns_do);
	dns_write_u16(&w, 0);
	return w.err ? w.err : (ssize_t)w.pos;
}

ssize_t dnsmsg_build_header_error(const uint8_t *buf, size_t len,
				  enum dns_rcode rcode, uint8_t *out,
				  size_t cap)
{
	struct dns_reader r;
	struct dns_writer w;
	struct dns_header h = {0};

	dns_reader_init(&r, buf, len);
	if (dns_read_u16(&r, &h.id) < 0 || dns_read_u16(&r, &h.flags) < 0)
		return -EINVAL;
	/* Only ID, opcode and RD of the query survive; no counts. */
	h.flags = DNS_FLAG_QR | (h.flags & 0x7800) | (h.flags & DNS_FLAG_RD) |
		  (rcode & 0xf);
	dns_writer_init(&w, out, cap);
	dns_write_header(&w, &h);
	return w.err ? w.err : (ssize_t)w.pos;
}

ssize_t dnsmsg_build_upstream_query(const struct dns_query *q, uint16_t id,
				    uint8_t *out, size_t cap)
{
	const struct dns_header h = {
	    .id = id,
	    .flags = DNS_FLAG_RD | (q->flags & DNS_FLAG_CD),
	    .qd = 1,
	    .ar = 1,
	};
	struct dns_writer w;

	if (q->name_len == 0)
		return -EINVAL;
	dns_writer_init(&w, out, cap);
	dns_write_header(&w, &h);
	dns_write_name(&w, q->lname, q->name_len, false);
	dns_write_u16(&w, q->qtype);
	dns_write_u16(&w, q->qclass);
	dns_write_opt_head(&w, 0, q->edns_do);
	dns_write_u16(&w, 0);
	return w.err ? w.err : (ssize_t)w.pos;
}

size_t dnsmsg_question_key(const struct dns_query *q, uint8_t *key)
{
	size_t n = q->name_len;

	memcpy(key, q->lname, n);
	key[n++] = (uint8_t)(q->qtype >> 8);
	key[n++] = (uint8_t)q->qtype;
	key[n++] = (uint8_t)(q->qclass >> 8);
	key[n++] = (uint8_t)q->qclass;
	key[n++] = q->edns_do ? 1 : 0;
	key[n++] = (q->flags & DNS_FLAG_CD) ? 1 : 0;
	return n;
}
