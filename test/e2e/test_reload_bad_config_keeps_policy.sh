#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload that cannot be applied changes nothing. A bad value
# (ttl.min "x"): `dnsfence reload` exits 2 and names the key, the daemon
# logs it, the running policy stays enforced (the allowed name still
# resolves and connects, the name the bad file adds is still denied). A
# key that needs a restart (listen, sets.ipv4, user): exit 2 with "restart".
# The control socket refuses a workload uid even with the socket opened
# to everyone (SO_PEERCRED), and its file is 0660 root:daemon group. With
# no daemon listening, reload and status say so and exit 3.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup
df_start_listener 443
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443"]'
chmod 755 "$DF_TMP"
good="$(cat "$DF_DNSFENCE_CONF")"
sock="$DF_TMP/control.sock"

# Bad value: exit 2, key named, policy kept.
df_config allow='["www.allowed.test", "a.b.allowed.test"]' ttl='{"min": "x"}' \
	control='{"socket": "'"$sock"'", "watch": false}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 2 ] || fail "reload of a bad config exited $DF_CMD_RC (expected 2): $DF_CMD_ERR"
grep -q 'ttl.min' <<<"$DF_CMD_ERR" || fail "reload's error does not name ttl.min: $DF_CMD_ERR"
ok "bad config: reload exits 2: $DF_CMD_ERR"
expect_log_contains "ttl.min"
df_dig a.b.allowed.test A
expect_rcode NXDOMAIN
df_ask_connect www.allowed.test A 443
[ "$DF_DIG_RC" -eq 0 ] || fail "the running policy is no longer enforced after a failed reload: $DF_OUT"
expect_connected 198.18.1.10
ok "the running policy stays: www connects, a.b (only in the bad file) denied"

# Keys that need a restart.
for kv in 'listen=["127.0.0.1:5353"]' 'sets={"ipv4": "other4"}' 'user="root"'; do
	key=${kv%%=*}
	df_config allow='["www.allowed.test"]' ports='["tcp/443"]' "$kv" \
		control='{"socket": "'"$sock"'", "watch": false}'
	df_dnsfence reload
	[ "$DF_CMD_RC" -eq 2 ] || fail "reload changing $key exited $DF_CMD_RC (expected 2): $DF_CMD_ERR"
	grep -q "$key" <<<"$DF_CMD_ERR" && grep -q 'restart' <<<"$DF_CMD_ERR" ||
		fail "reload changing $key: message lacks the key or 'restart': $DF_CMD_ERR"
done
ok "listen, sets, user: refused, restart needed ($DF_CMD_ERR)"
printf '%s\n' "$good" >"$DF_DNSFENCE_CONF"

# Who may use the socket.
mode="$(stat -c '%a %u' "$sock")"
[ "$mode" = "660 0" ] || fail "control socket is mode/owner '$mode', expected '660 0'"
rc=0
df_wl_as $WL_UID "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" reload >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "uid $WL_UID reload exited $rc (expected 3: permission denied)"
chmod 0777 "$sock" # as if the mode were wrong: SO_PEERCRED still refuses
rc=0
out="$(df_wl_as $WL_UID "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" status 2>&1)" || rc=$?
[ "$rc" -ne 0 ] || fail "uid $WL_UID read the status through a 0777 socket: $out"
grep -q 'mode' <<<"$out" && fail "uid $WL_UID got status output: $out"
expect_log_contains "refused a connection"
chmod 0660 "$sock"
df_dnsfence status
[ "$DF_CMD_RC" -eq 0 ] || fail "root's status exited $DF_CMD_RC: $DF_CMD_ERR"
ok "socket 0660 root:group; uid $WL_UID refused (file mode, then SO_PEERCRED); root served"

# No daemon.
df_stop_dnsfence
for cmd in reload status; do
	df_dnsfence $cmd
	[ "$DF_CMD_RC" -eq 3 ] || fail "$cmd with no daemon exited $DF_CMD_RC (expected 3)"
	grep -q 'no dnsfence daemon listens' <<<"$DF_CMD_ERR" || fail "$cmd with no daemon: $DF_CMD_ERR"
done
ok "no daemon: reload and status exit 3 ($DF_CMD_ERR)"
