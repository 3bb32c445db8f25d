#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Many new TCP flows that each send a few bytes and wait, as a workload
starving the name check's queue would (issue 45 item 5); and the sink
that accepts them.

  flood_flows.py flood ADDR PORT N HOLD_S [PAUSE_S]
      open N connections to ADDR:PORT (non-blocking, as fast as they
      connect), print "connected C" once all are (or 10 s passed), wait
      PAUSE_S seconds (default 0), send 5 bytes (a TLS record header) on
      each, print "ready", keep them open HOLD_S seconds, then print
      "connected C sent S reset R" (R: the sockets the peer or the fence
      reset meanwhile). The pause keeps the SYN burst and the burst of
      first bytes apart.
  flood_flows.py sink ADDR PORT
      accept every connection on ADDR:PORT and read and discard what
      arrives, without answering.
"""
import errno
import os
import resource
import select
import socket
import sys
import time

HEADER = b"\x16\x03\x01\x02\x00"


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def cmd_flood(argv):
    addr, port, n, hold = argv[0], int(argv[1]), int(argv[2]), float(argv[3])
    pause = float(argv[4]) if len(argv) > 4 else 0.0
    n = min(n, raise_nofile() - 64)
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    ep = select.epoll()
    socks = {}
    for _ in range(n):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect((addr, port))
        except BlockingIOError:
            pass
        socks[s.fileno()] = s
        ep.register(s.fileno(), select.EPOLLOUT)
    deadline = time.monotonic() + 10
    waiting, up = set(socks), []
    while waiting and time.monotonic() < deadline:
        for fd, ev in ep.poll(0.5):
            if fd not in waiting:
                continue
            waiting.discard(fd)
            ep.unregister(fd)
            if socks[fd].getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                up.append(socks[fd])
    connected, sent = len(up), 0
    print("connected %d" % connected, flush=True)
    time.sleep(pause)
    for s in up:
        try:
            s.send(HEADER)
            sent += 1
        except OSError:
            pass
    print("ready", flush=True)
    time.sleep(hold)
    reset = 0
    for s in socks.values():
        try:
            s.send(b"\x00")
        except OSError as e:
            if e.errno in (errno.ECONNRESET, errno.EPIPE):
                reset += 1
    print("connected %d sent %d reset %d" % (connected, sent, reset))


def cmd_sink(argv):
    raise_nofile()
    fam = socket.AF_INET6 if ":" in argv[0] else socket.AF_INET
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((argv[0], int(argv[1])))
    ls.listen(65535)
    ls.setblocking(False)
    ep = select.epoll()
    ep.register(ls.fileno(), select.EPOLLIN)
    conns = {}
    while True:
        for fd, _ in ep.poll():
            if fd == ls.fileno():
                while True:
                    try:
                        c, _ = ls.accept()
                    except (BlockingIOError, OSError):
                        break
                    c.setblocking(False)
                    conns[c.fileno()] = c
                    ep.register(c.fileno(), select.EPOLLIN)
                continue
            c = conns.get(fd)
            try:
                d = c.recv(4096) if c else b""
            except OSError:
                d = b""
            if not d and c:
                ep.unregister(fd)
                c.close()
                del conns[fd]


if __name__ == "__main__":
    cmds = {"flood": cmd_flood, "sink": cmd_sink}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])
