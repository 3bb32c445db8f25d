#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An upstream on an address of the fenced namespace that is not loopback
# (a resolver on the pod's own address, a host's LAN address) answers
# from a socket of the namespace just as a loopback one does, and while
# it is down any process there can bind its port. Before this test only
# loopback upstreams were checked: with upstreams ["198.18.0.2:5300"],
# the workload's own address, a uid-4242 process bound 198.18.0.2:5300,
# answered 198.18.2.50 for a name below an allowed wildcard, the address
# went into dnsfence4, and the workload connected to it.
#
# Asserted:
# 1. Such a config without local_upstream_user is refused by validate
#    and setup (exit 2), the error naming the address, its interface
#    and the key; so is its IPv4-mapped IPv6 form, in any case.
# 2. With local_upstream_user "root" (the tests' nsd), a name resolves
#    through nsd on 198.18.0.2:5300 (positive control), and `dnsfence
#    check` finds the kernel's rules as rendered. Then nsd stops and uid
#    4242 takes its port: asked, but its address is not in the reply,
#    not in dnsfence4, not reachable, and the log names uid and upstream.
#    Before it, with nothing on the port, the kernel's port unreachable
#    reaches the daemon (its socket has no owner uid): "unreachable".
# 3. Without the key, an upstream that becomes an address of the
#    namespace after setup (no check can see it coming) is held by the
#    rule alone: the squatter there is asked, and nothing it says gets
#    in. A reload while the address is there is refused, naming it.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
chmod 755 "$DF_TMP" # the DNS process reads the file at reload

# 1. Refused without the key, where the address is the namespace's.
df_config allow='["*.allowed.test"]' upstreams="[\"$DF_WL4:5300\"]" listen='["127.0.0.1:53"]'
df_dnsfence validate
[ "$DF_CMD_RC" -eq 2 ] || fail "an upstream on the namespace's own address without local_upstream_user: validate exited $DF_CMD_RC, expected 2"
grep -q "upstreams: $DF_WL4 is an address of this network namespace (on $DF_VETH_WL).*\"local_upstream_user\"" <<<"$DF_CMD_ERR" ||
	fail "the refusal does not name the address, its interface and the key: $DF_CMD_ERR"
df_dnsfence setup
[ "$DF_CMD_RC" -eq 2 ] || fail "setup of the same config exited $DF_CMD_RC, expected 2: $DF_CMD_ERR"
# Its IPv4-mapped form would travel as IPv4, past the IPv6 rules naming it.
df_config allow='["*.allowed.test"]' upstreams="[\"[::ffff:$DF_WL4]:5300\"]" listen='["127.0.0.1:53"]'
df_dnsfence validate
[ "$DF_CMD_RC" -eq 2 ] && grep -q "is an IPv4-mapped IPv6 address.*write $DF_WL4:5300" <<<"$DF_CMD_ERR" ||
	fail "the IPv4-mapped form of the upstream: validate exited $DF_CMD_RC: $DF_CMD_ERR"
ok "an upstream on $DF_WL4 ($DF_VETH_WL) without local_upstream_user is refused by validate and setup, naming the key"

# 2. The resolver's user named: it answers; then a squatter takes its port.
df_start_local_nsd "$DF_WL4"
df_start_dnsfence allow='["*.allowed.test"]' upstreams="[\"$DF_WL4:5300\"]" \
	listen='["127.0.0.1:53"]' local_upstream_user='"root"'
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check found the kernel's rules differ from the config's: $DF_CMD_OUT $DF_CMD_ERR"
expect_fenced 198.18.2.50 80
ok "control: www.allowed.test resolves through nsd on $DF_WL4:5300 (uid 0); check agrees; 198.18.2.50 fenced"

df_stop_local_nsd
# The kernel's port unreachable comes from its own socket, which has no
# owner: it passes, and the daemon knows at once, not at its timeout.
df_dig gone.allowed.test A +time=5 +tries=1
expect_log_contains "no answer for gone.allowed.test A: unreachable (no route, port closed or packets rejected)"
df_squat 4242 "$DF_WL4" "$DF_TMP/squat.log"
df_dig evil.allowed.test A +time=5 +tries=1
expect_squat_held "$DF_TMP/squat.log" "$DF_WL4"
ok "uid 4242 on $DF_WL4:5300 was asked ($(grep -m1 -o 'send failed.*\|answered.*' "$DF_TMP/squat.log")): not in the reply, not in dnsfence4, not reachable; the log names it"
df_stop_dnsfence
kill "${DF_PIDS[-1]}" 2>/dev/null || true

# 3. No key, and the address arrives after setup: the rule alone.
LATER=198.18.0.3
df_start_dnsfence allow='["*.allowed.test"]' upstreams="[\"$LATER:5300\"]" listen='["127.0.0.1:53"]'
wl iptables-save | grep -- "--ctorigdst $LATER --ctdir REPLY -m owner --uid-owner 0-4294967294 -j DROP" >/dev/null ||
	fail "no rule drops answers from this namespace's sockets for $LATER: $(wl iptables-save | grep "ctorigdst $LATER")"
wl ip addr add "$LATER/32" dev lo
df_squat 4242 "$LATER" "$DF_TMP/squat2.log"
df_dig evil.allowed.test A +time=5 +tries=1
expect_squat_held "$DF_TMP/squat2.log" "$LATER"
df_dnsfence reload
[ "$DF_CMD_RC" -ne 0 ] || fail "a reload with the upstream now an address of the namespace succeeded"
grep -q "upstreams: $LATER is an address of this network namespace (on lo)" <<<"$DF_CMD_OUT$DF_CMD_ERR" ||
	fail "the refused reload does not say why: $DF_CMD_OUT $DF_CMD_ERR"
expect_dnsfence_running
ok "without the key, uid 4242 on $LATER:5300 (added after setup) was asked: nothing it said got in; the reload is refused, naming $LATER"
