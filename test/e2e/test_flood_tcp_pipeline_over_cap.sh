#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A client that pipelines more queries on one TCP connection than the
# server keeps in flight (40 > 32), in one write, is not taken for a slow
# sender: with the upstream slow (frozen for 7 s, upstream_timeout 20 s),
# the queries beyond the cap wait, complete, in the server's buffer, and
# the 5 s deadline for a partly received message must not close the
# connection. All 40 are answered (NOERROR) once the upstream is back, on
# the same connection, and the daemon keeps running.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["*.allowed.test"]' upstream_timeout=20

kill -STOP "$DF_UNBOUND_PID"
t0="$(df_now_ms)"
ip netns exec "$DF_WL" timeout 30 "$DF_PY" - "$$" >"$DF_TMP/pipeline.out" 2>&1 <<'PY' &
import socket, struct, sys, time
N = 40
def q(qid, name):
    m = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        m += bytes([len(l)]) + l.encode()
    return m + b"\0" + struct.pack(">HH", 1, 1)
# Names under *.allowed.test that do not exist: NXDOMAIN from nsd, fine;
# a few that do: NOERROR. Every one is fresh, so each goes upstream.
names = ["p%d-%s.allowed.test" % (i, sys.argv[1]) for i in range(N)]
s = socket.create_connection(("127.0.0.1", 53), timeout=25)
s.sendall(b"".join(struct.pack(">H", len(m)) + m for m in (q(i + 1, n) for i, n in enumerate(names))))
t0 = time.monotonic()
buf, rcodes = b"", {}
while len(rcodes) < N:
    try:
        d = s.recv(65535)
    except OSError as e:
        print("error %s after %.2f s with %d replies" % (e, time.monotonic() - t0, len(rcodes)))
        sys.exit(1)
    if not d:
        print("closed by the server after %.2f s with %d of %d replies" % (time.monotonic() - t0, len(rcodes), N))
        sys.exit(1)
    buf += d
    while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
        ln = struct.unpack(">H", buf[:2])[0]
        m, buf = buf[2:2 + ln], buf[2 + ln:]
        rcodes[struct.unpack(">H", m[:2])[0]] = m[3] & 15
print("all %d replies after %.2f s, rcodes %s" % (N, time.monotonic() - t0, sorted(set(rcodes.values()))))
PY
client=$!
DF_PIDS+=("$client")
sleep 7
kill -CONT "$DF_UNBOUND_PID"
st=0
df_wait_gone "$client" 200 || fail "the pipelining client did not finish within 27 s"
wait "$client" || st=$?
ms=$(($(df_now_ms) - t0))
cat "$DF_TMP/pipeline.out"
[ "$st" -eq 0 ] || fail "40 pipelined queries on one connection: $(cat "$DF_TMP/pipeline.out")"
grep -q "rcodes \[3\]$" "$DF_TMP/pipeline.out" ||
	fail "expected NXDOMAIN (3) for every fresh name: $(cat "$DF_TMP/pipeline.out")"
ok "40 pipelined queries (cap 32 in flight), upstream frozen 7 s: all answered on the same connection ($ms ms)"
expect_dnsfence_running
df_dig +tcp www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
