#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An allowed name is answered with the zone's records, through dig and the
# glibc resolver; an exact entry matches only that name, "*.allowed.test"
# matches every name below it at any depth (not the apex); a CNAME into a
# zone that is not on the list is chased, because only the question name is
# checked.
source "$(dirname "$0")/lib.sh"
df_setup

# --- exact entries
df_start_dnsfence allow='["www.allowed.test", "alias.allowed.test"]'

df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_answer_count A 1
ok "dig www.allowed.test A -> 198.18.1.10"

df_dig www.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
ok "dig www.allowed.test AAAA -> 2001:db8:1::10"

addrs="$(df_getent www.allowed.test)"
[ "$DF_DIG_RC" -eq 0 ] || fail "getent ahosts www.allowed.test exited $DF_DIG_RC"
grep -qx 198.18.1.10 <<<"$addrs" || fail "getent ahosts www.allowed.test: expected 198.18.1.10, saw: $addrs"
grep -qx 2001:db8:1::10 <<<"$addrs" || fail "getent ahosts www.allowed.test: expected 2001:db8:1::10, saw: $addrs"
ok "getent ahosts www.allowed.test (glibc resolver) -> 198.18.1.10, 2001:db8:1::10"

df_dig alias.allowed.test A
expect_rcode NOERROR
expect_answer_contains $'CNAME\ttarget.cdn.test.'
expect_answer_contains 198.18.1.20
ok "dig alias.allowed.test A -> CNAME target.cdn.test. -> 198.18.1.20"

addrs="$(df_getent alias.allowed.test)"
grep -qx 198.18.1.20 <<<"$addrs" || fail "getent ahosts alias.allowed.test: expected 198.18.1.20, saw: $addrs"
grep -qx 2001:db8:1::20 <<<"$addrs" || fail "getent ahosts alias.allowed.test: expected 2001:db8:1::20, saw: $addrs"
ok "getent ahosts alias.allowed.test -> the CNAME target's A and AAAA"

# The CNAME target itself is not on the list, nor is a name below an exact entry.
for name in target.cdn.test a.www.allowed.test a.b.allowed.test; do
	df_dig "$name" A
	expect_rcode NXDOMAIN
	expect_answer_empty
done
ok "target.cdn.test, a.www.allowed.test, a.b.allowed.test (not listed) -> NXDOMAIN"

# --- a wildcard entry
df_stop_dnsfence
df_start_dnsfence allow='["*.allowed.test"]'

for spec in www.allowed.test=198.18.1.10 a.b.allowed.test=198.18.1.11 \
	deep.a.b.allowed.test=198.18.1.12; do
	df_dig "${spec%%=*}" A
	expect_rcode NOERROR
	expect_answer_contains "${spec#*=}"
done
ok "*.allowed.test covers www, a.b and deep.a.b (any depth)"

addrs="$(df_getent deep.a.b.allowed.test)"
grep -qx 198.18.1.12 <<<"$addrs" || fail "getent ahosts deep.a.b.allowed.test: expected 198.18.1.12, saw: $addrs"
ok "getent ahosts deep.a.b.allowed.test -> 198.18.1.12"

# The apex has no A record: forwarded it would be NOERROR with no answer.
df_dig allowed.test A
expect_rcode NXDOMAIN
ok "*.allowed.test does not cover allowed.test itself -> NXDOMAIN"

df_dig WwW.AlLoWeD.TeSt A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ok "matching ignores case: WwW.AlLoWeD.TeSt -> 198.18.1.10"
