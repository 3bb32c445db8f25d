#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec -- CMD`: one command fenced, nothing else, nothing left.
#
# resolv.conf names the original resolver (unbound), so the namespace
# works unfenced. Control first: uid 4242's curl reaches the denied name.
# Then `exec --user 4242 -- curl`: the allowed URL works (exit 0), the
# denied one fails with curl's own status (6, not resolved), an address
# nobody answered fails (7), and a command's status passes through (42);
# meanwhile the same uid outside exec still reaches everything. After
# each exec: no chain, jump, nat rule, set, cgroup or directory of it is
# left. Stopped with SIGTERM, exec passes the signal on and still cleans
# up; killed with SIGKILL, it leaves its directory, and the next exec
# removes what it names first.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242

# fexec ARGS...: dnsfence exec in the workload namespace; DF_CMD_RC.
fexec() {
	DF_CMD_RC=0
	df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec \
		--user "$USER_ID" -- "$@" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
}
curl_url() { echo curl -s -o /dev/null --max-time 5 "$1"; }
# exec_up: wait until a background exec's daemon has its control socket;
# print that exec's pid (its directory's name).
exec_up() {
	local s
	df_poll 100 bash -c "ls '$DF_TMP'/state/exec/*/control.sock >/dev/null 2>&1" || return 1
	s="$(ls "$DF_TMP"/state/exec/*/control.sock | head -1)"
	s="${s%/control.sock}"
	echo "${s##*/}"
}

nothing_left() {
	local t left=""
	for t in iptables ip6tables; do
		left+="$(wl "$t"-save 2>/dev/null | grep -E 'DNSFENCE|dnsfence|dfx' || true)"
		left+="$(wl "$t"-save -t nat 2>/dev/null | grep DNSFENCE || true)"
		left+="$(wl "$t"-save -t raw 2>/dev/null | grep DNSFENCE || true)"
	done
	left+="$(wl ipset list -n | grep '^dfx' || true)"
	left+="$(find "$DF_CG" -name 'dnsfence-exec-*' 2>/dev/null || true)"
	# (a failed command's fence log is kept there as PID.log, by design)
	left+="$(find "$DF_TMP/state/exec" -mindepth 1 ! -name '[0-9]*.log' 2>/dev/null || true)"
	[ -z "$left" ] || fail "$1: exec left behind: $left"
}

# Control: unfenced, uid 4242 reaches the name exec will deny.
df_wl_as "$USER_ID" $(curl_url http://www.evil.test/) || fail "control: uid $USER_ID cannot reach www.evil.test unfenced"
df_wl_as "$USER_ID" timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.11/80' ||
	fail "control: uid $USER_ID cannot reach 198.18.1.11:80 unfenced"
ok "control: unfenced, uid $USER_ID reaches www.evil.test and 198.18.1.11"

fexec $(curl_url http://www.allowed.test/)
[ "$DF_CMD_RC" -eq 0 ] || fail "exec curl of the allowed name exited $DF_CMD_RC: $(cat "$DF_TMP/exec.err")"
! grep -q "fencing uid" "$DF_TMP/exec.err" || fail "exec fell back to the uid: $(cat "$DF_TMP/exec.err")"
nothing_left "after the allowed curl"
ok "exec: the allowed URL works (exit 0) and nothing is left"

fexec $(curl_url http://www.evil.test/)
[ "$DF_CMD_RC" -eq 6 ] || fail "exec curl of the denied name exited $DF_CMD_RC, expected curl's 6: $(cat "$DF_TMP/exec.err")"
fexec $(curl_url http://198.18.1.11/)
[ "$DF_CMD_RC" -eq 7 ] || fail "exec curl of an unresolved address exited $DF_CMD_RC, expected 7"
fexec sh -c 'exit 42'
[ "$DF_CMD_RC" -eq 42 ] || fail "exec of 'exit 42' exited $DF_CMD_RC"
ok "exec: the denied name (6) and an unresolved address (7) fail with curl's status; a status passes through (42)"

# The same uid outside exec, while a fenced command runs. The sleep's
# operand carries this test's pid, so another run's sleep never matches.
nap="30.$$"
df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" -- sleep "$nap" \
	>"$DF_TMP/exec-bg.out" 2>&1 &
epid=$!
DF_PIDS+=("$epid")
xpid="$(exec_up)" || fail "the background exec never came up: $(cat "$DF_TMP/exec-bg.out")"
DF_PIDS+=("$xpid")
df_poll 50 bash -c "pgrep -fx 'sleep $nap' >/dev/null" || fail "the fenced sleep never started"
df_wl_as "$USER_ID" $(curl_url http://www.evil.test/) ||
	fail "uid $USER_ID outside exec lost www.evil.test while a fenced command ran"
ok "while a command runs fenced, the same uid outside it is not fenced"
kill -TERM "$xpid"
st=0
wait "$epid" || st=$?
[ "$st" -eq 143 ] || fail "exec stopped with SIGTERM exited $st, expected 143 (sleep ended by the signal passed on)"
nothing_left "after SIGTERM"
ok "exec stopped with SIGTERM passes it on (143) and cleans up"

df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" -- sleep "$nap" \
	>"$DF_TMP/exec-bg.out" 2>&1 &
epid=$!
DF_PIDS+=("$epid")
xpid="$(exec_up)" || fail "the second background exec never came up"
DF_PIDS+=("$xpid")
kill -KILL "$xpid"
wait "$epid" 2>/dev/null || true
df_poll 50 bash -c "! pgrep -fx 'sleep $nap' >/dev/null" || fail "the fenced command outlived exec's SIGKILL"
[ -d "$DF_TMP/state/exec/$xpid" ] || fail "a killed exec left no directory for the next one to clean"
fexec true
[ "$DF_CMD_RC" -eq 0 ] || fail "the exec after a killed one exited $DF_CMD_RC: $(cat "$DF_TMP/exec.err")"
grep -q "removing what exec $xpid left" "$DF_TMP/exec.err" || fail "the next exec did not say it cleaned up exec $epid"
nothing_left "after a killed exec and the next one"
ok "a killed exec's leftovers are removed by the next exec"
