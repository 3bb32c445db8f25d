#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec -- CMD`: a process CMD leaves behind must not outlive the
# fence.
#
# The attack: CMD starts a detached child (setsid, its own session, no
# parent-death signal) and exits at once. exec sees its command end,
# stops the daemon and removes the instance's rules, while the child
# still runs in the command's cgroup. It then tries a blocked address
# (198.18.1.11:80, never answered) every half second, with a token in the
# URL, and the upstream's web server logs what reached it.
#
# Control: the same uid reaches that address unfenced, and the child's
# first tries, made while the fence is up, are refused. The attack gets
# out when any try made after exec returned reaches the server; when
# exec ends the fence only after everything of the command is gone (or
# keeps it while anything is left), nothing arrives.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242
cgroot="$DF_CGROOT"
# The cgroup exec made for the command, when exec could not remove it
# because the child is still in it: empty it and remove it at the end.
cg_left=""
cleanup_cg() {
	[ -n "$cg_left" ] && [ -d "$cg_left" ] || return 0
	echo 1 >"$cg_left/cgroup.kill" 2>/dev/null || true
	df_poll 50 rmdir "$cg_left" || true
}
trap 'rc=$?; cleanup_cg; (exit $rc); df_cleanup' EXIT

# Control: unfenced, the uid reaches the blocked address (and the server
# logs the token).
df_expect_reaches_unfenced "$USER_ID"
ok "control: unfenced, uid $USER_ID reaches 198.18.1.11:80 and the server logs it"

# The command: a detached child that tries the blocked address every half
# second for 20 s (each try's URL carries this test's pid and its number;
# the child logs each outcome), then exits.
chmod 711 "$DF_TMP" # the child (uid 4242) writes its tries there
tries="$DF_TMP/tries.txt"
: >"$tries"
chmod 666 "$tries"
child='for i in $(seq 1 40); do
	curl -s -o /dev/null --max-time 1 "http://198.18.1.11/leak-$1-$i" && echo "got $i" >>"$2" || echo "refused $i" >>"$2"
	sleep 0.5
done'
st=0
df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" -- \
	sh -c 'setsid sh -c "$0" child "$1" "$2" </dev/null >/dev/null 2>&1 & sleep 1.5; exit 0' \
	"$child" "$$" "$tries" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || st=$?
[ "$st" -eq 0 ] || fail "exec of the command exited $st: $(cat "$DF_TMP/exec.err")"
! grep -q "fencing uid" "$DF_TMP/exec.err" || fail "exec fell back to the uid: $(cat "$DF_TMP/exec.err")"
# (exec sees the tree at /sys/fs/cgroup, df_wl_cg's mount)
cg_left="$(sed -n 's|.*cannot remove cgroup /sys/fs/cgroup/\([^:]*dnsfence-exec-[0-9]*\):.*|\1|p' "$DF_TMP/exec.err" | head -1)"
[ -z "$cg_left" ] || cg_left="$cgroot/$cg_left"
grep -q '^refused' "$tries" || fail "the child made no try while the fence was up (tries: $(cat "$tries"))"
ok "while exec runs, the detached child's tries are refused (the first of them)"

# After exec returned: the child, if it is still there, goes on trying
# for 20 s; watch 10 s of them.
df_poll 100 bash -c "grep -q 'GET /leak-$$-' '$DF_TMP/listener-80.log'" || true
# (pgrep exits 1 when nothing is left: what the fix makes the usual case)
left="$( (pgrep -u "$USER_ID" -a 2>/dev/null || [ $? -eq 1 ]) | tr '\n' ' ')"
n="$(df_served "leak-$$-")"
[ "$n" -eq 0 ] || fail "a child of the fenced command outlived exec and reached 198.18.1.11:80 unfenced ($n requests: $(grep "leak-$$" "$DF_TMP/listener-80.log" | head -3 | tr '\n' ' '); exec said: $(tr '\n' ' ' <"$DF_TMP/exec.err"); still running as uid $USER_ID: $left)"
grep -q "process(es) of the command were still running and were killed" "$DF_TMP/exec.err" ||
	fail "exec did not say it killed what the command left: $(tr '\n' ' ' <"$DF_TMP/exec.err")"
ok "nothing the command left behind reaches 198.18.1.11 after exec returned (still running: ${left:-nothing})"
