# SPDX-License-Identifier: GPL-2.0-or-later
# A client that rewrites bytes the kernel already queued, for the name
# check's e2e tests. Copied into a world-readable directory (df_share)
# and run as the workload's unprivileged uid.
#
#   rewrite_retransmit.py MECH PROTO ADDR PORT SENT LATER
#
# MECH says where the first bytes' pages stay referenced by the queued
# TCP segment: "zerocopy" (send(MSG_ZEROCOPY) from the user's own mmap'd
# page; SO_ZEROCOPY needs no privilege) or "sendfile" (a file's
# page-cache page). PROTO "tls" sends a real ClientHello (Python's ssl)
# for SENT, "http" a request head with Host: SENT. The client sends all
# but the last two bytes from the page (TCP_NODELAY), waits, rewrites
# the page to the same bytes naming LATER (the same length; LATER = SENT
# leaves it as it was), then sends the last two bytes one at a time, each
# a segment of its own (MSG_EOR, a pause). A segment that never reached
# the server is retransmitted from the page: LATER's bytes.
#
# Prints what came back: "answered REC" (the first 5 bytes of the TLS
# server's answer), "page BODY" (the HTTP body), and exits 0; "reset"
# with exit 3; "timeout" (nothing within 5 s) with exit 4; "closed" (the
# server closed without an answer) with exit 5.
import mmap
import os
import socket
import ssl
import sys
import tempfile
import time

SO_ZEROCOPY = getattr(socket, "SO_ZEROCOPY", 60)
MSG_ZEROCOPY = getattr(socket, "MSG_ZEROCOPY", 0x4000000)
# Between the writes, so each leaves as a segment of its own (the first
# is on its way, its copy queued to the fence, before send returns); all
# of them well within TCP's shortest retransmission timeout (200 ms): a
# timeout while the fence holds the first segment (the kernel does not
# retransmit a segment still queued on the host) shrinks the window to
# one segment, and the last byte would wait behind the unanswered ones.
PAUSE = 0.02


def client_hello(name):
    """A real TLS ClientHello record for name (Python's ssl)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_hostname=name)
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def request_head(name):
    return ("GET / HTTP/1.1\r\nHost: %s\r\nUser-Agent: rewrite\r\n"
            "Connection: close\r\n\r\n" % name).encode()


def connect(addr, port):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((addr, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def send_first(s, mech, first, later):
    """first from a page the queued segment keeps; then the page holds
    later. Returns what keeps the page alive until the end."""
    if mech == "zerocopy":
        s.setsockopt(socket.SOL_SOCKET, SO_ZEROCOPY, 1)
        page = mmap.mmap(-1, mmap.PAGESIZE)
        page[:len(first)] = first
        n = s.send(memoryview(page)[:len(first)], MSG_ZEROCOPY | socket.MSG_EOR)
        assert n == len(first), "short zerocopy send: %d of %d" % (n, len(first))
        time.sleep(PAUSE)
        page[:len(later)] = later
        return page
    f = tempfile.TemporaryFile()
    os.pwrite(f.fileno(), first, 0)
    n = os.sendfile(s.fileno(), f.fileno(), 0, len(first))
    assert n == len(first), "short sendfile: %d of %d" % (n, len(first))
    time.sleep(PAUSE)
    os.pwrite(f.fileno(), later, 0)
    return f


def answer(s, proto):
    if proto == "tls":
        r = s.recv(5)
        if not r:
            raise EOFError
        return "answered %r" % r
    data = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        data += c
    if not data:
        raise EOFError
    body = data.partition(b"\r\n\r\n")[2]
    return "page %s" % body.decode(errors="replace").strip()


def main(argv):
    mech, proto, addr, port, sent, later = argv[1:7]
    if len(sent) != len(later):
        sys.exit("rewrite_retransmit.py: %s and %s differ in length" % (sent, later))
    data = client_hello(sent) if proto == "tls" else request_head(sent)
    assert data.count(sent.encode()) == 1, "the name is not once in the bytes"
    rewritten = data.replace(sent.encode(), later.encode())
    s = connect(addr, int(port))
    try:
        keep = send_first(s, mech, data[:-2], rewritten[:-2])
        s.send(data[-2:-1], socket.MSG_EOR)
        time.sleep(PAUSE)
        s.send(data[-1:], socket.MSG_EOR)
        print(answer(s, proto))
        del keep
    except (ConnectionResetError, BrokenPipeError):
        print("reset")
        sys.exit(3)
    except socket.timeout:
        print("timeout")
        sys.exit(4)
    except EOFError:
        print("closed")
        sys.exit(5)


if __name__ == "__main__":
    main(sys.argv)
