# SPDX-License-Identifier: GPL-2.0-or-later
# The forward-scope attack lab, sourced by test_forward_*.sh after lib.sh
# (not a test itself: ctest runs test_*.sh only).
#
#   upstream (lib.sh's df<pid>-up): unbound, nsd, the "outside" addresses
#     on its lo (198.18.2.x, 2001:db8:1::x), a capture (tcpdump) of what
#     comes in on its veth: the far side, where a leak would arrive;
#   host (lib.sh's workload namespace): routes, a bridge BR with the
#     gateway 198.18.64.1 / 2001:db8:64::1, dnsfence in "scope": "forward"
#     on BR, listening on the gateway;
#   container: 198.18.64.2 / 2001:db8:64::2 behind a veth on BR, root with
#     raw sockets (scapy from Debian's python3-scapy).
#
# lab_fence BACKEND (nft or legacy) installs the fence with that iptables
# backend (legacy: a Docker-style DOCKER-USER chain there first, so fwexec
# picks it) and starts the daemon; lab_unfence stops it and tears down.
# lab_capture_start/lab_arrived: what reached the far side.
df_setup

CT="df$$-ct"
BR="df$$br"
CT_IF="df$$c"
HOST_PORT_IF="df$$h"
GW4=198.18.64.1
GW6=2001:db8:64::1
CT4=198.18.64.2
CT6=2001:db8:64::2
V4=198.18.2.5      # an outside address nobody resolved
V6=2001:db8:1::20
SPOOF4=198.18.2.6  # outside sources a container forges
SPOOF6=2001:db8:1::30
LAB_CAPTURE="$DF_TMP/capture.txt"
LAB_CAPTURE_PID=""
LAB_EXTRA=() # more KEY=JSON for the daemon's config

host() { ip netns exec "$DF_WL" "$@"; }
ct() { ip netns exec "$CT" "$@"; }

# lab_container NS IF HOST_IF ADDR4 ADDR6 [BRIDGE GW4 GW6]: a container
# namespace NS behind the veth IF (HOST_IF on BRIDGE, default $BR), with
# those addresses and its default routes via the gateway (default $GW4,
# $GW6).
lab_container() {
	local ns=$1 ifn=$2 hif=$3 br=${6:-$BR} gw4=${7:-$GW4} gw6=${8:-$GW6}
	ip netns add "$ns"
	DF_NETNS+=("$ns")
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	host ip link add "$hif" type veth peer name "$ifn" netns "$ns"
	host ip link set "$hif" master "$br" up
	ip netns exec "$ns" ip addr add "$4/24" dev "$ifn"
	ip netns exec "$ns" ip addr add "$5/64" dev "$ifn" nodad
	ip netns exec "$ns" ip link set "$ifn" up
	ip netns exec "$ns" ip route replace default via "$gw4"
	ip netns exec "$ns" ip -6 route replace default via "$gw6"
}

# lab_second_container: a second container CT2 (198.18.64.3 /
# 2001:db8:64::3) on the bridge, serving HTTP on port 8080 (lab_peer's
# target).
lab_second_container() {
	CT2="df$$-ct2"
	CT2_IF="df$$d"
	CT2_4=198.18.64.3
	CT2_6=2001:db8:64::3
	lab_container "$CT2" "$CT2_IF" "df$$i" "$CT2_4" "$CT2_6"
	(cd "$DF_TMP" && exec ip netns exec "$CT2" "$DF_PY" -m http.server --bind :: 8080) >>"$DF_TMP/ct2.log" 2>&1 &
	DF_PIDS+=("$!")
	df_poll 50 df_tcp_listening "$CT2" 8080 || fail "the second container's service did not start"
}
ct2() { ip netns exec "$CT2" "$@"; }

# lab_peer ADDR: the container connects to ADDR port 8080: 0 connected,
# 1 refused or unreachable, 124 timed out.
lab_peer() {
	local rc=0
	ct timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$1" 2>/dev/null || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || rc=1
	return "$rc"
}
# lab_peers_refused WHAT: the container's connections to both addresses
# of the second container are refused (not timed out, not connected).
lab_peers_refused() {
	local a rc
	for a in "$CT2_4" "$CT2_6"; do
		rc=0
		lab_peer "$a" || rc=$?
		[ "$rc" -eq 1 ] || fail "$1: the container's connection to $a was not refused (rc $rc)"
	done
}

host sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
# lab_bridge BRIDGE GW4 GW6: a bridge in the host, up, with the gateway
# addresses (a /24 and a /64) of the containers behind it.
lab_bridge() {
	host ip link add "$1" type bridge
	host ip link set "$1" up
	host ip addr add "$2/24" dev "$1"
	host ip addr add "$3/64" dev "$1" nodad
}

lab_bridge "$BR" "$GW4" "$GW6"
lab_container "$CT" "$CT_IF" "$HOST_PORT_IF" "$CT4" "$CT6"
up ip route add 198.18.64.0/24 via "$DF_WL4"
up ip -6 route add 2001:db8:64::/64 via "$DF_WL6"
# (both spoofed sources are on the upstream's lo already: lib.sh)
GW_MAC="$(host cat "/sys/class/net/$BR/address")"

# lab_capture_start: tcpdump on the far side, numbers only, what comes in.
lab_capture_start() {
	if [ -n "$LAB_CAPTURE_PID" ]; then
		kill -TERM "$LAB_CAPTURE_PID" 2>/dev/null
		df_wait_gone "$LAB_CAPTURE_PID" 20 || kill -KILL "$LAB_CAPTURE_PID" 2>/dev/null
	fi
	: >"$LAB_CAPTURE"
	: >"$DF_TMP/tcpdump.err"
	ip netns exec "$DF_UP" tcpdump -l -n -Q in -i "$DF_VETH_UP" -Z root \
		>"$LAB_CAPTURE" 2>"$DF_TMP/tcpdump.err" &
	LAB_CAPTURE_PID=$!
	DF_PIDS+=("$LAB_CAPTURE_PID")
	df_poll 50 grep -q "listening on" "$DF_TMP/tcpdump.err" || fail "lab: tcpdump did not start"
}
# lab_arrived ERE: a line of the capture matches (waits up to 1.5 s; the
# absence of a match is only judged after that).
lab_arrived() { df_poll 15 grep -qaE -- "$1" "$LAB_CAPTURE"; }

# lab_py CODE ARGS...: Python (scapy available) as root in the container.
lab_py() {
	local code=$1
	shift
	ct "$DF_PY" -c "$code" "$@"
}

lab_backend_prepare() {
	if [ "$1" = legacy ]; then
		host iptables-legacy -w -N DOCKER-USER
		host iptables-legacy -w -A DOCKER-USER -j RETURN
		host iptables-legacy -w -I FORWARD 1 -j DOCKER-USER
	fi
}
lab_backend_cleanup() {
	if [ "$1" = legacy ]; then
		host iptables-legacy -w -D FORWARD -j DOCKER-USER
		host iptables-legacy -w -F DOCKER-USER
		host iptables-legacy -w -X DOCKER-USER
	fi
}

# lab_gw_answers: dnsfence answers on the gateway; asked once the daemon
# holds port 53 (df_bound: no dig while it starts).
lab_gw_answers() {
	if [ -n "${DF_DNSFENCE_PID:-}" ] && [ -d "/proc/$DF_DNSFENCE_PID" ]; then
		df_bound "$DF_DNSFENCE_PID" 53 || return 1
	fi
	host dig +time=1 +tries=1 @"$GW4" ready.dnsfence.invalid A >/dev/null 2>&1
}

# lab_serve NAME [own-lock]: "dnsfence serve" in the host namespace with
# the current config, logging to dnsfence-NAME.log (does not wait for it).
# own-lock: the daemon runs in a mount namespace of its own where
# /run/xtables.lock is a file it may open (the host's is root's, mode
# 0600), so that its guard can write iptables-legacy rules.
lab_serve() {
	local wrap=()
	DF_DNSFENCE_LOG="$DF_TMP/dnsfence-$1.log"
	if [ "${2:-}" = own-lock ]; then
		wrap=(unshare -m --propagation private sh -c 'mount -t tmpfs -o mode=0755 dflock /run &&
			: >/run/xtables.lock && chmod 0666 /run/xtables.lock && exec "$0" "$@"')
	fi
	ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		"${wrap[@]}" "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" serve >>"$DF_DNSFENCE_LOG" 2>&1 &
	DF_DNSFENCE_PID=$!
	DF_PIDS+=("$DF_DNSFENCE_PID")
}

# lab_fence BACKEND: setup, then serve; waits until the gateway answers.
lab_fence() {
	lab_backend_prepare "$1"
	df_config scope='"forward"' interfaces="[\"$BR\"]" \
		listen="[\"$GW4:53\", \"[$GW6]:53\"]" allow='["www.allowed.test"]' \
		guard_interval=3600 "${LAB_EXTRA[@]}"
	df_setup_fence
	lab_serve "$1"
	df_poll 50 lab_gw_answers || fail "dnsfence ($1) did not answer on $GW4:53"
	host "$([ "$1" = legacy ] && echo iptables-legacy-save || echo iptables-nft-save)" -t filter |
		grep -- "-A DNSFENCE-FWD" >/dev/null || fail "the fence is not in iptables-$1"
	host conntrack -F >/dev/null 2>&1
	host conntrack -F -f ipv6 >/dev/null 2>&1
}
lab_unfence() {
	df_stop_dnsfence
	df_dnsfence teardown
	[ "$DF_CMD_RC" -eq 0 ] || fail "teardown ($1) exited $DF_CMD_RC: $DF_CMD_ERR"
	lab_backend_cleanup "$1"
	host conntrack -F >/dev/null 2>&1
	host conntrack -F -f ipv6 >/dev/null 2>&1
}

# lab_allowed_works WHEN: through the fence, the allowed name resolves at
# the gateway and its addresses connect (v4, v6; each family asked over
# its own, as "bind": "client" answers only that): the attacks below are
# judged against a fence that lets the ordinary traffic through.
lab_allowed_works() {
	local a q gw t
	for t in "198.18.1.10 A $GW4" "2001:db8:1::10 AAAA $GW6"; do
		read -r a q gw <<<"$t"
		ct dig +time=2 +tries=1 @"$gw" www.allowed.test "$q" +short | grep -x "$a" >/dev/null ||
			fail "$1: www.allowed.test $q did not resolve to $a at the gateway $gw"
		ct timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$a" ||
			fail "$1: the allowed address $a port 8080 is not reachable"
	done
	ok "$1: allowed traffic works (www.allowed.test resolves at $GW4 and $GW6, each to its family, and connects)"
}
