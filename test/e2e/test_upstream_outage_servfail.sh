#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# When the upstream does not answer (frozen: no reply at all; or stopped:
# port unreachable) an allowed name gets SERVFAIL within 6 s (upstream_timeout
# defaults to 5 s); once the upstream is back, the same daemon answers again.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["*.allowed.test"]'
pid="$DF_DNSFENCE_PID"

df_dig www.allowed.test A
expect_rcode NOERROR
ok "before the outage: www.allowed.test -> NOERROR"

# servfail_within NAME: query NAME (not asked before, so nothing is cached),
# expect SERVFAIL in at most 6 s.
servfail_within() {
	local t0 ms
	t0="$(df_now_ms)"
	df_dig "$1" A +time=15 +tries=1
	ms=$(($(df_now_ms) - t0))
	expect_rcode SERVFAIL
	[ "$ms" -le 6000 ] || fail "expected SERVFAIL within 6000 ms, it took $ms ms"
	ok "$2: $1 -> SERVFAIL in $ms ms"
}

# A frozen upstream: the datagrams are queued, nothing answers, no ICMP.
kill -STOP "$DF_UNBOUND_PID"
servfail_within a.b.allowed.test "upstream frozen (SIGSTOP)"
kill -CONT "$DF_UNBOUND_PID"

# A stopped upstream: ICMP port unreachable.
df_stop_unbound
servfail_within deep.a.b.allowed.test "upstream stopped"
df_dig "denied-$$.evil.test" A
expect_rcode NXDOMAIN
ok "upstream stopped: a denied name is still answered locally -> NXDOMAIN"

# Back again: answered without restarting dnsfence (a few tries allowed for
# the daemon to notice, bounded at 10 s).
df_start_unbound
t0="$(df_now_ms)"
tries=0
while :; do
	tries=$((tries + 1))
	df_dig ttl5.allowed.test A +time=5 +tries=1
	[ "$(df_status)" = NOERROR ] && break
	[ $(($(df_now_ms) - t0)) -lt 10000 ] || fail "10 s after unbound came back, still no answer"
	sleep 0.5
done
expect_answer_contains 198.18.1.5
[ "$DF_DNSFENCE_PID" = "$pid" ] && kill -0 "$pid" || fail "dnsfence was restarted or died"
ok "upstream back: ttl5.allowed.test -> 198.18.1.5 (after $tries queries), same dnsfence pid $pid"
