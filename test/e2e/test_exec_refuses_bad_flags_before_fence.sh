#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec` judges every flag's value before it makes anything.
#
# `--allow https://www.evil.test` (a URL, not a name), `--ecosystem pypy`
# and `--port tcp:9999` are each refused with status 125, the error naming
# the flag and the value (and, for the URL, the form exec takes:
# `--allow www.evil.test`), and nothing is left: no state_dir/exec/PID
# directory, no cgroup below the test's, no set, no DNSFENCE chain, no
# "removing the command's fence failed" line, and the next exec runs.
# Where the build's default config (SYSCONFDIR/dnsfence/dnsfence.json, as
# --help names it) is missing, exec with no -c, no DNSFENCE_CONFIG and
# nothing to allow is refused the same way.
# Positive controls: `--allow www.evil.test` (the right form) lets the
# command reach www.evil.test, which the config alone denies; `--port
# tcp/9999` lets it reach www.allowed.test:9999, which `ports` alone
# blocks; `--ecosystem github` allows github.com (its preset's), which
# the config alone denies.
source "$(dirname "$0")/lib.sh"
df_exec_lab
df_start_listener 9999
USER_ID=4242

# fexec ARGS...: dnsfence exec in the workload namespace; DF_CMD_RC.
fexec() {
	DF_CMD_RC=0
	df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec \
		--user "$USER_ID" "$@" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
}

# expect_nothing_left WHAT [FIND-ARGS]: no trace of an exec in the
# namespace, the state directory (what FIND-ARGS select there) or the
# test's cgroup.
expect_nothing_left() {
	local left
	left="$(find "$DF_TMP/state" -mindepth 1 -path '*exec/*' "${@:2}" 2>/dev/null || true)"
	[ -z "$left" ] || fail "$1 left in state_dir/exec: $left"
	left="$(find "$DF_CG" -mindepth 1 -type d -name 'dnsfence-exec-*')"
	[ -z "$left" ] || fail "$1 left a cgroup: $left"
	left="$(ip netns exec "$DF_WL" ipset list -n | grep '^dfx' || true)"
	[ -z "$left" ] || fail "$1 left sets: $left"
	left="$(ip netns exec "$DF_WL" iptables-save | grep DNSFENCE || true)"
	[ -z "$left" ] || fail "$1 left iptables rules: $left"
	left="$(ip netns exec "$DF_WL" ip6tables-save | grep DNSFENCE || true)"
	[ -z "$left" ] || fail "$1 left ip6tables rules: $left"
}

# refused FLAG VALUE PATTERN: exec FLAG VALUE is refused (125) before
# anything is made, the error naming FLAG VALUE and matching PATTERN.
refused() {
	fexec "$1" "$2" -- sh -c 'exit 0'
	local err
	err="$(cat "$DF_TMP/exec.err")"
	[ "$DF_CMD_RC" -eq 125 ] || fail "exec $1 $2 exited $DF_CMD_RC, expected 125: $err"
	grep -qF -- "$1 $2: " <<<"$err" || fail "the refusal of $1 $2 does not name the flag: $err"
	grep -q -- "$3" <<<"$err" || fail "the refusal of $1 $2 does not say '$3': $err"
	! grep -q 'allow\[0\]\|removing the command' <<<"$err" ||
		fail "the refusal of $1 $2 names a generated file or a teardown: $err"
	expect_nothing_left "a refused $1 $2"
	ok "exec $1 $2 is refused before anything is made: $(head -1 <<<"$err")"
}

refused --allow https://www.evil.test 'give --allow www\.evil\.test'
refused --ecosystem pypy 'did you mean "pypi"'
refused --port tcp:9999 'tcp/N'

# No config file at all (no -c, no DNSFENCE_CONFIG, no default file)
# and nothing to allow: refused before anything is made, naming the file
# and the flags that would do. Only where the default file is missing.
default="$("$DNSFENCE_BIN" --help | sed -n 's/.*config file (default $DNSFENCE_CONFIG, else \(.*\))$/\1/p')"
[ -n "$default" ] || fail "--help does not name the default config file"
if [ ! -e "$default" ]; then
	DF_CMD_RC=0
	df_wl_cg env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" exec --user "$USER_ID" -- true \
		>"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
	err="$(cat "$DF_TMP/exec.err")"
	[ "$DF_CMD_RC" -eq 125 ] || fail "exec with no config file exited $DF_CMD_RC, expected 125: $err"
	grep -qF "$default: " <<<"$err" && grep -q -- '--allow NAME or --ecosystem NAME' <<<"$err" ||
		fail "the refusal without a config file does not name the file and the flags: $err"
	expect_nothing_left "exec without a config file"
	ok "exec with no config file and nothing to allow is refused: $err"
fi

# The right forms, after the refusals: the first exec is not tripped up.
fexec -- curl -s -o /dev/null --max-time 5 "http://www.evil.test/denied-$$"
[ "$(df_served "denied-$$")" -eq 0 ] || fail "control: www.evil.test is reached without --allow"
fexec --allow www.evil.test -- curl -s -o /dev/null --max-time 5 "http://www.evil.test/allowed-$$"
[ "$DF_CMD_RC" -eq 0 ] || fail "exec --allow www.evil.test exited $DF_CMD_RC: $(cat "$DF_TMP/exec.err")"
df_poll 30 bash -c "grep -q 'GET /allowed-$$' '$DF_TMP/listener-80.log'" ||
	fail "exec --allow www.evil.test did not reach www.evil.test"
ok "control: --allow www.evil.test reaches the name the config alone denies"

fexec -- curl -s -o /dev/null --max-time 3 "http://www.allowed.test:9999/port-denied-$$"
! grep -q "GET /port-denied-$$" "$DF_TMP/listener-9999.log" ||
	fail "control: tcp/9999 is reached without --port"
fexec --port tcp/9999 -- curl -s -o /dev/null --max-time 5 "http://www.allowed.test:9999/port-$$"
[ "$DF_CMD_RC" -eq 0 ] || fail "exec --port tcp/9999 exited $DF_CMD_RC: $(cat "$DF_TMP/exec.err")"
df_poll 30 bash -c "grep -q 'GET /port-$$' '$DF_TMP/listener-9999.log'" ||
	fail "exec --port tcp/9999 did not reach www.allowed.test:9999"
ok "control: --port tcp/9999 reaches the port the config's ports alone block"
# (a failed command's fence log is kept there: PID.log, no directory)
# --ecosystem: the preset's github.com is asked upstream, not denied (the
# lab's upstream has no such zone: the answer is an error, which is
# enough); www.evil.test is asked too, so that the summary is printed.
ASK='getent hosts github.com; getent hosts www.evil.test; exit 0'
fexec -- sh -c "$ASK"
grep -q 'denied .*github\.com.*fix: --allow github\.com' "$DF_TMP/exec.err" ||
	fail "control: github.com is not denied without --ecosystem: $(cat "$DF_TMP/exec.err")"
fexec --ecosystem github -- sh -c "$ASK"
err="$(cat "$DF_TMP/exec.err")"
[ "$DF_CMD_RC" -eq 0 ] || fail "exec --ecosystem github exited $DF_CMD_RC: $err"
grep -q 'denied .*www\.evil\.test' <<<"$err" || fail "--ecosystem github: no summary: $err"
! grep -q 'denied .*github\.com' <<<"$err" || fail "--ecosystem github: github.com is still denied: $err"
grep -q 'allowed .*github\.com' <<<"$err" || fail "--ecosystem github: github.com is not among the entries used: $err"
ok "control: --ecosystem github allows the preset's github.com, which the config alone denies"

expect_nothing_left "the runs" -type d
ok "nothing is left after the runs"
