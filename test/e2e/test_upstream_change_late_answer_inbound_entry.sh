#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack: the late-answer entry (test_upstream_late_answer_inbound_entry.sh)
# after a reload that replaces `upstreams`, where it needs no 30 s wait.
#
# The reload drains the old channel (at most upstream_timeout, 3 s), then
# deletes every conntrack entry whose original destination is the old
# upstream (docs/firewall.md, rule 2; "Conntrack ride after an upstream
# change" in docs/security.md). An answer from the old upstream that comes
# after that (any answer slower than upstream_timeout: a cache miss behind
# a slow authority) is the first packet of a NEW entry
#   198.18.0.1:53 -> 198.18.0.2:P   (ctorigdst 198.18.0.2, ctorigdstport P)
# and uid 4242, holding P (read in /proc/net/udp while the daemon's socket
# was open, bound once it closed), asks 198.18.0.1:53 for a denied name as
# that entry's reply direction: rule 3 accepts it; rule 5 (original port
# 53) does not see it. The slow upstream is simulated with SIGSTOP.
#
# Now rule 2b rejects DNS as the reply direction of any entry begun from
# port 53 (the replaced upstream's rules are gone by then).
#
# Asserted, after the controls: the late answer reaches the old port (the
# entry exists), the workload's queries through it fail (EPERM), get no
# answer, and are logged as DNS bypassing dnsfence.
# Controls: evil.test is denied through dnsfence; uid 4242's query from the
# daemon's old port straight to 198.18.0.1:53 is refused (EPERM); the
# daemon says it deleted the entries to the replaced upstream.
source "$(dirname "$0")/lib.sh"
df_setup
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
df_start_dnsfence allow='["*.allowed.test"]' control="$(sock_conf)"
chmod 755 "$DF_TMP"
df_dig evil.test A
expect_rcode NXDOMAIN
ok "control: evil.test is denied through dnsfence"

df_wl_as 4242 "$DF_PY" "$(df_share late_answer_workload.py)" 6 0 >"$DF_TMP/late.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 grep -q watching "$DF_TMP/late.log" || fail "the workload did not start: $(cat "$DF_TMP/late.log")"

kill -STOP "$DF_UNBOUND_PID"
df_dig a.b.allowed.test A +time=6 +tries=1
df_late_reload_replaces "$(sock_conf)"

sleep 1
kill -CONT "$DF_UNBOUND_PID"
df_late_refused 53 "the replaced upstream 198.18.0.1"
expect_log_contains "DNS to 198.18.0.1 bypassing dnsfence"
ok "after the replaced upstream's late answer uid 4242 still gets no answer from 198.18.0.1"
