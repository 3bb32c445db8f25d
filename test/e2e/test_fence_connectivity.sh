#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fence as the workload (another uid, no capabilities) sees it: an
# allowed name connects on 443 (IPv4 and IPv6) right after the answer; the
# same address on a port not in "ports" (8080) is refused at once (TCP
# reset, not a timeout); an address never answered is refused; the
# workload's direct DNS to the upstream (UDP and TCP, v4 and v6) is
# blocked, while the daemon's own forwarding works.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup
df_start_listener 443
df_start_listener 8080
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443"]'

! df_connect_as $WL_UID 198.18.1.10 443 || fail "198.18.1.10:443 reachable before any answer"
ok "before the answer: 198.18.1.10:443 refused"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR
df_connect_as $WL_UID 198.18.1.10 443 || fail "allowed name's address not reachable on 443"
df_connect_as $WL_UID 2001:db8:1::10 443 || fail "allowed name's IPv6 address not reachable on 443"
ok "www.allowed.test connects on 443 (198.18.1.10 and 2001:db8:1::10) as uid $WL_UID"

t0=$(df_now_ms)
! df_connect_as $WL_UID 198.18.1.10 8080 5 || fail "198.18.1.10:8080 reachable though 8080 is not in ports"
dt=$(($(df_now_ms) - t0))
[ "$dt" -lt 2000 ] || fail "8080 was refused only after $dt ms (expected a fast reset)"
! df_connect_as $WL_UID 2001:db8:1::10 8080 5 || fail "[2001:db8:1::10]:8080 reachable"
ok "8080 refused in $dt ms (reset, v4 and v6)"

! df_connect_as $WL_UID 198.18.3.1 443 || fail "an unanswered address is reachable"
ok "unanswered 198.18.3.1:443 refused"

for srv in 198.18.0.1 2001:db8::1; do
	for proto in +notcp +tcp; do
		rc=0
		out="$(df_wl_as $WL_UID dig +time=2 +tries=1 $proto @"$srv" www.allowed.test A 2>&1)" || rc=$?
		[ "$rc" -ne 0 ] || fail "the workload's direct DNS to $srv ($proto) got an answer: $out"
	done
done
ok "the workload's direct DNS to the upstream (v4/v6, UDP/TCP) is blocked"
rc=0
out="$(wl dig +time=2 +tries=1 @198.18.0.1 www.allowed.test A 2>&1)" || rc=$?
[ "$rc" -ne 0 ] || fail "root in the workload reached the upstream directly: $out"
ok "even root in the workload cannot query the upstream directly"
df_dig evil.test A
expect_rcode NXDOMAIN
expect_answer_empty
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ok "the daemon itself still answers: evil.test NXDOMAIN, www.allowed.test forwarded"
