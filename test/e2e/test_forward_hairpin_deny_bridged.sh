#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope, "hairpin": "deny" on traffic the bridge switches itself:
# two containers of one bridge talk on their subnet directly (layer 2, no
# gateway in between). Such frames meet iptables' FORWARD only through
# br_netfilter (bridge-nf-call-iptables / -ip6tables, per network
# namespace since Linux 5.3; set here only in the test's host namespace).
#   - with them on, "deny" refuses the bridged connection (v4, v6);
#   - positive control: with "allow" (the default) the containers reach
#     each other, and without dnsfence too;
#   - with them off, the bridged connection passes "deny": the limit
#     docs/security.md and docs/firewall.md state, and `check` warns of it.
# Both iptables backends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
host test -w /proc/sys/net/bridge/bridge-nf-call-iptables || {
	echo "skip: no br_netfilter sysctls in this kernel's network namespaces"
	exit 77
}
CT2="df$$-ct2"
CT2_4=198.18.64.3
CT2_6=2001:db8:64::3
lab_container "$CT2" "df$$d" "df$$i" "$CT2_4" "$CT2_6"
(cd "$DF_TMP" && exec ip netns exec "$CT2" "$DF_PY" -m http.server --bind :: 8080) >>"$DF_TMP/ct2.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$CT2" 8080 || fail "the second container's service did not start"
for a in "$CT2_4" "$CT2_6"; do
	! ct ip route get "$a" | grep -q " via " || fail "lab: the container routes to its peer $a through the gateway, not on the bridge"
done

# peer ADDR: 0 connected, 1 refused or unreachable, 124 timed out.
peer() {
	local rc=0
	ct timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$1" 2>/dev/null || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || rc=1
	return "$rc"
}
bridge_nf() { host sysctl -qw "net.bridge.bridge-nf-call-iptables=$1" "net.bridge.bridge-nf-call-ip6tables=$1"; }

bridge_nf 1
for a in "$CT2_4" "$CT2_6"; do peer "$a" || fail "control (no fence): the container cannot reach $a port 8080 on the bridge"; done
ok "control (no fence): container to container on the bridge works (v4, v6)"

for be in nft legacy; do
	bridge_nf 1
	LAB_EXTRA=()
	lab_fence "$be"
	for a in "$CT2_4" "$CT2_6"; do peer "$a" || fail "$be: hairpin allow: the container cannot reach $a on the bridge"; done
	ok "$be: hairpin allow (default), br_netfilter on: container to container on the bridge works (v4, v6)"
	lab_unfence "$be"

	LAB_EXTRA=(hairpin='"deny"')
	lab_fence "$be"
	lab_allowed_works "$be, hairpin deny"
	for a in "$CT2_4" "$CT2_6"; do
		rc=0
		peer "$a" || rc=$?
		[ "$rc" -eq 1 ] || fail "$be: hairpin deny, br_netfilter on: the bridged connection to $a was not refused (rc $rc)"
	done
	ok "$be: hairpin deny, br_netfilter on: the bridged connection is refused (v4, v6)"
	df_dnsfence check
	[ "$DF_CMD_RC" -eq 0 ] || fail "$be: check failed with br_netfilter on: $DF_CMD_OUT $DF_CMD_ERR"
	! grep -qF "bridge-nf-call" <<<"$DF_CMD_OUT$DF_CMD_ERR" || fail "$be: check warned of br_netfilter although it is on: $DF_CMD_OUT $DF_CMD_ERR"

	bridge_nf 0
	for a in "$CT2_4" "$CT2_6"; do
		peer "$a" || fail "$be: hairpin deny, br_netfilter off: expected the documented limit (the bridged connection to $a passes), got rc $?"
	done
	df_dnsfence check
	grep -qF "hairpin deny: net.bridge.bridge-nf-call-iptables is 0: container to container traffic a bridge switches itself does not meet the rules" <<<"$DF_CMD_OUT$DF_CMD_ERR" ||
		fail "$be: check did not warn that bridged traffic escapes hairpin deny: $DF_CMD_OUT $DF_CMD_ERR"
	ok "$be: hairpin deny, br_netfilter off: bridged traffic passes (the documented limit), and check says so"
	lab_unfence "$be"
done
