#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A late upstream answer must not hide a workload's bypass attempt. The
# upstream (a small server on 198.18.0.1:5354) answers 2.5 s late, after
# upstream_timeout (1 s): its answer meets the daemon's closed socket and
# the kernel's ICMP port unreachable towards the upstream hits the fence.
# That is the daemon's own doing, not a bypass: it is logged once as a
# late answer, not as "DNS ... bypassing dnsfence, from no socket", and it
# takes no attribution slot, so the workload's own query straight to
# 198.18.0.1 a moment later is logged with its uid. Control: the late
# answer did reach the fence (its line is there).
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup
ip netns exec "$DF_UP" "$DF_PY" - >"$DF_TMP/slow.log" 2>&1 <<'PY' &
import socket, threading, time, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.0.1", 5354))
def late(q, peer):
    time.sleep(2.5)
    hdr = struct.pack(">HHHHHH", struct.unpack(">H", q[:2])[0], 0x8180, 1, 1, 0, 0)
    end = 12
    while q[end] != 0:
        end += q[end] + 1
    question = q[12:end + 5]
    rr = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + bytes([198, 18, 1, 5])
    s.sendto(hdr + question + rr, peer)
    print("late answer to", peer, flush=True)
while True:
    q, peer = s.recvfrom(4096)
    threading.Thread(target=late, args=(q, peer), daemon=True).start()
PY
DF_PIDS+=("$!")
df_start_dnsfence allow='["slow.allowed.test"]' upstreams='["198.18.0.1:5354"]' \
	upstream_timeout=1 log='{"level": "info"}'

df_dig slow.allowed.test A
expect_rcode SERVFAIL
df_poll 60 grep -q "late answer to" "$DF_TMP/slow.log" || fail "the slow upstream never answered"
# The late answer's port unreachable reaches the fence's NFLOG rule.
df_poll 40 grep -qE "late answer from 198.18.0.1|198.18.0.1.*from no socket" "$DF_DNSFENCE_LOG" ||
	fail "control: the late answer's ICMP error never reached the fence's log"
ok "control: the upstream's late answer reached the fence"

rc=0
df_wl_as "$WL_UID" dig +time=2 +tries=1 @198.18.0.1 bypass.evil.test A >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the workload queried the upstream directly"
df_poll 30 grep -q "from uid $WL_UID: DNS to 198.18.0.1 bypassing dnsfence" "$DF_DNSFENCE_LOG" ||
	fail "the workload's bypass attempt right after the late answer was never logged with uid $WL_UID"
ok "the workload's bypass attempt is logged with uid $WL_UID"
if grep -q "198.18.0.1.*from no socket: DNS to 198.18.0.1 bypassing dnsfence" "$DF_DNSFENCE_LOG"; then
	fail "the daemon's own late-answer ICMP was logged as a bypass: $(grep 'from no socket' "$DF_DNSFENCE_LOG" | head -n 1)"
fi
ok "the late answer is not called a bypass"
expect_dnsfence_running
