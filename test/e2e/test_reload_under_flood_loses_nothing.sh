#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reloads under a query flood lose nothing: 2,400 queries at ~600/s (half
# fresh names that go upstream, half repeats from the cache) for names
# every policy allows, while 12 reloads swap the allowlist (another name
# added and removed each time). Every query gets exactly one reply, every
# reload exits 0, and no SERVFAIL comes from the reloads: a SERVFAIL is
# allowed only for a name the daemon logged as an upstream failure (the
# test's unbound, on a loaded 2-core machine, may refuse one).
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'ZONE'
*.wild IN A 198.18.6.1
ZONE
df_setup
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
# The flood's unique wildcard names test the reloads, not the budget.
df_start_dnsfence allow='["www.allowed.test", "*.wild.allowed.test"]' control="$(sock_conf)" wildcard_budget="$DF_BUDGET_UNBOUNDED"
chmod 755 "$DF_TMP"

wl "$DF_PY" - >"$DF_TMP/flood.out" 2>&1 <<'PY' &
import random, select, socket, struct, sys, time
N, RATE = 2400, 600
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.connect(("127.0.0.1", 53))
def query(qid, name):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", 1, 1)
ids = random.sample(range(1, 65536), N)
got, rcodes = {}, {}
def drain(timeout):
    while select.select([s], [], [], timeout)[0]:
        m = s.recv(4096)
        qid, flags = struct.unpack(">HH", m[:4])
        got[qid] = got.get(qid, 0) + 1
        rcodes[flags & 15] = rcodes.get(flags & 15, 0) + 1
        timeout = 0
t0 = time.monotonic()
for i, qid in enumerate(ids):
    name = "n%d.wild.allowed.test" % i if i % 2 == 0 else "www.allowed.test"
    s.send(query(qid, name))
    drain(0)
    delay = t0 + (i + 1) / RATE - time.monotonic()
    if delay > 0:
        drain(delay)
end = time.monotonic() + 5
while len(got) < N and time.monotonic() < end:
    drain(0.2)
missing = [q for q in ids if q not in got]
dup = sum(1 for v in got.values() if v > 1)
print("sent", N, "answered", len(got), "missing", len(missing), "dup", dup, "rcodes", rcodes)
print("servfail", rcodes.get(2, 0))
sys.exit(0 if not missing and not dup and set(rcodes) <= {0, 2} else 1)
PY
flood=$!
sleep 0.3
for i in $(seq 1 12); do
	if [ $((i % 2)) -eq 1 ]; then
		df_config allow='["www.allowed.test", "*.wild.allowed.test", "a.b.allowed.test"]' control="$(sock_conf)" wildcard_budget="$DF_BUDGET_UNBOUNDED"
	else
		df_config allow='["www.allowed.test", "*.wild.allowed.test"]' control="$(sock_conf)" wildcard_budget="$DF_BUDGET_UNBOUNDED"
	fi
	df_dnsfence reload
	[ "$DF_CMD_RC" -eq 0 ] || fail "reload $i exited $DF_CMD_RC: $DF_CMD_ERR"
	sleep 0.25
done
ok "12 reloads during the flood, each exit 0 ($DF_CMD_OUT)"
rc=0
wait "$flood" || rc=$?
out="$(cat "$DF_TMP/flood.out")"
[ "$rc" -eq 0 ] || fail "queries lost or failed during reloads: $out"
servfail=$(awk '$1 == "servfail" { print $2 }' <<<"$out")
upstream_fail=$(df_count 'upstream: no answer for' "$DF_DNSFENCE_LOG")
[ "$servfail" -le "$upstream_fail" ] ||
	fail "$servfail SERVFAIL but only $upstream_fail upstream failures logged: the reloads caused some ($out)"
grep -c 'reload: control' "$DF_DNSFENCE_LOG" | grep -x 12 >/dev/null || fail "expected 12 reload log lines"
ok "flood: $out"
