/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qtype: which query types go upstream for an allowed name. The common
 * data types (A, AAAA, CNAME, HTTPS, SVCB, MX, TXT, ...) do; meta and
 * private-use types never (answered locally); ANY is answered locally per
 * RFC 8482; any other data type only when the config's `qtypes` names it. */
#ifndef DNSFENCE_QTYPE_H
#define DNSFENCE_QTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum qtype_verdict {
	QTYPE_FORWARD, /* a data type a client needs */
	QTYPE_ANY,     /* RFC 8482: a synthesized HINFO, locally */
	QTYPE_META,    /* meta, reserved or private use: never forwarded */
	QTYPE_UNLISTED /* a data type neither common nor in `qtypes` */
};

#define QTYPE_STRLEN 16 /* "TYPE65535" and the longest mnemonic */

/* The verdict for type t, extra being the config's `qtypes`. */
enum qtype_verdict qtype_judge(uint16_t t, const uint16_t *extra, size_t n);
/* Meta (OPT, 128..255), reserved (0, 65535) or private use (65280..). */
bool qtype_is_meta(uint16_t t);
/* The mnemonic of t ("A", "HTTPS", "LOC"), else "TYPE<n>" (RFC 3597),
 * in buf (at least QTYPE_STRLEN bytes); returns buf. */
const char *qtype_name(uint16_t t, char *buf, size_t cap);
/* "LOC", "loc", "TYPE29": 0 and *t, or -EINVAL (not a type). */
int qtype_parse(const char *s, uint16_t *t);

#endif
