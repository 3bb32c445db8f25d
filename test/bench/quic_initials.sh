#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The QUIC name check's cost: new QUIC flows (one client Initial of 1200
# bytes each, SNI www.allowed.test, a fresh socket and DCID per flow) sent
# as fast as one python sender can for S seconds to a set member's
# udp/443, check on (enforce) against off (a live reload), in the e2e
# lab's namespaces (test/e2e/lib.sh; everything removed after). Printed:
# flows sent and their rate, Initials arrived at the listener, the
# queue's kernel drops (/proc/net/netfilter/nfnetlink_queue) and the
# daemon's counters. Not a test: nothing here asserts a timing
# (test/bench/README.md).
#
#   test/bench/quic_initials.sh [S] [RATE]   (defaults 5 s, 3000 flows/s)
set -euo pipefail
SECS=${1:-5}
RATE=${2:-3000}
source "$(dirname "$0")/../e2e/lib.sh"
df_setup
chmod 755 "$DF_TMP"
Q="$DF_E2E_DIR/quic_initial.py"

cat >"$DF_TMP/count.py" <<'EOF2'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
s.bind(("198.18.1.10", 443))
n = 0
out = open(sys.argv[1], "w", buffering=1)
while True:
    s.recv(2048)
    n += 1
    if n % 100 == 0:
        out.write("%d\n" % n)
EOF2
# The flows: datagrams built first (not timed), then paced sends.
cat >"$DF_TMP/flood.py" <<'EOF2'
import os, socket, sys, time
sys.path.insert(0, sys.argv[1])
import quic_initial as q
secs, rate = float(sys.argv[2]), int(sys.argv[3])
n = int(secs * rate)
pool = [q.initials("www.allowed.test", os.urandom(8))[0][0] for _ in range(min(n, 2000))]
t0 = time.monotonic()
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(pool[i % len(pool)], ("198.18.1.10", 443))
    s.close()
    ahead = (i + 1) / rate - (time.monotonic() - t0)
    if ahead > 0:
        time.sleep(ahead)
dt = time.monotonic() - t0
print("sent %d flows in %.2f s: %.0f flows/s" % (n, dt, n / dt))
EOF2

sock="$DF_TMP/control.sock"
ARGS=(allow='["www.allowed.test"]' ports='["udp/443"]'
	control='{"socket": "'"$sock"'", "watch": false}' log='{"level": "info"}')
df_start_dnsfence "${ARGS[@]}"
df_dig www.allowed.test A
queue_drops() { wl cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null | awk '{ print "queue " $1 ": waiting " $3 " queue_dropped " $6 " user_dropped " $7 }'; }

run() {
	local label=$1 arrived
	: >"$DF_TMP/count.txt"
	ip netns exec "$DF_UP" "$DF_PY" "$DF_TMP/count.py" "$DF_TMP/count.txt" &
	local cpid=$!
	sleep 0.5
	df_wl_as 4242 "$DF_PY" "$DF_TMP/flood.py" "$DF_E2E_DIR" "$SECS" "$RATE"
	sleep 1
	kill "$cpid"
	wait "$cpid" 2>/dev/null || :
	arrived=$(tail -1 "$DF_TMP/count.txt")
	echo "$label: ${arrived:-0} Initials arrived (counted by hundreds)"
	queue_drops
}
run "check on (enforce)"
kill -USR1 "$DF_DNSFENCE_PID"
sleep 0.5
grep -o 'flow_checked=[0-9]* flow_accepted=[0-9]*.*flow_queue_lost=[0-9]*' "$DF_DNSFENCE_LOG" | tail -1
df_config "${ARGS[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
run "check off"
