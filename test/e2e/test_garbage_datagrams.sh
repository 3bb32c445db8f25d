#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 2,000 random datagrams (pure noise and mangled DNS queries, 0..600 bytes)
# sent to the listener do not crash or wedge the daemon: afterwards it is
# still running and answers an allowed and a denied name correctly.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'

seed="${DF_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
echo "seed $seed (rerun with DF_SEED=$seed)"
wl timeout 30 "$DF_PY" - "$seed" <<'PY' || fail "the garbage sender failed or took longer than 30 s"
import random, socket, struct, sys, time
rnd = random.Random(int(sys.argv[1]))
socks = [(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), ("127.0.0.1", 53)),
         (socket.socket(socket.AF_INET6, socket.SOCK_DGRAM), ("::1", 53))]
for s, _ in socks:
    s.setblocking(False)

def name():
    return b"".join(bytes([len(l)]) + l for l in (b"www", b"allowed", b"test")) + b"\0"

def datagram(i):
    n = rnd.randint(0, 600)
    kind = i % 4
    if kind == 0:  # pure noise
        return rnd.randbytes(n)
    # a DNS header, then noise or a mangled question
    hdr = struct.pack(">HHHHHH", rnd.getrandbits(16), rnd.getrandbits(16),
                      rnd.choice([0, 1, 1, 2, 65535]), rnd.choice([0, 0, 1, 65535]),
                      rnd.choice([0, 0, 1]), rnd.choice([0, 1, 2]))
    if kind == 1:
        return (hdr + rnd.randbytes(n))[:n]
    body = name() + struct.pack(">HH", rnd.choice([1, 28, 65, 255, 0]), rnd.choice([1, 3, 255]))
    if kind == 2:  # a plausible question, cut or with a corrupted byte
        msg = bytearray(hdr + body + rnd.randbytes(rnd.randint(0, 40)))
        if msg and rnd.random() < 0.7:
            msg[rnd.randrange(len(msg))] = rnd.getrandbits(8)
        return bytes(msg[: rnd.randint(0, len(msg))])
    # compression pointers, loops and oversize labels in the question
    evil = rnd.choice([b"\xc0\x0c", b"\xc0\x00", b"\x3f" + b"a" * 63 * 1, b"\xff" * 8,
                       b"\x01a" * 130 + b"\0", b"\x40abc", b"\x80\x01"])
    return (hdr + evil + rnd.randbytes(max(0, n - 12 - len(evil))))[:max(n, 12)]

deadline = time.monotonic() + 25
for i in range(2000):
    s, addr = socks[i % 2]
    try:
        s.sendto(datagram(i), addr)
    except (BlockingIOError, ConnectionRefusedError):
        pass
    if i % 50 == 49:
        time.sleep(0.005)  # let the daemon drain its socket
        for s2, _ in socks:  # discard replies
            try:
                while s2.recv(4096):
                    pass
            except (BlockingIOError, ConnectionRefusedError):
                pass
    if time.monotonic() > deadline:
        sys.exit("sending 2000 datagrams took too long")
print("sent 2000 datagrams")
PY
ok "2000 random datagrams sent to 127.0.0.1:53 and [::1]:53"

sleep 0.2
expect_dnsfence_running
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
df_dig "after-garbage-$$.evil.test" A
expect_rcode NXDOMAIN
expect_out_contains "EDE: 15 (Blocked)"
df_dig +tcp www.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
expect_dnsfence_running
ok "dnsfence still running; allowed -> NOERROR, denied -> NXDOMAIN, TCP works"
