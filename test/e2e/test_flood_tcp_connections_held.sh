#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 2,000 TCP connections to 127.0.0.1:53 opened and held by one client (more
# than the server's cap of 512: at the cap the least recently active idle
# connection is evicted) do not lock anybody out: while they are held, a
# UDP query and a query on a NEW TCP connection for an allowed name are
# answered correctly within 3 s, the daemon holds no more than ~512 client
# connections (its descriptors stay bounded), it counts each connection
# it refused or evicted at the cap (tcp_refused: at least the opened ones
# beyond 512), and it keeps running.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'
pid="$DF_DNSFENCE_PID"

# The holder: opens 2,000 connections (non-blocking connects, so the ones
# the server evicts do not stall it), writes "opened N" to a file, then
# holds every socket until it is killed (at most 40 s).
ready="$DF_TMP/held.ready"
ip netns exec "$DF_WL" timeout 40 "$DF_PY" - "$ready" >"$DF_TMP/held.log" 2>&1 <<'PY' &
import errno, resource, select, socket, sys, time
N = 2000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = N + 64
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard) if hard != resource.RLIM_INFINITY else want, hard))
socks, opened, failed = [], 0, 0
deadline = time.monotonic() + 20
for i in range(N):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    rc = s.connect_ex(("127.0.0.1", 53))
    if rc not in (0, errno.EINPROGRESS):
        failed += 1
        s.close()
        continue
    socks.append(s)
    if i % 100 == 99:  # wait for this batch to finish its handshakes
        pend = {x.fileno(): x for x in socks[-100:]}
        poller = select.poll()
        for fd in pend:
            poller.register(fd, select.POLLOUT)
        end = time.monotonic() + 2
        while pend and time.monotonic() < end:
            for fd, _ in poller.poll(200):
                poller.unregister(fd)
                del pend[fd]
    if time.monotonic() > deadline:
        break
for s in socks:
    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err == 0:
        opened += 1
    else:
        failed += 1
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("opened %d failed %d\n" % (opened, failed))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(35)
PY
DF_PIDS+=("$!")
holder=$!
holder_ready() { test -f "$ready" || ! kill -0 "$holder" 2>/dev/null; }

df_poll 250 holder_ready || fail "the holder did not open its connections within 25 s ($(cat "$DF_TMP/held.log"))"
[ -f "$ready" ] || fail "the holder exited early: $(cat "$DF_TMP/held.log")"
read -r _ opened _ failed <"$ready"
[ "$opened" -ge 1900 ] || fail "expected at least 1900 of 2000 connections to be established, saw $opened ($failed failed)"
ok "2000 TCP connections opened and held: $opened established, $failed failed"

conns="$(wl ss -Htn state established '( sport = :53 )' | wc -l)"
fds="$(ls /proc/"$pid"/fd | wc -l)"
echo "server side: $conns established connections on port 53, dnsfence has $fds descriptors"
[ "$fds" -le 600 ] || fail "expected dnsfence to hold at most ~512 client connections, it has $fds descriptors"

t0="$(df_now_ms)"
df_dig www.allowed.test A +time=3 +tries=1
ms=$(($(df_now_ms) - t0))
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ok "while held: UDP www.allowed.test A -> 198.18.1.10 in $ms ms"

t0="$(df_now_ms)"
df_dig +tcp www.allowed.test AAAA +time=3 +tries=1
ms=$(($(df_now_ms) - t0))
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
ok "while held: new TCP connection, www.allowed.test AAAA -> 2001:db8:1::10 in $ms ms"

out="$(df_tcp_pipeline 127.0.0.1 www.allowed.test/A "held-$$.evil.test/A")" ||
	fail "a second new TCP connection with two pipelined queries failed: $out"
grep -q "^www.allowed.test/A NOERROR 1$" <<<"$out" && grep -q "evil.test/A NXDOMAIN 0$" <<<"$out" ||
	fail "unexpected pipelined answers: $out"
ok "while held: a second new TCP connection answers allowed -> NOERROR, denied -> NXDOMAIN"

kill -0 "$holder" 2>/dev/null || fail "the holder exited early ($(cat "$DF_TMP/held.log"))"
expect_dnsfence_running
kill -USR1 "$pid"
df_wait_log 20 "tcp_refused=" || fail "no stats line after SIGUSR1"
stats="$(grep -o 'tcp_refused=[0-9]*' "$DF_DNSFENCE_LOG" | tail -n 1)"
[ "${stats#*=}" -ge $((opened - 512)) ] ||
	fail "$opened connections held against a cap of 512, yet only $stats refused or evicted"
ok "dnsfence (pid $pid) still running; $stats (>= $opened - 512)"
