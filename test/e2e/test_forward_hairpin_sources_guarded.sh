#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope, invariant 13's configuration and upkeep:
#   - "hairpin": container to container through the gateway (in and out
#     the fenced bridge) passes with "allow" (an app and its database on
#     one network) and is refused with "deny" (the default, "fence", is
#     test_forward_hairpin_fenced_by_default.sh);
#   - "source_cidrs" narrows the learned networks: a container whose
#     address is not listed is dropped (no answer from the listener);
#   - the raw table's rules are the guard's: check reports a deleted
#     DNSFENCE-PRE rule and jump, the guard puts them back (nft; legacy:
#     setup does, as the guard cannot take the lock), and a spoofed probe
#     earns nothing again.
# A second container (198.18.64.3 / 2001:db8:64::3) on the bridge; the
# first routes to it through the gateway (redirects off), so the traffic
# crosses FORWARD. Controls: without dnsfence the containers reach each
# other; with it, allowed traffic works. Both iptables backends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
lab_second_container
ct sysctl -qw net.ipv4.conf.all.accept_redirects=0 "net.ipv4.conf.$CT_IF.accept_redirects=0" \
	net.ipv6.conf.all.accept_redirects=0 "net.ipv6.conf.$CT_IF.accept_redirects=0"
ct ip route add "$CT2_4/32" via "$GW4"
ct ip -6 route add "$CT2_6/128" via "$GW6"

# routed ADDR: the container's connection went through the gateway.
routed() { ct ip route get "$1" | grep " via " >/dev/null; }
routed "$CT2_4" && routed "$CT2_6" || fail "lab: the container does not route to its peer through the gateway"

for a in "$CT2_4" "$CT2_6"; do lab_peer "$a" || fail "control (no fence): the container cannot reach $a port 8080"; done
ok "control (no fence): container to container through the gateway works (v4, v6)"

in_place() { df_dnsfence check; [ "$DF_CMD_RC" -eq 0 ]; }
spoof_earns() {
	lab_py '
from scapy.all import IP, UDP, DNS, DNSQR, send, conf
conf.verb = 0
send(IP(src="'"$SPOOF4"'", dst="'"$GW4"'") / UDP(sport=45001, dport=53) / DNS(id=9, rd=1, qd=DNSQR(qname="x.evil.test")))'
	lab_arrived " IP $GW4.53 > $SPOOF4.45001:"
}

for be in nft legacy; do
	save="iptables-$be-save"
	LAB_EXTRA=(hairpin='"allow"')
	lab_fence "$be"
	lab_allowed_works "$be, hairpin allow"
	for a in "$CT2_4" "$CT2_6"; do lab_peer "$a" || fail "$be: hairpin allow: the container cannot reach $a"; done
	ok "$be: hairpin allow: container to container through the gateway works (v4, v6)"

	# The raw table's rule and jump are in check's and the guard's care.
	rule="-A DNSFENCE-PRE -i $BR -m rpfilter --invert -j DROP"
	host "$save" -t raw | grep -xF -- "$rule" >/dev/null || fail "$be: no '$rule' in the raw table"
	eval "host iptables-$be -w -t raw -D ${rule#-A }"
	host "ip6tables-$be" -w -t raw -D PREROUTING -j DNSFENCE-PRE
	df_dnsfence check
	grep -qF "ipv4: rule missing: $rule" <<<"$DF_CMD_OUT" ||
		fail "$be: check did not report the deleted raw rule: $DF_CMD_OUT"
	grep -qF "ipv6: jump from raw PREROUTING to DNSFENCE-PRE missing" <<<"$DF_CMD_OUT" ||
		fail "$be: check did not report the deleted raw jump: $DF_CMD_OUT"
	lab_capture_start
	spoof_earns || fail "$be: control: with the raw rule deleted, the spoofed query was not answered to $SPOOF4"
	if [ "$be" = nft ]; then
		# Restart with a short guard interval on a restored fence, and
		# delete them again: the guard puts them back.
		df_stop_dnsfence
		df_config scope='"forward"' interfaces="[\"$BR\"]" \
			listen="[\"$GW4:53\", \"[$GW6]:53\"]" allow='["www.allowed.test"]' guard_interval=1
		df_setup_fence
		lab_serve "$be-guard"
		df_poll 50 lab_gw_answers || fail "$be: the restarted dnsfence did not answer"
		eval "host iptables-$be -w -t raw -D ${rule#-A }"
		host "ip6tables-$be" -w -t raw -D PREROUTING -j DNSFENCE-PRE
		df_poll 100 in_place || fail "$be: the guard did not restore the raw rule and jump: $DF_CMD_OUT"
		grep -qF "DRIFT: ipv4: rule missing: $rule" "$DF_DNSFENCE_LOG" || fail "$be: the guard logged no drift of the raw rule"
		expect_dnsfence_running
		how="by the guard"
	else
		# What systemd does after the guard's exit 3: setup (which
		# refuses while a daemon runs), then serve again.
		df_stop_dnsfence
		df_setup_fence
		in_place || fail "$be: setup did not restore the raw rule and jump: $DF_CMD_OUT"
		lab_serve "$be-restored"
		df_poll 50 lab_gw_answers || fail "$be: the restarted dnsfence did not answer"
		how="by setup"
	fi
	lab_capture_start
	! spoof_earns || fail "$be: after the restore, the spoofed query was answered to $SPOOF4"
	ok "$be: check reports the deleted raw rule and jump; restored $how; spoofed sources earn nothing again"
	lab_unfence "$be"

	LAB_EXTRA=(hairpin='"deny"')
	lab_fence "$be"
	lab_allowed_works "$be, hairpin deny"
	lab_peers_refused "$be: hairpin deny"
	ok "$be: hairpin deny: container to container through the gateway is refused (v4, v6)"
	lab_unfence "$be"

	LAB_EXTRA=(source_cidrs="[\"$CT4/32\", \"$CT6/128\"]")
	lab_fence "$be"
	lab_allowed_works "$be, source_cidrs naming the first container only"
	! ct2 dig +time=1 +tries=1 @"$GW4" www.allowed.test A +short | grep . >/dev/null ||
		fail "$be: source_cidrs: the unlisted container $CT2_4 got an answer"
	! ct2 dig +time=1 +tries=1 @"$GW6" www.allowed.test AAAA +short | grep . >/dev/null ||
		fail "$be: source_cidrs: the unlisted container $CT2_6 got an answer"
	ok "$be: source_cidrs narrows the sources: the unlisted container gets no answer (v4, v6)"
	lab_unfence "$be"
	LAB_EXTRA=()
done
