#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec` copies its fence's warnings to stderr, and keeps its log
# when the command fails.
#
# The config's upstream is a closed port (198.18.0.1:5399): the command's
# fence comes up, but its question for the allowed www.allowed.test gets
# no answer, and the daemon warns "upstream: no answer for
# www.allowed.test A: unreachable". exec's stderr has that line, prefixed
# "dnsfence: warning: ", while the command runs; the command's failure
# passes through, and the fence's log is kept at the path exec prints,
# with the same line; at most 16 such logs are kept (the oldest goes).
# Positive control: the same command with the lab's
# upstream reaches the name, and exec's stderr has no such warning.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242

# fexec CONF ARGS...: dnsfence -c CONF exec in the workload namespace;
# DF_CMD_RC.
fexec() {
	local conf=$1
	shift
	DF_CMD_RC=0
	df_wl_cg "$DNSFENCE_BIN" -c "$conf" exec \
		--user "$USER_ID" "$@" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
}
# The command prints a marker once its lookup failed, so the warning is
# seen to come before exec's end (the summary, the kept log's path).
CMD='getent ahostsv4 www.allowed.test || echo "lookup failed" >&2
curl -s -o /dev/null --max-time 5 http://www.allowed.test/relay-'$$

good="$DF_TMP/good.json"
cp "$DF_DNSFENCE_CONF" "$good"
df_config allow='["www.allowed.test"]' upstreams='["198.18.0.1:5399"]'
bad="$DF_DNSFENCE_CONF"

fexec "$good" -- sh -c "$CMD"
[ "$DF_CMD_RC" -eq 0 ] || fail "control: exec with a working upstream exited $DF_CMD_RC: $(cat "$DF_TMP/exec.err")"
[ "$(df_served "relay-$$")" -ge 1 ] || fail "control: the allowed name was not reached"
! grep -q 'warning: upstream' "$DF_TMP/exec.err" ||
	fail "control: a working upstream gave an upstream warning: $(cat "$DF_TMP/exec.err")"
ok "control: with a working upstream the name is reached and no upstream warning is said"

# 16 logs kept by earlier runs (the bound), 100001.log the oldest
for p in $(seq 100001 100016); do
	echo "old $p" >"$DF_TMP/state/exec/$p.log"
	touch -d "2020-01-01 00:00:$((p - 100000))" "$DF_TMP/state/exec/$p.log"
done
touch -d "2019-01-01" "$DF_TMP/state/exec/100001.log"

fexec "$bad" -- sh -c "$CMD"
err="$(cat "$DF_TMP/exec.err")"
[ "$DF_CMD_RC" -ne 0 ] && [ "$DF_CMD_RC" -ne 125 ] ||
	fail "exec with an unreachable upstream exited $DF_CMD_RC, expected curl's failure: $err"
grep -q '^dnsfence: warning: upstream: no answer for www\.allowed\.test A: unreachable' <<<"$err" ||
	fail "exec's stderr lacks the fence's upstream warning: $err"
# the warning is said while the command runs (before its end), not after
awk '/^dnsfence: warning: upstream: no answer for www\.allowed\.test/ {w = NR}
     /fence.s log is kept/ {k = NR} END {exit !(w && k && w < k)}' <<<"$err" ||
	fail "the warning does not come before exec's end: $err"
ok "the fence's warning is on exec's stderr: $(grep -m1 'warning: upstream' <<<"$err")"

log="$(sed -n "s/^dnsfence: exec: the fence's log is kept: //p" <<<"$err")"
[ -n "$log" ] || fail "exec did not print where the fence's log is kept: $err"
case "$log" in "$DF_TMP"/state/exec/*.log) ;; *) fail "the kept log $log is not in state_dir/exec" ;; esac
grep -q 'upstream: no answer for www\.allowed\.test A: unreachable' "$log" ||
	fail "the kept log $log lacks the warning: $(tail -20 "$log" 2>&1)"
ok "the fence's log is kept at $log and holds the warning"
[ ! -e "$DF_TMP/state/exec/100001.log" ] || fail "the oldest kept log was not removed past the bound"
[ -e "$DF_TMP/state/exec/100002.log" ] || fail "a kept log other than the oldest was removed"
n="$(find "$DF_TMP/state/exec" -maxdepth 1 -name '*.log' | wc -l)"
[ "$n" -eq 16 ] || fail "$n logs kept, expected the bound, 16"
ok "at most 16 logs are kept: the oldest went"
