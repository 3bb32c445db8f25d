#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A DNS process that calls a system call outside its seccomp filter (what
# code run through a parser bug would try) is killed by the kernel; the
# parent logs how it died, in one line, and exits; the fence stays: an
# address never answered stays unreachable, one answered before stays
# reachable until its entry expires, and nothing answers DNS. The trigger
# is the test build's (DNSFENCE_TEST_HOOKS: SIGUSR2 to the DNS process
# calls ptrace). Positive controls: before the trigger, the answered
# address is reachable and the unanswered one is not.
source "$(dirname "$0")/lib.sh"
WL_UID=4242 # the workload: neither root nor the daemon's uid
df_setup
df_start_listener 443
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]'

child="$(sed -n 's/.* the DNS process is pid \([0-9][0-9]*\) .*/\1/p' "$DF_DNSFENCE_LOG" | head -n1)"
[ -n "$child" ] || fail "no DNS process: the daemon (pid $DF_DNSFENCE_PID) did not split"
df_dig www.allowed.test A
expect_rcode NOERROR
df_connect_as $WL_UID 198.18.1.10 443 || fail "answered address not reachable before the trigger"
! df_connect_as $WL_UID 198.18.1.11 443 || fail "198.18.1.11 (never answered) reachable before the trigger"
ok "before: 198.18.1.10 (answered) reachable, 198.18.1.11 (never answered) refused"

kill -USR2 "$child"
df_wait_gone "$child" 50 || fail "the DNS process ($child) survived the system call outside its filter"
df_wait_gone "$DF_DNSFENCE_PID" 50 || fail "the parent kept running after the DNS process was killed"
st=0
wait "$DF_DNSFENCE_PID" || st=$?
DF_DNSFENCE_PID=""
[ "$st" -ne 0 ] || fail "the parent exited 0 after the DNS process was killed"
grep -q "split: the DNS process (pid $child) was killed by signal 31 (Bad system call), a system call outside its seccomp filter: stopping; the fence stays in place" "$DF_DNSFENCE_LOG" ||
	fail "no line saying how the DNS process died: $(tail -n 5 "$DF_DNSFENCE_LOG")"
ok "the DNS process was killed by its filter (SIGSYS); the parent said so and exited $st"

! df_connect_as $WL_UID 198.18.1.11 443 || fail "198.18.1.11 (never answered) reachable after the DNS process died"
df_connect_as $WL_UID 198.18.1.10 443 || fail "an address answered before is no longer reachable (the sets were touched)"
df_dig a.b.allowed.test A
[ "$DF_DIG_RC" -ne 0 ] || fail "a name was resolved after both processes were gone: $(df_status)"
ok "after: the fence stays (unanswered refused, answered reachable, nothing answers DNS)"
