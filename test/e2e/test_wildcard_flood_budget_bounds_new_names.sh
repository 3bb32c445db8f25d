#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An allowed wildcard is a channel: every new name below it is a message
# the workload chose, delivered to the zone's servers. With the default
# wildcard_budget (600 new questions at once per client and wildcard,
# refilled at 120 a minute):
#   1. a realistic burst (300 names in about a second, then quiet) all
#      resolve: nothing refused (the positive control);
#   2. a flood of 3000 unique names of 229 payload bytes each, as fast as
#      the client can ask, is refused past the budget (REFUSED, Extended
#      DNS Error 18), answered locally: unbound sees at most the rest of
#      the burst plus the refill, and the payload bandwidth that reached
#      it stays within docs/security.md's bound;
#   3. the refusals are logged once for the window, naming the wildcard
#      and the client, and counted (budget_refused);
#   4. a name deeper than wildcard_budget.depth_max below the wildcard is
#      denied like a name off the allowlist (NXDOMAIN, EDE 15);
#   5. audit mode forwards what enforce refuses and counts it
#      (budget_audit).
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<<'*.w IN A 198.18.3.1'
df_setup
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
df_start_dnsfence allow='["*.w.allowed.test"]' control="$(sock_conf)" log='{"level": "info"}'
chmod 755 "$DF_TMP"

# flood PREFIX COUNT: ask COUNT unique names below w.allowed.test (three
# 63-byte labels and one of 40, 229 payload bytes), 64 in flight at a
# time; prints "seconds rcode/ede=count ...".
flood() {
	wl "$DF_PY" - "$1" "$2" <<'PY'
import sys, time, socket, select, collections, dns.message, dns.edns, dns.rcode
prefix, count = sys.argv[1], int(sys.argv[2])
def name(i):
    head = ("%s%06d" % (prefix, i)).ljust(63, "x")
    return "%s.%s.%s.%s.w.allowed.test" % (head, "y" * 63, "z" * 63, "p" * 40)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("127.0.0.1", 53))
seen, sent, results, t0 = {}, 0, collections.Counter(), time.monotonic()
while len(seen) < count:
    while sent < count and sent - len(seen) < 64:
        q = dns.message.make_query(name(sent), "A", use_edns=0)
        q.id = sent & 0xffff
        s.send(q.to_wire())
        sent += 1
    r, _, _ = select.select([s], [], [], 5)
    if not r:
        break
    m = dns.message.from_wire(s.recv(4096))
    ede = [str(o.code) for o in m.options if o.otype == dns.edns.EDE]
    key = dns.rcode.to_text(m.rcode()) + "/" + (",".join(ede) or "-")
    if m.question and m.question[0].name.to_text() not in seen:
        seen[m.question[0].name.to_text()] = key
        results[key] += 1
print("%.2f" % (time.monotonic() - t0), " ".join("%s=%d" % kv for kv in sorted(results.items())))
PY
}
# forwarded PREFIX: how many distinct names of that flood unbound logged.
forwarded() {
	awk -v p="$1" 'match($0, " " p "[0-9]+x+[.]y") && !seen[substr($0, RSTART, RLENGTH)]++ { n++ }
		END { print n + 0 }' "$DF_TMP/unbound.log"
}
stat_of() {
	kill -USR1 "$DF_DNSFENCE_PID"
	df_wait_log 20 "$1=" || fail "no stats line"
	sleep 0.2
	grep -o " $1=[0-9]*" "$DF_DNSFENCE_LOG" | tail -n 1 | cut -d= -f2
}

out="$(flood burst 300)"
[ "${out#* }" = "NOERROR/-=300" ] || fail "the realistic burst of 300 names was not all answered: $out"
ok "control: a burst of 300 new names in ${out%% *} s all resolve"
sleep 2

t0=$(df_now_ms)
out="$(flood flood 3000)"
t=$(( $(df_now_ms) - t0 ))
sleep 0.5
n="$(forwarded flood)"
refused="$(sed -n 's/.*REFUSED\/18=\([0-9]*\).*/\1/p' <<<"$out")"
# What may pass: the burst's remaining 300 tokens, plus 2 a second of
# refill over the 2 s of quiet and the flood, rounded up, and one more.
max=$(( 300 + 2 * (t / 1000 + 4) + 1 ))
[ "$n" -le "$max" ] ||
	fail "$n of the flood's names reached unbound in ${t} ms; the budget allows $max (answers: $out)"
[ "${refused:-0}" -ge $(( 3000 - max )) ] || fail "the flood was not refused past the budget: $out"
# Payload bandwidth: 229 bytes a name. docs/security.md bounds it by
# (burst + 2 t) x 250 bytes over the window.
bw=$(( n * 229 * 1000 / t ))
bound=$(( (600 + 2 * (t / 1000 + 4)) * 250 * 1000 / t ))
[ "$bw" -le "$bound" ] || fail "payload bandwidth $bw B/s over ${t} ms exceeds the bound $bound B/s"
ok "flood: 3000 names in ${t} ms, $n forwarded ($bw payload B/s; bound $bound), $refused REFUSED + EDE 18"

lines="$(grep -c 'new-name budget of \*.w.allowed.test used up by 127.0.0.1' "$DF_DNSFENCE_LOG" || true)"
[ "$lines" -eq 1 ] || fail "expected one attributed budget line for the window, saw $lines"
[ "$(stat_of budget_refused)" -ge $(( 3000 - max )) ] || fail "budget_refused does not count the refusals"
ok "one log line for the window names *.w.allowed.test and 127.0.0.1; budget_refused counts"

wl "$DF_PY" - <<'PY' >"$DF_TMP/deep.out"
import dns.message, dns.query, dns.edns, dns.rcode
q = dns.message.make_query("a.b.c.d.e.f.g.w.allowed.test", "A", use_edns=0)
r = dns.query.udp(q, "127.0.0.1", timeout=3)
print(dns.rcode.to_text(r.rcode()), ",".join(str(o.code) for o in r.options if o.otype == dns.edns.EDE))
PY
[ "$(cat "$DF_TMP/deep.out")" = "NXDOMAIN 15" ] || fail "7 labels below the wildcard: $(cat "$DF_TMP/deep.out")"
! df_unbound_saw a.b.c.d.e.f.g.w.allowed.test || fail "the too-deep name reached unbound"
ok "a name 7 labels below the wildcard is denied locally (depth_max 6)"

df_config allow='["*.w.allowed.test"]' control="$(sock_conf)" log='{"level": "info"}' mode='"audit"'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload to audit exited $DF_CMD_RC: $DF_CMD_ERR"
out="$(flood audit 200)"
[ "${out#* }" = "NOERROR/-=200" ] || fail "audit: the names over the budget were not forwarded: $out"
[ "$(stat_of budget_audit)" -ge 150 ] || fail "audit: budget_audit does not count what enforce would refuse"
ok "audit: over-budget names forwarded and counted as would-be-refused"
expect_dnsfence_running
