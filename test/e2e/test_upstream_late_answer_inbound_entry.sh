#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack: an upstream's late answer opens the upstream to the workload.
#
# Rule 2 names the upstream only as --ctorigdst. When the upstream answers
# after the daemon's conntrack entry for the question has expired (UDP:
# 30 s; a slow recursion, a resolver that was stalled), the answer is the
# first packet of a NEW entry whose ORIGINAL direction is
#   198.18.0.1:53 -> 198.18.0.2:P   (ctorigdst 198.18.0.2, ctorigdstport P)
# and every packet the workload then sends from P to 198.18.0.1:53 is that
# entry's REPLY: no rule 2 line matches (the original destination is our
# own address), rule 5 does not (the original port is P), and rule 3
# (RELATED,ESTABLISHED) accepts it. A uid-4242 process learns P from
# /proc/net/udp while the daemon's socket is open (remote 198.18.0.1:53),
# binds it once the daemon closes it, and queries the upstream straight,
# for a denied name, as long as it keeps the entry alive.
#
# The upstream's stall is simulated with SIGSTOP until the daemon's entries
# have expired. The workload namespace's UDP timeout is 5 s, not 30: the
# same expiry, six times sooner (the sysctl is the namespace's own).
#
# Now rule 2 also holds the entries the upstream's endpoint began
# (--ctorigsrc 198.18.0.1 --ctorigsrcport 53): only the daemon's marked
# packets pass there.
#
# Asserted:
# 1. control: evil.test is denied through dnsfence; uid 4242's query from
#    the daemon's old port straight to 198.18.0.1:53 fails (EPERM) while
#    the daemon's entry lives.
# 2. the late answer reaches the old port (the control: the entry
#    exists); uid 4242's queries through it fail (EPERM), get no answer,
#    and the daemon logs them as DNS bypassing it.
source "$(dirname "$0")/lib.sh"
df_setup
wl sysctl -qw net.netfilter.nf_conntrack_udp_timeout=5
df_start_dnsfence allow='["*.allowed.test"]'

df_dig evil.test A
expect_rcode NXDOMAIN
ok "control: evil.test is denied through dnsfence"

# The workload: watch /proc/net/udp for the daemon's sockets to the
# upstream, take their ports when freed, ask the upstream straight.
df_wl_as 4242 "$DF_PY" "$(df_share late_answer_workload.py)" 8 8 >"$DF_TMP/late.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 grep -q watching "$DF_TMP/late.log" || fail "the workload did not start: $(cat "$DF_TMP/late.log")"

kill -STOP "$DF_UNBOUND_PID"
df_dig a.b.allowed.test A +time=6 +tries=1
df_late_bound
ok "control: uid 4242 holds the daemon's old port(s) ($(grep '^bound' "$DF_TMP/late.log")); its direct query is refused (EPERM)"

# Let the daemon's entries expire, then wake the upstream.
df_poll 600 grep -q quiet "$DF_TMP/late.log" || fail "the workload never went quiet"
df_poll 400 bash -c '[ "$(ip netns exec '"$DF_WL"' conntrack -L -p udp -d 198.18.0.1 --dport 53 2>/dev/null | grep -c dport=53)" -eq 0 ]' ||
	fail "the daemon's entries to the upstream did not expire"
echo "entries to 198.18.0.1:53 expired at $(date -u +%T)" >&2
kill -CONT "$DF_UNBOUND_PID"
df_late_refused 53 "the upstream 198.18.0.1"
expect_log_contains "DNS to 198.18.0.1 bypassing dnsfence"
ok "after the upstream's late answer uid 4242 still gets no answer from 198.18.0.1"
