#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An upstream on a loopback address beside the daemon (a local cache on
# 127.0.0.1:5300) answers from a socket of the fenced namespace, and
# while that resolver is down any process of the namespace can bind its
# port. Before this test the fence accepted every reply to the daemon's
# marked questions (rule 2's REPLY accept): a uid-4242 process bound
# 127.0.0.1:5300 after the local nsd stopped, answered 198.18.2.50 for a
# name below an allowed wildcard, the address went into dnsfence4, and
# the workload connected to it.
#
# Asserted:
# 1. A config with a loopback upstream and no local_upstream_user is
#    refused (exit 2), the error naming the key; Docker's 127.0.0.11:53
#    needs none.
# 2. With local_upstream_user naming the resolver's user (root: the
#    tests' nsd runs as root), the name resolves through it (positive
#    control), and `dnsfence check` finds the kernel's rules as rendered.
# 3. The local nsd stops; uid 4242 binds its port and answers the
#    daemon's question (it logs each one: it was asked; the fence's DROP
#    fails its send with EPERM): its address is not in the reply, not in
#    dnsfence4, and not reachable; the daemon's log names the squatter's
#    uid and the upstream.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80

# nsd in the workload namespace on 127.0.0.1:5300, the test zones.
df_start_local_nsd

# 1. Refused without the key; Docker's resolver needs none.
df_config allow='["*.allowed.test"]' upstreams='["127.0.0.1:5300"]' listen='["127.0.0.1:53"]'
df_dnsfence validate
[ "$DF_CMD_RC" -eq 2 ] || fail "a loopback upstream without local_upstream_user: validate exited $DF_CMD_RC, expected 2"
grep -q 'upstreams: 127.0.0.1 is a loopback address.*"local_upstream_user"' <<<"$DF_CMD_ERR" ||
	fail "the refusal does not name the address and the key: $DF_CMD_ERR"
df_config allow='["*.allowed.test"]' upstreams='["127.0.0.11"]' listen='["127.0.0.1:53"]'
df_dnsfence validate
[ "$DF_CMD_RC" -eq 0 ] || fail "Docker's 127.0.0.11:53 as upstream was refused: $DF_CMD_ERR"
ok "a loopback upstream without local_upstream_user is refused, naming the key; 127.0.0.11:53 is not"

# 2. The resolver's user named: it answers, and the rules are as rendered.
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["127.0.0.1:5300"]' \
	listen='["127.0.0.1:53"]' local_upstream_user='"root"'
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
wl iptables-save | grep -- '--ctorigdst 127.0.0.1 --ctdir REPLY -m owner --uid-owner 0-4294967294 -m owner ! --uid-owner 0 -j DROP' >/dev/null ||
	fail "no owner rule for the local upstream's replies: $(wl iptables-save | grep 'ctorigdst 127.0.0.1')"
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check found the kernel's rules differ from the config's: $DF_CMD_OUT $DF_CMD_ERR"
expect_fenced 198.18.2.50 80
ok "control: www.allowed.test resolves through the local upstream (uid 0); check agrees; 198.18.2.50 fenced"

# 3. The resolver stops; a workload process takes its port.
df_stop_local_nsd
df_squat 4242 127.0.0.1 "$DF_TMP/squat.log"

df_dig evil.allowed.test A +time=5 +tries=1
expect_squat_held "$DF_TMP/squat.log" 127.0.0.1
expect_dnsfence_running
ok "uid 4242 on the local upstream's port was asked and answered 198.18.2.50 ($(grep -m1 -o 'answered.*\|send failed.*' "$DF_TMP/squat.log")): not in the reply, not in dnsfence4, not reachable"
