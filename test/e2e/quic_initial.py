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
      each SPEC on the same socket after 0.3 s: "initial:NAME:DCID[:SIZE]"
      (a new connection's Initial, or the same connection's again when
      DCID is the first one's; SIZE bytes, default 1200), "again" (the
      first flight's datagrams once more, unchanged), "coalesced:NAME:
      DCID" (one 1200-byte datagram: an Initial under DCID whose AEAD tag
      is broken, then a valid one under DCID naming NAME), "hrr:NAME:DCID"
      (the connection's second ClientHello, as after a HelloRetryRequest:
      an Initial under the server's DCID, protected with the first DCID's
      keys, its CRYPTO data after the first hello's), "short" (a
      1-RTT-looking packet), "sleep:SECONDS". --size N: the first flight's
      datagrams are N bytes (as small as the hello allows) instead of 1200.
  quic_initial.py short ADDR PORT
      a first packet that is no Initial, from a fresh socket.
  quic_initial.py listen PORT FILE
      append "DCID LEN NAMES" per long-header datagram ("short LEN"
      otherwise) to FILE, on every address (IPv4 and IPv6). NAMES is what
      a server reads: the server names of the ClientHellos this datagram
      completed, comma-separated, "-" for none. Read as servers do: a
      datagram under 1200 bytes is discarded (RFC 9000 14.1), each
      coalesced Initial is opened under its own DCID's keys or a known
      connection's from the same peer, one that does not authenticate is
      skipped (RFC 9000 12.2), CRYPTO bytes already received are kept.
  quic_initial.py seed FILE NAME DCID [KIND]
      the protected Initial (one datagram) written to FILE (fuzz seed);
      KIND "coalesced": a broken Initial then a valid one under DCID;
      "handshake": the Initial, then a Handshake packet; "later": the
      Initial, then a second ClientHello's Initial under another DCID
      with DCID's keys (as after a HelloRetryRequest).
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


def protect(dcid, pn, payload, scid=b"", size=1200, keys=None, bad_tag=False):
    """One Initial padded so the datagram is size bytes, protected with
    the keys of the DCID keys (default dcid itself)."""
    key, iv, hp = client_keys(keys if keys is not None else dcid)
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
    if bad_tag:
        ct = ct[:-1] + bytes([ct[-1] ^ 0x01])
    pn_off = len(hdr) - 4
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = enc.update(ct[:16]) + enc.finalize()
    out = bytearray(hdr + ct)
    out[0] ^= mask[0] & 0x0F
    for i in range(4):
        out[pn_off + i] ^= mask[1 + i]
    return bytes(out)


def initials(name, dcid, split=False, size=1200):
    """The datagrams of one connection's first flight, and its hello."""
    scid = os.urandom(8)
    hello = client_hello(name, pq=split, scid=scid)
    if not split:
        return [protect(dcid, 0, crypto_frame(0, hello), scid, size)], hello
    # Two datagrams; in each, the CRYPTO data in shuffled frames.
    cut = 1000
    out = []
    for pn, (lo, hi) in enumerate(((0, cut), (cut, len(hello)))):
        mid = lo + (hi - lo) // 2
        frames = [crypto_frame(lo, hello[lo:mid]), b"\x01", crypto_frame(mid, hello[mid:hi])]
        random.shuffle(frames)
        out.append(protect(dcid, pn, b"".join(frames), scid, size))
    return out, hello


def coalesced(name, dcid):
    """One 1200-byte datagram: an Initial under dcid with a broken AEAD
    tag, then a valid Initial under dcid naming name."""
    broken = protect(dcid, 0, crypto_frame(0, client_hello("www.allowed.test")),
                     size=400, bad_tag=True)
    good = protect(dcid, 1, crypto_frame(0, client_hello(name)),
                   size=1200 - len(broken))
    return broken + good


def cmd_send(argv):
    addr, port, name, dcid = argv[0], int(argv[1]), argv[2], bytes.fromhex(argv[3])
    rest = argv[4:]
    split = "--split" in rest
    size = int(rest[rest.index("--size") + 1]) if "--size" in rest else 1200
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.connect((addr, port))
    first, hello = initials(name, dcid, split, size)
    for d in first:
        s.send(d)
        time.sleep(0.05)
    pn = len(first)
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
            elif spec == "again":
                for d in first:
                    s.send(d)
            elif spec.startswith("coalesced:"):
                _, n2, d2 = spec.split(":")
                s.send(coalesced(n2, bytes.fromhex(d2)))
            elif spec.startswith("hrr:"):
                _, n2, d2 = spec.split(":")
                hello2 = client_hello(n2)
                s.send(protect(bytes.fromhex(d2), pn, crypto_frame(len(hello), hello2),
                               keys=dcid))
                pn += 1
            else:
                f = spec.split(":")
                for d in initials(f[1], bytes.fromhex(f[2]),
                                  size=int(f[3]) if len(f) > 3 else 1200)[0]:
                    s.send(d)
        i += 1
    print("sent")


def cmd_short(argv):
    fam = socket.AF_INET6 if ":" in argv[0] else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.connect((argv[0], int(argv[1])))
    s.send(bytes([0x41]) + os.urandom(1199))
    print("sent")


def _read_varint(d, o):
    n = 1 << (d[o] >> 6)
    v = d[o] & 0x3F
    for i in range(1, n):
        v = v << 8 | d[o + i]
    return v, o + n


def _packets(d):
    """(first byte, dcid, packet bytes, pn offset) of each coalesced
    long-header packet, as a server splits a datagram."""
    o = 0
    while o + 7 <= len(d) and d[o] & 0x80:
        start = o
        dcil = d[o + 5]
        dcid = d[o + 6:o + 6 + dcil]
        o += 6 + dcil
        o += 1 + d[o]
        if d[start] & 0x30 == 0:
            tok, o = _read_varint(d, o)
            o += tok
        length, o = _read_varint(d, o)
        if o + length > len(d):
            return
        yield d[start], dcid, d[start:o + length], o - start
        o += length


def _open(pkt, pn_off, dcid_keys):
    """The payload of an Initial under dcid_keys' keys, or None."""
    key, iv, hp = client_keys(dcid_keys)
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = enc.update(pkt[pn_off + 4:pn_off + 20]) + enc.finalize()
    b0 = pkt[0] ^ (mask[0] & 0x0F)
    n = (b0 & 3) + 1
    pnb = bytes(pkt[pn_off + i] ^ mask[1 + i] for i in range(n))
    pn = int.from_bytes(pnb, "big")
    nonce = bytearray(iv)
    for i in range(8):
        nonce[11 - i] ^= (pn >> (8 * i)) & 0xFF
    hdr = bytes([b0]) + pkt[1:pn_off] + pnb
    try:
        return AESGCM(key).decrypt(bytes(nonce), pkt[pn_off + n:], hdr)
    except Exception:
        return None


def _crypto_frames(p):
    o = 0
    while o < len(p):
        t = p[o]
        o += 1
        if t in (0, 1):
            continue
        if t in (2, 3):
            vals = []
            for _ in range(4):
                v, o = _read_varint(p, o)
                vals.append(v)
            for _ in range(2 * vals[2] + (3 if t == 3 else 0)):
                _, o = _read_varint(p, o)
        elif t == 6:
            off, o = _read_varint(p, o)
            n, o = _read_varint(p, o)
            yield off, p[o:o + n]
            o += n
        else:
            return


def _sni(hello):
    o = 4 + 2 + 32
    o += 1 + hello[o]
    o += 2 + int.from_bytes(hello[o:o + 2], "big")
    o += 1 + hello[o]
    end = o + 2 + int.from_bytes(hello[o:o + 2], "big")
    o += 2
    while o + 4 <= end:
        t, n = struct.unpack(">HH", hello[o:o + 4])
        if t == 0:
            return hello[o + 9:o + 4 + n].decode()
        o += 4 + n
    return "(none)"


class _Conn:
    """One connection's client CRYPTO stream as the server keeps it."""

    def __init__(self):
        self.buf = {}   # offset -> byte, the first one received kept
        self.done = 0   # bytes of whole ClientHellos already reported

    def add(self, off, data):
        for i, b in enumerate(data):
            self.buf.setdefault(off + i, b)

    def hellos(self):
        names = []
        while True:
            o = self.done
            if any(o + i not in self.buf for i in range(4)):
                return names
            n = 4 + int.from_bytes(bytes(self.buf[o + i] for i in range(1, 4)), "big")
            if any(o + i not in self.buf for i in range(n)):
                return names
            names.append(_sni(bytes(self.buf[o + i] for i in range(n))))
            self.done += n


def cmd_listen(argv):
    port, path = int(argv[0]), argv[1]
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    conns = {}  # (peer, original dcid) -> _Conn
    with open(path, "a", buffering=1) as out:
        while True:
            d, peer = s.recvfrom(65535)
            if not (len(d) > 6 and d[0] & 0x80 and d[5] <= 20):
                out.write("short %d\n" % len(d))
                continue
            names = []
            if len(d) >= 1200:
                try:
                    pkts = list(_packets(d))
                except IndexError:
                    pkts = []
                for b0, dcid, pkt, pn_off in pkts:
                    if b0 & 0x30 != 0 or pkt[1:5] != b"\x00\x00\x00\x01":
                        continue
                    known = [k for (p, k) in conns if p == peer]
                    for k in [dcid] + known:
                        plain = _open(pkt, pn_off, k)
                        if plain is not None:
                            c = conns.setdefault((peer, k), _Conn())
                            for off, data in _crypto_frames(plain):
                                c.add(off, data)
                            names += c.hellos()
                            break
            out.write("%s %d %s\n" % (d[6:6 + d[5]].hex(), len(d),
                                      ",".join(names) or "-"))


def cmd_seed(argv):
    name, dcid = argv[1], bytes.fromhex(argv[2])
    kind = argv[3] if len(argv) > 3 else ""
    first, hello = initials(name, dcid, size=600 if kind else 1200)
    if kind == "coalesced":
        d = coalesced(name, dcid)
    elif kind == "handshake":
        hs = (bytes([0xE3]) + struct.pack(">I", 1) + bytes([len(dcid)]) + dcid
              + b"\x00" + struct.pack(">H", 0x4000 | 64) + os.urandom(64))
        d = first[0] + hs
    elif kind == "later":
        d = first[0] + protect(os.urandom(8), 1, crypto_frame(len(hello), client_hello(name)),
                               size=600, keys=dcid)
    else:
        d = first[0]
    with open(argv[0], "wb") as f:
        f.write(b"\x00" + d)


if __name__ == "__main__":
    cmds = {"send": cmd_send, "short": cmd_short, "listen": cmd_listen, "seed": cmd_seed}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])
