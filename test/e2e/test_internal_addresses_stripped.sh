#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Rebinding protection (invariant 3): private.allowed.test answers 10.1.2.3,
# 169.254.169.254, 127.0.0.1 and fd00::1; none of them enters a set, the
# client gets NOERROR without them, and the daemon logs a line naming the
# name and each address. With allow_cidrs ["10.0.0.0/8"], 10.1.2.3 is kept
# in the answer and added to dnsfence4, while the others are still
# stripped. (10.1.2.3 is only data here: no interface or route has it.)
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["private.allowed.test", "www.allowed.test"]'

df_dig private.allowed.test A
expect_rcode NOERROR
for a in 10.1.2.3 169.254.169.254 127.0.0.1; do
	expect_answer_lacks "$a"
done
expect_answer_count A 0
ok "private.allowed.test A -> NOERROR, no 10.1.2.3, 169.254.169.254, 127.0.0.1 in the answer"
grep -q "EDE: 17 (Filtered)" <<<"$DF_OUT" ||
	fail "the stripped answer carries no Extended DNS Error 17 (Filtered)"
ok "the stripped answer says why: EDE 17 (Filtered)"

df_dig private.allowed.test AAAA
expect_rcode NOERROR
expect_answer_lacks fd00::1
expect_answer_count AAAA 0
ok "private.allowed.test AAAA -> NOERROR, no fd00::1 in the answer"

for a in 10.1.2.3 169.254.169.254 127.0.0.1; do
	expect_not_in_set dnsfence4 "$a"
done
expect_not_in_set dnsfence6 fd00::1
[ -z "$(df_set_members dnsfence4)" ] || fail "dnsfence4 should be empty, holds: $(df_set_members dnsfence4 | tr '\n' ' ')"
[ -z "$(df_set_members dnsfence6)" ] || fail "dnsfence6 should be empty, holds: $(df_set_members dnsfence6 | tr '\n' ' ')"
ok "no internal address in dnsfence4 / dnsfence6 (both empty)"

for a in 10.1.2.3 169.254.169.254 127.0.0.1 fd00::1; do
	df_poll 20 grep -F "private.allowed.test" "$DF_DNSFENCE_LOG" ||
		fail "no log line names private.allowed.test"
	grep -F "private.allowed.test" "$DF_DNSFENCE_LOG" | grep -wF -- "$a" >/dev/null ||
		fail "expected a log line naming private.allowed.test and $a"
done
ok "the log names private.allowed.test and each stripped address"
df_dig www.allowed.test A
expect_rcode NOERROR
if grep -q "EDE:" <<<"$DF_OUT"; then fail "an answer with nothing stripped carries an EDE"; fi
ok "control: an answer with nothing stripped carries no EDE"

# getent (the glibc resolver) sees no address at all.
addrs="$(df_getent www.allowed.test)"
grep -qx 198.18.1.10 <<<"$addrs" || fail "control: getent ahosts www.allowed.test did not hand out 198.18.1.10: $DF_OUT"
addrs="$(df_getent private.allowed.test)"
for a in 10.1.2.3 169.254.169.254 127.0.0.1 fd00::1; do
	! grep -qx -- "$a" <<<"$addrs" || fail "getent ahosts private.allowed.test handed out $a"
done
ok "getent ahosts private.allowed.test hands out none of them (control: www.allowed.test -> 198.18.1.10)"

# --- the exception: allow_cidrs covers 10.0.0.0/8
df_stop_dnsfence
wl ipset flush dnsfence4
wl ipset flush dnsfence6
df_start_dnsfence allow='["private.allowed.test"]' allow_cidrs='["10.0.0.0/8"]'
expect_not_in_set dnsfence4 10.1.2.3
ok "allow_cidrs 10.0.0.0/8: 10.1.2.3 not in the set before any answer"

df_dig private.allowed.test A
expect_rcode NOERROR
expect_answer_contains 10.1.2.3
expect_answer_count A 1
expect_answer_lacks 169.254.169.254
expect_answer_lacks 127.0.0.1
# (240, not 290: unbound answers from its cache, counting the record's
# 300 s down since the test first asked this name, a while ago on a
# loaded machine.)
expect_set_timeout dnsfence4 10.1.2.3 240 300
for a in 169.254.169.254 127.0.0.1; do
	expect_not_in_set dnsfence4 "$a"
done
ok "allow_cidrs 10.0.0.0/8: 10.1.2.3 kept and in dnsfence4; 169.254.169.254, 127.0.0.1 still stripped"

df_dig private.allowed.test AAAA
expect_rcode NOERROR
expect_answer_count AAAA 0
expect_not_in_set dnsfence6 fd00::1
ok "allow_cidrs 10.0.0.0/8: fd00::1 still stripped"
expect_dnsfence_running
