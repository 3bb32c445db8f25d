#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Queries over TCP are answered, also several on one connection, whether the
# client waits for each answer (dig +keepopen) or pipelines them.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test", "alias.allowed.test", "big.allowed.test"]'

df_dig +tcp www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_out_contains "(TCP)"
ok "dig +tcp www.allowed.test -> 198.18.1.10"

df_dig +tcp "denied-$$.evil.test" A
expect_rcode NXDOMAIN
expect_out_contains "EDE: 15 (Blocked)"
ok "dig +tcp denied-$$.evil.test -> NXDOMAIN with EDE 15"

# dig, several questions on one kept-open connection.
df_dig +tcp +keepopen www.allowed.test A www.allowed.test AAAA alias.allowed.test A "x-$$.evil.test" A
expect_reply
n="$(df_count 'status: NOERROR' <<<"$DF_OUT")"
[ "$n" -eq 3 ] || fail "expected 3 NOERROR replies on the kept-open connection, saw $n"
n="$(df_count 'status: NXDOMAIN' <<<"$DF_OUT")"
[ "$n" -eq 1 ] || fail "expected 1 NXDOMAIN reply on the kept-open connection, saw $n"
for want in 198.18.1.10 2001:db8:1::10 198.18.1.20; do
	expect_out_contains "$want"
done
ok "dig +tcp +keepopen, 4 questions on one connection -> all answered"

# Pipelined: all queries written at once on one connection, matched by ID.
DF_DIG_CMD="df_tcp_pipeline 127.0.0.1 ..."
DF_DIG_RC=0
DF_OUT="$(df_tcp_pipeline 127.0.0.1 www.allowed.test/A www.allowed.test/AAAA \
	"p-$$.evil.test/A" alias.allowed.test/A big.allowed.test/A 2>&1)" || DF_DIG_RC=$?
[ "$DF_DIG_RC" -eq 0 ] || fail "pipelined TCP queries: not all answered"
expected="www.allowed.test/A NOERROR 1
www.allowed.test/AAAA NOERROR 1
p-$$.evil.test/A NXDOMAIN 0
alias.allowed.test/A NOERROR 2
big.allowed.test/A NOERROR 60"
[ "$DF_OUT" = "$expected" ] || fail "pipelined TCP queries: expected
$expected"
ok "5 pipelined queries on one TCP connection -> 5 correct replies (incl. 60-record answer)"
expect_dnsfence_running
