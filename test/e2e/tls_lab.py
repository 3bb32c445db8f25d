# SPDX-License-Identifier: GPL-2.0-or-later
# A TLS server that logs the server name it reads, and clients that send
# crafted ClientHellos (real ones from Python's ssl, edited), for the name
# check's e2e tests. Copied into $DF_TMP before a test runs it.
#
#   tls_lab.py serve LOG CERT KEY PORT ADDR...
#       One listener per ADDR on PORT. Its servername callback appends
#       "sni NAME" ("sni -" without one) to LOG as it reads a ClientHello;
#       a completed handshake appends "done NAME" and answers one read
#       with "page NAME".
#   tls_lab.py route LOG PORT ADDR...
#       A front end that routes by the first server_name of a ClientHello
#       (as SNI proxies do): appends "route NAME" to LOG, closes.
#   tls_lab.py get ADDR PORT NAME
#       A whole handshake for NAME and one request; prints the answer.
#   tls_lab.py hello ADDR PORT NAME
#       A real ClientHello for NAME alone; prints the answer.
#   tls_lab.py urgent ADDR PORT SEEN HIDDEN
#       The urgent-byte polyglot: one byte sent with MSG_OOB, so a reader
#       that keeps it reads server_name SEEN and one that drops it (every
#       socket, by default) reads HIDDEN.
#   tls_lab.py hrr ADDR PORT FIRST SECOND
#       A ClientHello naming FIRST with no key share, which a TLS 1.3
#       server answers with a HelloRetryRequest, then a ChangeCipherSpec
#       and a second ClientHello naming SECOND.
#   tls_lab.py dupsni ADDR PORT FIRST SECOND DUMMIES
#       A real hello's extensions, DUMMIES unknown ones, then server_name
#       FIRST and server_name SECOND.
#   tls_lab.py slow ADDR PORT NAME PARTS PAUSE
#       A whole handshake for NAME and one request, its ClientHello
#       written in PARTS segments PAUSE seconds apart; prints the answer.
#
# A client prints what the server sent back, or "reset", and exits 0;
# exit 3 means the connection was reset.
import socket
import ssl
import sys
import threading
import time


def u16(n):
    return n.to_bytes(2, "big")


def ext(kind, data):
    return u16(kind) + u16(len(data)) + data


def sni(name):
    n = name.encode()
    return ext(0, u16(len(n) + 3) + b"\0" + u16(len(n)) + n)


def client_hello(name):
    """A real ClientHello record from Python's ssl (name None: no SNI)."""
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


def split_hello(rec):
    """(the body up to the extensions, the extensions) of a one-record hello."""
    assert rec[0] == 22 and rec[5] == 1, "not a ClientHello record"
    body = rec[9:]
    p = 2 + 32
    p += 1 + body[p]
    p += 2 + int.from_bytes(body[p:p + 2], "big")
    p += 1 + body[p]
    return body[:p], body[p + 2:]


def record(head, exts):
    body = head + u16(len(exts)) + exts
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + u16(len(hs)) + hs


def connect(addr, port):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((addr, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def reply(s):
    try:
        r = s.recv(5)
    except (ConnectionResetError, BrokenPipeError):
        print("reset")
        sys.exit(3)
    except socket.timeout:
        print("timeout")
        return
    print("answered %r" % r)


def urgent(addr, port, seen, hidden):
    # Appended to a real hello's extensions, as the keeper of the urgent
    # byte X reads them:      4a4a len=X [00 | hidden-sni | 5a5a len]
    #                         server_name seen
    # and as the server reads them, X gone and one more byte (B) at the end:
    #                         4a4a len=0, server_name hidden,
    #                         5a5a [server_name seen | B]
    head, exts = split_hello(client_hello(None))
    h, s = sni(hidden), sni(seen)
    x = 1 + len(h) + 4
    block = b"\x4a\x4a\x00" + bytes([x]) + b"\x00" + h + b"\x5a\x5a" + \
        u16(len(s) + 1) + s
    stream = record(head, exts + block) + b"\x00"
    k = 9 + len(head) + 2 + len(exts) + 3
    # The first write ends with the urgent byte (MSG_OOB marks a write's
    # last byte), the rest follows alone.
    c = connect(addr, port)
    c.send(stream[:k + 1], socket.MSG_OOB)
    time.sleep(0.2)
    try:
        c.sendall(stream[k + 1:])
    except (ConnectionResetError, BrokenPipeError):
        print("reset")
        sys.exit(3)
    reply(c)


def without_key_shares(rec, name):
    """rec's hello naming name instead, its key_share offering no share
    (a server then asks for one: a HelloRetryRequest)."""
    head, exts = split_hello(rec)
    out, p = b"", 0
    while p < len(exts):
        kind = int.from_bytes(exts[p:p + 2], "big")
        n = int.from_bytes(exts[p + 2:p + 4], "big")
        if kind == 0:
            out += sni(name)
        elif kind == 0x33:
            out += ext(0x33, u16(0))
        else:
            out += exts[p:p + 4 + n]
        p += 4 + n
    return record(head, out)


def read_record(c):
    data = b""
    while len(data) < 5 or len(data) < 5 + int.from_bytes(data[3:5], "big"):
        b = c.recv(65536)
        if not b:
            raise ConnectionResetError("closed")
        data += b
    return data


def hrr(addr, port, first, second):
    # The second hello is a real one for second; the first is the same
    # naming first, with an empty key_share: the server answers with a
    # HelloRetryRequest (its random is SHA-256("HelloRetryRequest")).
    hello2 = client_hello(second)
    c = connect(addr, port)
    try:
        c.sendall(without_key_shares(hello2, first))
        sh = read_record(c)
        if sh[11:15] != bytes.fromhex("cf21ad74"):
            print("no HelloRetryRequest: %r" % sh[:16])
            sys.exit(4)
        time.sleep(0.2)
        c.sendall(b"\x14\x03\x03\x00\x01\x01" + hello2)
    except (ConnectionResetError, BrokenPipeError):
        print("reset")
        sys.exit(3)
    reply(c)


def dupsni(addr, port, first, second, dummies):
    head, exts = split_hello(client_hello(None))
    block = b""
    for i in range(dummies):
        block += ext(0x7000 + i, b"")
    block += sni(first) + sni(second)
    c = connect(addr, port)
    c.sendall(record(head, exts + block))
    reply(c)


def get(addr, port, name):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with ctx.wrap_socket(connect(addr, port), server_hostname=name) as t:
            t.sendall(b"GET\n")
            print(t.recv(100).decode())
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError) as e:
        print("reset: %s" % e)
        sys.exit(3)


def slow(addr, port, name, parts, pause):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_hostname=name)
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = out.read()
    step = -(-len(hello) // parts)
    c = connect(addr, port)
    c.settimeout(20)

    def pump(op):
        """op() on tls, sending what it writes and feeding what comes."""
        while True:
            try:
                r = op()
                c.sendall(out.read())
                return r
            except ssl.SSLWantReadError:
                c.sendall(out.read())
                b = c.recv(65536)
                if not b:
                    raise ConnectionResetError("closed")
                inc.write(b)

    try:
        for i in range(0, len(hello), step):
            if i:
                time.sleep(pause)
            c.sendall(hello[i:i + step])
        pump(tls.do_handshake)
        tls.write(b"GET\n")
        print(pump(lambda: tls.read(100)).decode().strip())
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError) as e:
        print("reset: %s" % e)
        sys.exit(3)
    except socket.timeout:
        print("timeout")
        sys.exit(4)


def serve(log, cert, key, port, addrs):
    out = open(log, "a", buffering=1)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    def on_name(sock, name, c):
        sock.name_read = name or "-"
        out.write("sni %s\n" % sock.name_read)

    ctx.sni_callback = on_name

    def one(c):
        c.settimeout(10)
        try:
            t = ctx.wrap_socket(c, server_side=True)
            name = getattr(t, "name_read", "-")
            out.write("done %s\n" % name)
            t.recv(100)
            t.sendall(("page %s\n" % name).encode())
            t.close()
        except (OSError, ssl.SSLError):
            c.close()

    def listen(addr):
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        ls = socket.socket(fam, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((addr, port))
        ls.listen(64)
        while True:
            c, _ = ls.accept()
            threading.Thread(target=one, args=(c,), daemon=True).start()

    ts = [threading.Thread(target=listen, args=(a,), daemon=True) for a in addrs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def first_name(hello):
    """The first server_name of a one-record ClientHello, or "-"."""
    head, exts = split_hello(hello)
    p = 0
    while p + 4 <= len(exts):
        kind = int.from_bytes(exts[p:p + 2], "big")
        n = int.from_bytes(exts[p + 2:p + 4], "big")
        if kind == 0:
            d = exts[p + 4:p + 4 + n]
            return d[5:5 + int.from_bytes(d[3:5], "big")].decode()
        p += 4 + n
    return "-"


def route(log, port, addrs):
    out = open(log, "a", buffering=1)

    def one(c):
        c.settimeout(10)
        data = b""
        try:
            while len(data) < 5 or len(data) < 5 + int.from_bytes(data[3:5], "big"):
                b = c.recv(65536)
                if not b:
                    break
                data += b
            out.write("route %s\n" % first_name(data))
        except (OSError, ValueError, AssertionError):
            pass
        c.close()

    def listen(addr):
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        ls = socket.socket(fam, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((addr, port))
        ls.listen(64)
        while True:
            c, _ = ls.accept()
            threading.Thread(target=one, args=(c,), daemon=True).start()

    ts = [threading.Thread(target=listen, args=(a,), daemon=True) for a in addrs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def plain(addr, port, name):
    """A real ClientHello for name, sent alone; prints the answer."""
    c = connect(addr, port)
    c.sendall(client_hello(name))
    reply(c)


def main(argv):
    cmd = argv[1]
    if cmd == "serve":
        serve(argv[2], argv[3], argv[4], int(argv[5]), argv[6:])
    elif cmd == "route":
        route(argv[2], int(argv[3]), argv[4:])
    elif cmd == "hello":
        plain(argv[2], int(argv[3]), argv[4])
    elif cmd == "get":
        get(argv[2], int(argv[3]), argv[4])
    elif cmd == "urgent":
        urgent(argv[2], int(argv[3]), argv[4], argv[5])
    elif cmd == "hrr":
        hrr(argv[2], int(argv[3]), argv[4], argv[5])
    elif cmd == "dupsni":
        dupsni(argv[2], int(argv[3]), argv[4], argv[5], int(argv[6]))
    elif cmd == "slow":
        slow(argv[2], int(argv[3]), argv[4], int(argv[5]), float(argv[6]))
    else:
        sys.exit("tls_lab.py: unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
