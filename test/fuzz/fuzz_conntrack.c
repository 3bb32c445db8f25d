// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_conntrack: one message of a conntrack dump as fw_apply reads it
 * before the rules stop naming a replaced upstream. conntrack_entry_matches
 * must stay inside the bytes, and a match must point at a CTA_TUPLE_ORIG
 * attribute inside them whose length field is the length it reports.
 * Any violation abort()s.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter/nfnetlink_conntrack.h>

#include "fence/conntrack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct netaddr want[2] = {
	    {.family = AF_INET, .bytes = {198, 18, 0, 1}},
	    {.family = AF_INET6, .bytes = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}}};
	const void *tuple = NULL;
	size_t len = 0;
	uint16_t zone, nla_len, nla_type;
	bool has_zone;

	if (!conntrack_entry_matches(data, size, want, 2, &tuple, &len, &zone,
				     &has_zone))
		return 0;
	if ((const uint8_t *)tuple < data || len < 4 ||
	    (const uint8_t *)tuple + len > data + size)
		abort();
	memcpy(&nla_len, tuple, 2);
	memcpy(&nla_type, (const uint8_t *)tuple + 2, 2);
	if (nla_len != len || (nla_type & 0x3fff) != CTA_TUPLE_ORIG)
		abort();
	return 0;
}
