#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 5: the upstreams' addresses never enter the sets, whatever
# `allow` says. resolver.allowed.test (allowed) answers the upstream's own
# addresses 198.18.0.1 and 2001:db8::1, and the NAT64 form of 198.18.0.1;
# none of them is handed out or enters a set (that would open every
# allowed port on the resolver, e.g. a DNS-over-HTTPS service there), and
# the daemon logs a line naming the name and the address. The workload
# then cannot reach the resolver on an allowed port. Control:
# www.allowed.test, in the same answer path, enters the sets and connects.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'ZONE'
resolver IN A    198.18.0.1
resolver IN A    198.18.1.11
resolver IN AAAA 2001:db8::1
resolver IN AAAA 64:ff9b::c612:1
ZONE
df_setup
df_start_listener 443
df_start_dnsfence allow='["resolver.allowed.test", "www.allowed.test"]' \
	upstreams='["198.18.0.1", "[2001:db8::1]"]'

df_dig resolver.allowed.test A
expect_rcode NOERROR
expect_answer_lacks 198.18.0.1
expect_answer_contains 198.18.1.11
df_dig resolver.allowed.test AAAA
expect_rcode NOERROR
expect_answer_lacks 2001:db8::1
expect_answer_lacks 64:ff9b::c612:1
expect_not_in_set dnsfence4 198.18.0.1
expect_not_in_set dnsfence6 2001:db8::1
expect_not_in_set dnsfence6 64:ff9b::c612:1
expect_in_set dnsfence4 198.18.1.11
ok "resolver.allowed.test: the upstream's addresses (and their NAT64 form) stripped, not in the sets; 198.18.1.11 kept"

for a in 198.18.0.1 2001:db8::1 64:ff9b::c612:1; do
	grep -F "resolver.allowed.test" "$DF_DNSFENCE_LOG" | grep -F "upstream" | grep -wF -- "$a" >/dev/null ||
		fail "no log line names resolver.allowed.test, the upstream and $a"
done
ok "the log names the name and each upstream address it answered"

expect_fenced 198.18.0.1 443
expect_fenced 2001:db8::1 443
ok "the workload cannot reach the upstream on allowed port 443"

# Control: an ordinary allowed name enters the sets and connects.
df_ask_connect www.allowed.test A 443
[ "$(df_asked_rcode)" = NOERROR ] || fail "www.allowed.test A: $(df_asked_rcode)"
expect_connected 198.18.1.10
df_ask_connect www.allowed.test AAAA 443
expect_connected 2001:db8:1::10
ok "control: www.allowed.test enters the sets and connects (v4, v6)"
expect_dnsfence_running
