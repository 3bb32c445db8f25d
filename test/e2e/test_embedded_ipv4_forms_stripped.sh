#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 3 for IPv6 forms that carry an IPv4 address: nat64.allowed.test
# answers 169.254.169.254 as NAT64 (64:ff9b::a9fe:a9fe), local-use NAT64
# (64:ff9b:1::a9fe:a9fe), 6to4 (2002:a9fe:a9fe::1) and IPv4-compatible
# (::a9fe:a9fe); each is judged by the IPv4 inside: stripped from the
# answer, kept out of the set, logged. Control: the NAT64 form of a
# public address, 64:ff9b::c612:10a (198.18.1.10), is kept and enters the
# set (IPv6-only clusters with DNS64 depend on it), as does 2001:db8:1::10.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'ZONE'
nat64 IN AAAA 64:ff9b::a9fe:a9fe
nat64 IN AAAA 64:ff9b:1::a9fe:a9fe
nat64 IN AAAA 2002:a9fe:a9fe::1
nat64 IN AAAA ::a9fe:a9fe
nat64 IN AAAA 64:ff9b::c612:10a
nat64 IN AAAA 2001:db8:1::10
ZONE
df_setup
df_start_dnsfence allow='["nat64.allowed.test"]'

df_dig nat64.allowed.test AAAA
expect_rcode NOERROR
# ::a9fe:a9fe is written ::169.254.169.254 by inet_ntop (and dig).
for a in 64:ff9b::a9fe:a9fe 64:ff9b:1::a9fe:a9fe 2002:a9fe:a9fe::1 ::a9fe:a9fe; do
	shown=$a
	[ "$a" != ::a9fe:a9fe ] || shown=::169.254.169.254
	expect_answer_lacks "$a"
	expect_answer_lacks "$shown"
	expect_not_in_set dnsfence6 "$a"
	grep -F "nat64.allowed.test" "$DF_DNSFENCE_LOG" | grep -qF -- " $shown:" ||
		fail "no log line names nat64.allowed.test and $shown"
done
ok "169.254.169.254 as NAT64, local NAT64, 6to4 and IPv4-compatible: stripped, not in the set, logged"

expect_answer_contains 64:ff9b::c612:10a
expect_answer_contains 2001:db8:1::10
expect_answer_count AAAA 2
expect_in_set dnsfence6 64:ff9b::c612:10a
expect_in_set dnsfence6 2001:db8:1::10
ok "control: NAT64 of public 198.18.1.10 and 2001:db8:1::10 kept and in the set"
expect_dnsfence_running
