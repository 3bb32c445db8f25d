#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fail closed when the set is full (invariant 2): with "sets": {"maxelem":
# 8}, big.allowed.test (60 A records) cannot all go into dnsfence4, so the
# client gets SERVFAIL, never the addresses; the daemon logs one line
# naming the set and the kernel's reason ("Hash is full"), counts it in
# add_fail_full (SIGUSR1 stats line), does not crash, and keeps serving: an
# allowed name whose address is already in the set still resolves, a new
# address gets SERVFAIL too, and AAAA (dnsfence6, not full) is unaffected.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["*.allowed.test"]' sets='{"maxelem": 8}'
pid="$DF_DNSFENCE_PID"

grep -q "maxelem 8" <<<"$(wl ipset list dnsfence4)" ||
	fail "expected dnsfence4 to be created with maxelem 8: $(wl ipset list -t dnsfence4 | tr '\n' ' ')"

df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_in_set dnsfence4 198.18.1.10
ok "www.allowed.test -> 198.18.1.10, in dnsfence4 (1 of 8)"

df_dig +tcp big.allowed.test A
expect_rcode SERVFAIL
expect_answer_empty
ok "big.allowed.test (60 addresses, set of 8) -> SERVFAIL, no address"
n="$(df_set_members dnsfence4 | wc -l)"
[ "$n" -le 8 ] || fail "dnsfence4 has $n members, more than maxelem 8"
echo "dnsfence4 now has $n members: $(df_set_members dnsfence4 | sort -V | tr '\n' ' ')"

expect_log_contains "add to set dnsfence4 failed"
line="$(grep -F "add to set dnsfence4 failed" "$DF_DNSFENCE_LOG" | head -n 1)"
grep -qiF "Hash is full" <<<"$line" || fail "expected the log line to give the kernel's reason (Hash is full): $line"
ok "logged: ${line#* }"

# Again, over UDP (the client retries over TCP itself), and a new address.
df_dig big.allowed.test A +tcp
expect_rcode SERVFAIL
if [ "$n" -ge 8 ]; then
	df_dig a.b.allowed.test A
	expect_rcode SERVFAIL
	expect_answer_empty
	expect_not_in_set dnsfence4 198.18.1.11
	ok "a new address (a.b.allowed.test, 198.18.1.11) into the full set -> SERVFAIL"
fi

# Still serving: an address already in the set, another family, a denied name.
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
df_dig +tcp www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
df_dig www.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
expect_in_set dnsfence6 2001:db8:1::10
df_dig "full-$$.evil.test" A
expect_rcode NXDOMAIN
ok "still serving: www.allowed.test A (already in the set) and AAAA -> NOERROR, denied -> NXDOMAIN"

# Only one log line per cause until adds succeed again (no log flood).
# Every address of big.allowed.test failed its add, twice, and
# a.b.allowed.test's too when the set filled up: one cause, so one line
# per run of failures. An add that lands in between (under load, an
# upstream refresh of www.allowed.test's address already in the set) ends
# a run with a "succeed again" line; that may come after the last failure
# too. So in log order, two failure lines never follow each other without
# a "succeed again" between them.
seq="$(grep -oE "add to set dnsfence4 failed|adds to set dnsfence4 succeed again" "$DF_DNSFENCE_LOG" |
	sed -e 's/^add to set.*/F/' -e 's/^adds to set.*/R/' | tr -d '\n')"
c="$(tr -cd F <<<"$seq" | wc -c)"
[ "$c" -ge 1 ] || fail "no 'add to set dnsfence4 failed' line at all"
[[ "$seq" != *FF* ]] || fail "two 'add to set dnsfence4 failed' lines with no recovery between them (failures then recoveries: $seq):
$(grep -F "add to set dnsfence4" "$DF_DNSFENCE_LOG")"
ok "one log line for the full set, for every failed add"

kill -USR1 "$pid"
df_wait_log 20 "add_fail_full=" || fail "no stats line after SIGUSR1"
full="$(grep -o 'add_fail_full=[0-9]*' "$DF_DNSFENCE_LOG" | tail -n 1)"
[ "${full#*=}" -gt 0 ] || fail "expected add_fail_full > 0 in the stats line, saw $full"
ok "SIGUSR1 stats: $full, $(grep -o 'servfail=[0-9]*' "$DF_DNSFENCE_LOG" | tail -n 1)"
expect_dnsfence_running
