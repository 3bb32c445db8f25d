#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack: squat Docker's embedded resolver's port while its socket is gone.
#
# Upstream 127.0.0.11 (Docker's resolver) is the one loopback upstream the
# config admits without local_upstream_user, and it got no answerer rule
# (fwrules.c render_answerer): rule 2's REPLY accept took every reply to
# the daemon's questions. Now its answerer drop spares only dockerd's uid
# (root; the test's forwarder, standing in for dockerd, runs as root). Docker DNATs 127.0.0.11:53 to a high port a
# socket of dockerd holds inside the container's namespace; while that
# socket is gone (dockerd restarting, the DNAT rules stay), any process
# of the namespace can bind 127.0.0.11:PORT (the port is in the nat table's
# rules and was in /proc/net/udp) and answer the daemon's questions.
#
# Asserted:
# 1. control: the daemon resolves www.allowed.test through the forwarder;
#    198.18.1.30 is fenced.
# 2. the forwarder stops; uid 4242 binds 127.0.0.11:PORT, is asked, and
#    answers 198.18.1.30 (no A record of the test zones; only a hint of
#    h3.allowed.test's HTTPS record, never asked here): not in the reply,
#    not in dnsfence4, not reachable.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
PORT=$((40000 + RANDOM % 20000))
df_docker_forwarder "$PORT"
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["127.0.0.11"]'
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_fenced 198.18.1.30 80
ok "control: www.allowed.test resolves through 127.0.0.11 (DNATed to :$PORT); 198.18.1.30 fenced"

fwd=$(wl ss -Hulnp "sport = :$PORT" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
[ -n "$fwd" ] || fail "no process holds 127.0.0.11:$PORT"
kill "$fwd"
df_poll 50 bash -c "! ip netns exec $DF_WL ss -Hlun sport = :$PORT | grep -q ." ||
	fail "the forwarder still holds 127.0.0.11:$PORT"

df_wl_as 4242 "$DF_PY" - "$PORT" >"$DF_TMP/squat.log" 2>&1 <<'PY' &
import socket, struct, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.11", int(sys.argv[1])))
print("bound", flush=True)
while True:
    m, peer = u.recvfrom(4096)
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
df_poll 50 grep -q bound "$DF_TMP/squat.log" || fail "uid 4242 could not bind 127.0.0.11:$PORT: $(cat "$DF_TMP/squat.log")"

df_dig evil.allowed.test A +time=5 +tries=1
grep -q asked "$DF_TMP/squat.log" ||
	fail "the squatter was never asked: the test proves nothing ($(cat "$DF_TMP/squat.log"))"
echo "squatter: $(grep -m1 'answered\|send failed' "$DF_TMP/squat.log" || true)" >&2
echo "dig: $(grep -A1 'ANSWER SECTION' <<<"$DF_OUT" | tail -1)" >&2
echo "dnsfence4: $(df_set_members dnsfence4 | tr '\n' ' ')" >&2
if df_wl_as 4242 timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.30/80' 2>/dev/null; then
	echo "connect 198.18.1.30:80 as uid 4242: connected" >&2
fi
expect_out_lacks 198.18.1.30
expect_not_in_set dnsfence4 198.18.1.30
expect_fenced 198.18.1.30 80
ok "uid 4242 on Docker's resolver port was asked, but 198.18.1.30 is not in the reply, not in dnsfence4, not reachable"
