#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope, the rest of a forging container's surface toward the host
# itself: multicast and broadcast (mDNS 224.0.0.251 / ff02::fb port 5353,
# SSDP 239.255.255.250:1900, DHCP to 255.255.255.255:67 from 0.0.0.0,
# the subnet broadcast 198.18.64.255:5354) and the host's IPv6 link-local address (a service
# on tcp/8080 listening on every address). The host runs listeners for
# each; DNSFENCE-IN must keep all of them from the container (its reject
# answers no broadcast or multicast, and a link-local connection is
# refused at once).
#
# Controls: without dnsfence's rules each datagram reaches the host's
# listener and the link-local connection succeeds; with them, DNS to the
# gateway still works. Both iptables backends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
GOT="$DF_TMP/host-udp.txt"
: >"$GOT"
ip netns exec "$DF_WL" "$DF_PY" "$DF_E2E_DIR/udp_logger.py" "$GOT" "$BR" \
	5353:224.0.0.251 1900:239.255.255.250 67 5354 6353:ff02::fb >"$DF_TMP/udp-logger.out" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 grep -q ready "$DF_TMP/udp-logger.out" || fail "the host's UDP listeners did not start"
(cd "$DF_TMP" && exec ip netns exec "$DF_WL" "$DF_PY" -m http.server --bind :: 8080) >>"$DF_TMP/host-http.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$DF_WL" 8080 || fail "the host's service did not start"
GW_LL="$(host ip -6 -o addr show dev "$BR" scope link | awk '{ sub("/.*", "", $4); print $4; exit }')"
[ -n "$GW_LL" ] || fail "lab: the bridge has no link-local address"

# send_all: the datagrams, from the container (DHCP from 0.0.0.0 with scapy).
send_all() {
	lab_py '
import socket, sys, time
from scapy.all import Ether, IP, UDP, BOOTP, DHCP, sendp, conf, get_if_hwaddr
conf.verb = 0
ifn, bcast = sys.argv[1], sys.argv[2]
for _ in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifn.encode())
    for dst, port in (("224.0.0.251", 5353), ("239.255.255.250", 1900), (bcast, 5354)):
        s.sendto(b"probe", (dst, port))
    s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s6.sendto(b"probe", ("ff02::fb", 6353, 0, socket.if_nametoindex(ifn)))
    mac = get_if_hwaddr(ifn)
    sendp(Ether(src=mac, dst="ff:ff:ff:ff:ff:ff") / IP(src="0.0.0.0", dst="255.255.255.255") /
          UDP(sport=68, dport=67) / BOOTP(chaddr=bytes.fromhex(mac.replace(":", ""))) / DHCP(options=[("message-type", "discover"), "end"]), iface=ifn)
    time.sleep(0.2)
' "$CT_IF" 198.18.64.255
}
# ll_connect: 0 when the container connects to the host's link-local address.
ll_connect() { ct timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$GW_LL%$CT_IF" 2>/dev/null; }
got() { awk -v p="$1" '$1 == p { n++ } END { print n + 0 }' "$GOT"; }

send_all
sleep 0.5
for p in 5353 1900 67 5354 6353; do
	[ "$(got "$p")" -gt 0 ] || fail "control (no fence): nothing reached the host's listener on port $p ($(cat "$GOT"))"
done
ll_connect || fail "control (no fence): the container cannot connect to the host's link-local $GW_LL port 8080"
ok "control (no fence): mDNS (v4, v6), SSDP, DHCP and subnet broadcast reach the host's listeners; the link-local connection works"

for be in nft legacy; do
	lab_fence "$be"
	lab_allowed_works "$be"
	: >"$GOT"
	send_all
	sleep 0.5
	[ ! -s "$GOT" ] || fail "$be: datagrams reached the host's listeners: $(tr '\n' ' ' <"$GOT")"
	rc=0
	ct timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$GW_LL%$CT_IF" 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ] || fail "$be: the connection to the host's link-local $GW_LL port 8080 was not refused at once (rc $rc)"
	ok "$be: multicast, broadcast and DHCP reach no host listener; the host's link-local address is refused"
	lab_unfence "$be"
done
