#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Serve-stale (RFC 8767): with the upstream down, a name whose cached answer
# has expired still resolves, with a TTL of at most 30 s, and its address is
# put back into the set before the client has it: a connection made right
# after the answer gets through the fence. A name never answered before
# gets SERVFAIL (control).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
# ttl.min 1: the set entry expires with the answer (TTL 5).
df_start_dnsfence allow='["*.allowed.test"]' ttl='{"min": 1, "max": 86400}'
df_fence 80

df_ask_connect ttl5.allowed.test A 80
[ "$(df_asked_rcode)" = NOERROR ] || fail "ttl5.allowed.test: rcode $(df_asked_rcode)"
expect_connected 198.18.1.5
ok "upstream up: ttl5.allowed.test -> 198.18.1.5, connected"

sleep 7
expect_not_in_set dnsfence4 198.18.1.5
expect_fenced 198.18.1.5 80
ok "7 s later the answer and its set entry have expired: 198.18.1.5 is fenced"

df_stop_unbound
for i in 1 2; do
	df_ask_connect ttl5.allowed.test A 80
	[ "$(df_asked_rcode)" = NOERROR ] ||
		fail "upstream down, try $i: expected the stale answer, rcode $(df_asked_rcode) ($DF_OUT)"
	expect_connected 198.18.1.5
	ttl="$(awk '$1 == "198.18.1.5" { print $2 }' <<<"$DF_OUT")"
	[ "$ttl" -le 30 ] || fail "stale answer with TTL $ttl, expected at most 30"
	ok "upstream down, try $i: stale ttl5.allowed.test -> 198.18.1.5 (TTL $ttl), connected at once"
done
expect_log_contains "no answer for ttl5.allowed.test A"

df_dig "never-$$.allowed.test" A
expect_rcode SERVFAIL
ok "control: a name never answered before -> SERVFAIL"
