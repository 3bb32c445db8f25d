#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec --user USER -- CMD` run from a cgroup USER may write.
#
# exec fences the command by a fresh cgroup made below exec's own, and
# refuses root because root can write the cgroup tree and leave. But an
# ordinary user can write part of it too: systemd delegates
# user@UID.service and everything below it to UID (the directory and its
# cgroup.procs, cgroup.threads and cgroup.subtree_control are UID's), so
# `sudo dnsfence exec --user $USER -- agent` from a desktop terminal or a
# user unit makes the fence's cgroup inside a tree the command's own uid
# owns. Moving a process needs write access to the destination's
# cgroup.procs and to the common ancestor's, both the parent's here: the
# command writes its pid to the parent's cgroup.procs, is no longer in
# the fenced cgroup, and reaches everything.
#
# The lab: a cgroup owned by uid 4242 as systemd delegates one, exec
# started from it. Controls: uid 4242 reaches the blocked address
# (198.18.1.11:80, never answered) unfenced; exec run from the test's own
# cgroup refuses it. The attack gets out when the request made after the
# move reaches the server (its token in the server's log). exec refusing
# to fence from such a cgroup, or a fence the move does not leave, both
# pass.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242
cgroot="$DF_CGROOT"

deleg="/df$$-deleg" # as seen from the cgroup namespace's root
cleanup_cg() {
	local d
	[ -d "$cgroot$deleg" ] || return 0
	echo 1 >"$cgroot$deleg/cgroup.kill" 2>/dev/null || true
	for d in "$cgroot$deleg"/*/; do
		[ -d "$d" ] && df_poll 50 rmdir "$d"
	done
	df_poll 50 rmdir "$cgroot$deleg" || true
}
trap 'rc=$?; cleanup_cg; (exit $rc); df_cleanup' EXIT
mkdir "$cgroot$deleg"
# What systemd's Delegate=yes hands the unit's user.
chown "$USER_ID:$USER_ID" "$cgroot$deleg" "$cgroot$deleg/cgroup.procs" \
	"$cgroot$deleg/cgroup.threads" "$cgroot$deleg/cgroup.subtree_control"

# fexec [CGROUP] -- CMD...: dnsfence exec --user 4242 in the workload
# namespace (cgroup2 mounted at /sys/fs/cgroup: ip netns exec mounts a
# fresh /sys without it), started from CGROUP when given; DF_CMD_RC.
fexec() {
	local from=""
	if [ "$1" != -- ]; then
		from="$1"
		shift
	fi
	shift
	DF_CMD_RC=0
	bash -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 99; shift; exec "$@"' _ \
		"${from:+$cgroot$from}" ip netns exec "$DF_WL" sh -c \
		'mount -t cgroup2 cgroup2 /sys/fs/cgroup && exec "$@"' _ \
		"$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" -- "$@" \
		>"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
}

df_expect_reaches_unfenced "$USER_ID"
fexec -- curl -s -o /dev/null --max-time 3 "http://198.18.1.11/fenced-$$"
[ "$DF_CMD_RC" -eq 7 ] || fail "control: exec's curl of an unanswered address exited $DF_CMD_RC, expected 7: $(cat "$DF_TMP/exec.err")"
[ "$(df_served "fenced-$$")" -eq 0 ] || fail "control: exec's curl reached 198.18.1.11 without any move"
ok "control: uid $USER_ID reaches 198.18.1.11:80 unfenced, and exec refuses it"

# The attack, from the delegated cgroup: the command moves itself to the
# cgroup exec was started in (its fenced cgroup's parent), then tries.
fexec "$deleg" -- sh -c 'echo $$ >"/sys/fs/cgroup$1/cgroup.procs" && echo "moved to $(cat /proc/self/cgroup)" >&2
curl -s -o /dev/null --max-time 3 "http://198.18.1.11/deleg-$2"' _ "$deleg" "$$"
[ "$DF_CMD_RC" -ne 99 ] || fail "the lab could not start exec in $deleg"
sleep 0.5
n="$(df_served "deleg-$$")"
[ "$n" -eq 0 ] || fail "the fenced command moved itself out of its cgroup into $deleg (owned by its uid, as systemd delegates) and reached 198.18.1.11:80 unfenced (exec exited $DF_CMD_RC; said: $(tr '\n' ' ' <"$DF_TMP/exec.err"))"
ok "exec from a cgroup its user owns: the command cannot leave the fence (exec exited $DF_CMD_RC: $(head -c 200 "$DF_TMP/exec.err" | tr '\n' ' '))"
