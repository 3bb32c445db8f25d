#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence why` hits: it takes a NAME and says what `allowed NAME` says
# (the entry that allows it, or the entry to add, as the EDE says it) and
# what the running daemon answered and denied for it; for ADDR:PORT it
# names the port as the reason whatever the entry's age (after expiry it
# used to say "ask dnsfence for NAME again" while the logged block was
# "port tcp/9999 is not in `ports`"); with no daemon running it reads the
# blocked flows the last daemon left in state_dir, and says so.
# Positive controls: the allowed name says allowed, by its entry, with
# the address the daemon answered; the address connects on an allowed
# port while its entry lives.
source "$(dirname "$0")/lib.sh"

U=12345
df_setup
df_start_listener 80
df_start_listener 9999
df_start_dnsfence allow='["www.allowed.test", "ttl5.allowed.test"]' \
	ttl='{"min": 1, "max": 86400}'

# A NAME, allowed (the control): its entry and what the daemon answered.
df_dig www.allowed.test A
expect_answer_contains 198.18.1.10
df_dnsfence why www.allowed.test
[ "$DF_CMD_RC" -eq 0 ] || fail "why www.allowed.test exited $DF_CMD_RC: $DF_CMD_ERR"
grep -qxF 'allowed: www.allowed.test, by allow entry "www.allowed.test"' <<<"$DF_CMD_OUT" ||
	fail "why of an allowed name does not name its entry: $DF_CMD_OUT"
grep -q '^source: the running daemon' <<<"$DF_CMD_OUT" || fail "why does not say its source: $DF_CMD_OUT"
grep -q '^answered: www.allowed.test -> 198.18.1.10 ' <<<"$DF_CMD_OUT" ||
	fail "why does not say what the daemon answered: $DF_CMD_OUT"
ok "why www.allowed.test: $(tr '\n' '|' <<<"$DF_CMD_OUT")"

# A NAME, denied: the EDE's fix (why and allowed), and the daemon's count
# of denials.
df_dig api.evil.test A
expect_rcode NXDOMAIN
df_dnsfence why api.evil.test
[ "$DF_CMD_RC" -eq 0 ] || fail "why api.evil.test exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q '^not allowed: api.evil.test' <<<"$DF_CMD_OUT" || fail "why of a denied name: $DF_CMD_OUT"
grep -qxF 'not in allow; add "api.evil.test" or "*.evil.test"' <<<"$DF_CMD_OUT" ||
	fail "why of a denied name does not give the EDE's fix: $DF_CMD_OUT"
grep -qx 'denied: 1 time(s)' <<<"$DF_CMD_OUT" || fail "why does not count the denial: $DF_CMD_OUT"
ok "why api.evil.test: $(tr '\n' '|' <<<"$DF_CMD_OUT")"
df_dnsfence allowed api.evil.test
[ "$DF_CMD_RC" -eq 1 ] || fail "allowed api.evil.test exited $DF_CMD_RC, expected 1"
grep -qxF 'not in allow; add "api.evil.test" or "*.evil.test"' <<<"$DF_CMD_OUT" ||
	fail "allowed of a denied name does not give the EDE's fix: $DF_CMD_OUT"
ok "allowed api.evil.test: $(tr '\n' '|' <<<"$DF_CMD_OUT")"
df_dnsfence allowed api.evil.test --json
"$DF_PY" -c 'import json, sys
o = json.loads(sys.argv[1])
assert o["allowed"] is False and o["would_allow"] == "api.evil.test", o
assert o["hint"] == "not in allow; add \"api.evil.test\" or \"*.evil.test\"", o' "$DF_CMD_OUT" ||
	fail "allowed --json of a denied name: $DF_CMD_OUT"
ok "allowed --json api.evil.test: $DF_CMD_OUT"

# ADDR:PORT after the entry expired: the port is still the reason.
df_dig ttl5.allowed.test A
expect_answer_contains 198.18.1.5
df_connect_as "$U" 198.18.1.5 80 || fail "control: uid $U cannot reach ttl5.allowed.test:80 while its entry lives"
if df_connect_as "$U" 198.18.1.5 9999; then fail "198.18.1.5:9999 (not in ports) was reachable"; fi
df_poll 30 grep -qF -- '-> 198.18.1.5:9999 from uid' "$DF_DNSFENCE_LOG" || fail "no blocked line for 198.18.1.5:9999"
ok "control: 198.18.1.5:80 reached while the entry lives; 198.18.1.5:9999 blocked"
df_poll 100 bash -c "! ip netns exec $DF_WL ipset test dnsfence4 198.18.1.5" ||
	fail "198.18.1.5 still in the set 10 s after a 5 s TTL"
df_dnsfence why 198.18.1.5:9999
[ "$DF_CMD_RC" -eq 0 ] || fail "why 198.18.1.5:9999 exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q '^198.18.1.5: answered for ttl5.allowed.test at [0-9:]*; its set entry expired at' <<<"$DF_CMD_OUT" ||
	fail "why does not say the entry expired: $DF_CMD_OUT"
grep -qF 'tcp/9999: blocked (port): port tcp/9999 is not in `ports`' <<<"$DF_CMD_OUT" ||
	fail "why after expiry does not name the port: $DF_CMD_OUT"
grep -qF 'would allow: add "tcp/9999" to ports' <<<"$DF_CMD_OUT" ||
	fail "why after expiry does not say to add the port: $DF_CMD_OUT"
ok "why 198.18.1.5:9999 after expiry: $(tr '\n' '|' <<<"$DF_CMD_OUT")"

# No daemon: the blocked flows come from state_dir, and the answer says so.
df_stop_dnsfence
df_dnsfence why 198.18.1.5:9999
[ "$DF_CMD_RC" -eq 0 ] || fail "why without a daemon exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q "^source: $DF_TMP/state/suggest.json, the last daemon's (no daemon listens on " <<<"$DF_CMD_OUT" ||
	fail "why without a daemon does not name state_dir as its source: $DF_CMD_OUT"
grep -q "^blocked: tcp/9999 to 198.18.1.5, [0-9]* time(s), uid $U (port; answered for ttl5.allowed.test)" <<<"$DF_CMD_OUT" ||
	fail "why without a daemon does not list the blocked flow: $DF_CMD_OUT"
grep -qF 'would allow: add "tcp/9999" to ports' <<<"$DF_CMD_OUT" ||
	fail "why without a daemon does not give the fix: $DF_CMD_OUT"
ok "why 198.18.1.5:9999 without a daemon: $(tr '\n' '|' <<<"$DF_CMD_OUT")"
df_dnsfence why api.evil.test
grep -qx 'denied: 1 time(s)' <<<"$DF_CMD_OUT" || fail "why NAME without a daemon: $DF_CMD_OUT"
grep -q '^answered: unknown' <<<"$DF_CMD_OUT" || fail "why NAME without a daemon claims to know the sets: $DF_CMD_OUT"
ok "why api.evil.test without a daemon: $(tr '\n' '|' <<<"$DF_CMD_OUT")"
df_dnsfence why 'not a name'
[ "$DF_CMD_RC" -eq 2 ] || fail "why 'not a name' exited $DF_CMD_RC, expected 2"
grep -q "why: 'not a name': expected NAME, ADDR" <<<"$DF_CMD_ERR" || fail "why 'not a name': $DF_CMD_ERR"
! grep -q 'why: why:' <<<"$DF_CMD_ERR" || fail "the prefix is doubled: $DF_CMD_ERR"
ok "why 'not a name': exit 2, $DF_CMD_ERR"
