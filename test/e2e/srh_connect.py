# SPDX-License-Identifier: GPL-2.0-or-later
# srh_connect.py FINAL VIA PORT: a TCP connection to FINAL:PORT whose
# packets carry a segment routing header (IPV6_RTHDR, type 4: no
# capability needed) naming VIA as the next segment, so their IPv6
# destination is VIA. Prints "connected", "refused", "unreachable" or
# "timeout". Used by the routing-header tests (not a test itself).
import errno, socket, struct, sys

final, via, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
segs = [socket.inet_pton(socket.AF_INET6, "::"), socket.inet_pton(socket.AF_INET6, via)]
# next header (the kernel's), length in 8-byte units after the first 8,
# type 4, segments left, last entry, flags, tag, then the segments; the
# kernel puts the socket's destination into segment 0.
srh = struct.pack("!BBBBBBH", 0, 2 * len(segs), 4, len(segs) - 1, len(segs) - 1, 0, 0) + b"".join(segs)
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RTHDR, srh)
s.settimeout(3)
try:
    s.connect((final, port))
    print("connected")
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")
except OSError as e:
    print("unreachable" if e.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EACCES) else "error " + str(e))
