#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A two-minute demo of dnsfence, as root on Debian 12: builds it if needed,
# makes two throwaway network namespaces (an "upstream" host with nsd,
# unbound and a web server, a "workload" fenced by dnsfence), shows an
# allowed name resolving and connecting, a denied one refused without ever
# leaving, an address nobody answered refused (and the log line that says
# why), and the workload's own DNS to the upstream blocked; then what the
# operator sees (status, entries, allowed) and a learning run (audit mode,
# then suggest); then removes everything. Nothing outside those
# namespaces is touched.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: run as root (it creates network namespaces)" >&2
	exit 1
fi
export DNSFENCE_BIN="${DNSFENCE_BIN:-$PWD/build/dnsfence}"
if [ ! -x "$DNSFENCE_BIN" ] || ! command -v nsd unbound dig >/dev/null; then
	[ -x contrib/deps.sh ] && contrib/deps.sh
	cmake -S . -B build >/dev/null && cmake --build build --target dnsfence
	DNSFENCE_BIN="$PWD/build/dnsfence"
fi

# shellcheck source=../test/e2e/lib.sh
source test/e2e/lib.sh

bold="" dim="" off=""
if [ -t 1 ]; then
	bold=$(tput bold 2>/dev/null || true)
	dim=$(tput dim 2>/dev/null || true)
	off=$(tput sgr0 2>/dev/null || true)
fi
say() { printf '\n%s== %s%s\n' "$bold" "$*" "$off"; }
# run [-g REGEX] CMD...: print the command as typed in the workload, then
# its output (only the lines matching REGEX, with -g).
run() {
	local rc=0 re=""
	if [ "$1" = -g ]; then re=$2; shift 2; fi
	printf '%sworkload# %s%s\n' "$bold" "$*" "$off"
	wl "$@" >"$DF_TMP/demo.out" 2>&1 || rc=$?
	grep -E -- "${re:-.}" "$DF_TMP/demo.out" | sed 's/^/    /' || true
	[ "$rc" -eq 0 ] || printf '    %s(exit status %d: no address)%s\n' "$dim" "$rc" "$off"
}
# cli ARGS...: a dnsfence command as the operator types it, and its output.
cli() {
	printf '%soperator# dnsfence %s%s\n' "$bold" "$*" "$off"
	df_dnsfence "$@"
	printf '%s\n' "$DF_CMD_OUT" "$DF_CMD_ERR" | grep -v -e '^$' -e '^counters\.' | sed 's/^/    /' || true
}
# run_as CMD...: the same, as the workload's own unprivileged uid.
run_as() {
	local rc=0
	printf '%sworkload$ %s%s\n' "$bold" "$*" "$off"
	df_wl_as 4242 "$@" >"$DF_TMP/demo.out" 2>&1 || rc=$?
	sed 's/^/    /' "$DF_TMP/demo.out"
	[ "$rc" -eq 0 ] || printf '    %s(exit status %d)%s\n' "$dim" "$rc" "$off"
}

say "Setting up: namespace $DF_UP (nsd + unbound with the test zones) and $DF_WL (the workload)"
df_setup
df_start_listener 80
df_start_dnsfence allow='["www.allowed.test"]' log='{"level": "info"}'
printf '%sdnsfence ran "setup" (ipsets, iptables and ip6tables rules) and serves in %s\nas its resolver, with this config:%s\n' "$dim" "$DF_WL" "$off"
sed 's/^/    /' "$DF_DNSFENCE_CONF"

say "An allowed name resolves"
run dig +noall +answer www.allowed.test A
run dig +noall +answer www.allowed.test AAAA
run getent ahosts www.allowed.test

say "...and connects: its address went into the kernel set before the answer"
run ipset list dnsfence4
run_as curl -sS -m 5 -o /dev/null -w 'HTTP %{http_code} from %{remote_ip}\n' http://www.allowed.test/

say "A name that is not on the allowlist gets NXDOMAIN, with an Extended DNS Error"
run -g 'status:|EDE|ANSWER' dig secret-data.evil.test A
run getent ahosts secret-data.evil.test
printf '%sdnsfence logged:%s\n' "$dim" "$off"
grep -aF 'secret-data' "$DF_DNSFENCE_LOG" | sed 's/^/    /' || true

say "...and it never reached the upstream: unbound's query log"
sed -n 's/.*info: \([^ ]* [^ ]* [A-Z]* IN\)$/    \1/p' "$DF_TMP/unbound.log" | grep -v ' ns.allowed.test' || true
if grep -q 'evil\.test' "$DF_TMP/unbound.log"; then
	echo "${bold}unexpected: evil.test reached the upstream${off}"
	exit 1
fi
printf '    %s(no evil.test anywhere)%s\n' "$dim" "$off"

say "An address nobody answered is refused at once (a.b.allowed.test's, never asked for)"
run_as curl -sS -m 5 -o /dev/null http://198.18.1.11/
df_poll 20 grep -qF 'blocked tcp' "$DF_DNSFENCE_LOG" || true
printf '%sdnsfence logged why (the attribution line):%s\n' "$dim" "$off"
grep -aF 'blocked tcp' "$DF_DNSFENCE_LOG" | head -n 1 | sed 's/^/    /' || true

say "The workload cannot go around dnsfence: its own DNS to the upstream is blocked"
run_as dig +time=2 +tries=1 @198.18.0.1 www.allowed.test A
run_as dig +time=2 +tries=1 +tcp @198.18.0.1 www.allowed.test A

say "What the operator sees: the daemon's state, what is in the sets, and why a name is allowed"
cli status
printf '%s(status also prints every counter: `dnsfence status --json`)%s\n' "$dim" "$off"
cli entries
cli allowed www.allowed.test
cli allowed secret-data.evil.test

say "Learning an allowlist: audit mode blocks nothing and logs what enforce would block"
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]' mode='"audit"' log='{"level": "info"}'
grep -aF 'mode is "audit"' "$DF_DNSFENCE_LOG" | sed 's/^/    /' || true
run_as curl -sS -m 5 -o /dev/null -w 'HTTP %{http_code} from %{remote_ip}\n' http://www.allowed.test/
run_as curl -sS -m 5 -o /dev/null -w 'HTTP %{http_code} from %{remote_ip}\n' http://a.b.allowed.test/
grep -aF 'would deny a.b.allowed.test' "$DF_DNSFENCE_LOG" | head -n 1 | sed 's/^/    /' || true
df_stop_dnsfence
printf '%s...and suggest prints the allow list that run needed:%s\n' "$dim" "$off"
cli suggest

say "Cleaning up (namespaces, daemons, temp files)"
