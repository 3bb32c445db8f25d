#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A frozen upstream (SIGSTOP: no answer, no ICMP) under a flood of unique
# allowed names, as fast as one sender goes (at most 90,000 queries, 6 s).
# Every name needs an upstream question, none is ever answered: without a
# cap the questions in flight grow until the 16-bit ID space is used up
# (issue 10: the daemon then spun at 100% CPU for good, answered nothing,
# ignored SIGTERM). With max_inflight:
#  - during the flood a denied name and a cached name are answered within
#    a second;
#  - queries beyond the cap get SERVFAIL at once (counted as over_cap);
#  - after SIGCONT, a fresh allowed name resolves again;
#  - SIGTERM ends the daemon within 5 s while questions are in flight.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<<'*.wild IN A 198.18.6.1'
df_setup
# The flood's unique names must reach the in-flight cap, not the budget.
df_start_dnsfence allow='["*.allowed.test"]' log='{"level": "info"}' wildcard_budget="$DF_BUDGET_UNBOUNDED"
pid="$DF_DNSFENCE_PID"

# Positive control, and a cache entry for later.
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
df_dig "before-$$.wild.allowed.test" A
expect_rcode NOERROR
expect_answer_contains 198.18.6.1
ok "before: www.allowed.test and a fresh wildcard name resolve"

# flood COUNT SECONDS TAG: unique names under *.wild.allowed.test from one
# UDP socket, as fast as it goes; prints "sent N replies M servfail S".
flood() {
	ip netns exec "$DF_WL" timeout 30 "$DF_PY" - "$@" <<'PY'
import random, socket, struct, sys, time
count, seconds, tag = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.setblocking(False)
head = struct.pack(">HHHHH", 0x0100, 1, 0, 0, 0)
tail = b"\x04wild\x07allowed\x04test\x00\x00\x01\x00\x01"
sent = replies = servfail = 0
def drain():
    global replies, servfail
    try:
        while True:
            m = s.recv(4096)
            replies += 1
            if len(m) >= 4 and m[3] & 15 == 2:
                servfail += 1
    except OSError:
        pass
t0 = time.monotonic()
while sent < count and time.monotonic() - t0 < seconds:
    for _ in range(256):
        label = ("u%d-%s" % (sent, tag)).encode()
        m = struct.pack(">H", sent & 0xffff) + head + bytes([len(label)]) + label + tail
        try:
            s.sendto(m, ("127.0.0.1", 53))
        except OSError:
            pass
        sent += 1
    drain()
end = time.monotonic() + 4
while time.monotonic() < end:
    drain()
    time.sleep(0.05)
print("sent %d replies %d servfail %d in %.1f s" % (sent, replies, servfail, time.monotonic() - t0))
PY
}

kill -STOP "$DF_UNBOUND_PID"
flood 90000 6 "$$" >"$DF_TMP/flood.out" 2>&1 &
flood_pid=$!
DF_PIDS+=("$flood_pid")

# During the flood: denied and cached names, each answered within 1 s.
sleep 1
for i in 1 2 3; do
	df_dig "during-$i-$$.evil.test" A +time=1 +tries=1
	expect_rcode NXDOMAIN
	df_dig www.allowed.test A +time=1 +tries=1
	expect_rcode NOERROR
	expect_answer_contains 198.18.1.10
	expect_dnsfence_running
	ok "flood second $i: denied name -> NXDOMAIN and cached name -> NOERROR, each within 1 s"
	sleep 1
done
df_wait_gone "$flood_pid" 200 || fail "the flood sender did not finish"
cat "$DF_TMP/flood.out"
read -r _ sent _ replies _ servfail _ <"$DF_TMP/flood.out" || fail "no flood report: $(cat "$DF_TMP/flood.out")"
[ "$sent" -ge 20000 ] || fail "the flood sent only $sent queries"
df_dig "after-flood-$$.evil.test" A +time=1 +tries=1
expect_rcode NXDOMAIN
ok "after $sent unique names to a frozen upstream: a denied name -> NXDOMAIN within 1 s"

# Beyond the cap the answer is an immediate SERVFAIL: the sender, which
# reads for 4 s after its last query, has every reply.
[ $((replies * 2)) -ge "$sent" ] && [ "$servfail" -gt 0 ] ||
	fail "the flood got $replies replies ($servfail SERVFAIL) to $sent queries"
kill -USR1 "$pid"
df_wait_log 20 "over_cap=" || fail "no stats line after SIGUSR1"
over_cap="$(grep -o 'over_cap=[0-9]*' "$DF_DNSFENCE_LOG" | tail -n 1 | cut -d= -f2)"
[ "$over_cap" -gt 0 ] || fail "no query was refused at the in-flight cap (over_cap=0) although $sent went to a frozen upstream"
ok "cap: $over_cap queries over max_inflight got SERVFAIL at once ($servfail SERVFAIL of $replies replies to $sent queries)"

# The upstream thaws: fresh names resolve again.
kill -CONT "$DF_UNBOUND_PID"
t0="$(df_now_ms)"
while :; do
	df_dig "after-$$.wild.allowed.test" A +time=2 +tries=1
	[ "$(df_status)" = NOERROR ] && break
	[ $(($(df_now_ms) - t0)) -lt 15000 ] || fail "15 s after SIGCONT, a fresh allowed name still fails"
	sleep 0.5
done
expect_answer_contains 198.18.6.1
ok "after SIGCONT: a fresh allowed name resolves in $(($(df_now_ms) - t0)) ms"

# SIGTERM with questions in flight to a frozen upstream.
kill -STOP "$DF_UNBOUND_PID"
flood 3000 2 "t$$" >/dev/null 2>&1 &
DF_PIDS+=("$!")
sleep 1
kill -TERM "$pid"
df_wait_gone "$pid" 50 || fail "dnsfence did not exit within 5 s of SIGTERM with questions in flight"
kill -CONT "$DF_UNBOUND_PID"
DF_DNSFENCE_PID=""
ok "SIGTERM with questions in flight to a frozen upstream: exited"
