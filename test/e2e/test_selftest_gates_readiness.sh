#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The self-test proves the fence from the workload's side, and serve's
# readiness waits for it. Each probe is judged against a control sent
# with the daemon's socket mark; listeners on the upstream's tcp/22, 80
# and 853 give the TCP probes a target that answers when unfenced.
#  1. The fence as setup makes it: `selftest` passes, every probe held
#     with its control answered; serve sends READY=1 after the gate.
#  2. An extra rule (mangle OUTPUT gives the workload's DNS the daemon's
#     mark) opens the upstream directly: `check` cannot see it (exit 0),
#     a dig as nobody gets through (the path is really open), `selftest`
#     exits 1 naming "DNS over UDP to the upstream 198.18.0.1:53", and
#     serve never sends READY=1 (`probe` fails while its gate runs,
#     though other queries are answered): it logs the line and exits 1.
#  3. IPv4 only: the ip6tables rules deleted, `selftest` exits 1 naming
#     the IPv6 upstream; with only an IPv4 upstream, the IPv6 router's
#     answer (probed without a control, so reported only when it answers)
#     names it.
#  4. No control target (the upstream is an address nobody holds):
#     "could not prove", never "passed".
source "$(dirname "$0")/lib.sh"
df_setup
for port in 22 80 853; do df_start_listener "$port"; done
df_config user='"nobody"' allow='["www.allowed.test"]' upstreams='["198.18.0.1", "[2001:db8::1]"]' \
	guard_interval=3600
df_setup_fence
# The daemon (uid nobody) reaches its own control socket in the test's
# directory, as it does in /run/dnsfence, to read its upstream counter.
chmod 711 "$DF_TMP"
DF_DNSFENCE_LOG="$DF_TMP/dnsfence.log"
sock="@dnsfence-e2e-gate-$$"
mark=0x64000000

# The "systemd" side: every datagram on $NOTIFY_SOCKET, one a line.
ip netns exec "$DF_WL" "$DF_PY" - "$sock" "$DF_TMP/notify.log" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + sys.argv[1][1:])
while True:
    msg = s.recv(4096).decode()
    with open(sys.argv[2], "a") as f:
        f.write(msg.replace("\n", "|") + "\n")
PYEOF
DF_PIDS+=("$!")
sleep 0.3

# An IPv4-only fence: dnsfence's ip6tables rules gone, the policy open.
drop_v6_fence() {
	wl ip6tables -w -D OUTPUT -j DNSFENCE-OUT
	wl ip6tables -w -F DNSFENCE-OUT
	wl ip6tables -w -X DNSFENCE-OUT
	wl ip6tables -w -P OUTPUT ACCEPT
}

start_serve() {
	: >"$DF_TMP/notify.log"
	ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		NOTIFY_SOCKET="$sock" "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" serve \
		>>"$DF_DNSFENCE_LOG" 2>&1 &
	DF_DNSFENCE_PID=$!
	DF_PIDS+=("$DF_DNSFENCE_PID")
}

# 1. The fence as installed.
start_serve
df_poll 150 grep -q "READY=1" "$DF_TMP/notify.log" || fail "no READY=1 within 15 s with the fence intact"
grep -q "selftest: 15 probes held, 0 could not be proved" "$DF_DNSFENCE_LOG" ||
	fail "READY=1 without the gate's summary: $(grep selftest "$DF_DNSFENCE_LOG")"
ok "serve: READY=1 after the gate ($(grep -o '1[0-9] probes held.*' "$DF_DNSFENCE_LOG"))"
df_dnsfence selftest
[ "$DF_CMD_RC" -eq 0 ] || fail "selftest on the intact fence exited $DF_CMD_RC: $DF_CMD_OUT $DF_CMD_ERR"
grep -q "^selftest: passed: 1[0-9] probes held" <<<"$DF_CMD_OUT" || fail "selftest did not pass: $DF_CMD_OUT"
! grep -q "^could not prove\|^OPEN" <<<"$DF_CMD_OUT" || fail "selftest left something unproved: $DF_CMD_OUT"
n="$(grep -c "^held .*with the daemon's mark: answered" <<<"$DF_CMD_OUT")"
[ "$n" -ge 14 ] || fail "expected every probe's control answered, saw $n: $DF_CMD_OUT"
grep -q "^held .*a denied name (selftest-[0-9a-f]*.dnsfence.invalid) through dnsfence: answered rcode 3 locally" \
	<<<"$DF_CMD_OUT" || fail "the denied-name probe did not hold: $DF_CMD_OUT"
for what in "DNS over UDP to the upstream 198.18.0.1:53" "DNS over TCP to the upstream [2001:db8::1]:53" \
	"DNS over TLS to 198.18.0.1:853" "TCP to 198.18.0.1:80, an allowed port" "TCP to [2001:db8::1]:22" \
	"UDP (QUIC) to 198.18.0.1:443" "ICMPv6 echo to [2001:db8::1]"; do
	grep -qF "held             $what" <<<"$DF_CMD_OUT" || fail "no held probe '$what': $DF_CMD_OUT"
done
ok "selftest: passed, $n probes held with their controls answered"
df_stop_dnsfence

# 2. Another rule gives the workload's DNS the daemon's mark.
wl iptables -w -t mangle -A OUTPUT -p udp --dport 53 ! -o lo -j MARK --set-mark "$mark"
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check saw the mangle rule (exit $DF_CMD_RC); this case needs a path check cannot see"
out="$(df_wl_as 65534 dig +time=2 +tries=1 +norec @198.18.0.1 . NS 2>&1)" ||
	fail "the positive control: with the mangle rule, nobody's dig to the upstream got no answer: $out"
grep -q "status: " <<<"$out" || fail "the positive control: no DNS reply: $out"
df_dnsfence selftest
[ "$DF_CMD_RC" -eq 1 ] || fail "selftest with an open path exited $DF_CMD_RC, expected 1: $DF_CMD_OUT"
grep -q "^OPEN *DNS over UDP to the upstream 198.18.0.1:53 directly: answered uid 65534" <<<"$DF_CMD_OUT" ||
	fail "selftest did not name the open path: $DF_CMD_OUT"
grep -q "^selftest: OPEN" <<<"$DF_CMD_OUT" || fail "no OPEN summary: $DF_CMD_OUT"
ok "selftest: exit 1, $(grep -m1 '^OPEN' <<<"$DF_CMD_OUT")"
# A third upstream nobody answers for: its controls and probes wait out
# their rounds, so the gate lasts seconds, long enough to ask during it.
df_config user='"nobody"' allow='["www.allowed.test"]' upstreams='["198.18.0.1", "[2001:db8::1]", "198.18.0.77"]' \
	guard_interval=3600
df_setup_fence
: >"$DF_DNSFENCE_LOG"
start_serve
# While the gate runs the daemon answers (the prober's denied name goes
# through it), but not the readiness probe's name.
df_poll 50 wl dig +time=1 +tries=1 @127.0.0.1 other.dnsfence.invalid A ||
	fail "serve did not answer while its gate ran"
df_dnsfence probe
[ "$DF_CMD_RC" -eq 1 ] || fail "probe during the gate exited $DF_CMD_RC, expected 1 (no reply)"
ok "during the gate: queries answered, 'dnsfence probe' fails"
df_wait_gone "$DF_DNSFENCE_PID" 200 || fail "serve with an open fence kept running past 20 s"
st=0
wait "$DF_DNSFENCE_PID" 2>/dev/null || st=$?
DF_DNSFENCE_PID=""
[ "$st" -eq 1 ] || fail "serve with an open fence exited $st, expected 1"
! grep -q "READY=1" "$DF_TMP/notify.log" || fail "serve sent READY=1 with an open fence: $(cat "$DF_TMP/notify.log")"
grep -q "refusing readiness: DNS over UDP to the upstream 198.18.0.1:53 directly" "$DF_DNSFENCE_LOG" ||
	fail "serve's log does not name the open path"
df_dnsfence probe
[ "$DF_CMD_RC" -eq 1 ] || fail "probe after the refused start exited $DF_CMD_RC, expected 1"
ok "serve: no READY=1, exit 1, $(grep -o 'refusing readiness: [^;]*' "$DF_DNSFENCE_LOG"); probe fails"
wl iptables -w -t mangle -F OUTPUT
df_config user='"nobody"' allow='["www.allowed.test"]' upstreams='["198.18.0.1", "[2001:db8::1]"]' guard_interval=3600
df_setup_fence

# 3. IPv4 only.
drop_v6_fence
df_dnsfence selftest
[ "$DF_CMD_RC" -eq 1 ] || fail "selftest on an IPv4-only fence exited $DF_CMD_RC, expected 1: $DF_CMD_OUT"
grep -q "^OPEN *DNS over UDP to the upstream \[2001:db8::1\]:53 directly" <<<"$DF_CMD_OUT" ||
	fail "selftest did not name the IPv6 path: $DF_CMD_OUT"
grep -q "^OPEN *ICMPv6 echo to \[2001:db8::1\]" <<<"$DF_CMD_OUT" || fail "ICMPv6 echo not found open: $DF_CMD_OUT"
grep -q "^held *DNS over UDP to the upstream 198.18.0.1:53" <<<"$DF_CMD_OUT" || fail "IPv4 no longer held: $DF_CMD_OUT"
ok "IPv4-only fence: exit 1, $(grep -c '^OPEN' <<<"$DF_CMD_OUT") IPv6 probes open"

# 3b. The same with only an IPv4 upstream: the IPv6 router answers.
df_config user='"nobody"' allow='["www.allowed.test"]' upstreams='["198.18.0.1"]' guard_interval=3600
df_setup_fence
df_dnsfence selftest
[ "$DF_CMD_RC" -eq 0 ] || fail "selftest with the fence intact (IPv4 upstream) exited $DF_CMD_RC: $DF_CMD_OUT"
grep -q "^could not prove *IPv6: the namespace has IPv6 routes, but no upstream" <<<"$DF_CMD_OUT" ||
	fail "no IPv6 upstream not said: $DF_CMD_OUT"
! grep -q "router" <<<"$DF_CMD_OUT" || fail "a silent router was reported (no control can prove it): $DF_CMD_OUT"
drop_v6_fence
df_dnsfence selftest
[ "$DF_CMD_RC" -eq 1 ] || fail "selftest on an IPv4-only fence, IPv4 upstream, exited $DF_CMD_RC: $DF_CMD_OUT"
grep -q "^OPEN *ICMPv6 echo to the router 2001:db8::1: answered" <<<"$DF_CMD_OUT" ||
	fail "the IPv6 router's answer was not found: $DF_CMD_OUT"
ok "IPv4-only fence, IPv4 upstream: exit 1, $(grep -m1 '^OPEN' <<<"$DF_CMD_OUT" | cut -c1-80)..."

# 4. Nothing that would answer: an upstream address nobody holds.
df_config user='"nobody"' allow='["www.allowed.test"]' upstreams='["198.18.0.99"]'
df_setup_fence
df_dnsfence selftest
[ "$DF_CMD_RC" -eq 0 ] || fail "selftest without a control target exited $DF_CMD_RC: $DF_CMD_OUT"
grep -q "^selftest: could not prove" <<<"$DF_CMD_OUT" || fail "expected 'could not prove': $DF_CMD_OUT"
! grep -q "passed" <<<"$DF_CMD_OUT" || fail "selftest said passed without a control target: $DF_CMD_OUT"
grep -q "^could not prove *DNS over UDP to the upstream 198.18.0.99:53 directly: no control target" <<<"$DF_CMD_OUT" ||
	fail "the upstream probe was not reported unproved: $DF_CMD_OUT"
grep -q "^could not prove *IPv6: the namespace has IPv6 routes" <<<"$DF_CMD_OUT" ||
	fail "IPv6 routes without an IPv6 target not reported: $DF_CMD_OUT"
ok "no control target: $(grep '^selftest:' <<<"$DF_CMD_OUT")"
