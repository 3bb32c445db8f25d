#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack: the late-answer entry after a reload that replaces an upstream
# on a port other than 53 (test_upstream_change_late_answer_inbound_entry.sh
# is the same on port 53, which rule 2b covers whatever the upstream).
#
# The upstream is nsd on 198.18.0.1:5300. The reload drains the old channel,
# deletes the conntrack entries to 198.18.0.1 and drops its rule 2 lines. An
# answer that comes after that (slower than upstream_timeout) is the first
# packet of a NEW entry 198.18.0.1:5300 -> 198.18.0.2:P, and uid 4242,
# holding P, asks 198.18.0.1:5300 for a denied name as that entry's reply
# direction: rule 3 accepted it, rule 2b (port 53) did not see it, and the
# old resolver answered: a DNS tunnel past the fence.
#
# Now a replaced upstream's origin lines (rule 2) stay for a hold after its
# questions drained (docs/firewall.md, rule 2), kept in state_dir.
#
# Asserted, after the controls: the late answer reaches the old port, the
# workload's queries through it fail (EPERM), get no answer, and are logged.
# Controls: evil.test is denied through dnsfence; uid 4242's query from the
# daemon's old port straight to 198.18.0.1:5300 is refused; the daemon says
# it deleted the entries to the replaced upstream and holds its origin
# lines (in the kernel and in state_dir); `check` finds no drift meanwhile.
source "$(dirname "$0")/lib.sh"
df_setup
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["198.18.0.1:5300"]' control="$(sock_conf)"
chmod 755 "$DF_TMP"
df_dig evil.test A
expect_rcode NXDOMAIN
df_dig www.allowed.test A
expect_rcode NOERROR
ok "control: evil.test is denied, www.allowed.test answered through nsd on 198.18.0.1:5300"

df_wl_as 4242 "$DF_PY" "$(df_share late_answer_workload.py)" 6 0 5300 >"$DF_TMP/late.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 grep -q watching "$DF_TMP/late.log" || fail "the workload did not start: $(cat "$DF_TMP/late.log")"

pkill -STOP -f -- "-c $DF_TMP/nsd.conf"
df_dig a.b.allowed.test A +time=6 +tries=1
df_late_reload_replaces "$(sock_conf)"

df_wait_log 100 "replaced upstream(s) 198.18.0.1:5300 drained: their origin rules stay 600 s against late answers" ||
	fail "the daemon never said it holds the replaced upstream's origin rules"
grep -q '^H 198.18.0.1:5300 [0-9]*$' "$DF_TMP/state/held-upstreams" ||
	fail "the hold is not in state_dir: $(cat "$DF_TMP/state/held-upstreams" 2>&1)"
ip netns exec "$DF_WL" iptables-save -t filter | grep -- '--ctorigsrc 198.18.0.1/32 --ctorigsrcport 5300\|--ctorigsrc 198.18.0.1 --ctorigsrcport 5300' >/dev/null ||
	fail "no origin rule of 198.18.0.1:5300 in the kernel during the hold"
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check after the drain exited $DF_CMD_RC: $DF_CMD_OUT $DF_CMD_ERR"
ok "check finds the fence as the file and the hold ask"
pkill -CONT -f -- "-c $DF_TMP/nsd.conf"
df_late_refused 5300 "the replaced upstream 198.18.0.1:5300"
expect_log_contains "DNS to 198.18.0.1 bypassing dnsfence"
ok "after the replaced upstream's late answer uid 4242 still gets no answer from 198.18.0.1:5300"
