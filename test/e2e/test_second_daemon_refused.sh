#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One daemon per fence: a second daemon on the state or the control socket
# of a running one is refused before it touches anything, with the first
# one's pid in the message, and the first one keeps its control socket.
#  1. a second `serve` of the same config: exit 4 (a daemon serves)
#     naming the first's pid and its state_dir; `status` still reaches
#     the first (its pid).
#  2. a second `run` with its own state_dir but the first's control
#     socket: exit 4 naming the pid and the socket; the socket file is
#     still the first's, `reload` and `status` still reach it.
#  3. control: once the first has stopped, the same second daemon starts
#     and answers (the refusals were the first daemon's doing).
source "$(dirname "$0")/lib.sh"
df_setup
chmod 755 "$DF_TMP" # the daemon reads the config again after the privilege drop

df_start_dnsfence allow='["www.allowed.test"]'
first=$DF_DNSFENCE_PID
conf1=$DF_DNSFENCE_CONF

# status json's pid: which daemon answered.
status_pid() {
	df_dnsfence status --json
	[ "$DF_CMD_RC" -eq 0 ] || fail "status exited $DF_CMD_RC: $DF_CMD_ERR"
	"$DF_PY" -c 'import json, sys; print(json.load(sys.stdin)["pid"])' <<<"$DF_CMD_OUT"
}

# --- 1. the same config again
df_dnsfence serve
[ "$DF_CMD_RC" -eq 4 ] || fail "a second serve of the same config exited $DF_CMD_RC, expected 4: $DF_CMD_ERR"
grep -q "pid $first" <<<"$DF_CMD_ERR" || fail "the refusal does not name the running daemon's pid $first: $DF_CMD_ERR"
grep -q "state_dir $DF_TMP/state" <<<"$DF_CMD_ERR" || fail "the refusal does not name the state_dir: $DF_CMD_ERR"
expect_dnsfence_running
[ "$(status_pid)" = "$first" ] || fail "status no longer reaches pid $first"
ok "a second serve on the same state is refused naming pid $first; status still reaches it"

# --- 2. another state_dir, the same control socket
sock="$DF_TMP/control.sock"
ino_before=$(stat -c %i "$sock")
cp "$conf1" "$DF_TMP/first.json"
df_config allow='["www.allowed.test"]' state_dir="\"$DF_TMP/state2\"" control="{\"socket\": \"$sock\"}"
mv "$conf1" "$DF_TMP/second.json"
cp "$DF_TMP/first.json" "$conf1"
DF_DNSFENCE_CONF="$DF_TMP/second.json"
df_dnsfence run
[ "$DF_CMD_RC" -eq 4 ] || fail "a second run on the same control socket exited $DF_CMD_RC, expected 4: $DF_CMD_ERR"
grep -q "pid $first" <<<"$DF_CMD_ERR" || fail "the refusal does not name the running daemon's pid $first: $DF_CMD_ERR"
grep -qF "$sock" <<<"$DF_CMD_ERR" || fail "the refusal does not name the control socket: $DF_CMD_ERR"
[ -S "$sock" ] || fail "the first daemon's control socket $sock is gone"
[ "$(stat -c %i "$sock")" = "$ino_before" ] || fail "the control socket $sock was replaced"
DF_DNSFENCE_CONF=$conf1
[ "$(status_pid)" = "$first" ] || fail "status no longer reaches pid $first"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload of the first daemon exited $DF_CMD_RC: $DF_CMD_ERR"
expect_dnsfence_running
ok "a second run on the same control socket is refused naming pid $first; the socket stays the first's"

# --- 3. control: with the first gone, the same daemon starts
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]'
[ "$DF_DNSFENCE_PID" != "$first" ] || fail "no new daemon"
[ "$(status_pid)" = "$DF_DNSFENCE_PID" ] || fail "status does not reach the new daemon"
df_dig www.allowed.test A
expect_rcode NOERROR
ok "control: with the first daemon stopped, the same config starts and serves"
