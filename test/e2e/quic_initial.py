#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""QUIC version 1 client Initials as a real client sends them (RFC 9000
17.2.2, protected as RFC 9001 5 says, with python3-cryptography), carrying
a TLS 1.3 ClientHello with a server name, and a UDP listener that records
what reaches it.

  quic_initial.py send ADDR PORT NAME DCID [--split] [--then SPEC]...
      one socket: the ClientHello for NAME in Initials under DCID (hex),
      in one datagram or, --split, with a post-quantum key share that
      needs two (CRYPTO frames shuffled in each, as Chrome does); then
      each SPEC on the same socket after 0.3 s: "initial:NAME:DCID" (a
      new connection's Initial), "short" (a 1-RTT-looking packet),
      "sleep:SECONDS".
  quic_initial.py short ADDR PORT
      a first packet that is no Initial, from a fresh socket.
  quic_initial.py listen PORT FILE
      append "DCID LEN" per long-header datagram ("short LEN" otherwise)
      to FILE, on every address (IPv4 and IPv6).
  quic_initial.py seed FILE NAME DCID
      the protected Initial (one datagram) written to FILE (fuzz seed).
"""
import os
import random
import socket
import struct
import sys
import time

from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SALT_V1 = bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a")


def _hmac(key, data):
    h = hmac.HMAC(key, hashes.SHA256())
    h.update(data)
    return h.finalize()


def _expand_label(secret, label, n):
    full = b"tls13 " + label
    info = struct.pack(">HB", n, len(full)) + full + b"\x00"
    return _hmac(secret, info + b"\x01")[:n]  # n <= 32: one block


def client_keys(dcid):
    secret = _expand_label(_hmac(SALT_V1, dcid), b"client in", 32)
    return (_expand_label(secret, b"quic key", 16),
            _expand_label(secret, b"quic iv", 12),
            _expand_label(secret, b"quic hp", 16))


def _ext(t, body):
    return struct.pack(">HH", t, len(body)) + body


def client_hello(name, pq=False, scid=b""):
    n = name.encode()
    sni = struct.pack(">HBH", len(n) + 3, 0, len(n)) + n
    shares = b""
    if pq:  # X25519MLKEM768 (0x11ec): 1216 bytes, as Chrome and curl send
        shares += struct.pack(">HH", 0x11EC, 1216) + os.urandom(1216)
    shares += struct.pack(">HH", 0x001D, 32) + os.urandom(32)
    groups = [0x11EC, 0x001D] if pq else [0x001D]
    tp = bytes([0x0F, len(scid)]) + scid + bytes([0x04, 0x04, 0x80, 0x10, 0x00, 0x00])
    exts = (_ext(0, sni)
            + _ext(10, struct.pack(">H", 2 * len(groups)) + b"".join(struct.pack(">H", g) for g in groups))
            + _ext(13, bytes.fromhex("000604030804 0401".replace(" ", "")))
            + _ext(16, bytes.fromhex("0003026833"))  # alpn h3
            + _ext(43, bytes.fromhex("020304"))
            + _ext(51, struct.pack(">H", len(shares)) + shares)
            + _ext(57, tp))
    body = (b"\x03\x03" + os.urandom(32) + b"\x00"
            + bytes.fromhex("0006130113021303") + b"\x01\x00"
            + struct.pack(">H", len(exts)) + exts)
    return b"\x01" + len(body).to_bytes(3, "big") + body


def _varint(v):
    if v < 64:
        return bytes([v])
    if v < 16384:
        return struct.pack(">H", 0x4000 | v)
    return struct.pack(">I", 0x80000000 | v)


def crypto_frame(off, data):
    return b"\x06" + _varint(off) + _varint(len(data)) + data


def protect(dcid, pn, payload, scid=b"", size=1200):
    """One Initial padded so the datagram is size bytes."""
    key, iv, hp = client_keys(dcid)
    head = (bytes([0xC3]) + struct.pack(">I", 1) + bytes([len(dcid)]) + dcid
            + bytes([len(scid)]) + scid + b"\x00")
    # length field (2 bytes) + pn (4) + payload + tag (16) fills the rest
    pad = size - len(head) - 2 - 4 - len(payload) - 16
    if pad > 0:
        payload += bytes(pad)
    length = 4 + len(payload) + 16
    hdr = head + struct.pack(">H", 0x4000 | length) + struct.pack(">I", pn)
    nonce = bytearray(iv)
    for i in range(8):
        nonce[11 - i] ^= (pn >> (8 * i)) & 0xFF
    ct = AESGCM(key).encrypt(bytes(nonce), payload, hdr)
    pn_off = len(hdr) - 4
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = enc.update(ct[:16]) + enc.finalize()
    out = bytearray(hdr + ct)
    out[0] ^= mask[0] & 0x0F
    for i in range(4):
        out[pn_off + i] ^= mask[1 + i]
    return bytes(out)


def initials(name, dcid, split=False):
    """The datagrams of one connection's first flight."""
    scid = os.urandom(8)
    hello = client_hello(name, pq=split, scid=scid)
    if not split:
        return [protect(dcid, 0, crypto_frame(0, hello), scid)]
    # Two datagrams; in each, the CRYPTO data in shuffled frames.
    cut = 1000
    out = []
    for pn, (lo, hi) in enumerate(((0, cut), (cut, len(hello)))):
        mid = lo + (hi - lo) // 2
        frames = [crypto_frame(lo, hello[lo:mid]), b"\x01", crypto_frame(mid, hello[mid:hi])]
        random.shuffle(frames)
        out.append(protect(dcid, pn, b"".join(frames), scid))
    return out


def cmd_send(argv):
    addr, port, name, dcid = argv[0], int(argv[1]), argv[2], bytes.fromhex(argv[3])
    rest = argv[4:]
    split = "--split" in rest
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.connect((addr, port))
    for d in initials(name, dcid, split):
        s.send(d)
        time.sleep(0.05)
    i = 0
    while i < len(rest):
        if rest[i] == "--then":
            spec = rest[i + 1]
            i += 1
            time.sleep(0.3)
            if spec == "short":
                s.send(bytes([0x40]) + os.urandom(60))
            elif spec.startswith("sleep:"):
                time.sleep(float(spec[6:]))
            else:
                _, n2, d2 = spec.split(":")
                for d in initials(n2, bytes.fromhex(d2)):
                    s.send(d)
        i += 1
    print("sent")


def cmd_short(argv):
    fam = socket.AF_INET6 if ":" in argv[0] else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.connect((argv[0], int(argv[1])))
    s.send(bytes([0x41]) + os.urandom(1199))
    print("sent")


def cmd_listen(argv):
    port, path = int(argv[0]), argv[1]
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    with open(path, "a", buffering=1) as out:
        while True:
            d, _ = s.recvfrom(65535)
            if len(d) > 6 and d[0] & 0x80 and d[5] <= 20:
                out.write("%s %d\n" % (d[6:6 + d[5]].hex(), len(d)))
            else:
                out.write("short %d\n" % len(d))


def cmd_seed(argv):
    with open(argv[0], "wb") as f:
        f.write(b"\x00" + initials(argv[1], bytes.fromhex(argv[2]))[0])


if __name__ == "__main__":
    cmds = {"send": cmd_send, "short": cmd_short, "listen": cmd_listen, "seed": cmd_seed}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])
