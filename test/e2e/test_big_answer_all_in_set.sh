#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A big answer over TCP (big.allowed.test: 60 A records, ~1 KB): all 60
# addresses are in dnsfence4 before the client reads the answer (a connect
# to each, made at once, passes a fence that only lets set members
# through), and nothing else entered the set. Then a second big answer
# (big2.allowed.test, 60 more addresses) into a set of maxelem 100: its
# adds cannot all land, so the client gets SERVFAIL and none of the
# addresses. A connect right after the answer only proves the order while
# the kernel is slower than the client, which over TCP it seldom is; an
# answer whose adds fail shows deterministically whether the answer waited
# for them.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone < <(seq 1 60 | sed 's/.*/big2 IN A 198.18.6.&/')
df_setup
df_start_listener 8080
df_start_dnsfence allow='["big.allowed.test", "big2.allowed.test"]' sets='{"maxelem": 100}'
df_fence 8080
expect_fenced 198.18.2.1 8080
expect_fenced 198.18.2.60 8080
ok "fence: no connection to 198.18.2.x before it is in the set"

df_ask_connect +tcp big.allowed.test A 8080
[ "$(df_asked_rcode)" = NOERROR ] || fail "big.allowed.test A over TCP: expected NOERROR"
n="$(df_asked_addrs | wc -l)"
[ "$n" -eq 60 ] || fail "big.allowed.test over TCP: expected 60 addresses in the answer, saw $n"
[ "$DF_DIG_RC" -eq 0 ] || fail "big.allowed.test: not every address was connectable at once: $(grep FAIL <<<"$DF_OUT" | tr '\n' ';')"
ok "big.allowed.test over TCP: 60 addresses, each connectable right after the answer"

members="$(df_set_members dnsfence4 | sort)"
want="$(seq 1 60 | sed 's/^/198.18.2./' | sort)"
[ "$members" = "$want" ] ||
	fail "dnsfence4: expected exactly 198.18.2.1-60, saw diff: $(diff <(echo "$want") <(echo "$members") | tr '\n' ' ')"
for i in 1 30 60; do
	expect_set_timeout dnsfence4 "198.18.2.$i" 290 300
done
ok "dnsfence4 holds exactly 198.18.2.1-60, timeouts ~300"

df_dig +tcp big.allowed.test A
expect_rcode NOERROR
expect_answer_count A 60
ok "dig +tcp big.allowed.test -> 60 A"

df_dig +tcp big2.allowed.test A
expect_rcode SERVFAIL
expect_answer_empty
n="$(df_set_members dnsfence4 | wc -l)"
[ "$n" -le 100 ] || fail "dnsfence4 has $n members, more than maxelem 100"
ok "big2.allowed.test (60 more addresses, 40 places left) over TCP -> SERVFAIL, no address"
expect_dnsfence_running
