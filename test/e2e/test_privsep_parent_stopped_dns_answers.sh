#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stopped privileged parent does not freeze the DNS process. Every
# upstream socket comes from the parent (IPC_SOCKET), and c-ares 1.18
# closes its sockets whenever no query is in flight, so after an idle
# moment the next upstream question needs a new one. The DNS process
# keeps a spare UDP socket ready and waits for any other only a bounded
# time: with the parent stopped (SIGSTOP; its loop as held as by a slow
# kernel), an allowed uncached name goes upstream on the spare, and its
# answer waits for the set add (the parent acks it: invariant 2, no
# answer before the kernel has the address); a denied name is answered
# NXDOMAIN and `dnsfence status` answers, where the DNS process used to
# hang in recv for the parent's reply. The next upstream question (the
# spare taken, the next one not come) fails after the bounded wait, and
# the one after that at once, while denied names stay answered. After
# SIGCONT the held name is in the set and resolves, and a fresh name
# resolves (the late spare is used).
# Positive control: the denied name and status answer with the parent
# running.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'EOF'
held     IN A    198.18.1.20
late-a   IN A    198.18.1.30
late-b   IN AAAA 2001:db8:1::20
fresh    IN A    198.18.1.5
EOF
df_setup
df_start_dnsfence allow='["*.allowed.test"]'

# status_ok: `dnsfence status` answers within 5 s.
status_ok() {
	wl env -u DNSFENCE_CONFIG timeout 5 "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" status \
		>"$DF_TMP/status.out" 2>&1
}

# dig2 ARGS...: df_dig, but one try of 2 s.
dig2() {
	DF_DIG_CMD="dig @127.0.0.1 $*"
	DF_DIG_RC=0
	DF_OUT="$(wl dig +time=2 +tries=1 @127.0.0.1 "$@" 2>&1)" || DF_DIG_RC=$?
}

child="$(pgrep -P "$DF_DNSFENCE_PID" -x dnsfence-dns | head -n1)"
[ -n "$child" ] || fail "no DNS process (comm dnsfence-dns) under the daemon $DF_DNSFENCE_PID"

# control: the parent running; an upstream question (its socket waited
# for, the spare then asked for), a denied name, status
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
dig2 "deny-$$.evil.test" A
expect_rcode NXDOMAIN
status_ok || fail "control: dnsfence status failed: $(cat "$DF_TMP/status.out")"
ok "control: with the parent running, www.allowed.test resolves, deny-$$.evil.test is NXDOMAIN, status answers"

# c-ares closed its socket when the question completed; let the spare land
sleep 0.5
kill -STOP "$DF_DNSFENCE_PID"
trap 'kill -CONT "$DF_DNSFENCE_PID" 2>/dev/null; df_cleanup' EXIT

dig2 held.allowed.test A
if [ "$DF_DIG_RC" -eq 0 ] && df_answer | grep -F 198.18.1.20 >/dev/null; then
	fail "held.allowed.test was answered (198.18.1.20) while the parent, which adds it to the set, is stopped"
fi
expect_not_in_set dnsfence4 198.18.1.20
dig2 "deny-$$-2.evil.test" A
[ "$DF_DIG_RC" -eq 0 ] ||
	fail "the parent stopped, after an upstream question: the denied name got no answer (dig exit $DF_DIG_RC); the DNS process is frozen (wchan $(cat "/proc/$child/wchan" 2>/dev/null))"
expect_rcode NXDOMAIN
status_ok || fail "the parent stopped: dnsfence status got no answer: $(cat "$DF_TMP/status.out")"
ok "parent stopped: held.allowed.test waits for its set add, a denied name is NXDOMAIN, status answers"

# the spare is taken and the next is not coming: the bounded wait, then
# at once; the process stays responsive
dig2 late-a.allowed.test A
case "$(df_status)" in
"" | SERVFAIL) ;;
*) fail "late-a.allowed.test answered $(df_status) with no socket to be had" ;;
esac
first="$(df_status)"
dig2 late-b.allowed.test AAAA
case "$(df_status)" in
"" | SERVFAIL) ;;
*) fail "late-b.allowed.test answered $(df_status) with no socket to be had" ;;
esac
second="$(df_status)"
dig2 "deny-$$-3.evil.test" A
expect_rcode NXDOMAIN
status_ok || fail "after the bounded waits: dnsfence status got no answer: $(cat "$DF_TMP/status.out")"
expect_log_contains "did not give a UDP socket to the upstreams within"
ok "no spare: late-a ${first:-no answer}, late-b ${second:-no answer}; denied names and status still answered"

kill -CONT "$DF_DNSFENCE_PID"
trap df_cleanup EXIT
df_poll 50 wl ipset test dnsfence4 198.18.1.20 ||
	fail "after SIGCONT 198.18.1.20 (held.allowed.test) did not reach the set"
df_dig held.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.20
expect_in_set dnsfence4 198.18.1.20
df_dig fresh.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.5
expect_in_set dnsfence4 198.18.1.5
ok "after SIGCONT: held.allowed.test resolves and is in the set; fresh.allowed.test resolves"
expect_dnsfence_running
