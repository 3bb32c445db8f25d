#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The guard's restore runs the one install sequence setup runs, the set
# reconcile included (invariant 9): while a daemon for policy A serves,
# someone runs `dnsfence setup` for a policy B (allow_cidrs
# 198.18.1.11/32) and an entry of B's (198.18.1.12) lands in the set. The
# guard sees the drift and puts A's rules back; since the rules it found
# carry B's fingerprint, it flushes the sets, so neither 198.18.1.11 nor
# 198.18.1.12 is reachable any more. Positive controls: before, A's answered address connects and
# 198.18.1.11 does not; under B's rules 198.18.1.11 connects; after the
# restore, A's name asked again (a cache hit) connects again, re-added to
# the flushed set.
source "$(dirname "$0")/lib.sh"

U=12345
df_setup
df_start_listener 80
df_start_dnsfence allow='["www.allowed.test"]' guard_interval=1
conf_a="$DF_DNSFENCE_CONF"
cp "$conf_a" "$DF_TMP/a.json"

df_dig www.allowed.test A
expect_answer_contains 198.18.1.10
df_connect_as "$U" 198.18.1.10 80 || fail "A: www.allowed.test:80 not reachable (control)"
! df_connect_as "$U" 198.18.1.11 80 || fail "A: 198.18.1.11:80 reachable before B"
ok "A: the answered address connects, 198.18.1.11 does not"

# Policy B's setup, then an entry of B's in the set (what B's daemon adds).
"$DF_PY" - "$DF_TMP/a.json" "$DF_TMP/b.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["allow_cidrs"] = ["198.18.1.11/32"]
c["allow"] = ["a.b.allowed.test"]
c["control"] = {"socket": sys.argv[2] + ".sock"}  # another daemon's config
json.dump(c, open(sys.argv[2], "w"))
PYEOF
# A's parent (its guard) stops meanwhile: a guard tick between B's install
# and B's verification, or before the control below, would put A's rules
# back first (a loaded machine makes that window wider than guard_interval).
kill -STOP "$DF_DNSFENCE_PID"
# ... and a guard check it forked before that ends first.
no_guard_child() {
	[ -z "$(ps -o pid=,stat=,comm= --ppid "$DF_DNSFENCE_PID" | awk '$2 !~ /^Z/ && $3 != "dnsfence-dns"')" ]
}
df_poll 100 no_guard_child ||
	{ kill -CONT "$DF_DNSFENCE_PID"; fail "a guard check of A's did not end"; }
wl env -u DNSFENCE_CONFIG -u DNSFENCE_MODE "$DNSFENCE_BIN" -c "$DF_TMP/b.json" setup \
	>"$DF_TMP/b-setup.log" 2>&1 || { kill -CONT "$DF_DNSFENCE_PID"; fail "B's setup failed: $(cat "$DF_TMP/b-setup.log")"; }
wl ipset add dnsfence4 198.18.1.12 timeout 600
df_connect_as "$U" 198.18.1.11 80 || { kill -CONT "$DF_DNSFENCE_PID"; fail "B: 198.18.1.11:80 not reachable under B's rules (control)"; }
kill -CONT "$DF_DNSFENCE_PID"
ok "B's rules in place: 198.18.1.11 connects, 198.18.1.12 in the set"

df_wait_log 100 "restored the firewall rules and sets" || fail "the guard did not restore A's rules"
wl "$DNSFENCE_BIN" -c "$conf_a" check >/dev/null 2>&1 || fail "check against A is not 0 after the restore"
! df_connect_as "$U" 198.18.1.11 80 || fail "198.18.1.11:80 reachable after A's rules came back"
if df_set_members dnsfence4 | grep -x 198.18.1.12 >/dev/null; then
	fail "the restore kept 198.18.1.12, put in the set under policy B"
fi
! df_connect_as "$U" 198.18.1.12 80 || fail "198.18.1.12:80 reachable after the restore"
ok "restore: A's rules back, B's entry flushed"

df_dig www.allowed.test A
expect_answer_contains 198.18.1.10
df_set_members dnsfence4 | grep -x 198.18.1.10 >/dev/null || fail "198.18.1.10 not re-added after the flush"
df_connect_as "$U" 198.18.1.10 80 || fail "www.allowed.test:80 not reachable after the restore"
expect_dnsfence_running
ok "A's name asked again is back in the set and connects"
