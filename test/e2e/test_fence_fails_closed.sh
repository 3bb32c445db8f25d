#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fail closed: after the daemon is killed (SIGKILL, no clean-up), the rules
# stay. A new name cannot be resolved (the workload's DNS to the upstream
# is blocked, and nothing answers on 127.0.0.1), an address that was never
# answered stays unreachable, and an address answered before the kill stays
# reachable until its set entry expires.
source "$(dirname "$0")/lib.sh"
WL_UID=4242 # the workload: neither root nor the daemon's uid
df_setup
df_start_listener 443
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]'

df_dig www.allowed.test A
expect_rcode NOERROR
df_connect_as $WL_UID 198.18.1.10 443 || fail "answered address not reachable before the kill"
kill -KILL "$DF_DNSFENCE_PID"
df_wait_gone "$DF_DNSFENCE_PID" 50 || fail "dnsfence did not die on SIGKILL"
DF_DNSFENCE_PID=""

df_dig a.b.allowed.test A
[ "$DF_DIG_RC" -ne 0 ] || fail "a new name was resolved after the kill: $(df_status)"
ok "after SIGKILL: nothing answers on 127.0.0.1"
df_dig @198.18.0.1 a.b.allowed.test A
[ "$DF_DIG_RC" -ne 0 ] || fail "the workload's direct DNS to the upstream got through after the kill"
ok "after SIGKILL: direct DNS to the upstream blocked"
! df_connect_as $WL_UID 198.18.1.11 443 || fail "198.18.1.11 (never answered) reachable after the kill"
! df_connect_as $WL_UID 198.18.3.1 443 || fail "198.18.3.1 (denied zone) reachable after the kill"
ok "after SIGKILL: unanswered addresses stay blocked"
df_connect_as $WL_UID 198.18.1.10 443 || fail "an address answered before the kill is no longer reachable"
ok "after SIGKILL: an address answered before stays reachable (its set entry lives on)"
