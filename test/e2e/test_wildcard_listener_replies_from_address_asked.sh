#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# With a wildcard listener (0.0.0.0:53, [::]:53), a UDP reply leaves from
# the address the query was sent to (IP_PKTINFO / IPV6_RECVPKTINFO), not
# from whatever address routing picks for the client: dig, like every stub
# resolver, drops a reply from another address. The workload has a second
# local address on lo (198.18.9.9, 2001:db8:9::9) and asks it from its
# veth address; routing alone would answer from the veth address. Both a
# reply given at once (denied name) and one given later (upstream answer)
# are checked, IPv4 and IPv6.
source "$(dirname "$0")/lib.sh"
df_setup
wl ip addr add 198.18.9.9/32 dev lo
wl ip addr add 2001:db8:9::9/128 dev lo nodad
df_start_dnsfence allow='["www.allowed.test"]' listen='["0.0.0.0:53", "[::]:53"]'

ask() {
	local src=$1 dst=$2 name=$3
	df_dig -b "$src" @"$dst" "$name" A +time=2 +tries=1
}
ask "$DF_WL4" 198.18.9.9 "x-$$.evil.test"
expect_rcode NXDOMAIN
ok "IPv4: denied name asked at 198.18.9.9 from $DF_WL4 -> NXDOMAIN from 198.18.9.9"
ask "$DF_WL4" 198.18.9.9 www.allowed.test
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ok "IPv4: allowed name (upstream answer) -> NOERROR from 198.18.9.9"
ask "$DF_WL6" 2001:db8:9::9 "y-$$.evil.test"
expect_rcode NXDOMAIN
ok "IPv6: denied name asked at 2001:db8:9::9 from $DF_WL6 -> NXDOMAIN from 2001:db8:9::9"
ask "$DF_WL6" 2001:db8:9::9 "www.allowed.test"
expect_rcode NOERROR
ok "IPv6: allowed name -> NOERROR from 2001:db8:9::9"
# Control: the loopback address still works.
df_dig www.allowed.test A
expect_rcode NOERROR
ok "control: 127.0.0.1 answers as before"
