// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_query: a client's query as the server handles it. Parse it, then
 * build whatever the server would send: the local reply with an EDE, the
 * upstream query, BADVERS, or a header-only error. The upstream query we
 * build must parse back as a clean query of the same question, and every
 * reply must fit the client's UDP size.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns/dnsmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_upstream(const struct dns_query *q);
static void check_reply(const struct dns_query *q);

static void check_upstream(const struct dns_query *q)
{
	uint8_t out[DNS_MAX_UDP];
	struct dns_query back;
	ssize_t n = dnsmsg_build_upstream_query(q, 0x1234, out, sizeof(out));

	if (n < 0)
		abort();
	if (dnsmsg_parse_query(out, (size_t)n, &back) != DNS_PARSE_OK)
		abort();
	if (back.id != 0x1234 || back.name_len != q->name_len ||
	    memcmp(back.name, q->lname, q->name_len) != 0 ||
	    back.qtype != q->qtype || back.qclass != q->qclass || !back.edns ||
	    back.edns_do != q->edns_do)
		abort();
}

static void check_reply(const struct dns_query *q)
{
	uint8_t out[DNS_MAX_UDP];
	char text[DNS_NAME_STRLEN + 64], name[DNS_NAME_STRLEN];
	ssize_t n;
	size_t max = q->edns ? q->edns_udp : 512;

	dns_name_to_text(q->name, q->name_len, name, sizeof(name));
	strcpy(text, name);
	strcat(text, " is not on the dnsfence allowlist");
	n = dnsmsg_build_reply(q, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, text,
			       out, sizeof(out));
	if (n < 0 || (size_t)n > (max > 512 ? max : 512))
		abort();
	n = dnsmsg_build_reply(q, DNS_RCODE_REFUSED, DNS_EDE_NONE, NULL, out,
			       512);
	if (n < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	uint8_t out[512];
	ssize_t n = 0;

	switch (dnsmsg_parse_query(data, size, &q)) {
	case DNS_PARSE_OK:
		check_reply(&q);
		check_upstream(&q);
		break;
	case DNS_PARSE_BADVERS:
		n = dnsmsg_build_badvers(&q, out, sizeof(out));
		break;
	case DNS_PARSE_FORMERR:
		n = dnsmsg_build_reply(&q, DNS_RCODE_FORMERR, DNS_EDE_NONE,
				       NULL, out, sizeof(out));
		if (n >= 0)
			n = dnsmsg_build_header_error(
			    data, size, DNS_RCODE_FORMERR, out, sizeof(out));
		break;
	case DNS_PARSE_NOTIMP:
		n = dnsmsg_build_header_error(data, size, DNS_RCODE_NOTIMP, out,
					      sizeof(out));
		break;
	case DNS_PARSE_DROP:
		break;
	}
	if (n < 0)
		abort();
	return 0;
}
