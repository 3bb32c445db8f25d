#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A silent upstream (SIGSTOP: no answer, no ICMP) against the glibc stub
# resolver with its defaults (timeout:5, attempts:2). SERVFAIL must come
# before glibc's first retry, and the failure is remembered (failure_ttl,
# RFC 9520), so glibc's retry and the next lookup are answered at once:
#  - the first lookup fails in under 5 s (issue 10: upstream_timeout was 5 s,
#    glibc retried, and each lookup took 10 s);
#  - a second lookup of the same name fails in under a second.
source "$(dirname "$0")/lib.sh"
df_setup
printf 'nameserver 127.0.0.1\n' >"/etc/netns/$DF_WL/resolv.conf"
df_start_dnsfence allow='["*.allowed.test"]'

# getent_ms NAME: run getent ahosts NAME in the workload; sets rc and ms.
getent_ms() {
	local t0
	t0="$(df_now_ms)"
	rc=0
	wl timeout 30 getent ahosts "$1" >"$DF_TMP/getent.out" 2>&1 || rc=$?
	ms=$(($(df_now_ms) - t0))
}

getent_ms www.allowed.test
[ "$rc" -eq 0 ] && grep -q 198.18.1.10 "$DF_TMP/getent.out" ||
	fail "control: getent ahosts www.allowed.test failed (exit $rc): $(cat "$DF_TMP/getent.out")"
ok "control: glibc resolves www.allowed.test through dnsfence in $ms ms"

kill -STOP "$DF_UNBOUND_PID"
getent_ms a.b.allowed.test
[ "$rc" -ne 0 ] || fail "a lookup through a frozen upstream succeeded: $(cat "$DF_TMP/getent.out")"
[ "$ms" -lt 5000 ] || fail "the first lookup failed after $ms ms: not before glibc's 5 s retry"
first=$ms
getent_ms a.b.allowed.test
[ "$rc" -ne 0 ] || fail "the second lookup through a frozen upstream succeeded"
[ "$ms" -lt 1000 ] || fail "the second lookup took $ms ms: the failure was not remembered"
ok "silent upstream: glibc lookup fails in $first ms (< 5000), the repeat in $ms ms (< 1000)"
expect_log_contains "no answer for a.b.allowed.test A: timed out"
kill -CONT "$DF_UNBOUND_PID"
