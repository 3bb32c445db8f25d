#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The race of invariant 2, from the outside: 200 fresh names
# (race-N.allowed.test, each its own address in 198.18.4.0/23), resolved
# through the glibc resolver (getaddrinfo, resolv.conf -> dnsfence) by 200
# threads at once, each connecting the moment its answer arrives, through
# the real fence (dnsfence setup: only set members are reachable on the
# allowed ports). Every connect must get through: an address is in the
# kernel set before the client has it. Control: an address nobody answered
# is refused, so the test can fail.
source "$(dirname "$0")/lib.sh"
PORT=443
N=200

# race-1..100 -> 198.18.4.1..100, race-101..200 -> 198.18.5.1..100
race_records() {
	local i a
	for i in $(seq 1 "$N"); do
		if [ "$i" -le 100 ]; then a="198.18.4.$i"; else a="198.18.5.$((i - 100))"; fi
		printf 'race-%d IN A %s\n' "$i" "$a"
	done
}
df_zone_add allowed.test.zone < <(race_records)
df_setup

# In the upstream: every address of 198.18.4.0/23 is local, and one TCP
# listener (on the wildcard address) takes connections to all of them.
up ip route add local 198.18.4.0/23 dev lo
(exec ip netns exec "$DF_UP" "$DF_PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(4096)
while True:
    c, _ = s.accept()
    c.close()
' "$PORT") >>"$DF_TMP/race-listener.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$DF_UP" "$PORT" || fail "race listener did not start"

df_start_dnsfence allow='["*.allowed.test"]'

# Control: an address nobody answered is refused by the fence.
NEVER=198.18.5.250
! df_tcp_connect "$NEVER" "$PORT" || fail "control: $NEVER (never answered) got through the fence"
expect_not_in_set dnsfence4 198.18.4.1
ok "control: $NEVER:$PORT (never answered) is refused by the fence"

out="$(wl "$DF_PY" - "$N" "$PORT" "$NEVER" <<'EOF'
import socket, sys, threading
n, port, never = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
barrier = threading.Barrier(n)
res = [None] * n
def one(i):
    name = "race-%d.allowed.test" % (i + 1)
    barrier.wait()
    try:
        ai = socket.getaddrinfo(name, port, socket.AF_INET, socket.SOCK_STREAM)
    except socket.gaierror as e:
        res[i] = "%s resolve-failed %s" % (name, e)
        return
    addr = ai[0][4]
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(addr)
        res[i] = "%s %s ok" % (name, addr[0])
    except OSError as e:
        res[i] = "%s %s connect-failed %s" % (name, addr[0], e.strerror or e)
    finally:
        s.close()
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
for r in res:
    print(r)
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect((never, port))
    print("never %s ok" % never)
except OSError as e:
    print("never %s connect-failed %s" % (never, e.strerror or e))
EOF
)" || fail "the race client failed: $out"

good="$(awk '!/^never / && / ok$/' <<<"$out" | wc -l)"
bad="$(awk '!/^never / && !/ ok$/' <<<"$out")"
[ -z "$bad" ] || fail "$(wc -l <<<"$bad") of $N resolve-then-connect attempts failed:
$(head -n 20 <<<"$bad")"
[ "$good" -eq "$N" ] || fail "expected $N successful connects, saw $good"
ok "$N names resolved by getaddrinfo and connected at once, concurrently: 0 failures"

grep -q "^never $NEVER connect-failed" <<<"$out" ||
	fail "control: $NEVER (never answered) was reachable in the same run: $(grep '^never' <<<"$out")"
ok "control in the same run: $NEVER (never answered) refused"

n="$(df_set_members dnsfence4 | grep -c '^198\.18\.[45]\.')"
[ "$n" -eq "$N" ] || fail "expected $N race addresses in dnsfence4, saw $n"
ok "dnsfence4 holds all $N race addresses"
expect_dnsfence_running
