#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fence's lifecycle commands: "setup" twice leaves one copy of every
# rule; "check" is 0 after setup and 1, naming the difference on stdout,
# after a rule is deleted or the OUTPUT policy is flipped; "teardown"
# leaves nothing (no chain, no jump, policy ACCEPT, no sets); a
# pre-existing dnsfence4 of type hash:net makes setup exit 3 naming it;
# mode "off" installs nothing and says so.
source "$(dirname "$0")/lib.sh"
df_setup_net
df_config allow='["www.allowed.test"]'

df_setup_fence
! grep -q 'flushed' <<<"$DF_CMD_ERR" || fail "the first setup says it flushed sets it just created: $DF_CMD_ERR"
grep -q 'start empty' <<<"$DF_CMD_ERR" || fail "the first setup does not say the sets start empty: $DF_CMD_ERR"
df_setup_fence
again4="$(wl iptables-save -t filter | grep -v '^#' | sort)"
for t in iptables-save ip6tables-save; do
	dups="$(wl "$t" -t filter | grep '^-A' | sort | uniq -d)"
	[ -z "$dups" ] || fail "setup twice left duplicate rules ($t): $dups"
done
[ "$(wl iptables -S OUTPUT | grep -c -- '-j DNSFENCE-OUT')" -eq 1 ] || fail "more than one jump to DNSFENCE-OUT (ipv4)"
[ "$(wl ip6tables -S OUTPUT | grep -c -- '-j DNSFENCE-OUT')" -eq 1 ] || fail "more than one jump to DNSFENCE-OUT (ipv6)"
grep -qx -- '-P OUTPUT DROP' <<<"$(wl iptables -S OUTPUT)" || fail "ipv4 OUTPUT policy is not DROP"
grep -qx -- '-P OUTPUT DROP' <<<"$(wl ip6tables -S OUTPUT)" || fail "ipv6 OUTPUT policy is not DROP"
ok "setup twice: one copy of every rule, one jump, policy DROP ($(grep -c '^-A' <<<"$again4") ipv4 lines)"

df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check after setup: expected 0, saw $DF_CMD_RC: $DF_CMD_OUT $DF_CMD_ERR"
! grep -q 'runs as nobody' <<<"$DF_CMD_ERR" || fail "check repeats the nobody warning: $DF_CMD_ERR"
[ -z "$DF_CMD_OUT" ] || fail "check after setup printed differences: $DF_CMD_OUT"
ok "check after setup -> 0"

# Delete one rule of our chain.
victim="$(grep -m1 -- '--match-set dnsfence4' <<<"$(wl iptables -S DNSFENCE-OUT)")"
[ -n "$victim" ] || fail "no rule matching dnsfence4 in DNSFENCE-OUT: $(wl iptables -S DNSFENCE-OUT)"
eval "wl iptables -D ${victim#-A }"
df_dnsfence check
[ "$DF_CMD_RC" -eq 1 ] || fail "check after deleting a rule: expected 1, saw $DF_CMD_RC: $DF_CMD_ERR"
grep -q 'ipv4: .*match-set dnsfence4' <<<"$DF_CMD_OUT" || fail "check does not name the deleted rule: $DF_CMD_OUT"
ok "rule deleted -> check 1: $DF_CMD_OUT"
df_setup_fence

# Flip the policy.
wl ip6tables -P OUTPUT ACCEPT
df_dnsfence check
[ "$DF_CMD_RC" -eq 1 ] || fail "check after the policy flip: expected 1, saw $DF_CMD_RC"
grep -qi 'ipv6.*policy' <<<"$DF_CMD_OUT" || fail "check does not name the policy: $DF_CMD_OUT"
ok "ipv6 policy ACCEPT -> check 1: $DF_CMD_OUT"
df_setup_fence

# teardown: nothing left.
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown exited $DF_CMD_RC: $DF_CMD_ERR"
! grep -q 'runs as nobody' <<<"$DF_CMD_ERR" || fail "teardown repeats the nobody warning: $DF_CMD_ERR"
for t in iptables ip6tables; do
	! wl "$t" -S DNSFENCE-OUT >/dev/null 2>&1 || fail "$t: DNSFENCE-OUT still there after teardown"
	! wl "$t" -S OUTPUT | grep DNSFENCE >/dev/null || fail "$t: a jump is left after teardown"
	wl "$t" -S OUTPUT | grep -x -- '-P OUTPUT ACCEPT' >/dev/null || fail "$t: policy is not ACCEPT after teardown"
done
[ -z "$(wl ipset list -n)" ] || fail "sets left after teardown: $(wl ipset list -n)"
ok "teardown: no chain, no jump, policy ACCEPT, no sets"
df_dnsfence check
[ "$DF_CMD_RC" -eq 1 ] || fail "check after teardown: expected 1, saw $DF_CMD_RC"
ok "check after teardown -> 1 ($(wc -l <<<"$DF_CMD_OUT") differences)"

# A set of the wrong type blocks setup.
wl ipset create dnsfence4 hash:net family inet timeout 60
df_dnsfence setup
[ "$DF_CMD_RC" -eq 3 ] || fail "setup with a hash:net dnsfence4: expected 3, saw $DF_CMD_RC: $DF_CMD_ERR"
grep -q 'dnsfence4.*hash:net' <<<"$DF_CMD_ERR" || fail "setup does not name the wrong set: $DF_CMD_ERR"
ok "pre-existing dnsfence4 hash:net -> setup exit 3: $(grep -m1 dnsfence4 <<<"$DF_CMD_ERR")"
wl ipset destroy dnsfence4
if wl ipset list -n dnsfence6 >/dev/null 2>&1; then wl ipset destroy dnsfence6; fi

# mode off: nothing installed, loudly.
df_config allow='["www.allowed.test"]' mode='"off"'
df_dnsfence setup
[ "$DF_CMD_RC" -eq 0 ] || fail "setup in mode off: expected 0, saw $DF_CMD_RC"
grep -q 'NO rules' <<<"$DF_CMD_ERR" || fail "mode off is not said loudly: $DF_CMD_ERR"
! wl iptables -S DNSFENCE-OUT >/dev/null 2>&1 || fail "mode off installed a chain"
grep -qx -- '-P OUTPUT ACCEPT' <<<"$(wl iptables -S OUTPUT)" || fail "mode off changed the policy"
[ -z "$(wl ipset list -n)" ] || fail "mode off created sets"
ok "mode off: nothing installed; $DF_CMD_ERR"
