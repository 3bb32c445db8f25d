#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every address of an allowed A/AAAA answer is in the kernel set before the
# client reads the answer (a connect made at once passes a fence that only
# lets set members through), with a timeout of clamp(TTL, ttl.min,
# ttl.max) (invariant 4): www (TTL 300) ~300 in dnsfence4 and dnsfence6;
# ttl5 (TTL 5) with ttl.min 60 gets 55..60; ttlhuge (TTL 9999999) gets
# ttl.max 7200, and the client's TTL is not above ttl.max; a later answer
# with a smaller TTL for the same address (short, TTL 30, 198.18.1.6) does
# not shorten the entry, also when it comes after both processes' expiry
# windows (SETS_FRESH_SECONDS) forgot the first one's ack: the floor is the
# DNS process's record of which answers put the address there.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 8080
df_start_dnsfence allow='["www.allowed.test", "ttl5.allowed.test", "ttlhuge.allowed.test", "short.allowed.test"]' \
	ttl='{"min": 60, "max": 7200}'
df_fence 8080
expect_fenced 198.18.1.10 8080
expect_fenced 2001:db8:1::10 8080
ok "fence: no connection to an address before it is in the set"

# ttl VALUE clamped like the daemon does, for the answer's own TTL.
clamp() { local t=$1; [ "$t" -lt 60 ] && t=60; [ "$t" -gt 7200 ] && t=7200; echo "$t"; }

# --- www: A and AAAA, timeout = the answer's TTL (300)
for spec in A/dnsfence4/198.18.1.10 AAAA/dnsfence6/2001:db8:1::10; do
	IFS=/ read -r type set addr <<<"$spec"
	expect_not_in_set "$set" "$addr"
	df_ask_connect www.allowed.test "$type" 8080
	[ "$(df_asked_rcode)" = NOERROR ] || fail "www.allowed.test $type: expected NOERROR"
	expect_connected "$addr"
	ttl="$(awk -v a="$addr" '$1 == a { print $2 }' <<<"$DF_OUT")"
	[ "$ttl" -ge 290 ] && [ "$ttl" -le 300 ] || fail "www.allowed.test $type: client TTL $ttl, expected ~300"
	expect_set_timeout "$set" "$addr" $(($(clamp "$ttl") - 3)) "$(clamp "$ttl")"
	ok "www.allowed.test $type -> $addr in $set before the answer, timeout $(df_set_timeout "$set" "$addr") (TTL $ttl)"
done

# --- ttl5: TTL 5 is raised to ttl.min for the set
df_ask_connect ttl5.allowed.test A 8080
expect_connected 198.18.1.5
expect_set_timeout dnsfence4 198.18.1.5 55 60
ok "ttl5.allowed.test (TTL 5), ttl.min 60 -> set timeout $(df_set_timeout dnsfence4 198.18.1.5)"

# --- ttlhuge: TTL 9999999 is cut to ttl.max, in the set and for the client
df_ask_connect ttlhuge.allowed.test A 8080
expect_connected 198.18.1.6
ttl="$(awk '$1 == "198.18.1.6" { print $2 }' <<<"$DF_OUT")"
[ "$ttl" -le 7200 ] || fail "ttlhuge.allowed.test: the client got TTL $ttl, above ttl.max 7200"
expect_set_timeout dnsfence4 198.18.1.6 7195 7200
ok "ttlhuge.allowed.test (TTL 9999999), ttl.max 7200 -> set timeout $(df_set_timeout dnsfence4 198.18.1.6), client TTL $ttl"

df_dig ttlhuge.allowed.test A
expect_rcode NOERROR
ttl="$(df_answer | awk '$4 == "A" { print $2 }')"
[ -n "$ttl" ] && [ "$ttl" -le 7200 ] || fail "dig ttlhuge.allowed.test: client TTL '$ttl', expected <= 7200"
ok "dig ttlhuge.allowed.test: client TTL $ttl <= ttl.max"

# --- short: same address, TTL 30, past the windows: the entry keeps its
# long timeout
sleep 2
df_ask_connect short.allowed.test A 8080
expect_connected 198.18.1.6
ttl="$(awk '$1 == "198.18.1.6" { print $2 }' <<<"$DF_OUT")"
[ "$ttl" -le 30 ] || fail "short.allowed.test: expected TTL <= 30, saw $ttl"
expect_set_timeout dnsfence4 198.18.1.6 7185 7200
ok "short.allowed.test (TTL 30, same address) -> entry keeps timeout $(df_set_timeout dnsfence4 198.18.1.6)"
expect_dnsfence_running
