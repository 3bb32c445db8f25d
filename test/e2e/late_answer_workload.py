#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The workload of the late-answer tests (test_upstream_late_answer_inbound_entry.sh,
# test_upstream_change_late_answer_inbound_entry.sh), run as an unprivileged
# uid in the fenced namespace: for WATCH seconds, collect the ports of the
# daemon's sockets to 198.18.0.1:53 from /proc/net/udp; bind each once the
# daemon freed it; send evil.test straight to the upstream from each
# ("control send ... failed" when refused); keep quiet QUIET seconds (so the
# daemon's entries can expire); wait for a late packet from the upstream;
# then ask again for 5 s, printing "send from P failed: ..." for refusals and
# "ANSWER from ..." for any answer.
# Usage: late_answer_workload.py WATCH QUIET [PORT]  (the upstream's port, 53)
import socket, struct, sys, time, errno
WATCH, QUIET = float(sys.argv[1]), float(sys.argv[2])
PORT = int(sys.argv[3]) if len(sys.argv) > 3 else 53
UP = "010012C6:%04X" % PORT   # 198.18.0.1:PORT as /proc/net/udp prints it
ports = set()
t0 = time.time()
print("watching", flush=True)
while time.time() - t0 < WATCH:
    for line in open("/proc/net/udp").read().splitlines()[1:]:
        f = line.split()
        if f[2] == UP:
            ports.add(int(f[1].split(":")[1], 16))
    time.sleep(0.005)
print("ports", sorted(ports), flush=True)
socks = {}
while len(socks) < len(ports) and time.time() - t0 < 20:
    for p in ports - set(socks):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind(("198.18.0.2", p))
            s.setblocking(False)
            socks[p] = s
        except OSError:
            s.close()
    time.sleep(0.05)
print("bound", sorted(socks), flush=True)
q = b"\x13\x37\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04evil\x04test\x00\x00\x01\x00\x01"
# Control: the query straight to the upstream, refused. Each send (even
# refused) refreshes the daemon's entry, so then keep quiet until it has
# expired and something comes in on one of the ports (the late answer).
for p, s in socks.items():
    try:
        s.sendto(q, ("198.18.0.1", PORT))
        print("control send from", p, "passed", flush=True)
    except OSError as e:
        print("control send from", p, "failed:", e, flush=True)
time.sleep(QUIET)
print("quiet", flush=True)
import select
r, _, _ = select.select(list(socks.values()), [], [], 40)
for s in r:
    m, peer = s.recvfrom(4096)
    print("late packet from", peer, "to port", s.getsockname()[1], "len", len(m), flush=True)
t1 = time.time()
while time.time() - t1 < 5:
    for p, s in socks.items():
        try:
            s.sendto(q, ("198.18.0.1", PORT))
        except OSError as e:
            print("send from", p, "failed:", e, flush=True)
        try:
            while True:
                m, peer = s.recvfrom(4096)
                if m[:2] == b"\x13\x37":
                    an = struct.unpack(">H", m[6:8])[0]
                    print("ANSWER from", peer, "to port", p, "rcode", m[3] & 15,
                          "answers", an, "last A", ".".join(map(str, m[-4:])), flush=True)
        except BlockingIOError:
            pass
    time.sleep(0.5)
print("done", flush=True)
