#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 13, forward scope: a container's packets with spoofed outside
# sources earn nothing sent outside. The container (root, raw sockets)
# sends, with the source address of an outside host S:
#   - a DNS query for a denied name to the gateway's listener (the reply
#     would repeat the name to S);
#   - a TCP SYN to an address nobody resolved (the fence's TCP reset would
#     go to S);
#   - a UDP datagram to that address (the fence's ICMP admin-prohibited,
#     quoting the payload, would go to S);
# IPv4 and IPv6. And an outside host queries the gateway's listener
# directly: it answers only the fenced interfaces.
#
# Far side: tcpdump on the upstream's veth (S lives there). Controls:
# without dnsfence's rules the spoofed packets themselves reach the far
# side (the lab routes them); with the rules, allowed traffic works, and
# the same probes from the container's own address are answered (reply,
# reset, ICMP error), so the fence still explains every block to the
# containers. Both iptables backends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080

# spoof FAMILY SRC: the three probes from SRC (sports 43001-43003 + off).
spoof() {
	lab_py '
import sys, time
from scapy.all import IP, IPv6, UDP, TCP, Raw, DNS, DNSQR, send, conf
conf.verb = 0
fam, src, gw, blocked, off = sys.argv[1:6]
off = int(off)
L3 = (lambda d: IPv6(src=src, dst=d)) if fam == "6" else (lambda d: IP(src=src, dst=d))
for _ in range(2):
    send(L3(gw) / UDP(sport=43001 + off, dport=53) / DNS(id=7, rd=1, qd=DNSQR(qname="x.evil.test")))
    send(L3(blocked) / TCP(sport=43002 + off, dport=8080, flags="S", seq=77))
    send(L3(blocked) / UDP(sport=43003 + off, dport=9999) / Raw(b"quote-me"))
    time.sleep(0.2)
' "$@"
}

# probe_arrivals FAMILY SRC OFF: what of the probes from SRC reached the far
# side: "query" (the spoofed query itself), "answer", "reset", "icmp".
probes() {
	local fam=$1 src=$2 off=$3 gw=$GW4 blocked=$V4 ip=IP
	[ "$fam" = 4 ] || { gw=$GW6; blocked=$V6; ip=IP6; }
	spoof "$fam" "$src" "$gw" "$blocked" "$off" || fail "the spoofer failed"
	sleep 1
	local got=()
	grep -qF " $ip $src.$((43002 + off)) > $blocked.8080:" "$LAB_CAPTURE" && got+=(syn)
	grep -qF " $ip $gw.53 > $src.$((43001 + off)):" "$LAB_CAPTURE" && got+=(answer)
	grep -qF " $ip $blocked.8080 > $src.$((43002 + off)): Flags [R" "$LAB_CAPTURE" && got+=(reset)
	grep -qE " $ip [0-9a-f.:]+ > ${src//./\\.}: ICMP" "$LAB_CAPTURE" && got+=(icmp)
	echo "${got[*]}"
}

lab_capture_start
got4=$(probes 4 "$SPOOF4" 0)
got6=$(probes 6 "$SPOOF6" 0)
[[ " $got4 " == *" syn "* ]] || fail "control (no fence): the spoofed IPv4 SYN did not reach the far side ($got4)"
[[ " $got6 " == *" syn "* ]] || fail "control (no fence): the spoofed IPv6 SYN did not reach the far side ($got6)"
ok "control (no fence): spoofed-source packets reach the far side (v4: $got4; v6: $got6)"

off=0
for be in nft legacy; do
	lab_fence "$be"
	lab_allowed_works "$be"
	# The same probes from the container's own address: answered, reset,
	# refused with ICMP (to the container, on the fenced network).
	out=$(lab_py '
import socket
r = []
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
s.sendto(bytes.fromhex("0007010000010000000000000178046576696c0474657374000001 0001".replace(" ", "")), ("'"$GW4"'", 53))
try:
    s.recvfrom(512); r.append("answer")
except OSError:
    pass
t = socket.socket(); t.settimeout(2)
try:
    t.connect(("'"$V4"'", 8080))
except ConnectionRefusedError:
    r.append("reset")
except OSError:
    pass
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.settimeout(2)
u.connect(("'"$V4"'", 9999)); u.send(b"x")
try:
    u.recv(10)
except OSError as e:
    if e.errno == 113: r.append("icmp")
print(" ".join(r))')
	[ "$out" = "answer reset icmp" ] || fail "$be: from the container's own address expected 'answer reset icmp', got '$out'"
	ok "$be: from the container's own address the probes get their answer, reset and ICMP error"
	lab_capture_start
	off=$((off + 10))
	got4=$(probes 4 "$SPOOF4" "$off")
	got6=$(probes 6 "$SPOOF6" "$off")
	[ -z "$got4$got6" ] ||
		fail "$be: spoofed sources earned replies on the far side: IPv4 $SPOOF4: ${got4:-nothing}; IPv6 $SPOOF6: ${got6:-nothing}"
	for src in "$SPOOF4" "$SPOOF6"; do
		df_wait_log 30 "source $src is not of the fenced interface's networks (forged or spoofed)" ||
			fail "$be: the daemon did not explain the dropped packets from $src"
	done
	ok "$be: spoofed sources $SPOOF4, $SPOOF6: no answer, no reset, no ICMP error, no probe reached the far side; each drop explained in the log"
	# The listener answers only the fenced interfaces: not the uplink.
	for s in "$GW4" "$GW6"; do
		! up dig +time=1 +tries=1 @"$s" www.allowed.test A +short | grep . >/dev/null ||
			fail "$be: the listener $s answered a query from outside (the uplink)"
	done
	ok "$be: the listener on $GW4/$GW6 does not answer the uplink"
	lab_unfence "$be"
done
