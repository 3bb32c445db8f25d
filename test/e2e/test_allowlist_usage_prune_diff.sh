#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Allow lists, once learned, can shrink. Per allow entry the daemon
# counts allowed questions, the addresses their answers brought and the
# connections that went out to them (a refused one does not count),
# in state_dir/usage.json: `status` shows the counts (a wildcard entry
# counts every name below it), the metrics only how many entries are used
# and unused (no names), and they survive a reload and a restart.
# `prune --unused-for` drops an entry unused in the test's window and
# keeps a used one; `diff` of a suggest output against the running
# config shows exactly the entries it adds (denied names, too, are kept
# across restarts).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 8080
allow='["www.allowed.test", "*.b.allowed.test", "never.allowed.test"]'
df_start_dnsfence allow="$allow" metrics='"127.0.0.1:9253"'
# The daemon (uid nobody) reads its config again on reload.
chmod 711 "$DF_TMP"
chmod 644 "$DF_DNSFENCE_CONF"

# usage ENTRY FIELD: from `status --json`.
usage() {
	df_dnsfence status --json
	"$DF_PY" -c 'import json, sys
u = json.loads(sys.argv[1]).get("allow_usage", {})
print(u.get(sys.argv[2], {}).get(sys.argv[3], "missing"))' "$DF_CMD_OUT" "$1" "$2"
}
# on_disk ENTRY FIELD: from state_dir/usage.json.
on_disk() {
	"$DF_PY" -c 'import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    if e["entry"] == sys.argv[2]:
        print(int(e[sys.argv[3]]))' "$DF_TMP/state/usage.json" "$1" "$2" 2>/dev/null
}
disk_is() { [ "$(on_disk "$1" "$2")" = "$3" ]; }

[ "$(usage never.allowed.test questions)" = 0 ] || fail "a fresh entry is not listed with 0 questions"
for i in 1 2 3; do
	df_dig www.allowed.test A
	expect_rcode NOERROR
done
df_dig a.b.allowed.test A
expect_rcode NOERROR
df_dig deep.a.b.allowed.test A
expect_rcode NOERROR
df_dig other.evil.test A
expect_rcode NXDOMAIN
[ "$(usage www.allowed.test questions)" = 3 ] || fail "www.allowed.test: expected 3 questions, saw $(usage www.allowed.test questions)"
[ "$(usage www.allowed.test addresses)" -ge 1 ] || fail "www.allowed.test: no addresses counted"
[ "$(usage '*.b.allowed.test' questions)" = 2 ] || fail "*.b.allowed.test: expected 2 questions (two names below it)"
[ "$(usage never.allowed.test questions)" = 0 ] || fail "never.allowed.test moved without a question"
[ "$(usage www.allowed.test flows)" = 0 ] || fail "www.allowed.test has flows before any connection"
# Connections that got out count as flows of the entry whose name
# answered their address; a refused one (port 9999) does not.
df_tcp_connect 198.18.1.10 8080 || fail "198.18.1.10:8080 (www.allowed.test) did not connect"
df_tcp_connect 198.18.1.10 8080 || fail "198.18.1.10:8080 (www.allowed.test) did not connect"
df_tcp_connect 198.18.1.11 8080 || fail "198.18.1.11:8080 (a.b.allowed.test) did not connect"
! df_tcp_connect 198.18.1.10 9999 || fail "198.18.1.10:9999 connected: the fence is open"
flows_are() { [ "$(usage www.allowed.test flows)" = 2 ] && [ "$(usage '*.b.allowed.test' flows)" = 1 ]; }
df_poll 30 flows_are ||
	fail "flows: www.allowed.test $(usage www.allowed.test flows) (want 2), *.b.allowed.test $(usage '*.b.allowed.test' flows) (want 1)"
[ "$(usage never.allowed.test flows)" = 0 ] || fail "never.allowed.test has flows"
m="$(wl curl -s --max-time 5 http://127.0.0.1:9253/metrics)" || fail "no metrics"
grep -qx 'dnsfence_allow_entries{used="yes"} 2' <<<"$m" || fail "metrics: expected 2 used entries: $(grep allow_entries <<<"$m")"
grep -qx 'dnsfence_allow_entries{used="no"} 1' <<<"$m" || fail "metrics: expected 1 unused entry: $(grep allow_entries <<<"$m")"
! grep -q "allowed.test" <<<"$m" || fail "metrics carry entry names (they belong on the control socket only)"
ok "status: www.allowed.test 3 questions, $(usage www.allowed.test addresses) address(es), 2 flows; *.b.allowed.test 2 questions, 1 flow; never.allowed.test 0"

# A reload keeps them.
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
[ "$(usage www.allowed.test questions)" = 3 ] || fail "the reload lost the counts"
# A restart keeps them (written at exit, read at start).
df_stop_dnsfence
disk_is www.allowed.test questions 3 || fail "usage.json after the stop: $(cat "$DF_TMP/state/usage.json")"
df_start_dnsfence allow="$allow"
chmod 644 "$DF_DNSFENCE_CONF"
[ "$(usage www.allowed.test questions)" = 3 ] || fail "the restart lost the counts: $(usage www.allowed.test questions)"
df_dig www.allowed.test A
expect_rcode NOERROR
[ "$(usage www.allowed.test questions)" = 4 ] || fail "counting did not go on after the restart"
ok "a reload and a restart keep the counts (www.allowed.test: 4 after one more)"

# prune: never.allowed.test has been unused since the first start; ask
# for www and a name below *.b once more, stop the daemon (it writes the
# file at exit), then prune what has gone unused for 10 s (10, not less:
# a loaded machine may take seconds from the last question to the prune).
sleep 10
df_dig www.allowed.test A
df_dig a.b.allowed.test A
df_stop_dnsfence
disk_is '*.b.allowed.test' questions 3 || fail "usage.json at the stop: $(cat "$DF_TMP/state/usage.json")"
disk_is www.allowed.test questions 5 || fail "usage.json: www.allowed.test is not at 5"
df_dnsfence prune --unused-for 10s
[ "$DF_CMD_RC" -eq 0 ] || fail "prune exited $DF_CMD_RC: $DF_CMD_ERR"
printf '%s\n' "$DF_CMD_OUT" >"$DF_TMP/pruned.json"
kept="$("$DF_PY" -c 'import json, sys; print(" ".join(json.loads(sys.argv[1])["allow"]))' "$DF_CMD_OUT")"
[ "$kept" = "www.allowed.test *.b.allowed.test" ] || fail "prune --unused-for 10s kept '$kept'"
grep -q "^pruned never.allowed.test: unused for [0-9]* s" <<<"$DF_CMD_ERR" || fail "prune did not name what it dropped: $DF_CMD_ERR"
df_dnsfence prune --unused-for 1h
kept="$("$DF_PY" -c 'import json, sys; print(" ".join(json.loads(sys.argv[1])["allow"]))' "$DF_CMD_OUT")"
[ "$kept" = "www.allowed.test *.b.allowed.test never.allowed.test" ] || fail "prune --unused-for 1h kept '$kept'"
ok "prune --unused-for 10s drops never.allowed.test, keeps the used ones; 1h keeps all"
df_dnsfence prune --unused-for soon
[ "$DF_CMD_RC" -eq 2 ] || fail "prune --unused-for soon exited $DF_CMD_RC, expected 2"

# diff: what a suggest output adds to the running config. The denied
# names are kept across the restarts (suggest.json is read at start):
# other.evil.test, asked in the first run, and the two asked now are
# three names below evil.test, which suggest proposes as *.evil.test.
df_start_dnsfence allow="$allow"
df_dig one.evil.test A
df_dig two.evil.test A
df_poll 100 grep -q two.evil.test "$DF_TMP/state/suggest.json" || fail "suggest.json lacks two.evil.test"
df_dnsfence suggest
printf '%s\n' "$DF_CMD_OUT" >"$DF_TMP/suggested.json"
df_dnsfence diff "$DF_TMP/suggested.json"
[ "$DF_CMD_RC" -eq 1 ] || fail "diff of a longer list exited $DF_CMD_RC, expected 1: $DF_CMD_ERR"
[ "$DF_CMD_OUT" = "+ *.evil.test" ] ||
	fail "diff shows more or less than the added wildcard: $DF_CMD_OUT"
printf '%s\n' "$DF_CMD_OUT" | sed 's/^/    /'
ok "diff of suggest's output: exactly the added *.evil.test (other.evil.test kept from the first run)"
df_dnsfence diff "$DF_TMP/pruned.json"
[ "$DF_CMD_RC" -eq 1 ] && [ "$DF_CMD_OUT" = "- never.allowed.test" ] || fail "diff of prune's output: $DF_CMD_OUT"
df_dnsfence diff "$DF_DNSFENCE_CONF"
[ "$DF_CMD_RC" -eq 0 ] && [ -z "$DF_CMD_OUT" ] || fail "diff of the config itself: exit $DF_CMD_RC, '$DF_CMD_OUT'"
ok "diff of prune's output: - never.allowed.test; of the config itself: nothing, exit 0"
