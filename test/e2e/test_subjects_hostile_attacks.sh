#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hostile suite's attacks as a fenced uid ("subjects": {"users":
# ["4242"]}), each as in its whole-namespace test, with uid 4343 beside it
# unfenced in the same namespace as the positive control:
#   1. Docker's resolver on its real port (test_docker_resolver_port_fenced.sh):
#      the upstream is 127.0.0.11, a forwarder on a random high port with
#      Docker's DNAT of :53 to it. The fenced uid's query straight to the
#      real port is refused and never reaches unbound; its query to :53 is
#      answered by dnsfence (the redirect comes before Docker's DNAT) and a
#      denied name never reaches unbound. Control: uid 4343's query to the
#      real port reaches unbound.
#   2. MLD reports carrying data (test_mld_reports_carry_no_data.sh): the
#      groups the fenced uid joins are never announced; the solicited-node
#      report leaves (control), neighbour discovery works for the subject.
#   3. Embedded IPv4 forms (test_embedded_ipv4_forms_stripped.sh): the
#      fenced uid's lookup (through resolv.conf's server, redirected) gets
#      the answer without 169.254.169.254 in NAT64, 6to4 and IPv4-compatible
#      form; uid 4343's lookup from the same resolv.conf gets all of them
#      (so the forms are served, and the fence is what strips them).
#   4. A policy change closes what it removed
#      (test_policy_change_closes_removed.sh): audit -> enforce, a name
#      removed from allow: the address is out of the set and the fenced uid
#      cannot reach it (uid 4343 can); the same policy keeps its entries.
source "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || fail "tcpdump is not installed (see contrib/deps.sh)"
df_zone_nat64
df_setup
df_start_listener 443
FENCED=4242
OTHER=4343
SUBJECTS='{"users": ["4242"]}'
printf 'nameserver 198.18.0.1\noptions timeout:2 attempts:1\n' >"/etc/netns/$DF_WL/resolv.conf"

# dig_as UID ARGS...: dig in the workload namespace as UID; sets DF_OUT and
# DF_DIG_RC like df_dig.
dig_as() {
	local uid=$1
	shift
	DF_DIG_RC=0
	DF_OUT="$(df_wl_as "$uid" dig +time=2 +tries=1 "$@" 2>&1)" || DF_DIG_RC=$?
}

# --- 1. Docker's resolver on its real port -----------------------------------

PORT=$((40000 + RANDOM % 20000))
df_docker_forwarder "$PORT"
ok "forwarder on 127.0.0.11:$PORT (relaying from the upstream namespace), 127.0.0.11:53 DNATed to it"

df_start_dnsfence allow='["www.allowed.test"]' upstreams='["127.0.0.11"]' subjects="$SUBJECTS"
df_dig www.allowed.test A
expect_rcode NOERROR
df_poll 30 df_unbound_saw www.allowed.test || fail "the daemon's query did not reach unbound through the forwarder"
ok "control: the daemon resolves through 127.0.0.11"

name="docker-other-$$.evil.test"
dig_as "$OTHER" -p "$PORT" @127.0.0.11 "$name" A
[ "$DF_DIG_RC" -eq 0 ] || fail "control: uid $OTHER got no answer from 127.0.0.11:$PORT: $DF_OUT"
df_poll 20 df_unbound_saw "$name" || fail "control: uid $OTHER's query to 127.0.0.11:$PORT did not reach unbound"
ok "control: uid $OTHER (unfenced) queries 127.0.0.11:$PORT and reaches unbound"

name="docker-$PORT-$$.evil.test"
dig_as "$FENCED" -p "$PORT" @127.0.0.11 "$name" A
[ "$DF_DIG_RC" -ne 0 ] || fail "the fenced uid got an answer from 127.0.0.11:$PORT: $DF_OUT"
sleep 0.3
! df_unbound_saw "$name" || fail "$name reached unbound from the fenced uid through 127.0.0.11:$PORT"
name="docker-53-$$.evil.test"
dig_as "$FENCED" @127.0.0.11 "$name" A
[ "$(df_status)" = NXDOMAIN ] || fail "the fenced uid's query to 127.0.0.11:53 was not answered by the policy: $DF_OUT"
dig_as "$FENCED" @127.0.0.11 www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
sleep 0.3
! df_unbound_saw "$name" || fail "$name reached unbound from the fenced uid through 127.0.0.11:53"
ok "fenced uid: 127.0.0.11:$PORT refused, 127.0.0.11:53 answered by dnsfence (denied NXDOMAIN), nothing reaches unbound"
df_stop_dnsfence
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown exited $DF_CMD_RC: $DF_CMD_ERR"

# --- 2. MLD reports carrying data --------------------------------------------

GROUP1=ff02::6461:7461:2d6c:6561:6b21 # "data-leak!"
GROUP2=ff05::5ec:4e7:da7a
df_start_dnsfence allow='["www.allowed.test"]' subjects="$SUBJECTS"
df_mld_capture
df_join_groups "$FENCED" "$GROUP1" "$GROUP2"
ok "uid $FENCED (fenced) joined $GROUP1 and $GROUP2"
wl ip -6 neigh flush dev "$DF_VETH_WL"
dig_as "$FENCED" @198.18.0.1 www.allowed.test AAAA
expect_answer_contains 2001:db8:1::10
df_connect_as "$FENCED" 2001:db8:1::10 443 || fail "the fenced uid cannot reach [2001:db8:1::10]:443 after the neighbour cache was flushed"
ok "control: neighbour discovery works for the fenced uid (connect to 2001:db8:1::10 after flushing the neighbour cache)"
expect_mld_reports_only_control "$GROUP1" "$GROUP2"
ok "control: the report for ff02::1:ff00:99 left; none for the fenced uid's groups ($GROUP1, $GROUP2)"

# --- 3. embedded IPv4 forms ---------------------------------------------------

df_stop_dnsfence
df_start_dnsfence allow='["nat64.allowed.test"]' subjects="$SUBJECTS"
dig_as "$OTHER" @198.18.0.1 nat64.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 64:ff9b::a9fe:a9fe
expect_answer_contains 2002:a9fe:a9fe::1
expect_answer_count AAAA 6
ok "control: uid $OTHER (unfenced) gets all six forms from resolv.conf's server"
dig_as "$FENCED" @198.18.0.1 nat64.allowed.test AAAA
expect_rcode NOERROR
expect_nat64_judged
ok "fenced uid: 169.254.169.254 as NAT64, local NAT64, 6to4 and IPv4-compatible stripped, not in the set, logged; the public forms kept"

# --- 4. a policy change closes what it removed -------------------------------

# fenced_reaches NAME ADDR: the fenced uid resolves NAME (redirected) and
# connects to ADDR:443.
fenced_reaches() {
	dig_as "$FENCED" @198.18.0.1 "$1" A
	[ "$(df_status)" = NOERROR ] || fail "the fenced uid could not resolve $1: $DF_OUT"
	df_connect_as "$FENCED" "$2" 443
}
df_stop_dnsfence
df_start_dnsfence mode='"audit"' allow='["www.allowed.test"]' subjects="$SUBJECTS"
fenced_reaches a.b.allowed.test 198.18.1.11 || fail "audit: the fenced uid cannot reach 198.18.1.11:443"
expect_in_set dnsfence4 198.18.1.11
ok "audit: a.b.allowed.test resolved by the fenced uid, 198.18.1.11 in the set and reached"
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]' subjects="$SUBJECTS"
expect_not_in_set dnsfence4 198.18.1.11
! df_connect_as "$FENCED" 198.18.1.11 443 || fail "after audit -> enforce the fenced uid still reaches 198.18.1.11:443"
df_connect_as "$OTHER" 198.18.1.11 443 || fail "control: uid $OTHER cannot reach 198.18.1.11:443"
ok "after audit -> enforce: 198.18.1.11 out of the set, the fenced uid refused (uid $OTHER reaches it)"

df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]' subjects="$SUBJECTS"
fenced_reaches a.b.allowed.test 198.18.1.11 || fail "the fenced uid cannot reach allowed a.b.allowed.test"
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]' subjects="$SUBJECTS"
expect_not_in_set dnsfence4 198.18.1.11
! df_connect_as "$FENCED" 198.18.1.11 443 || fail "after removing a.b.allowed.test the fenced uid still reaches 198.18.1.11:443"
ok "after removing a.b.allowed.test from allow: out of the set, the fenced uid refused"

fenced_reaches www.allowed.test 198.18.1.10 || fail "the fenced uid cannot reach www.allowed.test"
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test", "www.allowed.test"]' subjects="$SUBJECTS"
expect_in_set dnsfence4 198.18.1.10
df_connect_as "$FENCED" 198.18.1.10 443 || fail "the fenced uid cannot reach 198.18.1.10:443 after a restart with the same policy"
ok "control: the same policy keeps 198.18.1.10 in the set across a restart; the fenced uid connects without a new query"
expect_dnsfence_running
