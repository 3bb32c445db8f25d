#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 13, forward scope: no IPv6 routing header carries a packet
# past the set, and each other extension header has its decision
# (docs/firewall.md, "IPv6 extension headers").
#
# The upstream namespace is an SRv6-capable host (seg6_enabled) holding
# both 2001:db8:1::10 (www.allowed.test, in the set) and 2001:db8:1::20
# (never answered). A container connects to ::20 port 8080 with a segment
# routing header naming ::10 (IPV6_RTHDR, type 4: a plain socket option),
# so the packets' destination is a set member; a scapy SYN with a type 0
# routing header does the same. Routing headers are rejected, whatever
# their type. Fragments whose first one holds the whole TCP header (as
# RFC 7112 requires), hop-by-hop and destination options pass: the fence
# judges the real destination, so each reaches the set member and
# nothing reaches ::20. A tiny first fragment (8 bytes of the TCP header,
# no flags) is refused even to the set member: the client set's match
# ("bind": "client", the default) reads the whole TCP header.
#
# Far side: the listener logs which address each connection reached, and
# tcpdump sees what arrives. Controls: without dnsfence's rules the
# routing header reaches ::20 (the lab is SRv6-capable); with them, a
# plain connection to ::10 works. Both iptables backends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_srv6_far_side 8080
M6=2001:db8:1::10

srh() { ct "$DF_PY" "$DF_E2E_DIR/srh_connect.py" "$V6" "$M6" 8080; }
# rthdr_rejected BACKEND: packets DNSFENCE-FWD's routing-header rule rejected.
rthdr_rejected() {
	host "ip6tables-$1-save" -c -t filter |
		awk -v r="-A DNSFENCE-FWD -i $BR -m rt -j REJECT --reject-with icmp6-adm-prohibited" \
			'index($0, r) { gsub(/[\[\]]/, "", $1); split($1, c, ":"); n += c[1] } END { print n + 0 }'
}

# scapy_probes OFF: each header in front of a SYN, to the member and to ::20.
scapy_probes() {
	lab_py '
import sys, time
from scapy.all import IPv6, TCP, Raw, send, conf, fragment6
from scapy.all import IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrRouting, PadN
conf.verb = 0
me, member, other, off = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for dst in (member, other):
    send(IPv6(src=me, dst=dst) / IPv6ExtHdrHopByHop(options=[PadN(optdata=b"\0\0\0\0")]) / TCP(sport=44001 + off, dport=8080, flags="S"))
    send(IPv6(src=me, dst=dst) / IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0\0\0\0")]) / TCP(sport=44002 + off, dport=8080, flags="S"))
    for f in fragment6(IPv6(src=me, dst=dst) / IPv6ExtHdrFragment(id=off + 1 + len(dst)) / TCP(sport=44003 + off, dport=8080, flags="S") / Raw(b"f" * 64), 56):
        send(f)
    for f in fragment6(IPv6(src=me, dst=dst) / IPv6ExtHdrFragment(id=off + 3 + len(dst)) / TCP(sport=44005 + off, dport=8080, flags="S") / Raw(b"f" * 64), 96):
        send(f)
# A type 0 routing header: through the member to ::20.
send(IPv6(src=me, dst=member) / IPv6ExtHdrRouting(type=0, addresses=[other]) / TCP(sport=44004 + off, dport=8080, flags="S"))
time.sleep(0.5)
' "$CT6" "$M6" "$V6" "$1"
}
# seen DST SPORT: a packet from the container to DST with that source port
# arrived on the far side (a fragment shows its ports in the first one).
seen() { grep -qE " IP6 ${CT6}(\\.[0-9]+)? > ${1}(\\.8080)?: .*\\b$2\\b" "$LAB_CAPTURE" || grep -F " IP6 $CT6.$2 > $1.8080:" "$LAB_CAPTURE" >/dev/null; }

# Control: no fence. The routing header gets to ::20.
lab_capture_start
[ "$(srh)" = connected ] || fail "control (no fence): the SRH connection through $M6 to $V6 failed"
df_wait_arrived "$V6" 1 || fail "control (no fence): the listener saw no connection on $V6"
scapy_probes 0
for h in "hop-by-hop 44001" "destination-options 44002" "tiny-fragments 44003" "fragments 44005"; do
	seen "$M6" "${h#* }" || fail "control (no fence): the SYN with ${h% *} did not reach $M6"
	seen "$V6" "${h#* }" || fail "control (no fence): the SYN with ${h% *} did not reach $V6"
done
ok "control (no fence): a segment routing header through $M6 reaches $V6; hop-by-hop, destination options, tiny and whole-header fragments reach both"

off=0
for be in nft legacy; do
	lab_fence "$be"
	lab_allowed_works "$be"
	before=$(df_arrived "$V6")
	ct timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$M6" || fail "$be: a plain connection to $M6 failed"
	got=$(srh)
	[ "$got" != connected ] || fail "$be: the connection with a segment routing header through $M6 reached $V6"
	[ "$(df_arrived "$V6")" -eq "$before" ] || fail "$be: the listener saw a connection on $V6"
	# The kernel matches the ICMP error to no socket (it quotes ::10, the
	# socket is connected to ::20), so the client times out; the rule's
	# counter says it was our reject, not a routing hole.
	[ "$(rthdr_rejected "$be")" -gt 0 ] || fail "$be: the routing-header reject counted nothing (client: $got)"
	ok "$be: the SRH connection through the set member $M6 to $V6 is rejected by the routing-header rule ($(rthdr_rejected "$be") packets; client: $got), nothing reached $V6"
	lab_capture_start
	off=$((off + 10))
	scapy_probes "$off"
	for h in "hop-by-hop $((44001 + off))" "destination-options $((44002 + off))" "fragments $((44005 + off))"; do
		seen "$M6" "${h#* }" || fail "$be: the SYN with ${h% *} to the set member $M6 did not pass (decision: pass)"
		! seen "$V6" "${h#* }" || fail "$be: the SYN with ${h% *} to $V6 (not in the set) got out"
	done
	! seen "$M6" "$((44003 + off))" || fail "$be: the SYN in tiny fragments (no whole TCP header first) got out"
	! seen "$M6" "$((44004 + off))" || fail "$be: the SYN with a type 0 routing header got out"
	ok "$be: hop-by-hop, destination options and whole-header fragments pass to the set member only; tiny fragments and a type 0 routing header are refused"
	lab_unfence "$be"
done
