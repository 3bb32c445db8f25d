#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two daemons in two network namespaces of one host, with one config that
# names no state_dir and no control socket (the defaults): each takes
# /run/dnsfence-NAME of its `ip netns` name, so neither touches the
# other's state or socket, and `status`, `reload` and `suggest` run in a
# namespace reach the daemon of that namespace. `suggest` asked right
# after a lookup includes it (it asks the daemon, not the file the
# daemon writes every 5 s). The host's /run/dnsfence is left alone.
source "$(dirname "$0")/lib.sh"
df_setup
chmod 755 "$DF_TMP" # the daemons read the config again after the drop

DF_WL2="df$$-wl2"
ip netns add "$DF_WL2"
DF_NETNS+=("$DF_WL2")
ip -n "$DF_WL2" link set lo up
wl2() { ip netns exec "$DF_WL2" "$@"; }

# The defaults put state under the host's /run: remove ours at exit.
dir1="/run/dnsfence-$DF_WL"
dir2="/run/dnsfence-$DF_WL2"
trap 'rc=$?; rm -rf "$dir1" "$dir2"; (exit $rc); df_cleanup' EXIT

conf="$DF_TMP/shared.json"
cat >"$conf" <<JSON
{"listen": ["127.0.0.1:53"], "upstreams": ["198.18.0.1"],
 "allow": ["www.allowed.test"], "log": {"level": "debug"}}
JSON
chmod 644 "$conf"

in_ns() { local ns=$1; shift; ip netns exec "$ns" env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" -c "$conf" "$@"; }

# --- each namespace has its own default
for pair in "$DF_WL:$dir1" "$DF_WL2:$dir2"; do
	ns=${pair%%:*} want=${pair#*:}
	got=$(in_ns "$ns" validate | "$DF_PY" -c 'import json, sys; print(json.load(sys.stdin)["state_dir"])')
	[ "$got" = "$want" ] ||
		fail "default state_dir in namespace $ns is $got, not $want: two namespaces of one host would share it"
done
ok "the default state_dir follows the namespace: $dir1, $dir2"

start() {
	local ns=$1 log=$2
	ip netns exec "$ns" env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" -c "$conf" run >>"$log" 2>&1 &
	DF_PIDS+=("$!")
	echo "$!"
}
pid1=$(start "$DF_WL" "$DF_TMP/d1.log")
pid2=$(start "$DF_WL2" "$DF_TMP/d2.log")
DF_DNSFENCE_LOG="$DF_TMP/d1.log"
for ns in "$DF_WL" "$DF_WL2"; do
	n=100
	until ip netns exec "$ns" dig +time=1 +tries=1 @127.0.0.1 ready.dnsfence.invalid A >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || { cat "$DF_TMP"/d?.log >&2; fail "the daemon in $ns did not answer"; }
		sleep 0.1
	done
done
ok "both daemons serve (pids $pid1, $pid2)"

status_field() {
	in_ns "$1" status --json | "$DF_PY" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}

# --- status reaches its own daemon
[ "$(status_field "$DF_WL" pid)" = "$pid1" ] || fail "status in $DF_WL does not reach pid $pid1"
[ "$(status_field "$DF_WL2" pid)" = "$pid2" ] || fail "status in $DF_WL2 does not reach pid $pid2"
[ "$(cat "$dir1/dnsfence.pid")" = "$pid1" ] || fail "$dir1/dnsfence.pid is not $pid1"
[ "$(cat "$dir2/dnsfence.pid")" = "$pid2" ] || fail "$dir2/dnsfence.pid is not $pid2"
[ -S "$dir1/control.sock" ] && [ -S "$dir2/control.sock" ] || fail "a control socket is missing"
ok "status in each namespace reaches that namespace's daemon; each has its own state and socket"

# --- reload reaches its own daemon
in_ns "$DF_WL" reload >/dev/null || fail "reload in $DF_WL failed"
[ "$(status_field "$DF_WL" reload_requests)" = 1 ] || fail "the daemon in $DF_WL did not reload"
[ "$(status_field "$DF_WL2" reload_requests)" = 0 ] || fail "reload in $DF_WL reached the daemon in $DF_WL2"
in_ns "$DF_WL2" reload >/dev/null || fail "reload in $DF_WL2 failed"
[ "$(status_field "$DF_WL2" reload_requests)" = 1 ] || fail "the daemon in $DF_WL2 did not reload"
ok "reload in each namespace reaches that namespace's daemon only"

# --- suggest: its own daemon's names, the last lookup included
ip netns exec "$DF_WL" dig +time=2 +tries=1 @127.0.0.1 one.denied.test A >/dev/null
ip netns exec "$DF_WL2" dig +time=2 +tries=1 @127.0.0.1 two.denied.test A >/dev/null
s1=$(in_ns "$DF_WL" suggest) || fail "suggest in $DF_WL failed"
s2=$(in_ns "$DF_WL2" suggest) || fail "suggest in $DF_WL2 failed"
grep -q '"one.denied.test"' <<<"$s1" || fail "suggest right after the lookup lacks one.denied.test: $s1"
grep -q '"two.denied.test"' <<<"$s2" || fail "suggest right after the lookup lacks two.denied.test: $s2"
! grep -q '"two.denied.test"' <<<"$s1" || fail "suggest in $DF_WL shows the other namespace's name: $s1"
! grep -q '"one.denied.test"' <<<"$s2" || fail "suggest in $DF_WL2 shows the other namespace's name: $s2"
ok "suggest right after a lookup includes it, and only its own daemon's names"

# --- the host's /run/dnsfence: not used by either daemon (other programs
# on the host may use it meanwhile, so it is judged by what ours hold)
# count PATTERN: lines of stdin that contain the fixed string PATTERN.
count() { awk -v p="$1" 'index($0, p) { n++ } END { print n + 0 }'; }
for pid in "$pid1" "$pid2"; do
	[ "$(ls -l "/proc/$pid/fd" | count " /run/dnsfence/")" = 0 ] ||
		fail "pid $pid holds files in /run/dnsfence: $(ls -l "/proc/$pid/fd")"
	[ "$(ss -xlpn | grep -F "pid=$pid," | count " /run/dnsfence/")" = 0 ] ||
		fail "pid $pid listens in /run/dnsfence: $(ss -xlpn | grep -F "pid=$pid,")"
	[ "$(ls -l "/proc/$pid/fd" | count " /run/dnsfence-df$$-")" -gt 0 ] ||
		fail "pid $pid holds nothing in its own state dir: the check above proves nothing"
done
ok "neither daemon holds a file or socket in the host's /run/dnsfence"
kill -0 "$pid1" && kill -0 "$pid2" || fail "a daemon exited"
