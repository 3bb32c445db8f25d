#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope, "hairpin" left at its default ("fence"): container to
# container traffic through the host meets the same set and port rules as
# any other destination. Container A (the lab's) connects to port 8080 of
#   - B (198.18.64.3 / 2001:db8:64::3), on the same bridge: the bridge
#     switches the frames, br_netfilter hands them to FORWARD (only when
#     its sysctls exist in this kernel's network namespaces);
#   - C (198.18.65.2 / 2001:db8:65::2), on a second fenced bridge: routed
#     through the gateway.
# Nobody resolved or listed B's or C's address, so both are refused (v4,
# v6), while the allowed name resolves and connects. The containers'
# neighbour caches are emptied before each try: neighbour discovery
# between two containers of the bridge must pass the fence. Positive controls:
# without dnsfence A reaches both; with the default and B's and C's
# addresses in allow_cidrs (an app and its database) A reaches both; with
# "hairpin": "allow" too. Both iptables backends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
lab_second_container
BR2="df$$br2"
CT3="df$$-ct3"
CT3_4=198.18.65.2
CT3_6=2001:db8:65::2
lab_bridge "$BR2" 198.18.65.1 2001:db8:65::1
lab_container "$CT3" "df$$e" "df$$j" "$CT3_4" "$CT3_6" "$BR2" 198.18.65.1 2001:db8:65::1
(cd "$DF_TMP" && exec ip netns exec "$CT3" "$DF_PY" -m http.server --bind :: 8080) >>"$DF_TMP/ct3.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$CT3" 8080 || fail "the third container's service did not start"

peers=("$CT3_4" "$CT3_6")
where="through the gateway (second bridge)"
if host test -w /proc/sys/net/bridge/bridge-nf-call-iptables; then
	host sysctl -qw net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1
	for a in "$CT2_4" "$CT2_6"; do
		! ct ip route get "$a" | grep " via " >/dev/null || fail "lab: the container routes to its peer $a through the gateway, not on the bridge"
	done
	peers+=("$CT2_4" "$CT2_6")
	where="$where and on the bridge"
else
	echo "note: no br_netfilter sysctls here: only the routed hairpin is tried"
fi
ct ip route get "$CT3_4" | grep " via $GW4 " >/dev/null || fail "lab: the container does not route to $CT3_4 through the gateway"

# forget: the containers' neighbour caches emptied, so that a connection
# on the bridge needs ARP and IPv6 neighbour discovery between them first.
forget() {
	local ns
	for ns in "$CT" "$CT2" "$CT3"; do ip netns exec "$ns" ip neigh flush all; done
}
# reach WHAT: A connects to every peer.
reach() {
	local a
	forget
	for a in "${peers[@]}"; do lab_peer "$a" || fail "$1: the container cannot reach $a port 8080 (rc $?)"; done
}
# refused WHAT: A's connection to every peer is refused (not timed out).
refused() {
	local a rc
	for a in "${peers[@]}"; do
		rc=0
		lab_peer "$a" || rc=$?
		[ "$rc" -eq 1 ] || fail "$1: the container's connection to $a port 8080 was not refused (rc $rc)"
	done
}

reach "control (no fence)"
ok "control (no fence): container to container $where works (v4, v6)"

ifs="[\"$BR\", \"$BR2\"]"
for be in nft legacy; do
	LAB_EXTRA=(interfaces="$ifs")
	lab_fence "$be"
	lab_allowed_works "$be, hairpin default"
	refused "$be: hairpin default (fence)"
	df_dnsfence validate
	grep -qF '"hairpin": "fence"' <<<"$DF_CMD_OUT" || fail "$be: the default hairpin is not \"fence\": $DF_CMD_OUT"
	ok "$be: hairpin default (fence): the container is refused its peers' unanswered port $where (v4, v6)"
	lab_unfence "$be"

	LAB_EXTRA=(interfaces="$ifs" allow_cidrs="[\"$CT2_4/32\", \"$CT2_6/128\", \"$CT3_4/32\", \"$CT3_6/128\"]")
	lab_fence "$be"
	reach "$be: hairpin default, the peers in allow_cidrs"
	ok "$be: hairpin default: the peers listed in allow_cidrs are reached on ports (v4, v6)"
	lab_unfence "$be"

	LAB_EXTRA=(interfaces="$ifs" hairpin='"allow"')
	lab_fence "$be"
	reach "$be: hairpin allow"
	ok "$be: hairpin allow: container to container passes unfenced (v4, v6)"
	lab_unfence "$be"
done
LAB_EXTRA=()
