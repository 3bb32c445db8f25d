// SPDX-License-Identifier: GPL-2.0-or-later
/* qtype: the query types the fence forwards (see qtype.h).
 *
 * Every question for an allowed name is a message to that name's
 * servers, and its type is chosen by the workload: forwarding any of the
 * 65,536 values carries 16 bits a question, plus DO and CD. So only the
 * types clients ask for in practice go upstream by default (what glibc,
 * musl, Go, browsers, mail and DANE/DNSSEC-aware stubs send); the
 * `qtypes` key adds more, one at a time. Meta types (OPT, TKEY, TSIG,
 * MAILA, MAILB, 128..255 at large), TYPE0, 65535 and the private-use
 * range 65280..65534 are never forwarded: no server answers them as data
 * (RFC 6895). ANY gets RFC 8482's synthesized HINFO from resolver/local.
 *
 * The table is pure data; the names are IANA's mnemonics. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dns/qtype.h"

struct qtype_row {
	uint16_t type;
	const char *name;
	bool common; /* forwarded without `qtypes` */
};

static const struct qtype_row rows[] = {
    {1, "A", true},	    {2, "NS", true},	       {5, "CNAME", true},
    {6, "SOA", true},	    {12, "PTR", true},	       {13, "HINFO", false},
    {15, "MX", true},	    {16, "TXT", true},	       {17, "RP", false},
    {18, "AFSDB", false},   {25, "KEY", false},	       {28, "AAAA", true},
    {29, "LOC", false},	    {33, "SRV", true},	       {35, "NAPTR", true},
    {36, "KX", false},	    {37, "CERT", false},       {39, "DNAME", false},
    {41, "OPT", false},	    {42, "APL", false},	       {43, "DS", true},
    {44, "SSHFP", true},    {45, "IPSECKEY", false},   {46, "RRSIG", false},
    {47, "NSEC", false},    {48, "DNSKEY", true},      {49, "DHCID", false},
    {50, "NSEC3", false},   {51, "NSEC3PARAM", false}, {52, "TLSA", true},
    {53, "SMIMEA", false},  {55, "HIP", false},	       {59, "CDS", false},
    {60, "CDNSKEY", false}, {61, "OPENPGPKEY", false}, {62, "CSYNC", false},
    {63, "ZONEMD", false},  {64, "SVCB", true},	       {65, "HTTPS", true},
    {99, "SPF", false},	    {108, "EUI48", false},     {109, "EUI64", false},
    {249, "TKEY", false},   {250, "TSIG", false},      {251, "IXFR", false},
    {252, "AXFR", false},   {253, "MAILB", false},     {254, "MAILA", false},
    {255, "ANY", false},    {256, "URI", false},       {257, "CAA", true},
};

#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

static const struct qtype_row *row_of(uint16_t t)
{
	for (size_t i = 0; i < N_ROWS; i++) {
		if (rows[i].type == t)
			return &rows[i];
	}
	return NULL;
}

bool qtype_is_meta(uint16_t t)
{
	return t == 0 || t == 41 || (t >= 128 && t <= 255) || t >= 65280;
}

enum qtype_verdict qtype_judge(uint16_t t, const uint16_t *extra, size_t n)
{
	const struct qtype_row *r;

	if (t == 255)
		return QTYPE_ANY;
	if (qtype_is_meta(t))
		return QTYPE_META;
	r = row_of(t);
	if (r != NULL && r->common)
		return QTYPE_FORWARD;
	for (size_t i = 0; i < n; i++) {
		if (extra[i] == t)
			return QTYPE_FORWARD;
	}
	return QTYPE_UNLISTED;
}

const char *qtype_name(uint16_t t, char *buf, size_t cap)
{
	const struct qtype_row *r = row_of(t);

	if (r != NULL)
		snprintf(buf, cap, "%s", r->name);
	else
		snprintf(buf, cap, "TYPE%u", t);
	return buf;
}

int qtype_parse(const char *s, uint16_t *t)
{
	char *end;
	unsigned long v;

	for (size_t i = 0; i < N_ROWS; i++) {
		if (strcasecmp(s, rows[i].name) == 0) {
			*t = rows[i].type;
			return 0;
		}
	}
	if (strncasecmp(s, "TYPE", 4) != 0 || s[4] < '0' || s[4] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s + 4, &end, 10);
	if (errno != 0 || *end != '\0' || v > 65535 ||
	    (s[4] == '0' && s[5] != '\0'))
		return -EINVAL;
	*t = (uint16_t)v;
	return 0;
}
