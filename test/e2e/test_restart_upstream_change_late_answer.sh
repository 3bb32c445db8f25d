#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack: the late-answer entry after a RESTART with another `upstreams`
# (test_upstream_change_late_answer_other_port.sh is the same across a
# reload). The old daemon asked nsd on 198.18.0.1:5300 and exited; the new
# config names only [2001:db8::1]:53, so its rules no longer name
# 198.18.0.1. nsd's answer, later than the old daemon's socket, makes a NEW
# entry 198.18.0.1:5300 -> 198.18.0.2:P, and uid 4242, bound to P once the
# old daemon freed it, asks 198.18.0.1:5300 as that entry's reply direction.
#
# Now setup holds the origin lines of every upstream endpoint the kernel's
# rules named and the new config does not, for 600 s, in the rules and in
# state_dir (so `check` expects them). Then the end of a hold: a hold that
# the state file says ends in 15 s is rendered at start, and its lines go
# when it ends, said in the log.
#
# Controls: denied through dnsfence; the workload's direct query refused
# before the late answer; the late answer reaches the old port; setup names
# the held endpoint; check passes during the hold.
source "$(dirname "$0")/lib.sh"
df_setup
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["198.18.0.1:5300"]' control="$(sock_conf)"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig evil.test A
expect_rcode NXDOMAIN
ok "control: www.allowed.test answered through nsd on 198.18.0.1:5300, evil.test denied"

df_wl_as 4242 "$DF_PY" "$(df_share late_answer_workload.py)" 6 0 5300 >"$DF_TMP/late.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 grep -q watching "$DF_TMP/late.log" || fail "the workload did not start: $(cat "$DF_TMP/late.log")"
pkill -STOP -f -- "-c $DF_TMP/nsd.conf"
df_dig a.b.allowed.test A +time=2 +tries=1
df_stop_dnsfence
DF_DNSFENCE_CMD=run df_start_dnsfence allow='["*.allowed.test"]' upstreams='["[2001:db8::1]"]' control="$(sock_conf)"
df_wait_log 50 "the rules named upstream(s) 198.18.0.1:5300 that this config does not: their origin rules stay 600 s" ||
	fail "setup did not hold the old upstream's origin rules"
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check during the hold exited $DF_CMD_RC: $DF_CMD_OUT $DF_CMD_ERR"
df_late_bound
ok "control: setup holds 198.18.0.1:5300's origin rules, check passes; uid 4242 holds the old daemon's port(s) ($(grep '^bound' "$DF_TMP/late.log")), its direct query refused"

pkill -CONT -f -- "-c $DF_TMP/nsd.conf"
df_late_refused 5300 "the old upstream 198.18.0.1:5300 after the restart"
ok "after the restart the old upstream's late answer carries nothing for uid 4242"

# The end of a hold: the file says 198.18.0.9:5300's ends in 15 s (not
# less: setup renders the hold and serve then verifies it, and a hold that
# ended between the two makes serve refuse the rules; a loaded machine
# takes seconds between them).
df_stop_dnsfence
now=$("$DF_PY" -c 'import time; print(int(time.monotonic()))')
{
	echo "dnsfence-held 1"
	echo "boot $(cat /proc/sys/kernel/random/boot_id)"
	echo "H 198.18.0.9:5300 $((now + 15))"
	echo "end"
} >"$DF_TMP/state/held-upstreams"
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["[2001:db8::1]"]' control="$(sock_conf)"
ip netns exec "$DF_WL" iptables-save -t filter | grep -- '--ctorigsrc 198.18.0.9.* --ctorigsrcport 5300' >/dev/null ||
	fail "the hold in state_dir was not rendered: $(ip netns exec "$DF_WL" iptables-save -t filter | grep ctorigsrc)"
df_wait_log 300 "the hold of replaced upstream(s) 198.18.0.9:5300 ended: their origin rules go" ||
	fail "the daemon never ended the hold of 198.18.0.9:5300"
df_poll 50 sh -c "! ip netns exec $DF_WL iptables-save -t filter | grep -q -- '--ctorigsrc 198.18.0.9'" ||
	fail "198.18.0.9:5300's origin rules stayed after its hold"
grep -q '198.18.0.9' "$DF_TMP/state/held-upstreams" 2>/dev/null &&
	fail "the ended hold is still in state_dir"
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check after the hold exited $DF_CMD_RC: $DF_CMD_OUT $DF_CMD_ERR"
ok "a hold that ends takes its origin rules with it (kernel, state_dir), and check agrees"
