#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The latency of one upstream question after an idle moment, in the e2e
# lab's two namespaces (test/e2e/lib.sh; everything removed after). Not a
# test: nothing here asserts a timing (test/bench/README.md).
#
# c-ares 1.18 closes its sockets whenever no query is in flight, so each
# of N sequential questions (a fresh name under a wildcard of nsd, which
# dnsfence asks directly: no recursive resolver between) needs a new
# upstream socket from the privileged parent: a spare taken at once, or a
# round trip to the parent. A python client in the workload times each
# question (send to reply, perf_counter) with a pause of PAUSE_MS between
# them, and prints the median, p90 and p99.
#
#   DNSFENCE_BIN=/abs/dnsfence test/bench/idle_question.sh [N] [PAUSE_MS]
#   (defaults 200 20)
set -euo pipefail
N=${1:-200}
PAUSE_MS=${2:-20}
source "$(dirname "$0")/../e2e/lib.sh"
df_zone_add allowed.test.zone <<<'*.idle IN A 198.18.1.10'
df_setup
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["198.18.0.1:5300"]' \
	log='{"level":"info"}'

cat >"$DF_TMP/client.py" <<'EOF'
import os, socket, struct, sys, time

n, pause = int(sys.argv[1]), int(sys.argv[2]) / 1000.0
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.connect(("127.0.0.1", 53))
lat, lost = [], 0
for i in range(n):
    qid = i & 0xFFFF
    name = "q%d-%d.idle.allowed.test" % (i, os.getpid())
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    q += struct.pack(">HH", 1, 1)
    t0 = time.perf_counter()
    s.send(q)
    try:
        while True:
            r = s.recv(4096)
            if struct.unpack(">H", r[:2])[0] == qid:
                break
    except socket.timeout:
        lost += 1
        continue
    lat.append((time.perf_counter() - t0) * 1e6)
    if r[3] & 0x0F != 0:
        sys.exit("%s: rcode %d" % (name, r[3] & 0x0F))
    time.sleep(pause)
lat.sort()
pick = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print("questions %d  lost %d  median %.0f us  p90 %.0f us  p99 %.0f us  min %.0f us"
      % (len(lat), lost, pick(0.5), pick(0.9), pick(0.99), lat[0]))
EOF
wl "$DF_PY" "$DF_TMP/client.py" "$N" "$PAUSE_MS"
