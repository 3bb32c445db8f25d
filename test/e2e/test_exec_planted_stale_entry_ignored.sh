#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# exec's cleanup of a killed exec's leftovers acts only on what it can
# prove is that exec's, with keys rebuilt from its pid.
#
# A daemon fences the namespace (sets dnsfence4/dnsfence6); exec shares
# its config, so its entries live in state_dir/exec. Planted there, under
# a pid that is gone: a config naming the running fence's sets and a
# victim cgroup (a root process in it), and daemon.pid naming a victim
# root process whose command line holds the entry's path. Before, root's
# next `dnsfence exec` ran `teardown` on the planted config (the running
# fence lost its rules and sets), killed the victim cgroup and signalled
# the victim pid.
#  1. an entry of uid 4242 (mode 0777) is ignored, said;
#  2. an entry of root's (0700) with the same planted files is cleaned
#     with the keys rebuilt from its pid only: its teardown removes the
#     sets dfxPID-4/-6 alone and refuses the running fence's rules (they
#     match other sets), the victim cgroup and pid are untouched;
#  exec itself then refuses the fenced namespace, as it must.
#  3. control: a real exec killed outright is still cleaned by the next
#     one (its command killed, its rules, sets, cgroup and directory gone).
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242
cgroot="$DF_CGROOT"

victim="/df$$-victim"
cleanup_cg() {
	[ -d "$cgroot$victim" ] || return 0
	echo 1 >"$cgroot$victim/cgroup.kill" 2>/dev/null || true
	df_poll 50 rmdir "$cgroot$victim" || true
}
trap 'rc=$?; cleanup_cg; (exit $rc); df_cleanup' EXIT

fexec() {
	DF_CMD_RC=0
	df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec \
		--user "$USER_ID" -- "$@" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
}

# A pid that no process has now.
dead_pid() {
	local p=$((400000 + $$ % 100000))
	while kill -0 "$p" 2>/dev/null || [ -e "$DF_TMP/state/exec/$p" ]; do p=$((p + 1)); done
	echo "$p"
}

# plant DIR: the files an attacker would leave in an exec entry.
plant() {
	local dir=$1
	"$DF_PY" - "$dir" "$victim" <<'EOF'
import json, sys
d, cg = sys.argv[1], sys.argv[2]
json.dump({"sets": {"ipv4": "dnsfence4", "ipv6": "dnsfence6"}, "state_dir": d,
           "control": {"socket": d + "/control.sock"}, "subjects": {"cgroups": [cg]}},
          open(d + "/dnsfence.json", "w"))
EOF
	echo "$vpid" >"$dir/daemon.pid"
}

fence_intact() {
	local rules
	rules="$(wl iptables-save)"
	grep -q -- "-A DNSFENCE-OUT .*--match-set dnsfence4 dst" <<<"$rules" ||
		fail "$1: the running fence's rules are gone; exec said: $(cat "$DF_TMP/exec.err")"
	grep -qx dnsfence4 <<<"$(wl ipset list -n)" || fail "$1: the running fence's set dnsfence4 is gone"
	expect_in_set dnsfence4 198.18.1.10
	kill -0 "$vpid" 2>/dev/null || fail "$1: the victim pid $vpid was killed"
	kill -0 "$cgsleep" 2>/dev/null || fail "$1: the victim cgroup's process was killed"
	expect_dnsfence_running
}

# The running fence, with an entry in its set.
df_start_dnsfence allow='["www.allowed.test"]'
df_dig www.allowed.test A
expect_in_set dnsfence4 198.18.1.10
mkdir -p "$DF_TMP/state/exec"
chmod 0700 "$DF_TMP/state/exec"

# The victims: a root process in a cgroup of its own, and one whose
# command line holds the planted entry's path (a loop of short sleeps,
# so that none outlives it; no output held open).
mkdir "$cgroot$victim"
bash -c 'echo $$ >"$1/cgroup.procs" && exec sleep 300' _ "$cgroot$victim" </dev/null >/dev/null 2>&1 &
cgsleep=$!
DF_PIDS+=("$cgsleep")

# --- 1. an entry of another user's
p1="$(dead_pid)"
e1="$DF_TMP/state/exec/$p1"
bash -c 'while :; do sleep 1; done' "$e1" </dev/null >/dev/null 2>&1 &
vpid=$!
DF_PIDS+=("$vpid")
mkdir -m 0777 "$e1"
plant "$e1"
chown -R "$USER_ID:$USER_ID" "$e1"
fexec true
fence_intact "exec after a planted entry of uid $USER_ID"
grep -q "ignoring $e1: not a directory exec made (owner uid $USER_ID, mode 777)" "$DF_TMP/exec.err" ||
	fail "exec did not say it ignored the planted entry: $(cat "$DF_TMP/exec.err")"
grep -q "already fenced by dnsfence" "$DF_TMP/exec.err" || fail "exec did not refuse the fenced namespace: $(cat "$DF_TMP/exec.err")"
rm -rf "$e1"
ok "an exec entry of uid $USER_ID is ignored: the running fence keeps its rules and sets, the victim cgroup and pid live"

# --- 2. an entry of root's with the planted files
p2="$(dead_pid)"
e2="$DF_TMP/state/exec/$p2"
kill "$vpid"
bash -c 'while :; do sleep 1; done' "$e2" </dev/null >/dev/null 2>&1 &
vpid=$!
DF_PIDS+=("$vpid")
mkdir -m 0700 "$e2"
plant "$e2"
fexec true
fence_intact "exec after a planted entry of root's"
grep -q "removing what exec $p2 left" "$DF_TMP/exec.err" || fail "exec did not clean the entry of pid $p2: $(cat "$DF_TMP/exec.err")"
grep -q "already fenced by dnsfence" "$DF_TMP/exec.err" || fail "exec did not refuse the fenced namespace: $(cat "$DF_TMP/exec.err")"
grep -q '"ipv4":\s*"dfx'"$p2"'-4"' "$e2/teardown.json" || fail "the teardown config was not rebuilt from pid $p2: $(cat "$e2/teardown.json")"
ok "an exec entry of root's is cleaned only by keys rebuilt from its pid: the running fence, the victim cgroup and pid untouched"

# --- 3. control: a real killed exec is still cleaned
df_stop_dnsfence
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown of the running fence exited $DF_CMD_RC: $DF_CMD_ERR"
rm -rf "$e2"
nap="30.$$"
df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" -- sleep "$nap" \
	>"$DF_TMP/exec-bg.out" 2>&1 &
epid=$!
DF_PIDS+=("$epid")
df_poll 100 bash -c "ls '$DF_TMP'/state/exec/*/control.sock >/dev/null 2>&1" ||
	fail "the background exec never came up: $(cat "$DF_TMP/exec-bg.out")"
s="$(ls "$DF_TMP"/state/exec/*/control.sock | head -1)"
s="${s%/control.sock}"
xpid="${s##*/}"
DF_PIDS+=("$xpid")
df_poll 50 bash -c "pgrep -fx 'sleep $nap' >/dev/null" || fail "the fenced sleep never started"
kill -KILL "$xpid"
wait "$epid" 2>/dev/null || true
[ -d "$DF_TMP/state/exec/$xpid" ] || fail "a killed exec left no directory for the next one to clean"
grep -qx "dfx$xpid-4" <<<"$(wl ipset list -n)" || fail "the killed exec left no set to clean"
fexec true
[ "$DF_CMD_RC" -eq 0 ] || fail "the exec after a killed one exited $DF_CMD_RC: $(cat "$DF_TMP/exec.err")"
grep -q "removing what exec $xpid left" "$DF_TMP/exec.err" || fail "the next exec did not clean up exec $xpid: $(cat "$DF_TMP/exec.err")"
! grep -q "^dfx$xpid-" <<<"$(wl ipset list -n)" || fail "the killed exec's sets are still there"
! grep -q DNSFENCE <<<"$(wl iptables-save)" || fail "the killed exec's rules are still there"
[ ! -e "$DF_TMP/state/exec/$xpid" ] || fail "the killed exec's directory is still there"
[ -z "$(find "$cgroot" -maxdepth 3 -name "dnsfence-exec-$xpid" 2>/dev/null)" ] || fail "the killed exec's cgroup is still there"
! pgrep -fx "sleep $nap" >/dev/null || fail "the killed exec's command still runs"
ok "control: a real exec killed outright is still cleaned by the next one"
