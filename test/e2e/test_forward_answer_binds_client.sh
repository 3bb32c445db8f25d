#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope: an answer opens its addresses only for the client address
# that asked (issue 42, item 2). Container A (the lab's, 198.18.64.2 /
# 2001:db8:64::2) asks the gateway for www.allowed.test (198.18.1.10,
# 2001:db8:1::10) and connects to port 8080. The attack: right after,
#   - B (198.18.64.3 / 2001:db8:64::3), on the same bridge, and
#   - C (198.18.65.2 / 2001:db8:65::2), on a second bridge the same daemon
#     fences (gateway 198.18.65.1 / 2001:db8:65::1),
# never asked, connect to the same addresses and port: they must be
# refused (a TCP reset, not a timeout), v4 and v6. The kernel state says
# why: the client sets (dnsfence4-client, dnsfence6-client, hash:ip,port,ip)
# hold A's address, tcp:8080 and the answered address, and nothing for B or
# C, and the daemon logs B's refused flow as answered to another client
# (reason other_client). Once B and C ask themselves, each at its own gateway, they connect at
# once, with no pause between the answer and the connect (the entry is in
# before the answer leaves; a cache hit for the daemon by then). A client
# is answered only the family it asked from: AAAA over IPv4 and A over
# IPv6 are NOERROR with no such record and an Extended DNS Error saying
# why. Teardown leaves no dnsfence set.
# Positive controls: without dnsfence A, B and C all reach both addresses
# (the lab routes, so a refusal later is the fence's); A, which asked,
# connects through the fence.
# shellcheck source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
lab_second_container
BR2="df$$br2"
GW2_4=198.18.65.1
GW2_6=2001:db8:65::1
CT3="df$$-ct3"
CT3_4=198.18.65.2
CT3_6=2001:db8:65::2
lab_bridge "$BR2" "$GW2_4" "$GW2_6"
lab_container "$CT3" "df$$e" "df$$j" "$CT3_4" "$CT3_6" "$BR2" "$GW2_4" "$GW2_6"
# The far side's way back to the second bridge (the lab routes only the
# first one's).
up ip route add 198.18.65.0/24 via "$DF_WL4"
up ip -6 route add 2001:db8:65::/64 via "$DF_WL6"

ADDR4=198.18.1.10
ADDR6=2001:db8:1::10
# name NS: who the container is, for messages.
name() {
	case "$1" in
	"$CT") echo "A ($CT4)" ;;
	"$CT2") echo "B ($CT2_4, same bridge)" ;;
	"$CT3") echo "C ($CT3_4, second bridge)" ;;
	esac
}

# connect NS ADDR: the container NS connects to ADDR port 8080 (as
# lab_peer): 0 connected, 1 refused or unreachable, 124 timed out.
connect() {
	local rc=0
	ip netns exec "$1" timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$2" 2>/dev/null || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || rc=1
	return "$rc"
}

# ask_connect NS SERVER TYPE ADDR: inside NS, in one shell, dig
# www.allowed.test TYPE at SERVER and, as soon as the answer holds ADDR,
# connect to ADDR port 8080 (no pause between them). ASK_OUT is dig's
# +short output. 0 connected, 1 refused, 124 timed out, 3 ADDR not
# answered.
ask_connect() {
	local rc=0
	ASK_OUT="$(ip netns exec "$1" bash -c '
		out="$(dig +time=2 +tries=1 @"$1" www.allowed.test "$2" +short 2>&1)" || { printf "%s\n" "$out"; exit 3; }
		printf "%s\n" "$out"
		grep -qxF -- "$3" <<<"$out" || exit 3
		exec timeout 2 bash -c "exec 3<>\"/dev/tcp/\$1/8080\"" _ "$3" 2>/dev/null' _ "$2" "$3" "$4")" || rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$rc" -eq 3 ] || rc=1
	return "$rc"
}
# asks_and_connects WHAT NS GW4 GW6: NS asks A over v4 at GW4 and AAAA
# over v6 at GW6, and connects to each answer at once.
asks_and_connects() {
	local what=$1 ns=$2 q rc server type addr
	for q in "$3 A $ADDR4" "$4 AAAA $ADDR6"; do
		read -r server type addr <<<"$q"
		rc=0
		ask_connect "$ns" "$server" "$type" "$addr" || rc=$?
		case "$rc" in
		0) ;;
		3) fail "$what: $(name "$ns") asked @$server www.allowed.test $type and was not answered $addr: '${ASK_OUT//$'\n'/ }'" ;;
		*) fail "$what: $(name "$ns") was answered $addr at $server and could not connect to it port 8080 at once (rc $rc)" ;;
		esac
	done
}

# in_listing LISTING CLIENT ADDR: the `ipset list` of a client set holds
# CLIENT,tcp:8080,ADDR.
in_listing() {
	awk -v e="$2,tcp:8080,$3" 'on && $1 == e { f = 1 } /^Members:/ { on = 1 } END { exit !f }' <<<"$1"
}

# --- 1. control: no fence -----------------------------------------------------
for ns in "$CT" "$CT2" "$CT3"; do
	for a in "$ADDR4" "$ADDR6"; do
		rc=0
		connect "$ns" "$a" || rc=$?
		[ "$rc" -eq 0 ] || fail "control (no fence): $(name "$ns") cannot reach $a port 8080 (rc $rc): the lab does not route"
	done
done
ok "control (no fence): A, B and C all reach $ADDR4 and [$ADDR6] port 8080"

LAB_EXTRA=(interfaces="[\"$BR\", \"$BR2\"]"
	listen="[\"$GW4:53\", \"[$GW6]:53\", \"$GW2_4:53\", \"[$GW2_6]:53\"]")
for be in nft legacy; do
	lab_fence "$be"
	df_poll 50 host dig +time=1 +tries=1 @"$GW2_6" ready.dnsfence.invalid A ||
		fail "$be: dnsfence does not answer on the second bridge's gateway [$GW2_6]:53"

	# --- 2. A asks and connects (positive control) ----------------------------
	asks_and_connects "$be: A asks" "$CT" "$GW4" "$GW6"
	ok "$be: A asks @$GW4 A and @$GW6 AAAA, is answered $ADDR4 and $ADDR6 and connects to both on port 8080"

	# --- 3. the attack: B and C, who never asked ------------------------------
	escaped=()
	for ns in "$CT2" "$CT3"; do
		for a in "$ADDR4" "$ADDR6"; do
			rc=0
			connect "$ns" "$a" || rc=$?
			case "$rc" in
			1) ;;
			0) escaped+=("$(name "$ns") connected to $a port 8080") ;;
			*) escaped+=("$(name "$ns") to $a port 8080 was not refused but timed out (rc $rc)") ;;
			esac
		done
	done
	[ "${#escaped[@]}" -eq 0 ] ||
		fail "$be: answered only to A, yet without asking: $(printf '%s; ' "${escaped[@]}")A's answer opened the addresses for other clients"
	ok "$be: B (same bridge) and C (second bridge), who never asked, are refused $ADDR4 and [$ADDR6] port 8080 that A was answered"
	# explained: the log names B and says why, and what to do
	df_poll 50 grep -qaE -- "blocked tcp $CT2_4:[0-9]+ -> $ADDR4:8080 .*answered for www\.allowed\.test at [0-9:]+ to another client, not to $CT2_4" "$DF_DNSFENCE_LOG" ||
		fail "$be: B's refused flow is not logged as answered to another client: $(grep -a "blocked" "$DF_DNSFENCE_LOG" | tail -3)"
	ok "$be: B's refused flow is logged: answered for www.allowed.test to another client, not to $CT2_4"
	# (judged in step 6)
	snapshot4="$(host ipset list dnsfence4-client 2>&1)" || true
	snapshot6="$(host ipset list dnsfence6-client 2>&1)" || true

	# --- 4. B and C ask themselves and connect at once ------------------------
	asks_and_connects "$be: B asks" "$CT2" "$GW4" "$GW6"
	ok "$be: B asks @$GW4 A and @$GW6 AAAA (a cache hit) and connects to both at once"
	asks_and_connects "$be: C asks" "$CT3" "$GW2_4" "$GW2_6"
	ok "$be: C asks @$GW2_4 A and @$GW2_6 AAAA at its own gateway and connects to both at once"

	# --- 5. only the family asked from ----------------------------------------
	for q in "$GW4 AAAA IPv4" "$GW6 A IPv6"; do
		read -r server type fam <<<"$q"
		DF_DIG_CMD="ip netns exec $CT dig +time=2 +tries=1 @$server www.allowed.test $type"
		DF_DIG_RC=0
		DF_OUT="$(ct dig +time=2 +tries=1 @"$server" www.allowed.test "$type" 2>&1)" || DF_DIG_RC=$?
		[ "$DF_DIG_RC" -eq 0 ] || fail "$be: A's $type question over $fam at $server got no reply (dig exited $DF_DIG_RC)"
		st="$(df_status)"
		[ "$st" = NOERROR ] || fail "$be: A's $type question over $fam at $server: status ${st:-none}, not NOERROR"
		got="$(df_answer | awk -v t="$type" '$4 == t { print $5 }')"
		[ -z "$got" ] ||
			fail "$be: A asked $type over $fam at $server and was answered ${got//$'\n'/ }: an address of the other family, which the fence cannot bind to A"
		# and told why (EDE 17), so the empty answer is no puzzle
		grep -qF "asking over $fam only $fam addresses" <<<"$DF_OUT" ||
			fail "$be: A's $type question over $fam carries no Extended DNS Error saying why: $DF_OUT"
	done
	DF_DIG_CMD=""
	ok "$be: A's AAAA question over IPv4 and A question over IPv6 are NOERROR with no such record, and EDE 17 says to ask over the other family"

	# --- 6. the kernel state ----------------------------------------------------
	sets="$(host ipset list -n)"
	for s in dnsfence4-client dnsfence6-client; do
		grep -qx -- "$s" <<<"$sets" || fail "$be: no ipset $s in the host; the sets are: ${sets//$'\n'/ }"
	done
	in_listing "$snapshot4" "$CT4" "$ADDR4" ||
		fail "$be: before B asked, dnsfence4-client held no $CT4,tcp:8080,$ADDR4 (A's answer): $snapshot4"
	in_listing "$snapshot6" "$CT6" "$ADDR6" ||
		fail "$be: before B asked, dnsfence6-client held no $CT6,tcp:8080,$ADDR6 (A's answer): $snapshot6"
	for e in "4 $CT2_4" "4 $CT3_4" "6 $CT2_6" "6 $CT3_6"; do
		snap=snapshot${e% *}
		! awk -v c="${e#* }," 'on && index($1, c) == 1 { f = 1 } /^Members:/ { on = 1 } END { exit !f }' <<<"${!snap}" ||
			fail "$be: before B and C asked, dnsfence${e% *}-client already held an entry for ${e#* }: ${!snap}"
	done
	for e in "$CT2_4 $ADDR4 4" "$CT3_4 $ADDR4 4" "$CT2_6 $ADDR6 6" "$CT3_6 $ADDR6 6"; do
		read -r c a f <<<"$e"
		listing="$(host ipset list "dnsfence$f-client" 2>&1)" || true
		in_listing "$listing" "$c" "$a" ||
			fail "$be: after it asked, dnsfence$f-client holds no $c,tcp:8080,$a: $listing"
	done
	ok "$be: the client sets held $CT4,tcp:8080,$ADDR4 and $CT6,tcp:8080,$ADDR6 and nothing for B or C before they asked, their entries after"

	# --- 7. teardown ------------------------------------------------------------
	lab_unfence "$be"
	left="$(host ipset list -n | grep '^dnsfence' || true)"
	[ -z "$left" ] || fail "$be: after teardown the host still has the sets: ${left//$'\n'/ }"
	ok "$be: teardown leaves no dnsfence set"
done
LAB_EXTRA=()
