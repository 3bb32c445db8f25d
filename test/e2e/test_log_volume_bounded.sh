#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The log stays bounded under floods (invariant 10; issue 10: 16,000 lines
# in 8 s of a mixed flood, 75 MB in 40 s with a full set). At the default
# level (info), every message a query can cause goes through one token
# bucket per class (log.c): at most 20 lines at once and 5 a second per
# class, plus a "N similar messages suppressed" line; the counters keep the
# exact numbers.
#  1. 6 s of mixed traffic: unique denied names, search-list expansions of
#     an allowed name, unique allowed names, names the upstream refuses,
#     an answer with an internal address, garbage.
#  2. 6 s against a full set (maxelem 8): names with fresh addresses (every
#     add fails) mixed with names already in the set.
# Each phase may write at most 400 lines.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone < <(
	echo '*.wild IN A 198.18.6.1'
	for i in $(seq 1 200); do echo "s$i IN A 198.18.7.$i"; done
)
df_setup
df_start_dnsfence allow='["*.allowed.test", "*.unknown.test"]' \
	log='{"level": "info"}' sets='{"ipv4": "dnsfence4", "ipv6": "dnsfence6", "maxelem": 8}'
pid="$DF_DNSFENCE_PID"

# Control: the daemon logs a denied name at this level.
df_dig "control-$$.evil.test" A
expect_rcode NXDOMAIN
expect_log_contains "denied control-$$.evil.test"
ok "control: a denied name is logged at level info"

# flood SECONDS KIND...: one UDP sender cycling over the kinds, ~3,000
# queries a second; prints the number sent.
flood() {
	ip netns exec "$DF_WL" timeout 30 "$DF_PY" - "$$" "$@" <<'PY'
import os, random, socket, struct, sys, time
tag, seconds, kinds = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
def q(name, qtype=1):
    m = struct.pack(">HHHHHH", random.getrandbits(16), 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        m += bytes([len(l)]) + l.encode()
    return m + b"\0" + struct.pack(">HH", qtype, 1)
def make(kind, i):
    if kind == "denied":
        return q("d%d-%s.evil.test" % (i, tag))
    if kind == "search":
        return q("www.allowed.test.ns%d.svc.cluster.local" % (i % 50))
    if kind == "allowed":
        return q("u%d-%s.wild.allowed.test" % (i, tag))
    if kind == "refused":
        return q("r%d-%s.unknown.test" % (i, tag))
    if kind == "internal":
        return q("private.allowed.test")
    if kind == "garbage":
        return os.urandom(random.randint(0, 40))
    if kind == "fresh":
        return q("s%d.allowed.test" % (9 + i % 192))
    if kind == "inset":
        return q("s%d.allowed.test" % (1 + i % 8))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
t0, i = time.monotonic(), 0
while time.monotonic() - t0 < seconds:
    for _ in range(30):
        try:
            s.sendto(make(kinds[i % len(kinds)], i), ("127.0.0.1", 53))
        except OSError:
            pass
        i += 1
    try:
        while True:
            s.recv(4096)
    except OSError:
        pass
    time.sleep(0.01)
print(i)
PY
}

lines() { wc -l <"$DF_DNSFENCE_LOG"; }

# Fill the set with s1..s8 first (8 of 8), so that phase 2 finds it full.
for i in 1 2 3 4 5 6 7 8; do
	df_dig "s$i.allowed.test" A
	expect_rcode NOERROR
done

before=$(lines)
sent=$(flood 6 denied search allowed refused internal garbage)
phase1=$(($(lines) - before))
expect_dnsfence_running
echo "phase 1: $sent queries, $phase1 log lines"
[ "$phase1" -le 400 ] || fail "mixed flood: $phase1 log lines for $sent queries (bound 400)"
grep -q "similar messages suppressed" "$DF_DNSFENCE_LOG" ||
	fail "no 'similar messages suppressed' line after a flood of $sent queries"
if grep -q "denied www.allowed.test.ns" "$DF_DNSFENCE_LOG"; then
	fail "a search-list expansion of an allowed name was logged at level info"
fi
ok "mixed flood: $sent queries -> $phase1 log lines (<= 400); search-list expansions not at info"

kill -USR1 "$pid"
df_wait_log 20 "stats:" || fail "no stats line"
denied="$(grep -o ' denied=[0-9]*' "$DF_DNSFENCE_LOG" | tail -n 1 | cut -d= -f2)"
[ "$denied" -ge $((sent / 6)) ] || fail "denied counter $denied, expected at least $((sent / 6))"
ok "the counters keep the exact count: denied=$denied"

before=$(lines)
sent=$(flood 6 fresh inset fresh inset)
phase2=$(($(lines) - before))
expect_dnsfence_running
echo "phase 2: $sent queries, $phase2 log lines"
grep -q "add to set dnsfence4 failed" "$DF_DNSFENCE_LOG" || fail "the full set was never reported"
[ "$phase2" -le 400 ] || fail "full set: $phase2 log lines for $sent queries (bound 400)"
ok "full set: $sent queries -> $phase2 log lines (<= 400)"
