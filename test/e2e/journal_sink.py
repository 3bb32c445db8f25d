# SPDX-License-Identifier: GPL-2.0-or-later
# journal_sink.py SOCKET OUT [GATE]: bind an AF_UNIX datagram socket at
# SOCKET, as journald's native socket is, and append each datagram to OUT
# as one JSON object of its fields (the native protocol: "KEY=value\n",
# or "KEY\n", a 64-bit little-endian length, the value, "\n"). With GATE,
# nothing is read until the file GATE exists: the socket fills up, as a
# journal that cannot keep up does. Used by the journal tests.
import json, os, socket, struct, sys, time

s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
out = open(sys.argv[2], "a")
while len(sys.argv) > 3 and not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
while True:
    d = s.recv(65536)
    e, i = {}, 0
    while i < len(d):
        nl = d.index(b"\n", i)
        line = d[i:nl]
        if b"=" in line:
            k, _, v = line.partition(b"=")
            i = nl + 1
        else:
            k = line
            n = struct.unpack("<Q", d[nl + 1:nl + 9])[0]
            v = d[nl + 9:nl + 9 + n]
            assert d[nl + 9 + n:nl + 10 + n] == b"\n", d
            i = nl + 10 + n
        k = k.decode()
        assert k and all(c.isupper() or c.isdigit() or c == "_" for c in k), k
        e[k] = v.decode()
    out.write(json.dumps(e) + "\n")
    out.flush()
