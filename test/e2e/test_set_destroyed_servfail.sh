#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fail closed (invariant 2): when dnsfence4 is destroyed under the running
# daemon, a fresh allowed A query gets SERVFAIL (never the address), and
# the daemon logs the set's name and the reason; once the set is created
# again, the same name resolves, with its address in the set, without a
# restart. AAAA (dnsfence6 still there) keeps working meanwhile.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]' guard_interval=3600

df_dig a.b.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.1.11
ok "before: a.b.allowed.test A -> 198.18.1.11, in dnsfence4"

# The rules hold the sets: open the fence to be able to destroy one.
df_open_fence
wl ipset destroy dnsfence4
df_dig www.allowed.test A
expect_rcode SERVFAIL
expect_answer_empty
expect_out_lacks 198.18.1.10
ok "dnsfence4 destroyed: www.allowed.test A -> SERVFAIL, no address"

expect_log_contains "dnsfence4"
grep -F dnsfence4 "$DF_DNSFENCE_LOG" | grep -iF "does not exist" >/dev/null ||
	fail "expected a log line naming dnsfence4 and the reason (the set does not exist)"
ok "the log names dnsfence4 and why: $(grep -F dnsfence4 "$DF_DNSFENCE_LOG" | grep -iF 'does not exist' | head -n 1 | cut -c1-160)"

# Again (the failure is not a one-off), and IPv6 is unaffected.
df_dig www.allowed.test A
expect_rcode SERVFAIL
df_dig www.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
expect_in_set dnsfence6 2001:db8:1::10
expect_dnsfence_running
ok "still SERVFAIL for A; AAAA -> 2001:db8:1::10 (dnsfence6 is fine); daemon running"

wl ipset create dnsfence4 hash:ip family inet timeout 60
expect_not_in_set dnsfence4 198.18.1.10
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_set_timeout dnsfence4 198.18.1.10 290 300
ok "dnsfence4 recreated: www.allowed.test A -> 198.18.1.10, in dnsfence4 (timeout $(df_set_timeout dnsfence4 198.18.1.10)), no restart"

# The address added before the destroy is not believed to be still there.
df_dig a.b.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.11
expect_in_set dnsfence4 198.18.1.11
ok "a.b.allowed.test (added before the destroy) -> 198.18.1.11, back in the recreated set"
expect_dnsfence_running
