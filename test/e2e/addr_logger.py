# SPDX-License-Identifier: GPL-2.0-or-later
# addr_logger.py PORT LOG: accept TCP connections on [::]:PORT (IPv4 too)
# and append the local address each one reached to LOG, one a line: where
# a connection really arrived. Used by the routing-header tests.
import socket, sys

s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1])))
s.listen(64)
while True:
    c, _ = s.accept()
    with open(sys.argv[2], "a") as f:
        f.write(c.getsockname()[0].removeprefix("::ffff:") + "\n")
    c.close()
