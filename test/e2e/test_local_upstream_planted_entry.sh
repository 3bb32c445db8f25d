#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack: a conntrack entry planted ahead of the daemon's question turns
# that question into the REPLY direction of the workload's own entry, whose
# original destination is the daemon's address, not the upstream's.
#
# The upstream is a local resolver on a loopback address of its own
# (127.0.0.2:5300, as docs/firewall.md advises), so the daemon's questions
# leave from 127.0.0.1 (lo's preferred source), not from the upstream's
# address. While the resolver is down, uid 4242 binds 127.0.0.2:5300 and,
# before the daemon asks, sends one datagram from it to 127.0.0.1:P for
# every P of ip_local_port_range. Each makes an entry
#   orig 127.0.0.2:5300 -> 127.0.0.1:P   (ctorigdst 127.0.0.1: no rule 2)
# accepted by `-o lo -j ACCEPT`. The daemon's marked question from
# 127.0.0.1:P to 127.0.0.2:5300 is that entry's reply, so rule 2 (all of
# it keyed on --ctorigdst 127.0.0.2) never sees it, nor the squatter's
# answer (ORIGINAL direction of the squatter's entry), which rule 3 or
# rule 6 accept. The daemon puts the squatter's address into dnsfence4.
# 198.18.1.30 is no A record of the test zones (only a hint of
# h3.allowed.test's HTTPS record, which this test never asks).
#
# Now rule 2 also holds the entries the upstream's endpoint began
# (--ctorigsrc 127.0.0.2 --ctorigsrcport 5300): only the daemon's marked
# packets pass there, so the planting datagrams fail with EPERM.
#
# Asserted:
# 1. control: with the local nsd up, www.allowed.test resolves through it;
#    198.18.1.30 is fenced.
# 2. the squatter's planting from 127.0.0.2:5300 is refused (EPERM), while
#    the same sends from 127.0.0.2:5301 go out (the control: sending to
#    those ports works at all); the squatter is asked, and 198.18.1.30 is
#    not in the reply, not in dnsfence4, not reachable.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
df_start_local_nsd 127.0.0.2

df_start_dnsfence allow='["*.allowed.test"]' upstreams='["127.0.0.2:5300"]' \
	listen='["127.0.0.1:53"]' local_upstream_user='"root"'
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_fenced 198.18.1.30 80
ok "control: www.allowed.test resolves through the local upstream 127.0.0.2:5300; 198.18.1.30 fenced"

kill "$DF_LOCAL_NSD_PID"
df_poll 50 bash -c "! ip netns exec $DF_WL ss -Hlun sport = :5300 | grep -q ." ||
	fail "the local nsd still holds 127.0.0.2:5300"

# The squatter: bind the upstream's address and port, plant an entry to
# every ephemeral port of 127.0.0.1 (again every 10 s, the unreplied UDP
# timeout is 30 s), answer every question with 198.18.1.30.
df_wl_as 4242 "$DF_PY" - >"$DF_TMP/plant.log" 2>&1 <<'PY' &
import socket, struct, threading, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.2", 5300))
lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
def plant():
    while True:
        bad = 0
        for p in range(lo, hi + 1):
            try:
                u.sendto(b"\0", ("127.0.0.1", p))
            except OSError:
                bad += 1
        print("planted", hi - lo + 1 - bad, "failed", bad, flush=True)
        time.sleep(10)
threading.Thread(target=plant, daemon=True).start()
while True:
    m, peer = u.recvfrom(4096)
    if len(m) < 17 or m[2] & 0x80:
        continue
    o = 12
    while m[o]:
        o += 1 + m[o]
    a = struct.unpack(">H", m[o + 1:o + 3])[0] == 1
    r = m[:2] + struct.pack(">HHHHH", 0x8180, 1, int(a), 0, 0) + m[12:o + 5]
    if a:
        r += b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 300, 4) + bytes([198, 18, 1, 30])
    print("asked", peer, flush=True)
    try:
        u.sendto(r, peer)
        print("answered", peer, flush=True)
    except OSError as e:
        print("send failed:", e, flush=True)
PY
DF_PIDS+=("$!")
df_poll 100 grep -q planted "$DF_TMP/plant.log" || fail "the squatter did not plant: $(cat "$DF_TMP/plant.log")"
awk '/^planted/ { exit !($2 == 0) }' "$DF_TMP/plant.log" ||
	fail "the fence let planting datagrams from the upstream's endpoint out: $(grep -m1 planted "$DF_TMP/plant.log")"
ctl="$(df_wl_as 4242 "$DF_PY" -c '
import socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.2", 5301))
lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
ok = 0
for p in range(lo, min(hi, lo + 999) + 1):
    try:
        u.sendto(b"\0", ("127.0.0.1", p)); ok += 1
    except OSError:
        pass
print(ok)')"
[ "$ctl" -ge 1000 ] || fail "control: sends from 127.0.0.2:5301 failed too ($ctl of 1000 went out): the test proves nothing"
ok "planting from 127.0.0.2:5300 refused ($(grep -m1 planted "$DF_TMP/plant.log")); from 127.0.0.2:5301, $ctl of 1000 went out"

df_dig evil.allowed.test A +time=5 +tries=1
grep -q asked "$DF_TMP/plant.log" ||
	fail "the squatter was never asked: the test proves nothing ($(cat "$DF_TMP/plant.log"))"
echo "squatter: $(grep -m1 'answered\|send failed' "$DF_TMP/plant.log" || true)" >&2
echo "dig: $(grep -A1 'ANSWER SECTION' <<<"$DF_OUT" | tail -1)" >&2
echo "dnsfence4: $(df_set_members dnsfence4 | tr '\n' ' ')" >&2
if df_tcp_connect 198.18.1.30 80; then echo "connect 198.18.1.30:80 as uid 0: connected" >&2; fi
if df_wl_as 4242 timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.30/80' 2>/dev/null; then
	echo "connect 198.18.1.30:80 as uid 4242: connected" >&2
fi
expect_out_lacks 198.18.1.30
expect_not_in_set dnsfence4 198.18.1.30
expect_fenced 198.18.1.30 80
expect_dnsfence_running
ok "uid 4242's planted entries on 127.0.0.2:5300: asked, but 198.18.1.30 is not in the reply, not in dnsfence4, not reachable"
