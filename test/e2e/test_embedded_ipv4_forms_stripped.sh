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
df_zone_nat64
df_setup
df_start_dnsfence allow='["nat64.allowed.test"]'

df_dig nat64.allowed.test AAAA
expect_rcode NOERROR
expect_nat64_judged
ok "169.254.169.254 as NAT64, local NAT64, 6to4 and IPv4-compatible: stripped, not in the set, logged"
ok "control: NAT64 of public 198.18.1.10 and 2001:db8:1::10 kept and in the set"
expect_dnsfence_running
