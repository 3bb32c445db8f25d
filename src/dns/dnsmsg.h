/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dnsmsg: bounds-checked reading of DNS wire format (the one reader),
 * the writer, and the messages dnsfence builds from a client's query:
 * local replies and upstream queries. What is done with an upstream
 * answer (rewrite, snoop) is dnsrr.h. */
#ifndef DNSFENCE_DNSMSG_H
#define DNSFENCE_DNSMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/netaddr.h"

#define DNS_HEADER_LEN	 12
#define DNS_MAX_NAME	 255
#define DNS_MAX_LABEL	 63
#define DNS_MAX_UDP	 65535
#define DNS_EDNS_UDPSIZE 1232 /* what we advertise upstream and accept */

enum dns_rcode {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
};

enum dns_type {
	DNS_TYPE_A = 1,
	DNS_TYPE_NS = 2,
	DNS_TYPE_CNAME = 5,
	DNS_TYPE_SOA = 6,
	DNS_TYPE_HINFO = 13,
	DNS_TYPE_PTR = 12,
	DNS_TYPE_MX = 15,
	DNS_TYPE_TXT = 16,
	DNS_TYPE_AAAA = 28,
	DNS_TYPE_SRV = 33,
	DNS_TYPE_OPT = 41,
	DNS_TYPE_SVCB = 64,
	DNS_TYPE_HTTPS = 65,
	DNS_TYPE_IXFR = 251,
	DNS_TYPE_AXFR = 252,
	DNS_TYPE_ANY = 255,
};

/* RFC 8914 info-codes we use. */
#define DNS_EDE_NONE	      0xffff
#define DNS_EDE_OTHER	      0
#define DNS_EDE_BLOCKED	      15
#define DNS_EDE_FILTERED      17
#define DNS_EDE_PROHIBITED    18
#define DNS_EDE_NOT_SUPPORTED 21

/* Flags word bits (host order). */
#define DNS_FLAG_QR	  0x8000
#define DNS_FLAG_AA	  0x0400
#define DNS_FLAG_TC	  0x0200
#define DNS_FLAG_RD	  0x0100
#define DNS_FLAG_RA	  0x0080
#define DNS_FLAG_AD	  0x0020
#define DNS_FLAG_CD	  0x0010
#define DNS_OPCODE(flags) (((flags) >> 11) & 0xf)
#define DNS_RCODE(flags)  ((flags)&0xf)

/* The fixed 12-byte header, host order. */
struct dns_header {
	uint16_t id, flags, qd, an, ns, ar;
};

/* The one bounds-checked reader for untrusted bytes. Every read checks the
 * remaining length and returns -EBADMSG instead of reading past the end. */
struct dns_reader {
	const uint8_t *buf;
	size_t len;
	size_t pos;
};

void dns_reader_init(struct dns_reader *r, const uint8_t *buf, size_t len);
int dns_read_u8(struct dns_reader *r, uint8_t *v);
int dns_read_u16(struct dns_reader *r, uint16_t *v);
int dns_read_u32(struct dns_reader *r, uint32_t *v);
int dns_read_bytes(struct dns_reader *r, const uint8_t **p, size_t n);
/* n bytes copied to v as they are (host order: netlink's own headers). */
int dns_read_copy(struct dns_reader *r, void *v, size_t n);
int dns_skip(struct dns_reader *r, size_t n);
/* The 12-byte header at r->pos. 0 or -EBADMSG. */
int dns_read_header(struct dns_reader *r, struct dns_header *h);
/* Read a possibly compressed name at r->pos into out (uncompressed wire
 * form, at most DNS_MAX_NAME bytes, root label included); r->pos moves past
 * the name as it stands in the message. Pointers must point strictly
 * backwards of the label they stand in; labels over 63 bytes, names over
 * 255 bytes and the reserved label types 0x40/0x80 are -EBADMSG. */
int dns_read_name(struct dns_reader *r, uint8_t *out, size_t *outlen);

/* Names. */
void dns_name_lower(uint8_t *wire, size_t len);
/* Dotted text of a wire name ("www.example.com", "." for the root);
 * bytes outside [A-Za-z0-9-_] and dots inside labels are escaped \DDD.
 * buf of at least DNS_NAME_STRLEN. */
#define DNS_NAME_STRLEN (DNS_MAX_NAME * 4 + 2)
void dns_name_to_text(const uint8_t *wire, size_t len, char *buf, size_t cap);
/* Wire form of a dotted name; -EINVAL for empty or oversize labels. */
int dns_name_from_text(const char *text, uint8_t *out, size_t *outlen);
/* Writes "A", "AAAA", ... or "TYPE123" into buf and returns buf. */
const char *dns_type_name(uint16_t type, char *buf, size_t cap);

/* A client's query. */
struct dns_query {
	uint16_t id;
	uint16_t flags;
	/* the name's wire form, name_len bytes of each (the rest is not
	 * cleared by dnsmsg_parse_query) */
	uint8_t name[DNS_MAX_NAME];  /* as the client wrote it (case kept) */
	uint8_t lname[DNS_MAX_NAME]; /* lower case */
	size_t name_len;
	uint16_t qtype, qclass;
	bool edns;	      /* the client sent an OPT record */
	uint16_t edns_udp;    /* its UDP payload size, at least 512 */
	bool edns_do;	      /* DO bit */
	uint8_t edns_version; /* non-zero is answered with BADVERS */
};

enum dns_parse {
	DNS_PARSE_OK = 0,
	DNS_PARSE_DROP,	   /* shorter than a header, or QR set: no reply */
	DNS_PARSE_FORMERR, /* has a header, but the rest does not parse */
	DNS_PARSE_NOTIMP,  /* opcode other than QUERY */
	DNS_PARSE_BADVERS, /* EDNS version > 0 */
};

/* Parse a query: one question, no answer/authority records, at most one
 * OPT in the additional section. q->id and q->flags are filled in whenever
 * a header was present, so that an error reply can be built. */
enum dns_parse dnsmsg_parse_query(const uint8_t *buf, size_t len,
				  struct dns_query *q);

/* Reply with rcode to q, question echoed when q->name_len > 0. When the
 * client sent EDNS, the reply carries an OPT (our UDP size) and, if
 * ede_code != DNS_EDE_NONE, an Extended DNS Error with ede_text. RD and
 * CD are copied, RA is set. Returns the length or -ENOSPC. */
ssize_t dnsmsg_build_reply(const struct dns_query *q, enum dns_rcode rcode,
			   uint16_t ede_code, const char *ede_text,
			   uint8_t *out, size_t cap);
/* BADVERS (extended rcode 16) to a query whose EDNS version is above 0:
 * header rcode 0, question echoed, and an OPT of version 0 carrying the
 * upper rcode bits (1), our UDP size and the client's DO bit. Returns the
 * length or -ENOSPC. */
/* The answer to ANY (RFC 8482 section 4.2): NOERROR with one synthesized
 * HINFO "RFC8482" "" of DNSMSG_RFC8482_TTL seconds (the RFC suggests a
 * long one), built here: nothing goes upstream. Length or -errno. */
#define DNSMSG_RFC8482_TTL 3600
ssize_t dnsmsg_build_rfc8482(const struct dns_query *q, uint8_t *out,
			     size_t cap);
ssize_t dnsmsg_build_badvers(const struct dns_query *q, uint8_t *out,
			     size_t cap);
/* FORMERR/NOTIMP for a message of which only the header is usable: ID and
 * opcode copied, no question. buf must be at least DNS_HEADER_LEN. */
ssize_t dnsmsg_build_header_error(const uint8_t *buf, size_t len,
				  enum dns_rcode rcode, uint8_t *out,
				  size_t cap);
/* The query sent upstream: built afresh from (lname, qtype, qclass), with
 * id, RD set, CD copied from the client, and our own OPT
 * (DNS_EDNS_UDPSIZE, DO copied). Nothing else of the client's query. */
ssize_t dnsmsg_build_upstream_query(const struct dns_query *q, uint16_t id,
				    uint8_t *out, size_t cap);
/* The key of that upstream question, into key (DNSMSG_KEY_MAX bytes):
 * lower-case name, type, class and the two bits that change what the
 * upstream returns (DO, CD). Returns its length. */
#define DNSMSG_KEY_MAX (DNS_MAX_NAME + 6)
size_t dnsmsg_question_key(const struct dns_query *q, uint8_t *key);

/* One resource record as the rewrite and snoop see it. Names are
 * uncompressed wire form. */
struct dns_rr {
	int section; /* 1 answer, 2 authority, 3 additional */
	const uint8_t *owner;
	size_t owner_len;
	uint16_t type, rclass;
	uint32_t ttl;
	const uint8_t *rdata; /* as in the message (may hold pointers) */
	uint16_t rdlen;
};

/* Read one resource record at r->pos into rr (section set to the value
 * given); owner receives the uncompressed owner name (DNS_MAX_NAME bytes).
 * rr->rdata points into r->buf. A and AAAA records of class IN must have
 * 4 and 16 bytes of rdata. 0 or -EBADMSG. */
int dns_read_rr(struct dns_reader *r, int section, struct dns_rr *rr,
		uint8_t *owner);
/* Case-insensitive (ASCII) equality of two uncompressed wire names. */
bool dns_name_equal(const uint8_t *a, size_t alen, const uint8_t *b,
		    size_t blen);

/* Writer for the messages dnsfence builds. Errors are sticky: after the
 * first write that does not fit, err is -ENOSPC and every later write is
 * a no-op, so a builder checks once at the end. Names written with
 * compress set may become pointers to names written earlier (matched
 * case-insensitively); every name written is remembered as a target. */
#define DNS_COMP_MAX 128
struct dns_writer {
	uint8_t *buf;
	size_t cap;
	size_t pos;
	int err;
	size_t ncomp;
	struct {
		uint16_t off; /* where a name suffix starts in buf */
		uint16_t len; /* its uncompressed wire length */
	} comp[DNS_COMP_MAX];
};

void dns_writer_init(struct dns_writer *w, uint8_t *buf, size_t cap);
/* The one writer of a message header (every message we build starts
 * with it). */
void dns_write_header(struct dns_writer *w, const struct dns_header *h);
void dns_write_u8(struct dns_writer *w, uint8_t v);
void dns_write_u16(struct dns_writer *w, uint16_t v);
void dns_write_u32(struct dns_writer *w, uint32_t v);
void dns_write_bytes(struct dns_writer *w, const void *p, size_t n);
/* Overwrite two bytes already written at off (counts, rdlength). */
void dns_write_u16_at(struct dns_writer *w, size_t off, uint16_t v);
void dns_write_name(struct dns_writer *w, const uint8_t *name, size_t len,
		    bool compress);
/* Our OPT record: root owner, DNS_EDNS_UDPSIZE, the extended rcode's upper
 * bits, version 0, DO as given; the caller writes rdlength and options. */
void dns_write_opt_head(struct dns_writer *w, uint8_t ext_rcode, bool do_bit);

#endif
