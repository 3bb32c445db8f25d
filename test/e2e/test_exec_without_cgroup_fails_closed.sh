#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec` without cgroup v2 (every plain `ip netns exec`, which
# mounts a fresh /sys without the cgroup tree) fails closed.
#
# The attack: the command starts a detached grandchild (setsid and a
# double fork: no parent-death signal, not the command's child) and
# exits; the grandchild tries an address nobody answered (198.18.1.11:80)
# every half second with a token in the URL, and the upstream's web
# server logs what reached it. Before, exec said it fenced the uid
# instead, removed the rules when the command exited, and the
# grandchild's tries got out.
#  1. without a cgroup and without --uid-fallback, exec refuses (125)
#     saying how to get a cgroup; the command never runs;
#  2. with --uid-fallback, exec fences the uid and, before the rules go,
#     kills every process of that uid in the namespace (and says so):
#     nothing of the grandchild reaches the address after exec returned;
#  3. control: exec with a cgroup still works (the allowed URL, exit 0),
#     and the uid reaches the address unfenced.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242

df_expect_reaches_unfenced "$USER_ID"
ok "control: unfenced, uid $USER_ID reaches 198.18.1.11:80 and the server logs it"

chmod 711 "$DF_TMP" # the grandchild (uid 4242) writes its tries there
tries="$DF_TMP/tries.txt"
: >"$tries"
chmod 666 "$tries"
grandchild='for i in $(seq 1 40); do
	curl -s -o /dev/null --max-time 1 "http://198.18.1.11/$1-$i" && echo "got $i" >>"$2" || echo "refused $i" >>"$2"
	sleep 0.5
done'

# nocg_exec TOKEN [OPTION]...: exec in the workload namespace as plain
# `ip netns exec` runs it (no cgroup tree); the command double-forks the
# grandchild and exits after 1.5 s. DF_CMD_RC.
nocg_exec() {
	local token=$1
	shift
	DF_CMD_RC=0
	ip netns exec "$DF_WL" "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" "$@" -- \
		sh -c '(setsid sh -c "$0" grandchild "$1" "$2" </dev/null >/dev/null 2>&1 &); sleep 1.5; exit 0' \
		"$grandchild" "$token" "$tries" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
}

# leaked TOKEN: after exec returned, watch the grandchild's tries (it
# goes on for 20 s when it lives) until one is refused or one arrives.
leaked() {
	df_poll 60 bash -c "grep -q 'GET /$1-' '$DF_TMP/listener-80.log'" || true
	df_served "$1-"
}

# --- 1. no cgroup, no --uid-fallback
nocg_exec "nocg-$$"
n="$(leaked "nocg-$$")"
[ "$n" -eq 0 ] || fail "without a cgroup, exec's detached grandchild reached 198.18.1.11:80 after exec returned ($n requests; exec said: $(tr '\n' ' ' <"$DF_TMP/exec.err"))"
[ "$DF_CMD_RC" -eq 125 ] || fail "exec without a cgroup exited $DF_CMD_RC, not 125: $(cat "$DF_TMP/exec.err")"
grep -q "no cgroup v2 here" "$DF_TMP/exec.err" && grep -q "mount -t cgroup2" "$DF_TMP/exec.err" &&
	grep -q -- "--uid-fallback" "$DF_TMP/exec.err" ||
	fail "exec did not say how to get a cgroup: $(cat "$DF_TMP/exec.err")"
[ ! -s "$tries" ] || fail "the command ran although exec refused: $(cat "$tries")"
ok "without cgroup v2 exec refuses (125), naming the mount and --uid-fallback; the command never runs"

# --- 2. --uid-fallback
nocg_exec "uid-$$" --uid-fallback
[ "$DF_CMD_RC" -eq 0 ] || fail "exec --uid-fallback exited $DF_CMD_RC: $(cat "$DF_TMP/exec.err")"
grep -q "fencing uid $USER_ID instead" "$DF_TMP/exec.err" || fail "exec --uid-fallback did not say it fences the uid: $(cat "$DF_TMP/exec.err")"
grep -q '^refused' "$tries" || fail "the grandchild made no try while the fence was up (tries: $(cat "$tries"))"
n="$(leaked "uid-$$")"
left="$( (pgrep -u "$USER_ID" -a 2>/dev/null || [ $? -eq 1 ]) | tr '\n' ' ')"
[ "$n" -eq 0 ] || fail "with --uid-fallback, exec's detached grandchild reached 198.18.1.11:80 after exec returned ($n requests; exec said: $(tr '\n' ' ' <"$DF_TMP/exec.err"); still running: $left)"
grep -q "process(es) of uid $USER_ID in this network namespace were still running and were killed" "$DF_TMP/exec.err" ||
	fail "exec did not say it killed the uid's processes: $(cat "$DF_TMP/exec.err")"
ok "with --uid-fallback the uid's processes are killed before the rules go: nothing reaches 198.18.1.11 after exec returned"

# --- 3. control: exec with a cgroup
DF_CMD_RC=0
df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" -- \
	curl -s -o /dev/null --max-time 5 http://www.allowed.test/ >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
[ "$DF_CMD_RC" -eq 0 ] || fail "control: exec with a cgroup of the allowed URL exited $DF_CMD_RC: $(cat "$DF_TMP/exec.err")"
! grep -q "fencing uid" "$DF_TMP/exec.err" || fail "control: exec with a cgroup fell back to the uid"
ok "control: exec with a cgroup works (the allowed URL, exit 0)"
