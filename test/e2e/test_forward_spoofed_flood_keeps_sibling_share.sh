#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope, per-client limits count real containers (issue 18): a
# root container floods the gateway's listener with unique allowed names
# from 100 forged addresses of its own subnet (raw socket; the sources
# are of the fenced network, so the source check passes them) while the
# upstream is frozen (SIGSTOP), so every question stays in flight. Each
# forged address used to count as a client with its own share of
# max_inflight (16 here, a share 12): two of them took the whole cap, and
# a container on another fenced network of the same host got SERVFAIL
# "too many queries in flight" for an allowed name. Now the questions of
# one fenced interface are bounded by a share per real container on it
# (the bridge's ports): the flooding bridge has one, so it holds at most
# 12 and the sibling's question goes upstream and is answered once the
# upstream thaws. The same over TCP from 30 addresses the container
# gives itself (the interface of a TCP peer is the one whose network
# holds its address).
#
# Controls: before the flood both containers resolve an allowed name;
# during it the daemon logs that the flooding interface's share is used
# up (so the flood did reach the bound). Both iptables backends.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<<'*.wild IN A 198.18.6.1'
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
BR2="df$$b2"
SIB="df$$-sib"
GW2_4=198.18.65.1
GW2_6=2001:db8:65::1
lab_bridge "$BR2" "$GW2_4" "$GW2_6"
lab_container "$SIB" "df$$s" "df$$i" 198.18.65.2 2001:db8:65::2 "$BR2" "$GW2_4" "$GW2_6"
sib() { ip netns exec "$SIB" "$@"; }
LAB_EXTRA=(interfaces="[\"$BR\", \"$BR2\"]"
	listen="[\"$GW4:53\", \"[$GW6]:53\", \"$GW2_4:53\", \"[$GW2_6]:53\"]"
	allow='["*.allowed.test"]' max_inflight=16)

# flood SECONDS TAG GW: unique names under wild.allowed.test to the
# gateway from 198.18.64.100-199 (forged, raw IPv4 and UDP), 100 a second:
# with the upstream frozen a question holds its slot for upstream_timeout
# (3 s), so that keeps the cap full and stays below the wildcard's
# new-name budget (2400 at once, all clients together).
flood() {
	lab_py '
import socket, struct, sys, time
seconds, tag, gw = float(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
dst = socket.inet_aton(gw)
tail = b"\x04wild\x07allowed\x04test\x00\x00\x01\x00\x01"
n = 0
t0 = time.monotonic()
while time.monotonic() - t0 < seconds:
    for _ in range(10):
        src = socket.inet_aton("198.18.64.%d" % (100 + n % 100))
        label = ("f%d-%s" % (n, tag)).encode()
        dns = struct.pack(">HHHHHH", n & 0xffff, 0x0100, 1, 0, 0, 0) + bytes([len(label)]) + label + tail
        udp = struct.pack(">HHHH", 20000 + n % 1000, 53, 8 + len(dns), 0) + dns
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), n & 0xffff, 0, 64, 17, 0, src, dst)
        s.sendto(ip + udp, (gw, 0))
        n += 1
    time.sleep(0.1)
print("sent %d" % n)
' "$@"
}

# tcp_flood TAG GW: the container takes 198.18.64.20-49 as addresses of
# its own (root in its namespace needs no forging for that) and asks four
# unique names over one TCP connection from each, held open for 6 s.
tcp_flood() {
	lab_py '
import socket, struct, sys, time
tag, gw = sys.argv[1:3]
tail = b"\x04wild\x07allowed\x04test\x00\x00\x01\x00\x01"
conns, n = [], 0
for i in range(20, 50):
    s = socket.socket()
    s.bind(("198.18.64.%d" % i, 0))
    s.connect((gw, 53))
    for _ in range(4):
        label = ("t%d-%s" % (n, tag)).encode()
        m = struct.pack(">HHHHHH", n, 0x0100, 1, 0, 0, 0) + bytes([len(label)]) + label + tail
        s.sendall(struct.pack(">H", len(m)) + m)
        n += 1
    conns.append(s)
print("sent %d" % n)
time.sleep(6)
' "$@"
}
for i in $(seq 20 49); do ct ip addr add "198.18.64.$i/24" dev "$CT_IF"; done

# sibling_answered BE TAG: the sibling's allowed name, asked while the
# upstream is frozen and answered after it thaws: NOERROR and its address.
sibling_answered() {
	sib_ask "during-$2-$1-$$.wild.allowed.test" >"$DF_TMP/sib-$1.out" &
	sib_pid=$!
	DF_PIDS+=("$sib_pid")
	sleep 1.5
	kill -CONT "$DF_UNBOUND_PID"
	df_wait_gone "$sib_pid" 120 || fail "$1: the sibling's dig did not finish"
	[ "$(cat "$DF_TMP/sib-$1.out")" = "NOERROR
198.18.6.1" ]
}

# frozen_flood OUT CMD...: the upstream frozen, CMD (a flood) runs in the
# background into OUT; its pid in flood_pid.
frozen_flood() {
	local out=$1
	shift
	kill -STOP "$DF_UNBOUND_PID"
	"$@" >"$out" 2>&1 &
	flood_pid=$!
	DF_PIDS+=("$flood_pid")
}

# sib_ask NAME: the sibling asks its gateway (waits up to 8 s); prints
# the status and the answer's addresses.
sib_ask() {
	sib dig +time=8 +tries=1 @"$GW2_4" "$1" A | awk '/status:/ { sub(",", "", $6); print $6 } $4 == "A" { print $5 }'
}

for be in nft legacy; do
	lab_fence "$be"
	lab_allowed_works "$be"
	out=$(sib_ask "before-$be-$$.wild.allowed.test")
	[ "$out" = "NOERROR
198.18.6.1" ] || fail "$be: control: the sibling's allowed name did not resolve before the flood: $out"
	ok "$be: control: the sibling on $BR2 resolves an allowed name at $GW2_4"

	frozen_flood "$DF_TMP/flood-$be.out" flood 6 "$be$$" "$GW4"
	df_poll 50 grep -qE "from 198\.18\.64\.1[0-9][0-9][^ ]*: SERVFAIL" "$DF_DNSFENCE_LOG" ||
		fail "$be: the flood from forged addresses never reached a limit of the in-flight cap"
	sibling_answered "$be" udp ||
		fail "$be: during a flood from forged addresses of $BR, the sibling on $BR2 got no answer for an allowed name: '$(cat "$DF_TMP/sib-$be.out")'"
	grep -qF "interface $BR: the share of its 1 real container(s) is used up" "$DF_DNSFENCE_LOG" ||
		fail "$be: the flood was not held at the bound of the flooding interface"
	df_wait_gone "$flood_pid" 200 || fail "$be: the flood did not finish"
	grep -q "^sent [0-9]" "$DF_TMP/flood-$be.out" || fail "$be: the flood failed: $(cat "$DF_TMP/flood-$be.out")"
	ok "$be: $(cat "$DF_TMP/flood-$be.out") queries from 100 forged addresses of $BR held one container's share; the sibling on $BR2 got its allowed answer"

	# The same over TCP, from addresses the container holds.
	frozen_flood "$DF_TMP/tcp-$be.out" tcp_flood "$be$$" "$GW4"
	df_poll 50 grep -qE "from 198\.18\.64\.[2-4][0-9]:[0-9]+: SERVFAIL, interface $BR: the share" "$DF_DNSFENCE_LOG" ||
		fail "$be: TCP queries from 30 addresses of $BR were not held at the interface's bound"
	sibling_answered "$be" tcp ||
		fail "$be: during a TCP flood from 30 addresses of $BR, the sibling on $BR2 got no answer for an allowed name: '$(cat "$DF_TMP/sib-$be.out")'"
	df_wait_gone "$flood_pid" 200 || fail "$be: the TCP flood did not finish"
	grep -q "^sent 120" "$DF_TMP/tcp-$be.out" || fail "$be: the TCP flood failed: $(cat "$DF_TMP/tcp-$be.out")"
	ok "$be: 120 TCP queries from 30 addresses of $BR held one container's share; the sibling on $BR2 got its allowed answer"
	lab_unfence "$be"
done
