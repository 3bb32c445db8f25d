#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A repeated question is answered from dnsfence's cache: it does not reach
# the upstream again, and its TTLs count down. A cache hit still goes
# through the kernel step: with the set gone it is SERVFAIL (not an answer
# whose address is in no set; after SETS_FRESH_SECONDS), and once the set
# is back the hit puts the address into it again before answering.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]' guard_interval=3600

upstream_count() {
	df_count -iF " www.allowed.test. A IN" "$DF_TMP/unbound.log"
}

df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ttl1="$(df_answer | awk '$4 == "A" { print $2; exit }')"
[ "$(upstream_count)" -eq 1 ] || fail "expected 1 upstream query, unbound saw $(upstream_count)"
ok "first query goes upstream (TTL $ttl1)"

sleep 2.1
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ttl2="$(df_answer | awk '$4 == "A" { print $2; exit }')"
[ "$(upstream_count)" -eq 1 ] || fail "the repeat reached the upstream (unbound saw $(upstream_count) queries)"
[ "$ttl2" -le $((ttl1 - 2)) ] || fail "cached TTL did not count down: first $ttl1, 2 s later $ttl2"
ok "repeat answered from the cache, TTL $ttl1 -> $ttl2"

# The rules hold the sets: open the fence to be able to destroy one.
df_open_fence
wl ipset destroy dnsfence4
sleep 1.1 # SETS_FRESH_SECONDS: until then the last ack is trusted
df_dig www.allowed.test A
expect_rcode SERVFAIL
ok "cache hit with the set destroyed -> SERVFAIL"

wl ipset create dnsfence4 hash:ip family inet timeout 60
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
grep -q '^198\.18\.1\.10 ' <<<"$(wl ipset list dnsfence4)" ||
	fail "cache hit answered but 198.18.1.10 is not in the recreated set"
[ "$(upstream_count)" -eq 1 ] || fail "expected the hit to stay local, unbound saw $(upstream_count)"
ok "set recreated -> the cache hit puts 198.18.1.10 back before answering"
