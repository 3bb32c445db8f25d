#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "scope": "forward": dnsfence on the host fences a container that is root
# with CAP_NET_ADMIN in its own namespace, from outside it.
#
# Three namespaces: the upstream (unbound, nsd, listeners on tcp/8080 on
# every address, a metadata-style 198.18.9.254), the "host" (lib.sh's
# workload namespace: it routes, ip_forward on inside it only, a bridge
# BR with the gateway 198.18.64.1 / 2001:db8:64::1, a service on tcp/8080
# on every host address, 198.18.65.1 on its lo) and the container
# (198.18.64.2 / 2001:db8:64::2 behind a veth on BR).
#
# Control, before dnsfence: the container reaches all of it. Fenced: an
# allowed name resolves through the gateway and connects; a denied one is
# NXDOMAIN; an unresolved address, the upstream resolver (UDP, TCP, v4,
# v6), the host on each of its addresses, the metadata address are all
# rejected (refused, not timed out), and stay so after the container
# flushes its filter/nat/mangle tables, sets ACCEPT policies, marks its
# packets with the daemon's mark and adds addresses and routes of its own.
# Guard drill: a deleted DNSFENCE-FWD rule is back within the guard
# interval, written by the guard itself (iptables-legacy too, given a lock
# file it can open), while a loop of probes gets nothing out; with the
# host's root-only legacy lock the daemon exits 3 for exactly that reason
# and setup (as systemd would run it) restores the rule. Stopping the daemon
# leaves the fence closed; teardown removes only our chains and jumps.
# Run twice: iptables-nft with the jump in FORWARD, then iptables-legacy
# (picked per namespace, as fwexec does: the backend already holding rules)
# on a Docker-style host, where the jump goes into DOCKER-USER.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh" # the host, its bridge, the container

META=198.18.9.254
HOST_ADDRS=("$DF_WL4" "$GW4" 198.18.65.1 "$DF_WL6" "$GW6")
BLOCKED=(198.18.2.5 2001:db8:1::20 "$DF_UP4" "$DF_UP6" "$META" "${HOST_ADDRS[@]}")

# --- the lab ------------------------------------------------------------------
host ip addr add 198.18.65.1/32 dev lo
up ip addr add "$META/32" dev lo

gateway_up() {
	host ip addr add "$GW4/24" dev "$BR"
	host ip addr add "$GW6/64" dev "$BR" nodad
	ct ip route replace default via "$GW4"
	ct ip -6 route replace default via "$GW6"
	# questions and connections from one address (container_breaks_out
	# moved the questions to another)
	ct ip route replace 198.18.64.0/24 dev "$CT_IF"
	ct ip -6 route replace 2001:db8:64::/64 dev "$CT_IF"
}
gateway_down() {
	host ip addr del "$GW4/24" dev "$BR"
	host ip addr del "$GW6/64" dev "$BR"
}
df_start_listener 8080
(cd "$DF_TMP" && exec ip netns exec "$DF_WL" "$DF_PY" -m http.server --bind :: 8080) \
	>>"$DF_TMP/host-listener.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$DF_WL" 8080 || fail "the host's service did not start"

# reach ADDR PORT: 0 connected; 1 refused or unreachable at once; 124 timed out.
reach() {
	local rc=0
	ct timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || rc=1
	return "$rc"
}
# direct_dns SERVER [+tcp]: the container asks SERVER itself.
direct_dns() {
	ct dig +time=1 +tries=1 "$@" www.allowed.test A +short 2>/dev/null | grep -x 198.18.1.10 >/dev/null
}
# gw_dig ARGS: the container asks dnsfence on the gateway, over IPv4, or
# over IPv6 when DIG_GW is $GW6 (an answer carries only the addresses of
# the family it was asked over: "bind": "client").
gw_dig() {
	local gw=${DIG_GW:-$GW4}
	DF_DIG_CMD="dig @$gw $*"
	DF_DIG_RC=0
	DF_OUT="$(ct dig +time=2 +tries=1 @"$gw" "$@" 2>&1)" || DF_DIG_RC=$?
}

expect_all_reachable() {
	local a
	for a in "${BLOCKED[@]}"; do
		reach "$a" 8080 || fail "control ($1): the container cannot reach $a port 8080"
	done
	for a in "$DF_UP4" "$DF_UP6"; do
		direct_dns "@$a" || fail "control ($1): the container cannot query the upstream $a"
	done
	ok "control ($1): the container reaches ${#BLOCKED[@]} targets and the upstream resolver directly"
}

# expect_all_blocked WHEN: every target rejected (refused at once, not a
# time-out: proof it is our REJECT, not a routing hole).
expect_all_blocked() {
	local a rc
	for a in "${BLOCKED[@]}"; do
		rc=0
		reach "$a" 8080 || rc=$?
		[ "$rc" -ne 0 ] || fail "$1: the container reached $a port 8080"
		[ "$rc" -ne 124 ] || fail "$1: $a port 8080 timed out instead of being rejected"
	done
	for a in "$DF_UP4" "$DF_UP6"; do
		! direct_dns "@$a" || fail "$1: the container queried the upstream $a over UDP"
		! direct_dns "@$a" +tcp || fail "$1: the container queried the upstream $a over TCP"
	done
	ok "$1: ${#BLOCKED[@]} targets rejected (unresolved, upstream, host, metadata), upstream DNS blocked"
}

expect_allowed_works() {
	gw_dig www.allowed.test A
	expect_rcode NOERROR
	expect_answer_contains 198.18.1.10
	reach 198.18.1.10 8080 || fail "$1: the allowed address 198.18.1.10 is not reachable after resolving it"
	DIG_GW=$GW6 gw_dig www.allowed.test AAAA
	expect_answer_contains 2001:db8:1::10
	reach 2001:db8:1::10 8080 || fail "$1: the allowed address 2001:db8:1::10 is not reachable"
	gw_dig x.evil.test A
	expect_rcode NXDOMAIN
	! df_unbound_saw x.evil.test || fail "$1: the denied name reached the upstream"
	ok "$1: allowed name resolves through $GW4 and $GW6 and connects (v4, v6); denied name NXDOMAIN, never upstream"
}

FWD_EXTRA=() # more KEY=JSON for df_config
# start_forward_dnsfence NAME [own-lock]: setup, then serve with its log in
# dnsfence-NAME.log (a new file per start: a check reads only what that
# daemon wrote). own-lock: the daemon runs in a mount namespace of its
# own where /run/xtables.lock is a file it may open (the host's is
# root's, mode 0600), so that its guard can write iptables-legacy rules.
start_forward_dnsfence() {
	df_config scope='"forward"' interfaces="[\"$BR\"]" \
		listen="[\"$GW4:53\", \"[$GW6]:53\"]" allow='["www.allowed.test"]' guard_interval=2 \
		"${FWD_EXTRA[@]}"
	df_setup_fence
	[ ! -e "$DF_TMP/dnsfence-$1.log" ] || fail "a second daemon named $1 (its log exists)"
	lab_serve "$@"
}
gw_answers() { host dig +time=1 +tries=1 @"$GW4" ready.dnsfence.invalid A >/dev/null 2>&1; }

in_place() { df_dnsfence check; [ "$DF_CMD_RC" -eq 0 ]; }

# The container, root with CAP_NET_ADMIN in its namespace, opens it up.
container_breaks_out() {
	local t tab
	for t in iptables ip6tables; do
		for tab in filter nat mangle; do
			ct "$t" -w -t "$tab" -F
			ct "$t" -w -t "$tab" -X
		done
		ct "$t" -w -P INPUT ACCEPT
		ct "$t" -w -P OUTPUT ACCEPT
		ct "$t" -w -P FORWARD ACCEPT
		ct "$t" -w -t mangle -A OUTPUT -j MARK --set-mark 0x64000000
	done
	ct ip addr replace 198.18.64.77/24 dev "$CT_IF"
	ct ip addr replace 2001:db8:64::77/64 dev "$CT_IF" nodad
	ct ip route replace default via "$GW4" src 198.18.64.77
	ct ip route replace 198.18.0.0/24 via "$GW4" src 198.18.64.77
	ct ip -6 route replace default via "$GW6" src 2001:db8:64::77
	# its questions to the gateway leave from the new address too: an
	# answer opens its addresses for the address that asked
	ct ip route replace 198.18.64.0/24 dev "$CT_IF" src 198.18.64.77
	ct ip -6 route replace 2001:db8:64::/64 dev "$CT_IF" src 2001:db8:64::77
	ct sysctl -qw net.ipv4.ip_forward=1
}

# guard_drill TOOL [supervised]: delete a DNSFENCE-FWD rule in the host
# namespace and probe in a loop until it is back (nothing may get out).
# The guard must write it back itself: a daemon that exits fails the
# drill. With "supervised" it must instead exit 3 for the one reason
# documented (iptables-legacy: its lock file /run/xtables.lock is root's,
# mode 0600, so an unprivileged daemon cannot take it), and the test does
# what systemd's Restart=on-failure does: setup as root, then serve again.
drill_probes() {
	local a
	! direct_dns "@$DF_UP4" || fail "guard drill: the upstream answered the container while the rule was gone"
	for a in "$DF_UP4" "$META" "$GW4" 198.18.2.5; do
		! reach "$a" 8080 || fail "guard drill: $a reachable while the rule was gone"
	done
}
guard_drill() {
	local victim="-A DNSFENCE-FWD -i $BR -p udp -m conntrack --ctorigdstport 53 -j REJECT --reject-with icmp-admin-prohibited"
	local probes=0 t0 dt how="by the guard" st log="$DF_DNSFENCE_LOG" restarted=0
	host "$1" -S DNSFENCE-FWD | grep -xF -- "$victim" >/dev/null || fail "no rule '$victim' to delete"
	eval "host $1 -w -D ${victim#-A }"
	! in_place || fail "check still 0 after deleting '$victim'"
	t0=$(df_now_ms)
	while :; do
		drill_probes
		probes=$((probes + 1))
		in_place && break
		# A round every quarter second or so: each is a dozen processes,
		# and the guard acts every 2 s.
		sleep 0.2
		if [ "$restarted" -eq 0 ] && ! kill -0 "$DF_DNSFENCE_PID" 2>/dev/null; then
			st=0
			wait "$DF_DNSFENCE_PID" || st=$?
			[ "${2:-}" = supervised ] ||
				fail "guard drill: the daemon exited $st instead of restoring the rule: $(grep -m1 -o 'restore failed: .*' "$log")"
			[ "$st" -eq 3 ] || fail "guard drill: the daemon exited $st, expected 3"
			grep -q "cannot restore the fence" "$log" || fail "guard drill: exit 3 without the reason logged"
			grep -q "restore failed: .*can't open lock file /run/xtables.lock: Permission denied" "$log" ||
				fail "guard drill: exit 3 for another reason than the lock file: $(grep -m1 -o 'restore failed: .*' "$log")"
			how="by setup after the guard's exit 3 ($(grep -m1 -o 'restore failed: .*' "$log"))"
			restarted=1
			start_forward_dnsfence "$1-restarted"
			df_poll 50 gw_answers || fail "the restarted dnsfence did not answer"
		fi
		dt=$(($(df_now_ms) - t0))
		# Fifteen guard intervals: the drill proves the guard acts, and a
		# loaded machine (the suite runs tests side by side) is slow to restore.
		[ "$dt" -le 30000 ] || fail "the deleted rule was not restored within 30 s (guard_interval 2)"
	done
	dt=$(($(df_now_ms) - t0))
	grep -qF "DRIFT: ipv4: rule missing: $victim" "$log" || fail "the drift was not logged (in $log)"
	[ "${2:-}" != supervised ] || [ "$restarted" -eq 1 ] ||
		fail "guard drill: the supervised drill never needed setup (the daemon restored iptables-legacy rules without the lock?)"
	expect_dnsfence_running
	ok "guard drill ($1): deleted '${victim#-A DNSFENCE-FWD }': restored $how after $dt ms; $probes probe rounds, nothing got out"
}

dump_rules() {
	echo "--- rules as built ($1), host namespace: $2-save -t filter, -t raw / ${2/iptables/ip6tables}-save -t filter, -t raw"
	host "$2-save" -t filter | grep -v '^#'
	host "$2-save" -t raw | grep -v '^#'
	host "${2/iptables/ip6tables}-save" -t filter | grep -v '^#'
	host "${2/iptables/ip6tables}-save" -t raw | grep -v '^#'
	echo "---"
}

# --- run 1: iptables-nft, the jump in FORWARD ---------------------------------
host iptables-nft -w -A FORWARD -s 198.18.99.0/24 -j DROP # the host's own rule
expect_all_reachable "no dnsfence"
start_forward_dnsfence nft
df_poll 50 gw_answers || fail "dnsfence did not answer on $GW4:53 within 5 s"
in_place || fail "check after setup: $DF_CMD_OUT"
[ "$(host iptables-nft -S FORWARD | sed -n 2p)" = "-A FORWARD -j DNSFENCE-FWD" ] ||
	fail "the jump is not the first rule of FORWARD: $(host iptables-nft -S FORWARD)"
grep -qxF -- "-A FORWARD -s 198.18.99.0/24 -j DROP" <<<"$(host iptables-nft -S FORWARD)" ||
	fail "the host's own FORWARD rule is gone"
for c in INPUT FORWARD OUTPUT; do
	grep -qx -- "-P $c ACCEPT" <<<"$(host iptables-nft -S "$c")" || fail "$c's policy was changed"
	grep -qx -- "-P $c ACCEPT" <<<"$(host ip6tables-nft -S "$c")" || fail "ipv6 $c's policy was changed"
done
[ "$(host iptables-nft -S OUTPUT)" = "-P OUTPUT ACCEPT" ] || fail "the host's OUTPUT was touched"
ok "nft: jump first in FORWARD and INPUT, the host's rule kept, no policy and no OUTPUT rule touched"
dump_rules nft iptables-nft
expect_allowed_works "nft"
expect_all_blocked "nft, fenced"
# A peer connecting in (a published port): the container's answers are
# replies (ESTABLISHED), which the fence lets through ("inbound": "allow").
(cd "$DF_TMP" && exec ip netns exec "$CT" "$DF_PY" -m http.server --bind :: 9090) \
	>>"$DF_TMP/ct-listener.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$CT" 9090 || fail "the container's service did not start"
# (The peer is an address of the upstream's namespace other than the
# upstream's own: the container never reaches an upstream address, not
# even as a reply.)
up curl -s -o /dev/null --max-time 3 --interface 198.18.2.7 "http://$CT4:9090/" ||
	fail "a peer cannot connect to the container's service (replies blocked)"
ok "nft: a peer's connection into the container is answered (inbound allow)"
container_breaks_out
expect_all_blocked "nft, after the container flushed, marked and re-routed"
expect_allowed_works "nft, after the container flushed"
guard_drill iptables-nft
expect_all_blocked "nft, after the drill"

# Docker starts after dnsfence: it makes DOCKER-USER, jumps to it first
# from FORWARD and puts its bridge accept above our FORWARD jump. The next
# guard check moves our jump into DOCKER-USER, first, in one transaction.
host iptables-nft -w -N DOCKER-USER
host iptables-nft -w -A DOCKER-USER -j RETURN
host iptables-nft -w -I FORWARD 1 -i "$BR" ! -o "$BR" -j ACCEPT
host iptables-nft -w -I FORWARD 1 -j DOCKER-USER
df_dnsfence check
[ "$DF_CMD_RC" -eq 1 ] && grep -qF "ipv4: jump from DOCKER-USER to DNSFENCE-FWD missing" <<<"$DF_CMD_OUT" ||
	fail "check did not ask for the jump in DOCKER-USER: $DF_CMD_OUT"
t0=$(df_now_ms)
df_poll 40 in_place || fail "the jump was not moved into DOCKER-USER within 4 s: $DF_CMD_OUT"
dt=$(($(df_now_ms) - t0))
[ "$(host iptables-nft -S DOCKER-USER | sed -n 2,3p | tr '\n' '|')" = "-A DOCKER-USER -j DNSFENCE-FWD|-A DOCKER-USER -j RETURN|" ] ||
	fail "the jump is not first in DOCKER-USER: $(host iptables-nft -S DOCKER-USER)"
! grep -q DNSFENCE <<<"$(host iptables-nft -S FORWARD)" || fail "a jump from FORWARD is left: $(host iptables-nft -S FORWARD)"
grep -qF -- "-A FORWARD -i $BR ! -o $BR -j ACCEPT" <<<"$(host iptables-nft -S FORWARD)" || fail "Docker's accept was touched"
expect_all_blocked "nft, Docker started after dnsfence, jump moved into DOCKER-USER after $dt ms"
# Docker gone again: the jump returns to FORWARD.
host iptables-nft -w -D FORWARD -j DOCKER-USER
host iptables-nft -w -D FORWARD -i "$BR" ! -o "$BR" -j ACCEPT
df_poll 40 in_place || fail "the jump did not return to FORWARD: $DF_CMD_OUT"
[ "$(host iptables-nft -S FORWARD | sed -n 2p)" = "-A FORWARD -j DNSFENCE-FWD" ] || fail "the jump is not first in FORWARD again"
host iptables-nft -w -F DOCKER-USER
host iptables-nft -w -X DOCKER-USER
ok "nft: without DOCKER-USER first in FORWARD, the jump is back first in FORWARD"

df_stop_dnsfence
expect_all_blocked "nft, dnsfence stopped (fail closed)"
gw_dig www.allowed.test A
[ -z "$(df_status)" ] || fail "an answer came from $GW4 with dnsfence stopped"
in_place || fail "check after stopping the daemon: $DF_CMD_OUT"
# Invariant 9 in this scope: the fingerprint lives on DNSFENCE-FWD. The
# same policy keeps the set entries; another one flushes them.
expect_in_set dnsfence4 198.18.1.10
df_setup_fence
expect_in_set dnsfence4 198.18.1.10
cp "$DF_DNSFENCE_CONF" "$DF_TMP/forward.json"
df_config scope='"forward"' interfaces="[\"$BR\"]" \
	listen="[\"$GW4:53\", \"[$GW6]:53\"]" allow='["other.allowed.test"]' guard_interval=2
df_setup_fence
expect_not_in_set dnsfence4 198.18.1.10
expect_not_in_set dnsfence6 2001:db8:1::10
cp "$DF_TMP/forward.json" "$DF_DNSFENCE_CONF"
! in_place || fail "check found no drift with the other policy's rules in place"
grep -qF "may hold entries of another policy" <<<"$DF_CMD_OUT" || fail "check did not name the policy change: $DF_CMD_OUT"
df_setup_fence
ok "nft: same policy keeps the set entries; another allowlist flushes them; check names the change"
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown exited $DF_CMD_RC: $DF_CMD_ERR"
[ "$(host iptables-nft -S FORWARD)" = "$(printf '%s\n' '-P FORWARD ACCEPT' '-A FORWARD -s 198.18.99.0/24 -j DROP')" ] ||
	fail "teardown left FORWARD as $(host iptables-nft -S FORWARD)"
! host iptables-nft -S DNSFENCE-IN >/dev/null 2>&1 || fail "teardown left DNSFENCE-IN"
ok "nft: stopped daemon leaves the fence closed; teardown removes our chains and jumps only"
expect_all_reachable "after teardown"
host iptables-nft -w -F FORWARD

# --- run 2: iptables-legacy on a Docker-style host, the jump in DOCKER-USER -----
# Docker (legacy) made DOCKER-USER, jumped to first from FORWARD, ending
# in RETURN. dnsfence starts before the gateway address exists (fence
# first; it binds with IP_FREEBIND), then the "network" comes up.
host iptables-legacy -w -N DOCKER-USER
host iptables-legacy -w -A DOCKER-USER -j RETURN
host iptables-legacy -w -I FORWARD 1 -j DOCKER-USER
gateway_down
# One host service opened on purpose (host_allow): that address and port
# only; the same service on the host's other addresses stays out of reach.
FWD_EXTRA=(host_allow='["tcp/198.18.65.1:8080"]')
BLOCKED=(198.18.2.5 2001:db8:1::20 "$DF_UP4" "$DF_UP6" "$META" "$DF_WL4" "$GW4" "$DF_WL6" "$GW6")
df_dnsfence teardown # nothing to remove: must not fail
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown without rules exited $DF_CMD_RC: $DF_CMD_ERR"
start_forward_dnsfence legacy own-lock
df_wait_log 50 "listening on $GW4:53" || fail "dnsfence did not bind $GW4 before the bridge held it"
gateway_up
df_poll 50 gw_answers || fail "dnsfence did not answer on $GW4:53 once the gateway came up"
in_place || fail "legacy check after setup: $DF_CMD_OUT"
host iptables-legacy-save -t filter | grep -- "-A DNSFENCE-FWD" >/dev/null || fail "the rules are not in iptables-legacy"
! grep -q DNSFENCE <<<"$(host iptables-nft-save -t filter)" || fail "rules went to iptables-nft instead of legacy"
[ "$(host iptables-legacy -S DOCKER-USER | sed -n 2,3p | tr '\n' '|')" = "-A DOCKER-USER -j DNSFENCE-FWD|-A DOCKER-USER -j RETURN|" ] ||
	fail "the jump is not first in DOCKER-USER: $(host iptables-legacy -S DOCKER-USER)"
[ "$(host iptables-legacy -S FORWARD | sed -n '2,$p')" = "-A FORWARD -j DOCKER-USER" ] ||
	fail "FORWARD was changed on a Docker host: $(host iptables-legacy -S FORWARD)"
ok "legacy: jump first in DOCKER-USER, FORWARD and Docker's RETURN untouched"
reach 198.18.65.1 8080 || fail "host_allow: the container cannot reach 198.18.65.1 port 8080"
ok "legacy: host_allow opens 198.18.65.1 port 8080 to the container"
dump_rules legacy iptables-legacy
expect_allowed_works "legacy"
container_breaks_out
expect_all_blocked "legacy, container flushed and re-routed"
guard_drill iptables-legacy
# The host's own lock, as in production: the guard cannot take it.
df_stop_dnsfence
start_forward_dnsfence legacy-host-lock
df_poll 50 gw_answers || fail "dnsfence (host lock) did not answer"
guard_drill iptables-legacy supervised
df_stop_dnsfence
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "legacy teardown exited $DF_CMD_RC: $DF_CMD_ERR"
[ "$(host iptables-legacy -S DOCKER-USER | sed -n '2,$p')" = "-A DOCKER-USER -j RETURN" ] ||
	fail "teardown left DOCKER-USER as $(host iptables-legacy -S DOCKER-USER)"
expect_all_reachable "legacy, after teardown"
