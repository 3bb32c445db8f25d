// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_nflog: a datagram from the NFLOG socket as the daemon handles it.
 * nflog_parse walks it; each packet must come out consistent (a
 * terminated prefix, ports only with addresses of one family and only for
 * TCP/UDP), and is then explained by attrib_explain as the daemon would,
 * with and without a remembered name. The same bytes are also read as a
 * bare IPv4 and IPv6 packet. Any violation abort()s.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "observe/attrib.h"
#include "observe/nflog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_pkt(const struct nflog_pkt *p);
static void on_pkt(void *arg, const struct nflog_pkt *p);

static void check_pkt(const struct nflog_pkt *p)
{
	if (memchr(p->prefix, '\0', sizeof(p->prefix)) == NULL)
		abort();
	if (p->has_ports && !p->has_addrs)
		abort();
	if (p->has_ports && p->proto != IPPROTO_TCP && p->proto != IPPROTO_UDP)
		abort();
	if (p->has_icmp && (p->has_ports || (p->proto != IPPROTO_ICMP &&
					     p->proto != IPPROTO_ICMPV6)))
		abort();
	if (p->has_addrs &&
	    (p->src.family != p->dst.family ||
	     (p->src.family != AF_INET && p->src.family != AF_INET6)))
		abort();
}

static void on_pkt(void *arg, const struct nflog_pkt *p)
{
	static const struct config_port ports[] = {{IPPROTO_TCP, 80, 80},
						   {IPPROTO_TCP, 443, 443}};
	struct config cfg = {.ports = (struct config_port *)ports,
			     .n_ports = 2};
	struct recent_info known = {.name = "www.example.com",
				    .answered_ms = 1000,
				    .expires_ms = 61000};
	char text[ATTRIB_TEXT_MAX];
	enum attrib_reason r;

	(void)arg;
	check_pkt(p);
	if (!p->has_addrs)
		return;
	r = attrib_explain(&cfg, p, NULL, 5000, 1700000000, text, sizeof(text));
	if ((unsigned)r >= ATTRIB__COUNT || strlen(text) >= sizeof(text))
		abort();
	r = attrib_explain(&cfg, p, &known, 90000, 1700000000, text,
			   sizeof(text));
	if ((unsigned)r >= ATTRIB__COUNT || r == ATTRIB_NEVER)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nflog_pkt p;
	int n = nflog_parse(data, size, on_pkt, NULL);

	if (n < -EBADMSG || (n < 0 && n != -EBADMSG))
		abort();
	for (int fam = 0; fam < 2; fam++) {
		memset(&p, 0, sizeof(p));
		if (nflog_parse_ip(data, size, fam ? AF_INET6 : AF_INET, &p) ==
		    0)
			check_pkt(&p);
	}
	return 0;
}
