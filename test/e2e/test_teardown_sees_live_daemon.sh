#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The lifecycle commands ask the control socket first. With a daemon
# serving, "teardown" removes nothing, exits 4 and says the namespace stays
# fenced and how to stop the daemon; two guard intervals later the fence is
# indeed in place (check 0). "setup" and "run" also exit 4, naming reload.
# Once the daemon is stopped, teardown exits 0 saying the namespace is
# open, and two guard intervals later it still is (no chain, policy
# ACCEPT): each command's words match the namespace's state afterwards.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]' guard_interval=1

df_dnsfence teardown
[ "$DF_CMD_RC" -eq 4 ] || fail "teardown with a live daemon: expected exit 4, saw $DF_CMD_RC: $DF_CMD_ERR"
grep -q "pid $DF_DNSFENCE_PID" <<<"$DF_CMD_ERR" || fail "teardown does not name the daemon's pid $DF_DNSFENCE_PID: $DF_CMD_ERR"
grep -q 'stays FENCED' <<<"$DF_CMD_ERR" || fail "teardown does not say the namespace stays fenced: $DF_CMD_ERR"
grep -q "kill -TERM $DF_DNSFENCE_PID" <<<"$DF_CMD_ERR" || fail "teardown does not say how to stop the daemon: $DF_CMD_ERR"
ok "teardown with a live daemon -> 4: $DF_CMD_ERR"
sleep 3
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "two guard intervals after the refused teardown, check exited $DF_CMD_RC: $DF_CMD_OUT"
grep -qx -- '-P OUTPUT DROP' <<<"$(wl iptables -S OUTPUT)" || fail "policy is not DROP after the refused teardown"
expect_dnsfence_running
ok "two guard intervals later: fenced, as teardown said (check 0)"

for cmd in setup run; do
	df_dnsfence "$cmd"
	[ "$DF_CMD_RC" -eq 4 ] || fail "$cmd with a live daemon: expected exit 4, saw $DF_CMD_RC: $DF_CMD_ERR"
	grep -q "dnsfence reload" <<<"$DF_CMD_ERR" || fail "$cmd does not point to reload: $DF_CMD_ERR"
done
df_dig www.allowed.test A
expect_rcode NOERROR
ok "setup and run with a live daemon -> 4, pointing to reload; the daemon still answers"

df_stop_dnsfence
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown with no daemon: expected 0, saw $DF_CMD_RC: $DF_CMD_ERR"
grep -q 'NO LONGER fenced' <<<"$DF_CMD_ERR" || fail "teardown does not say the namespace is open: $DF_CMD_ERR"
sleep 3
for t in iptables ip6tables; do
	! wl "$t" -S DNSFENCE-OUT >/dev/null 2>&1 || fail "$t: DNSFENCE-OUT back two guard intervals after teardown"
	wl "$t" -S OUTPUT | grep -x -- '-P OUTPUT ACCEPT' >/dev/null || fail "$t: policy is not ACCEPT two guard intervals after teardown"
done
ok "daemon stopped: teardown -> 0, and the namespace is still open two guard intervals later"
