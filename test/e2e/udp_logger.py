# SPDX-License-Identifier: GPL-2.0-or-later
# udp_logger.py LOG IFNAME PORT[:GROUP]...: one UDP socket per PORT (IPv4
# on 0.0.0.0, and IPv6 on :: when GROUP is IPv6), joined to multicast
# GROUP on IFNAME when given, appending "PORT SOURCE" to LOG for every
# datagram: what reached the host's services. Used by the forward-scope
# tests (not a test itself).
import select, socket, struct, sys

log, ifname = sys.argv[1], sys.argv[2]
idx = socket.if_nametoindex(ifname)
socks = {}
for spec in sys.argv[3:]:
    port, _, group = spec.partition(":")
    fam = socket.AF_INET6 if ":" in group else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind(("::", int(port)))
        if group:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                         socket.inet_pton(socket.AF_INET6, group) + struct.pack("@I", idx))
    else:
        s.bind(("0.0.0.0", int(port)))
        if group:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                         struct.pack("@4s4si", socket.inet_aton(group), socket.inet_aton("0.0.0.0"), idx))
    socks[s] = port
print("ready", flush=True)
while True:
    for s in select.select(list(socks), [], [])[0]:
        _, src = s.recvfrom(2048)
        with open(log, "a") as f:
            f.write("%s %s\n" % (socks[s], src[0]))
