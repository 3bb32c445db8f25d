#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A healthy start is quiet: `run` with a correct config, in a correctly
# set-up namespace, logs no line at level warning, from its start to its
# stop, so that a warning means something to fix. What this machine
# cannot give (a vsock device no rule holds, no conntrack ids for the
# name check's queues, a self-test check with no control target here) is
# one info line, "start: environment: ...", never a warning; the
# self-test's and the lab's own probes (names below dnsfence.invalid) are
# logged at debug, not as a workload's denial.
#
# Correct here means: the daemon has a uid of its own (a numeric `user`:
# the host's passwd is not ours to change), `ports` lists only ports the
# name check reads (tcp/8080 would be address-only, which is worth a
# warning), and the control socket sits in a directory the daemon creates
# (0770 root:its group) below one its uid may search, as /run/dnsfence
# sits below /run ($DF_TMP is 0700, so it becomes 0711: search, no list).
#
# Positive controls: the lab's usual config (user nobody, the control
# socket straight in the 0700 $DF_TMP) warns of both, each naming the
# fix; and the same healthy config with an upstream that does not answer
# warns that it is unreachable.
source "$(dirname "$0")/lib.sh"
df_setup

uid=4291 # no passwd entry: the daemon's own uid, nobody else's
runs=0
chmod 0711 "$DF_TMP"

# run_once [KEY=JSON]...: "run" with the config (a state_dir of its own:
# the daemon's uid differs between runs), until the self-test is done, one
# allowed and one denied question, then stop; the log in $log.
run_once() {
	runs=$((runs + 1))
	DF_DNSFENCE_CMD=run df_start_dnsfence state_dir="\"$DF_TMP/state-$runs\"" "$@"
	df_poll 150 grep -q "main: dnsfence .* serving" "$DF_DNSFENCE_LOG" ||
		fail "the daemon did not become ready: $(grep -v ' debug ' "$DF_DNSFENCE_LOG")"
	df_dig www.allowed.test A
	df_dig evil.test A
	df_stop_dnsfence
	log="$DF_TMP/run-$runs.log"
	mv "$DF_DNSFENCE_LOG" "$log"
}

healthy=(user="\"$uid\"" ports='["tcp/80", "tcp/443"]' allow='["www.allowed.test"]'
	control="{\"socket\": \"$DF_TMP/run/control.sock\"}")
run_once "${healthy[@]}"
grep -q "policy: denied evil.test A from 127.0.0.1:[0-9]*: not on the allowlist" "$log" ||
	fail "control: the workload's denied name is not logged: $(grep -i denied "$log")"
ok "control: a workload's denied name is still a warning ($(grep -o 'warning policy: denied evil.test A' "$log"))"
warnings="$(grep ' warning ' "$log" | grep -v 'policy: denied evil.test A ' || true)"
[ -z "$warnings" ] || fail "a healthy run logged warnings:
$warnings"
ok "a healthy run (start, self-test, two questions, stop) logs no other warning"

[ "$(stat -c %u:%g "$DF_TMP/run")" = "0:$uid" ] ||
	fail "the control socket's directory is not root's and the daemon's group: $(stat -c %u:%g "$DF_TMP/run")"
grep -q "selftest: [0-9]* probes held" "$log" || fail "the self-test did not run: $(grep selftest "$log")"
! grep -q "could not prove: a denied name through dnsfence" "$log" ||
	fail "the self-test could not ask a denied name: $(grep 'a denied name' "$log")"
ok "the self-test proved the denied name through dnsfence (its counter read over the control socket)"
grep -q " debug policy: denied ready.dnsfence.invalid A from [^ ]*: dnsfence's own probe" "$log" ||
	fail "the lab's readiness probe is not logged at debug as dnsfence's own: $(grep 'dnsfence.invalid' "$log")"
! grep -q " warning policy: denied [^ ]*dnsfence.invalid" "$log" ||
	fail "a probe of dnsfence's own was logged as a denial"
ok "dnsfence's own probes (ready.dnsfence.invalid, the self-test's) are logged at debug only"

# The facts this machine gives, each in the one environment line.
[ "$(grep -c 'start: environment: ' "$log")" -le 1 ] ||
	fail "more than one environment line: $(grep 'start: environment' "$log")"
env_line="$(grep 'start: environment: ' "$log" || true)"
facts=0
for fact in "the kernel gives no conntrack ids" "a VM with a vsock device" "the self-test could not prove"; do
	grep -qF "$fact" "$log" || continue
	grep -qF "$fact" <<<"$env_line" || fail "'$fact' is logged outside the environment line: $(grep -F "$fact" "$log")"
	grep -q ' info start: environment: ' <<<"$env_line" || fail "the environment line is not at info: $env_line"
	facts=$((facts + 1))
done
ok "$facts environment fact(s) of this machine, all in one info line: ${env_line:0:160}..."

# Positive control 1: the lab's usual config (user nobody, the socket in
# the 0700 temp dir) is worth two warnings, each naming the fix.
chmod 0700 "$DF_TMP"
run_once allow='["www.allowed.test"]' ports='["tcp/80", "tcp/443"]'
grep -q " warning config: user: the daemon runs as nobody (uid [0-9]*).*give dnsfence a user of its own" "$log" ||
	fail "positive control: user nobody gives no warning: $(grep ' warning ' "$log")"
grep -q " warning control: $DF_TMP/control.sock: uid [0-9]* cannot reach it .*put it in a directory of its own" "$log" ||
	fail "positive control: a control socket its uid cannot reach gives no warning: $(grep ' warning ' "$log")"
ok "positive control: user nobody and an unreachable control socket warn ($(grep -c ' warning ' "$log") warnings)"

# Positive control 2: the healthy config with an upstream that does not
# answer (198.18.0.99: nothing there) warns.
chmod 0711 "$DF_TMP"
run_once "${healthy[@]}" upstreams='["198.18.0.99"]'
grep -q " warning upstream: " "$log" ||
	fail "positive control: a silent upstream gives no warning: $(grep -v ' debug ' "$log")"
ok "positive control: a silent upstream warns: $(grep -m1 ' warning upstream: ' "$log" | cut -d' ' -f3- | cut -c1-120)"
