#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fair queueing in the name check (issue 45 item 5): another user's
# allowed handshake while one uid floods the queue, in the e2e lab's two
# namespaces (test/e2e/lib.sh; everything removed after). Not a test:
# nothing here asserts a timing (test/bench/README.md).
#
# uid 4243 opens F new TCP flows to a set member (a sink on
# 198.18.1.11:443 that accepts and reads), from four processes
# (test/e2e/flood_flows.py), and once they are all connected sends a TLS
# record header on each and waits: the burst of SYNs is kept apart from
# the burst of first bytes, which is what reaches the queue (20,000 SYNs
# at once overflow the veth's backlog and cost everyone a SYN
# retransmission, check or no check). From the moment the flows are
# connected, uid 4242 opens flows one after another for S seconds to
# 198.18.1.10:443, each sending a real ClientHello (SNI
# www.allowed.test) and waiting for the first byte of the answer (a
# one-byte server): connect-to-first-byte p50/p99/max, and how many got
# nothing within 10 s; the flood's first bytes go out 1 s in. The same
# for S seconds without the flood first, and after it. The shed counters
# and the kernel queue's counts are printed after each.
#
#   test/bench/name_check_flood.sh [F] [S]     (defaults 20000 6)
# DNSFENCE_BIN picks the binary (to compare two builds).
set -euo pipefail
FLOWS=${1:-20000}
SECS=${2:-6}
PROCS=4 # flood processes, each within the hard fd limit
source "$(dirname "$0")/../e2e/lib.sh"
df_setup
chmod 755 "$DF_TMP"
F="$DF_TMP/flood_flows.py"
install -m 644 "$DF_E2E_DIR/flood_flows.py" "$F"

cat >"$DF_TMP/srv.py" <<'EOF2'
import socket
s = socket.socket()
s.bind(("198.18.1.10", 443))
s.listen(4096)
while True:
    c, _ = s.accept()
    c.settimeout(2)  # a client reset before sending must not stop the loop
    try:
        if c.recv(65536):
            c.send(b"x")
    except OSError:
        pass
    c.close()
EOF2
ip netns exec "$DF_UP" "$DF_PY" "$DF_TMP/srv.py" >>"$DF_TMP/srv.log" 2>&1 &
DF_PIDS+=("$!")
ip netns exec "$DF_UP" "$DF_PY" "$F" sink 198.18.1.11 443 >>"$DF_TMP/sink.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$DF_UP" 443 || fail "the servers did not start"

df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]' ports='["tcp/443"]' \
	log='{"level": "info"}'
df_dig www.allowed.test A
df_dig a.b.allowed.test A

cat >"$DF_TMP/client.py" <<'EOF2'
import socket, ssl, sys, time
secs = float(sys.argv[1])
ctx = ssl.create_default_context()
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
t = ctx.wrap_bio(inc, out, server_hostname="www.allowed.test")
try:
    t.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = out.read()
v, failed, n, stop = [], 0, 0, time.monotonic() + secs
while time.monotonic() < stop:
    n += 1
    t0 = time.perf_counter()
    try:
        s = socket.create_connection(("198.18.1.10", 443), timeout=10)
        s.sendall(hello)
        b = s.recv(1)
        s.close()
    except OSError:
        b = b""
    if b == b"x":
        v.append(time.perf_counter() - t0)
    else:
        failed += 1
v.sort()
pick = lambda q: v[min(len(v) - 1, int(len(v) * q))] * 1e3 if v else float("nan")
print("p50_ms %.2f p99_ms %.2f max_ms %.2f failed %d of %d"
      % (pick(0.5), pick(0.99), pick(1.0), failed, n))
EOF2
measure() { df_wl_as 4242 "$DF_PY" "$DF_TMP/client.py" "$SECS"; }
counters() {
	df_dnsfence status --json
	"$DF_PY" -c 'import json, sys
c = json.loads(sys.argv[1]).get("counters", {})
print(" ".join("%s %s" % (k, c.get(k, "-")) for k in
      ("flow_shed_pending", "flow_shed_rate", "flow_refused_timeout", "flow_accepted")))' "$DF_CMD_OUT"
	wl cat /proc/net/netfilter/nfnetlink_queue |
		awk '$1 == 4453 { print "queue_4453 waiting " $3 " dropped_full " $6 " dropped_unsent " $7 }'
}

echo "== without the flood (uid 4242's flows for $SECS s)"
measure
counters
echo "== a flood of $FLOWS flows from uid 4243: its first bytes 1 s into $SECS s"
floods=()
for i in $(seq 1 $PROCS); do
	df_wl_as 4243 "$DF_PY" "$F" flood 198.18.1.11 443 $((FLOWS / PROCS)) 20 1 >"$DF_TMP/flood.$i.out" 2>&1 &
	floods+=("$!")
	DF_PIDS+=("$!")
done
for i in $(seq 1 $PROCS); do
	df_poll 300 grep -q "^connected" "$DF_TMP/flood.$i.out" || fail "flood $i did not connect"
done
measure
counters
wait "${floods[@]}" || :
for i in $(seq 1 $PROCS); do echo "flood $i: $(tail -n 1 "$DF_TMP/flood.$i.out")"; done
echo "== after the flood"
measure
counters
