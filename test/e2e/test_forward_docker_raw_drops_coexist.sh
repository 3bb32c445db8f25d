#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope beside Docker's raw-table rules: for a published port
# Docker writes `-A PREROUTING -d CONTAINER ! -i BRIDGE [-p tcp --dport
# PORT] -j DROP` in raw PREROUTING (no direct routing to a container from
# elsewhere), and puts it back at the top when it restarts. Recreated
# here with the real iptables of each backend, in its per-port form (the
# lab routes without NAT, so a rule for every port would drop the
# container's replies too):
#   - setup with Docker's rules already there: our jump (DNSFENCE-PRE) is
#     the first rule that is not a drop, Docker's rules stay, and check
#     finds nothing to report;
#   - Docker restarting (its rules deleted and inserted again above our
#     jump): check still reports nothing (a rule that only drops cannot
#     let a forged packet past ours);
#   - our jump deleted: setup puts it back first, Docker's rules kept;
#   - both work: a spoofed query earns nothing (ours), and the far side
#     cannot reach the container directly (Docker's); controls: without
#     the rules the far side connects, and with Docker's alone (our jump
#     deleted) the spoofed query is answered;
#   - teardown removes ours and leaves Docker's.
# Both iptables backends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080

spoof_earns() {
	lab_py '
from scapy.all import IP, UDP, DNS, DNSQR, send, conf
conf.verb = 0
send(IP(src="'"$SPOOF4"'", dst="'"$GW4"'") / UDP(sport=45001, dport=53) / DNS(id=9, rd=1, qd=DNSQR(qname="x.evil.test")))'
	lab_arrived " IP $GW4.53 > $SPOOF4.45001:"
}
(cd "$DF_TMP" && exec ip netns exec "$CT" "$DF_PY" -m http.server --bind 0.0.0.0 8090) >>"$DF_TMP/ct.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$CT" 8090 || fail "lab: the container's service did not start"
# direct_reach: the far side connects to the container's port 8090.
direct_reach() { up timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/8090"' _ "$CT4" 2>/dev/null; }
docker_rule() { # v4|v6
	if [ "$1" = v4 ]; then local d=$CT4/32; else local d=$CT6/128; fi
	echo "-d $d ! -i $BR -p tcp -m tcp --dport 8090 -j DROP"
}
# docker_raw BACKEND OP: OP (-A, -I, -D) Docker's rule, both families.
docker_raw() {
	# shellcheck disable=SC2046
	host "iptables-$1" -w -t raw "$2" PREROUTING $(docker_rule v4)
	# shellcheck disable=SC2046
	host "ip6tables-$1" -w -t raw "$2" PREROUTING $(docker_rule v6)
}
# raw_prerouting BACKEND FAMILY: raw PREROUTING's rules, in order.
raw_prerouting() {
	local save="iptables-$1-save"
	[ "$2" = v4 ] || save="ip6tables-$1-save"
	host "$save" -t raw | grep "^-A PREROUTING "
}
# expect_both BACKEND WHEN: in both families, Docker's rule is there and
# our jump is the first rule that is not a drop.
expect_both() {
	local f rules
	for f in v4 v6; do
		rules=$(raw_prerouting "$1" "$f")
		grep -qxF -- "-A PREROUTING $(docker_rule "$f")" <<<"$rules" ||
			fail "$1 $2: Docker's raw rule is gone ($f): $rules"
		[ "$(grep -v -- " -j DROP$" <<<"$rules" | head -n 1)" = "-A PREROUTING -j DNSFENCE-PRE" ] ||
			fail "$1 $2: our jump is not the first rule of raw PREROUTING that is not a drop ($f): $rules"
	done
}
clean_check() {
	df_dnsfence check
	[ "$DF_CMD_RC" -eq 0 ] || fail "$1: check reported drift: $DF_CMD_OUT $DF_CMD_ERR"
}

direct_reach || fail "control (no rules): the far side cannot connect to the container $CT4"
ok "control (no rules): the far side reaches the container directly"

for be in nft legacy; do
	docker_raw "$be" -A
	direct_reach && fail "$be: lab: with Docker's raw rule alone the far side still connects to the container"
	lab_fence "$be"
	expect_both "$be" "after setup"
	clean_check "$be, after setup"
	lab_allowed_works "$be"
	ok "$be: setup beside Docker's raw rules: our jump first among the rules that are not drops, Docker's kept, check clean"

	docker_raw "$be" -D
	docker_raw "$be" -I
	[ "$(raw_prerouting "$be" v4 | head -n 1)" = "-A PREROUTING $(docker_rule v4)" ] ||
		fail "$be: lab: Docker's re-inserted rule is not on top: $(raw_prerouting "$be" v4)"
	expect_both "$be" "after Docker's restart"
	clean_check "$be, after Docker's restart"
	ok "$be: Docker re-inserting its raw rules above our jump: check clean"

	host "iptables-$be" -w -t raw -D PREROUTING -j DNSFENCE-PRE
	host "ip6tables-$be" -w -t raw -D PREROUTING -j DNSFENCE-PRE
	df_dnsfence check
	[ "$DF_CMD_RC" -ne 0 ] || fail "$be: check did not report our deleted raw jump"
	lab_capture_start
	spoof_earns || fail "$be: control: with our raw jump deleted (Docker's rules alone), the spoofed query was not answered to $SPOOF4"
	df_stop_dnsfence
	df_setup_fence
	expect_both "$be" "after the restore"
	clean_check "$be, after the restore"
	lab_serve "$be-restored"
	df_poll 50 lab_gw_answers || fail "$be: the restarted dnsfence did not answer"
	lab_capture_start
	! spoof_earns || fail "$be: with both rule sets, the spoofed query was answered to $SPOOF4"
	! direct_reach || fail "$be: with both rule sets, the far side connects to the container directly"
	ok "$be: our deleted jump restored first, Docker's rules kept; a spoofed query earns nothing and the far side does not reach the container"

	lab_unfence "$be"
	for f in v4 v6; do
		rules=$(raw_prerouting "$be" "$f")
		grep -qxF -- "-A PREROUTING $(docker_rule "$f")" <<<"$rules" || fail "$be: teardown removed Docker's raw rule ($f)"
		! grep -qF DNSFENCE <<<"$rules" || fail "$be: teardown left our raw jump ($f): $rules"
	done
	docker_raw "$be" -D
	ok "$be: teardown removed our raw jump and left Docker's"
done
