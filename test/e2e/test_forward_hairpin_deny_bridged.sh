#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope, "hairpin": "deny" on traffic the bridge switches itself:
# two containers of one bridge talk on their subnet directly (layer 2, no
# gateway in between). Such frames meet iptables' FORWARD only through
# br_netfilter (bridge-nf-call-iptables / -ip6tables, per network
# namespace since Linux 5.3; set here only in the test's host namespace).
#   - with them on, "deny" refuses the bridged connection (v4, v6);
#   - positive control: with "allow" the containers reach each other, and
#     without dnsfence too;
#   - with them off, "deny" fails closed: `check` reports the fence as not
#     in place (exit 1), and setup refuses (exit 3) and installs no rule;
#     the default ("fence") sets up with a warning that bridged traffic
#     passes.
# Both iptables backends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
host test -w /proc/sys/net/bridge/bridge-nf-call-iptables || {
	echo "skip: no br_netfilter sysctls in this kernel's network namespaces"
	exit 77
}
lab_second_container
for a in "$CT2_4" "$CT2_6"; do
	! ct ip route get "$a" | grep " via " >/dev/null || fail "lab: the container routes to its peer $a through the gateway, not on the bridge"
done

bridge_nf() { host sysctl -qw "net.bridge.bridge-nf-call-iptables=$1" "net.bridge.bridge-nf-call-ip6tables=$1"; }

bridge_nf 1
for a in "$CT2_4" "$CT2_6"; do lab_peer "$a" || fail "control (no fence): the container cannot reach $a port 8080 on the bridge"; done
ok "control (no fence): container to container on the bridge works (v4, v6)"

for be in nft legacy; do
	bridge_nf 1
	LAB_EXTRA=(hairpin='"allow"')
	lab_fence "$be"
	for a in "$CT2_4" "$CT2_6"; do lab_peer "$a" || fail "$be: hairpin allow: the container cannot reach $a on the bridge"; done
	ok "$be: hairpin allow, br_netfilter on: container to container on the bridge works (v4, v6)"
	lab_unfence "$be"

	LAB_EXTRA=(hairpin='"deny"')
	lab_fence "$be"
	lab_allowed_works "$be, hairpin deny"
	lab_peers_refused "$be: hairpin deny, br_netfilter on, on the bridge"
	ok "$be: hairpin deny, br_netfilter on: the bridged connection is refused (v4, v6)"
	df_dnsfence check
	[ "$DF_CMD_RC" -eq 0 ] || fail "$be: check failed with br_netfilter on: $DF_CMD_OUT $DF_CMD_ERR"
	! grep -qF "bridge-nf-call" <<<"$DF_CMD_OUT$DF_CMD_ERR" || fail "$be: check warned of br_netfilter although it is on: $DF_CMD_OUT $DF_CMD_ERR"

	bridge_nf 0
	df_dnsfence check
	[ "$DF_CMD_RC" -eq 1 ] || fail "$be: check exited $DF_CMD_RC with br_netfilter off under hairpin deny, expected 1: $DF_CMD_OUT $DF_CMD_ERR"
	grep -qF "hairpin deny: net.bridge.bridge-nf-call-iptables is 0: traffic the bridge $BR switches between its ports would not meet the rules" <<<"$DF_CMD_OUT" ||
		fail "$be: check did not report that bridged traffic escapes hairpin deny: $DF_CMD_OUT $DF_CMD_ERR"
	ok "$be: hairpin deny, br_netfilter off: check reports the fence as not in place"
	lab_unfence "$be"

	# Setup refuses: exit 3, the reason, and no rule in the kernel.
	lab_backend_prepare "$be"
	df_config scope='"forward"' interfaces="[\"$BR\"]" listen="[\"$GW4:53\", \"[$GW6]:53\"]" \
		allow='["www.allowed.test"]' hairpin='"deny"'
	df_dnsfence setup
	[ "$DF_CMD_RC" -eq 3 ] || fail "$be: setup exited $DF_CMD_RC with hairpin deny and br_netfilter off, expected 3: $DF_CMD_ERR"
	grep -qF "hairpin deny: net.bridge.bridge-nf-call-iptables is 0" <<<"$DF_CMD_ERR" ||
		fail "$be: setup's refusal does not say why: $DF_CMD_ERR"
	! host "iptables-$be-save" -t filter | grep -- "-A DNSFENCE-FWD" >/dev/null || fail "$be: the refused setup left rules behind"
	ok "$be: hairpin deny, br_netfilter off: setup refuses (exit 3) and installs nothing"
	df_dnsfence teardown
	lab_backend_cleanup "$be"

	# The default sets up, and says bridged traffic passes it.
	LAB_EXTRA=()
	lab_fence "$be"
	grep -qF "hairpin fence: net.bridge.bridge-nf-call-iptables is 0: container to container traffic the bridge $BR switches itself does not meet the rules" <<<"$DF_CMD_ERR" ||
		fail "$be: setup with the default hairpin did not warn that bridged traffic passes: $DF_CMD_ERR"
	ok "$be: hairpin default, br_netfilter off: setup warns that bridged traffic is not fenced"
	lab_unfence "$be"
done
