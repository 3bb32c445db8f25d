#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The listener's buffer is bounded by time, not bytes: a query that
# waited there past its client's patience is dropped unread, before it
# costs any work, and counted in dnsfence_shed_total{stage="receive"}.
# The DNS process is stopped (SIGSTOP) while 20 queries arrive and is
# continued well over a second later (SHED_GIVEN_UP_NS): none of the 20
# is answered, all 20 are counted, and a query sent after it continued is
# answered. Positive control: the same 20 queries with the DNS process
# stopped only a moment are all answered and nothing is shed. And a burst
# larger than the buffer (16,000 queries, stopped a moment): the kernel
# drops the newest, and every one it dropped is counted there too (the
# socket's SO_RXQ_OVFL, given with the next query read), so answered plus
# shed is the burst.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]' metrics='"127.0.0.1:9253"'
child="$(pgrep -P "$DF_DNSFENCE_PID" -x dnsfence-dns | head -n1)"
[ -n "$child" ] || fail "no DNS process (comm dnsfence-dns) under the daemon $DF_DNSFENCE_PID"

# shed_count: dnsfence_shed_total{stage="receive"} now.
shed_count() {
	wl curl -sf --max-time 10 http://127.0.0.1:9253/metrics >"$DF_TMP/metrics.txt" ||
		fail "could not scrape the metrics"
	awk '$1 == "dnsfence_shed_total{stage=\"receive\"}" { print $2; f = 1 }
		END { if (!f) print "missing" }' "$DF_TMP/metrics.txt"
}

# burst.py TAG SENT [N]: N (20) queries for denied names (answered by the
# DNS process alone), then "sent" into $DF_TMP/TAG.sent, then the replies
# read for 6 s (into a buffer that holds them all); prints how many were
# answered.
cat >"$DF_TMP/burst.py" <<'PY'
import select, socket, struct, sys, time
tag, sent = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 20
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
s.connect(("127.0.0.1", 53))
for i in range(N):
    q = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0)
    for label in ("d%d" % i, tag, "evil", "test"):
        q += bytes([len(label)]) + label.encode()
    s.send(q + b"\0" + struct.pack(">HH", 1, 1))
open(sent, "w").close()
seen, end = set(), time.time() + 6
while len(seen) < N and time.time() < end:
    r, _, _ = select.select([s], [], [], max(0, end - time.time()))
    if r:
        seen.add(struct.unpack(">H", s.recv(4096)[:2])[0])
print(len(seen))
PY
chmod 644 "$DF_TMP/burst.py"

# stopped_burst TAG SECONDS [N]: the burst sent while the DNS process is
# stopped, continued SECONDS after it was sent; prints the answered count.
stopped_burst() {
	kill -STOP "$child"
	wl "$DF_PY" "$DF_TMP/burst.py" "$1" "$DF_TMP/$1.sent" "${3:-20}" >"$DF_TMP/$1.out" &
	local py=$!
	DF_PIDS+=("$py")
	df_poll 100 test -e "$DF_TMP/$1.sent" || { kill -CONT "$child"; fail "the burst $1 was not sent"; }
	sleep "$2"
	kill -CONT "$child"
	wait "$py" || fail "the burst $1 exited $?"
	cat "$DF_TMP/$1.out"
}
trap 'rc=$?; kill -CONT "$child" 2>/dev/null; (exit "$rc"); df_cleanup' EXIT

shed0="$(shed_count)"
[ "$shed0" != missing ] || fail "dnsfence_shed_total{stage=\"receive\"} is not exported"
answered="$(stopped_burst brief 0.05)"
[ "$answered" = 20 ] || fail "control: stopped a moment, only $answered of 20 answered"
[ "$(shed_count)" = "$shed0" ] || fail "control: the receive shed counter moved ($shed0 -> $(shed_count))"
ok "control: 20 queries that waited a moment are all answered, nothing shed"

answered="$(stopped_burst stale 1.5)"
[ "$answered" = 0 ] || fail "$answered of 20 queries were answered after over a second in the buffer"
shed1="$(shed_count)"
[ "$shed1" != missing ] && [ "$((shed1 - shed0))" -eq 20 ] ||
	fail "20 stale queries dropped, but dnsfence_shed_total{stage=\"receive\"} went $shed0 -> $shed1"
ok "20 queries that waited over a second are dropped unread and counted ($shed0 -> $shed1)"

df_dig "after-$$.evil.test" A
expect_rcode NXDOMAIN
df_dig www.allowed.test A
expect_rcode NOERROR
ok "queries sent after it continued are answered"

shed2="$(shed_count)"
answered="$(stopped_burst overflow 0.05 16000)"
# The kernel gives its drop count with the next datagram it queues.
df_dig "after-overflow-$$.evil.test" A
expect_rcode NXDOMAIN
shed3="$(shed_count)"
[ "$answered" -gt 0 ] || fail "none of the 16,000 queries of the overflow burst was answered"
[ "$((shed3 - shed2))" -gt 0 ] ||
	fail "16,000 queries into a stopped listener: $answered answered, yet nothing counted as shed ($shed2 -> $shed3)"
[ "$((answered + shed3 - shed2))" -eq 16000 ] ||
	fail "16,000 queries: $answered answered and $((shed3 - shed2)) counted as shed, $((16000 - answered - shed3 + shed2)) unaccounted for"
ok "16,000 queries into a stopped listener: $answered answered, the $((shed3 - shed2)) the kernel dropped counted as shed"
expect_dnsfence_running
