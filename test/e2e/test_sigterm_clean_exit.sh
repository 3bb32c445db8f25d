#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM, with queries in flight (the upstream frozen; UDP queries and an
# open TCP connection with pipelined queries waiting on it): "serve" exits
# 0 within 2 s and logs its shutdown, and the fence
# stays closed behind it (the daemon does not tear anything down): the
# rules and sets are still in place ("dnsfence check" exits 0), an address
# that was answered is still reachable, one that never was is still
# refused, and a new name resolves neither through 127.0.0.1 nor by asking
# the upstream directly.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
df_start_dnsfence allow='["*.allowed.test"]'
pid="$DF_DNSFENCE_PID"

df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_in_set dnsfence4 198.18.1.10
df_tcp_connect 198.18.1.10 80 || fail "198.18.1.10:80 (answered) should be reachable"
expect_fenced 198.18.1.11 80
ok "before: www.allowed.test answered and reachable; 198.18.1.11 (never answered) fenced"

# Queries in flight at the moment of SIGTERM.
kill -STOP "$DF_UNBOUND_PID"
ip netns exec "$DF_WL" timeout 10 "$DF_PY" - "$$" >"$DF_TMP/inflight.log" 2>&1 <<'PY' &
import socket, struct, sys, time
def q(qid, name):
    m = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        m += bytes([len(l)]) + l.encode()
    return m + b"\0" + struct.pack(">HH", 1, 1)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20):
    u.sendto(q(i + 1, "inflight-%d-%s.allowed.test" % (i, sys.argv[1])), ("127.0.0.1", 53))
t = socket.create_connection(("127.0.0.1", 53), timeout=3)
for i in range(5):
    m = q(100 + i, "inflight-tcp-%d-%s.allowed.test" % (i, sys.argv[1]))
    t.sendall(struct.pack(">H", len(m)) + m)
print("sent", flush=True)
time.sleep(8)
PY
DF_PIDS+=("$!")
df_poll 30 grep -q sent "$DF_TMP/inflight.log" || fail "the in-flight client did not start: $(cat "$DF_TMP/inflight.log")"
sleep 0.3

t0="$(df_now_ms)"
kill -TERM "$pid"
df_wait_gone_status() {
	local n=$1
	while [ "$n" -gt 0 ]; do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}
df_wait_gone_status 40 || fail "dnsfence still running 2 s after SIGTERM"
ms=$(($(df_now_ms) - t0))
st=0
wait "$pid" || st=$?
DF_DNSFENCE_PID=""
[ "$st" -eq 0 ] || fail "dnsfence exited with status $st after SIGTERM, expected 0"
ok "SIGTERM with 25 queries in flight: dnsfence exited 0 after $ms ms"
kill -CONT "$DF_UNBOUND_PID"

grep -qF "shutting down" "$DF_DNSFENCE_LOG" || fail "expected a shutdown line in the log"
ok "logged: $(grep -F 'shutting down' "$DF_DNSFENCE_LOG" | tail -n 1)"
if grep -qE "stats: .*queries=" "$DF_DNSFENCE_LOG"; then
	ok "final stats logged"
else
	fail "expected a final stats line in the log"
fi

df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] ||
	fail "after SIGTERM, dnsfence check exited $DF_CMD_RC (expected 0: rules and sets in place): $DF_CMD_OUT $DF_CMD_ERR"
ok "dnsfence check: exit 0, rules and sets still in place"
expect_in_set dnsfence4 198.18.1.10
[ "$(wl iptables -w -S OUTPUT | sed -n 1p)" = "-P OUTPUT DROP" ] ||
	fail "expected the OUTPUT policy to stay DROP, saw: $(wl iptables -w -S OUTPUT | sed -n 1p)"
[ "$(wl ip6tables -w -S OUTPUT | sed -n 1p)" = "-P OUTPUT DROP" ] ||
	fail "expected the ip6tables OUTPUT policy to stay DROP"

expect_fenced 198.18.1.11 80
expect_fenced 198.18.3.1 80
df_tcp_connect 198.18.1.10 80 || fail "198.18.1.10:80 (still in the set) should still be reachable"
ok "after exit: 198.18.1.11 and 198.18.3.1 still refused; 198.18.1.10 (in the set) still reachable"

df_dig a.b.allowed.test A +time=1
[ "$DF_DIG_RC" -ne 0 ] || [ -z "$(df_answer)" ] || fail "a.b.allowed.test got an answer from 127.0.0.1 after the daemon exited"
df_dig @198.18.0.1 a.b.allowed.test A +time=1
[ "$DF_DIG_RC" -ne 0 ] || fail "the workload reached the upstream 198.18.0.1 directly after the daemon exited"
! df_wl_as 1000 dig +time=1 +tries=1 @198.18.0.1 a.b.allowed.test A >/dev/null 2>&1 ||
	fail "uid 1000 reached the upstream 198.18.0.1 directly after the daemon exited"
expect_not_in_set dnsfence4 198.18.1.11
ok "new names do not resolve: no answer from 127.0.0.1, the upstream unreachable"
