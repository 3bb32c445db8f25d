#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The guard: while serving, a deleted rule, a flipped policy or a deleted
# jump is put back by the guard (guard_interval 5; the test waits 30 s, as
# a loaded machine is slow to restore), logged as drift with the
# difference named, and "check" is 0 again. The daemon keeps serving.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]' guard_interval=5

in_place() { wl "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" check >/dev/null 2>&1; }

victim="$(grep -m1 -- '--match-set dnsfence4' <<<"$(wl iptables -S DNSFENCE-OUT)")"
eval "wl iptables -D ${victim#-A }"
! in_place || fail "check still 0 after deleting '$victim'"
t0=$(df_now_ms)
DF_POLL_STEP=0.5 df_poll 60 in_place || fail "the deleted rule was not restored"
dt=$(($(df_now_ms) - t0))
[ "$dt" -le 30000 ] || fail "the deleted rule was restored only after $dt ms (limit 30 s)"
ok "deleted '$victim': restored after $dt ms"
df_wait_log 20 "DRIFT: ipv4" || fail "the drift was not logged"
grep -F "DRIFT:" "$DF_DNSFENCE_LOG" | grep "dnsfence4" >/dev/null || fail "the log does not name the rule"
df_wait_log 20 "restored the firewall rules" || fail "the restore was not logged"
ok "logged: $(grep -m1 -F 'DRIFT:' "$DF_DNSFENCE_LOG" | cut -d' ' -f3-)"

wl iptables -P OUTPUT ACCEPT
wl ip6tables -D OUTPUT -j DNSFENCE-OUT
DF_POLL_STEP=0.5 df_poll 60 in_place || fail "policy and jump not restored within 30 s"
grep -qx -- '-P OUTPUT DROP' <<<"$(wl iptables -S OUTPUT)" || fail "ipv4 policy not DROP again"
ok "policy ACCEPT and a deleted ipv6 jump: restored by the guard"

df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_dnsfence_running
kill -USR1 "$DF_DNSFENCE_PID"
df_wait_log 20 "guard_restored=" || fail "no stats line"
grep "guard_restored=" "$DF_DNSFENCE_LOG" | tail -n 1 | grep 'guard_drift=[1-9].*guard_restored=[1-9]' >/dev/null ||
	fail "the counters did not count: $(grep guard_restored= "$DF_DNSFENCE_LOG" | tail -n 1)"
ok "still serving; counters: $(grep -o 'guard_drift=[0-9]* guard_restored=[0-9]*' "$DF_DNSFENCE_LOG" | tail -n 1)"

# Sets: the rules must go first (they hold the sets), then the sets. The
# guard recreates both, and forgets what it knew about the old entries: a
# repeated answer lands in the new, empty set. The daemon trusts an add
# it made within the last second (SETS_FRESH_SECONDS) without asking the
# kernel again, and forgets those too at the restore (sets_forget, the
# DNS process told by IPC_FORGET): the query after it must re-add.
# status set_entries is the kernel's count (the parent asks it each
# second and at the restore): 1, then 0 in the new set, then 1 again.
# Nothing queries in between (the readiness probe is a denied name, it
# adds nothing).
entries_are() { [ "$(df_status_value set_entries.ipv4)" -eq "$1" ]; }
df_dig www.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.1.10
df_poll 30 entries_are 1 || fail "expected status set_entries.ipv4 1 (198.18.1.10) before the destroy, saw $(df_status_value set_entries.ipv4)"
df_remove_firewall
wl ipset destroy dnsfence4
DF_POLL_STEP=0.5 df_poll 60 in_place || fail "the destroyed set and the rules were not restored within 30 s"
df_wait_log 20 "DRIFT: sets: set dnsfence4 does not exist" || fail "the missing set was not logged"
df_wait_log 20 "restored the firewall rules and sets" || fail "the restore of the sets was not logged"
df_poll 30 entries_are 0 || fail "after the guard recreated dnsfence4 status still counts $(df_status_value set_entries.ipv4) entries in it"
expect_not_in_set dnsfence4 198.18.1.10
df_dig www.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.1.10
df_poll 30 entries_are 1 || fail "expected status set_entries.ipv4 1 after the re-add, saw $(df_status_value set_entries.ipv4)"
ok "rules removed and dnsfence4 destroyed: both restored, the daemon's trust forgotten, and the next answer lands in the new set"

# A restore that cannot succeed (a set of the wrong type in the way) stops
# the daemon with exit 3, so that its supervisor runs setup again.
df_remove_firewall
wl ipset destroy dnsfence4
wl ipset create dnsfence4 hash:net family inet timeout 60
df_wait_gone "$DF_DNSFENCE_PID" 100 || fail "the daemon kept serving though the fence cannot be restored"
st=0
wait "$DF_DNSFENCE_PID" || st=$?
DF_DNSFENCE_PID=""
[ "$st" -eq 3 ] || fail "expected exit 3 after a failed restore, saw $st"
grep -q "cannot restore the fence" "$DF_DNSFENCE_LOG" || fail "the failed restore was not logged"
ok "restore impossible (hash:net dnsfence4): the daemon exits 3: $(grep -m1 'restore failed' "$DF_DNSFENCE_LOG" | cut -d' ' -f3-)"
