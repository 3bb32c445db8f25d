#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An upstream the daemon cannot reach at all: c-ares fails every server
# inside ares_send(), before the resolver has finished setting the question
# up (issue 10: it used to segfault on the first allowed query). Two ways:
# no route to the upstream (an "unreachable" route in the workload), and the
# daemon's own packets to its upstream dropped by the firewall (sendto()
# fails with EPERM). Each time: SERVFAIL, quickly, and the daemon lives on;
# a denied name is still answered (control: the daemon serves).
source "$(dirname "$0")/lib.sh"
df_setup

# 198.19.255.7 is in 198.18.0.0/15 but on no link: the workload gets a
# route that says so.
wl ip route add unreachable 198.19.255.0/24
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["198.19.255.7"]'

servfail_fast() {
	local t0 ms
	t0="$(df_now_ms)"
	df_dig "$1" A +time=5 +tries=1
	ms=$(($(df_now_ms) - t0))
	expect_rcode SERVFAIL
	expect_dnsfence_running
	[ "$ms" -le 2000 ] || fail "expected SERVFAIL within 2 s, it took $ms ms"
	ok "$2: $1 -> SERVFAIL in $ms ms, daemon alive"
}

servfail_fast www.allowed.test "no route to the upstream"
servfail_fast a.b.allowed.test "no route to the upstream, again"
df_dig "denied-$$.evil.test" A
expect_rcode NXDOMAIN
expect_dnsfence_running
ok "no route: a denied name is still answered locally -> NXDOMAIN"
expect_log_contains "unreachable"
df_stop_dnsfence

# The fence drops the daemon's packets to its (reachable) upstream.
wl ip route del unreachable 198.19.255.0/24
df_start_dnsfence allow='["*.allowed.test"]' guard_interval=3600
wl iptables -w -I OUTPUT 1 -p udp -d "$DF_UP4" --dport 53 -j DROP
wl iptables -w -I OUTPUT 1 -p tcp -d "$DF_UP4" --dport 53 -j DROP
servfail_fast www.allowed.test "daemon's packets dropped"
servfail_fast deep.a.b.allowed.test "daemon's packets dropped, again"
wl iptables -w -D OUTPUT -p udp -d "$DF_UP4" --dport 53 -j DROP
wl iptables -w -D OUTPUT -p tcp -d "$DF_UP4" --dport 53 -j DROP
# Positive control: the same daemon resolves once its packets get out
# (a name not asked before, so no remembered failure).
df_dig ttl5.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.5
ok "packets let through again: ttl5.allowed.test -> 198.18.1.5, same daemon"
