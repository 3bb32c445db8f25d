#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# reload tells the truth: its output and log line name the file the daemon
# read, a mode change, and the names added and removed (five of each,
# then "and N more"); a reload with nothing to do still names the file;
# "reload -c OTHER" says the daemon read its own file, not OTHER; a SIGHUP
# with nothing to do leaves a log line; and after the file watch
# applied an edit, a `dnsfence reload` that finds nothing to do keeps the
# watch's record in status (last_reload_by.watch next to .control).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test", "old.allowed.test"]' control='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
conf="$DF_DNSFENCE_CONF"
chmod 755 "$DF_TMP" # the daemon reads the file as its user

edit() { # KEY=JSON...: rewrite the running config
	"$DF_PY" - "$conf" "$@" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for a in sys.argv[2:]:
    k, _, v = a.partition("=")
    c[k] = json.loads(v)
json.dump(c, open(sys.argv[1], "w"))
PY
}

edit mode='"audit"' allow='["www.allowed.test", "n1.allowed.test", "n2.allowed.test", "n3.allowed.test", "n4.allowed.test", "n5.allowed.test", "n6.allowed.test", "n7.allowed.test"]'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
for want in "read $conf" 'mode enforce -> audit' '+7/-1 names' 'added n1.allowed.test, n2.allowed.test, n3.allowed.test, n4.allowed.test, n5.allowed.test and 2 more' 'removed old.allowed.test'; do
	grep -qF -- "$want" <<<"$DF_CMD_OUT" || fail "reload output lacks '$want': $DF_CMD_OUT"
done
expect_log_contains "reload: control: read $conf: mode enforce -> audit, +7/-1 names (added n1.allowed.test"
ok "reload names the file, the mode change and the names: $DF_CMD_OUT"

df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "a no-change reload exited $DF_CMD_RC: $DF_CMD_ERR"
grep -qF "read $conf: no change" <<<"$DF_CMD_OUT" || fail "a no-change reload does not name the file: $DF_CMD_OUT"
cp "$conf" "$DF_TMP/other.json"
DF_CMD_RC=0
out="$(ip netns exec "$DF_WL" "$DNSFENCE_BIN" -c "$DF_TMP/other.json" reload 2>&1)" || DF_CMD_RC=$?
[ "$DF_CMD_RC" -eq 0 ] || fail "reload -c other.json exited $DF_CMD_RC: $out"
grep -qF "the daemon re-read the file it was started with, $conf, not $DF_TMP/other.json" <<<"$out" ||
	fail "reload -c other.json does not say which file the daemon read: $out"
ok "reload -c other.json: $(grep -F 're-read' <<<"$out")"
kill -HUP "$DF_DNSFENCE_PID"
expect_log_contains "reload: signal: read $conf: no change"
ok "a reload and a SIGHUP with nothing to do both name the file (and the SIGHUP leaves a log line)"
df_stop_dnsfence

# With the watch on: the watch applies the edit, then a command finds
# nothing to do; status keeps both records.
df_start_dnsfence allow='["www.allowed.test"]'
conf="$DF_DNSFENCE_CONF"
edit allow='["www.allowed.test", "w.allowed.test"]'
watched() { df_dnsfence status --json && grep -q '"trigger":"watch"' <<<"$DF_CMD_OUT"; }
df_poll 50 watched || fail "the watch did not reload within 5 s: $DF_CMD_OUT"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload after the watch exited $DF_CMD_RC: $DF_CMD_ERR"
grep -qF 'no change' <<<"$DF_CMD_OUT" || fail "reload after the watch: expected no change, saw $DF_CMD_OUT"
df_dnsfence status --json
"$DF_PY" - "$DF_CMD_OUT" <<'PY' || fail "status lost a record: $DF_CMD_OUT"
import json, sys
s = json.loads(sys.argv[1])
by = s["last_reload_by"]
assert "added w.allowed.test" in by["watch"]["text"], by
assert "no change" in by["control"]["text"], by
assert s["last_reload"]["trigger"] == "control", s["last_reload"]
assert "reloads" not in s and s["reload_requests"] >= 2, s
PY
df_dnsfence status
grep -q '^last_reload_by.watch.text: read .*added w.allowed.test' <<<"$DF_CMD_OUT" || fail "status text lacks the watch's record: $DF_CMD_OUT"
ok "status keeps the watch's record (added w.allowed.test) next to the command's (no change)"
