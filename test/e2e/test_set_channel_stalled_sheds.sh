#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stalled set channel sheds, it does not queue. Every answered address
# goes to the privileged parent for its set add, and the client's answer
# waits for the kernel's ack (invariant 2). With the parent stopped
# (SIGSTOP: its loop as held as by a starved CPU), a flood of 1,000
# allowed names must not pile up behind the first adds for their 2 s
# deadline: once the channel's oldest add has waited its bound
# (SHED_SET_ADD_MS), each new answer is shed at once, SERVFAIL with the
# Extended DNS Error "busy: the set channel is behind", and counted in
# dnsfence_shed_total{stage="set_add"}. None is answered NOERROR while
# the parent is stopped. The names are cached answers whose set entries
# were confirmed more than SETS_FRESH_SECONDS ago, so each needs an add
# again and nothing else (a new upstream question would need a socket
# from the stopped parent, and fail on that: test_privsep_parent_stopped_
# dns_answers). After SIGCONT the same names and a fresh one resolve.
# Positive control: the same flood with the parent running is answered
# NOERROR, nothing shed.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'EOF'
*.wild IN A    198.18.6.1
fresh  IN A    198.18.1.5
EOF
df_setup
# The flood's unique wildcard names test the set channel, not the budget.
df_start_dnsfence allow='["*.allowed.test"]' metrics='"127.0.0.1:9253"' \
	wildcard_budget="$DF_BUDGET_UNBOUNDED"

# shed_count: dnsfence_shed_total{stage="set_add"} now.
shed_count() {
	wl curl -sf --max-time 10 http://127.0.0.1:9253/metrics >"$DF_TMP/metrics.txt" ||
		fail "could not scrape the metrics"
	awk '$1 == "dnsfence_shed_total{stage=\"set_add\"}" { print $2; f = 1 }
		END { if (!f) print "missing" }' "$DF_TMP/metrics.txt"
}

# flood ZONE: 1,000 names below ZONE.allowed.test at about 1,000 a
# second, EDNS on (so that a SERVFAIL carries its EDE), every reply read
# for 4 s after the last; prints "noerror busy servfail unanswered"
# (busy: SERVFAIL with the shed's EDE text).
cat >"$DF_TMP/flood.py" <<'PY'
import select, socket, struct, sys, time
tag, N = sys.argv[1], 1000
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.connect(("127.0.0.1", 53))
def query(qid, name):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    # OPT: udp size 1232, no flags
    return q + b"\0" + struct.pack(">HH", 1, 1) + b"\0" + struct.pack(">HHIH", 41, 1232, 0, 0)
seen, counts = set(), {"noerror": 0, "busy": 0, "servfail": 0}
def drain(until):
    while True:
        left = until - time.time()
        if left <= 0 or len(seen) == N:
            return
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return
        m = s.recv(4096)
        qid = struct.unpack(">H", m[:2])[0]
        if qid in seen or qid >= N:
            continue
        seen.add(qid)
        rcode = m[3] & 15
        if rcode == 0:
            counts["noerror"] += 1
        elif rcode == 2 and b"busy: the set channel is behind" in m:
            counts["busy"] += 1
        else:
            counts["servfail"] += 1
for i in range(N):
    s.send(query(i, "n%d.%s.allowed.test" % (i, tag)))
    drain(time.time() + 0.001)
drain(time.time() + 4)
print(counts["noerror"], counts["busy"], counts["servfail"], N - len(seen))
PY
chmod 644 "$DF_TMP/flood.py"
flood() { wl "$DF_PY" "$DF_TMP/flood.py" "$1"; }

# control: the parent running
shed0="$(shed_count)"
[ "$shed0" != missing ] || fail "dnsfence_shed_total{stage=\"set_add\"} is not exported"
read -r noerror busy servfail lost <<<"$(flood wild)"
[ "$busy" -eq 0 ] || fail "control: $busy queries shed with the parent running"
[ "$noerror" -ge 990 ] ||
	fail "control: only $noerror of 1000 answered NOERROR (busy $busy, servfail $servfail, unanswered $lost)"
[ "$(shed_count)" = "$shed0" ] || fail "control: the shed counter moved ($shed0 -> $(shed_count))"
ok "control: parent running, $noerror of 1000 NOERROR, nothing shed"

# the entries' confirmations age past SETS_FRESH_SECONDS (1 s)
sleep 1.5
kill -STOP "$DF_DNSFENCE_PID"
# df_cleanup reads the exit status: keep it past the kill
trap 'rc=$?; kill -CONT "$DF_DNSFENCE_PID" 2>/dev/null; (exit "$rc"); df_cleanup' EXIT
read -r noerror busy servfail lost <<<"$(flood wild)"
[ "$noerror" -eq 0 ] ||
	fail "$noerror queries were answered NOERROR while the parent, which confirms their address, was stopped"
[ "$busy" -ge 500 ] ||
	fail "the parent stopped: only $busy of 1000 shed at once (servfail $servfail, unanswered $lost)"
shed1="$(shed_count)"
[ "$shed1" != missing ] && [ "$((shed1 - shed0))" -ge "$busy" ] ||
	fail "$busy shed replies, but dnsfence_shed_total{stage=\"set_add\"} went $shed0 -> $shed1"
ok "parent stopped: none answered, $busy shed at once with the EDE and counted ($shed0 -> $shed1), $servfail SERVFAIL at the deadline, $lost unanswered"

kill -CONT "$DF_DNSFENCE_PID"
trap df_cleanup EXIT
read -r noerror busy servfail lost <<<"$(flood wild)"
[ "$noerror" -ge 990 ] ||
	fail "after SIGCONT only $noerror of 1000 answered NOERROR (busy $busy, servfail $servfail, unanswered $lost)"
df_dig fresh.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.5
expect_in_set dnsfence4 198.18.1.5
ok "after SIGCONT the 1,000 names ($noerror NOERROR) and fresh.allowed.test resolve, and fresh is in the set"
expect_dnsfence_running
