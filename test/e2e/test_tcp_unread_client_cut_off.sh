#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A TCP client that sends questions and never reads its answers is cut
# off, and UDP clients are answered meanwhile. It pipelines denied names
# (each answered at once) with a tiny receive buffer until its writes
# block: once more than 256 KiB of its answers wait in the daemon, the
# daemon stops reading from it for good (shed: dnsfence_shed_total
# {stage="tcp"} counts the connection once) and the write timeout closes
# it. While it is stuck, 20 UDP queries and a TCP query from a client
# that reads are all answered; afterwards the stuck connection has been
# closed by the daemon (reset: it never read what was queued for it).
# Positive control: before it, the counter is 0 and the same UDP and TCP
# queries are answered.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]' metrics='"127.0.0.1:9253"'

# shed_count: dnsfence_shed_total{stage="tcp"} now.
shed_count() {
	wl curl -sf --max-time 10 http://127.0.0.1:9253/metrics >"$DF_TMP/metrics.txt" ||
		fail "could not scrape the metrics"
	awk '$1 == "dnsfence_shed_total{stage=\"tcp\"}" { print $2; f = 1 }
		END { if (!f) print "missing" }' "$DF_TMP/metrics.txt"
}

# others: 20 UDP queries for denied names, one at a time (2 s each), and
# one TCP query from a client that reads; prints how many of the 21
# were answered.
cat >"$DF_TMP/others.py" <<'PY'
import socket, struct, sys
def query(qid, name):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", 1, 1)
n = 0
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(2)
u.connect(("127.0.0.1", 53))
for i in range(20):
    u.send(query(i, "u%d.%s.evil.test" % (i, sys.argv[1])))
    try:
        while struct.unpack(">H", u.recv(4096)[:2])[0] != i:
            pass
        n += 1
    except socket.timeout:
        pass
try:
    t = socket.create_connection(("127.0.0.1", 53), timeout=5)
    m = query(99, "www.allowed.test")
    t.sendall(struct.pack(">H", len(m)) + m)
    if len(t.recv(2)) == 2:
        n += 1
except OSError:
    pass
print(n)
PY
# stuck.py: the client that never reads; "stuck N" once its writes block
# (N queries sent), then after SIGUSR1 whether the daemon closed it:
# "cut" (reset or end of stream seen without reading) or "open".
cat >"$DF_TMP/stuck.py" <<'PY'
import select, signal, socket, struct, sys, time
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
t.connect(("127.0.0.1", 53))
t.setblocking(False)
sent, buf, i = 0, b"", 0
end = time.time() + 20
while time.time() < end:
    if not buf:
        # 256 questions a write: the buffers fill within the daemon's
        # 5 s limit for an incomplete message even on a slow machine
        for _ in range(256):
            q = struct.pack(">HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 0)
            for label in ("s%d" % i, "stuck", "evil", "test"):
                q += bytes([len(label)]) + label.encode()
            q += b"\0" + struct.pack(">HH", 1, 1)
            buf += struct.pack(">H", len(q)) + q
            i += 1
    try:
        k = t.send(buf)
        buf = buf[k:]
        sent += 256 if not buf else 0
    except BlockingIOError:
        _, w, _ = select.select([], [t], [], 1)
        if not w:
            break
print("stuck", sent, flush=True)
signal.sigwait([signal.SIGUSR1])
p = select.poll()
p.register(t, select.POLLERR | select.POLLHUP | select.POLLRDHUP)
end = time.time() + 30
while time.time() < end:
    if p.poll(500):
        print("cut", flush=True)
        sys.exit(0)
print("open", flush=True)
PY
chmod 644 "$DF_TMP/others.py" "$DF_TMP/stuck.py"

shed0="$(shed_count)"
[ "$shed0" = 0 ] || fail "control: dnsfence_shed_total{stage=\"tcp\"} is $shed0 before any TCP client"
answered="$(wl "$DF_PY" "$DF_TMP/others.py" control)"
[ "$answered" = 21 ] || fail "control: only $answered of 20 UDP and 1 TCP queries answered"
ok "control: 20 UDP and 1 TCP queries answered, nothing shed"

ip netns exec "$DF_WL" "$DF_PY" "$DF_TMP/stuck.py" >"$DF_TMP/stuck.out" 2>&1 &
stuck=$!
DF_PIDS+=("$stuck")
df_poll 300 grep -q '^stuck' "$DF_TMP/stuck.out" || fail "the non-reading client never blocked: $(cat "$DF_TMP/stuck.out")"
df_poll 100 test "$(shed_count)" = 1 ||
	fail "$(cat "$DF_TMP/stuck.out") queries unread, but dnsfence_shed_total{stage=\"tcp\"} is $(shed_count), expected 1"
ok "the client that does not read: $(awk '{ print $2 }' "$DF_TMP/stuck.out") queries sent, reading from it stopped and counted"

answered="$(wl "$DF_PY" "$DF_TMP/others.py" during)"
[ "$answered" = 21 ] || fail "with the client stuck, only $answered of 20 UDP and 1 TCP queries answered"
ok "meanwhile 20 UDP queries and a reading TCP client are answered"

kill -USR1 "$stuck"
wait "$stuck" || fail "the stuck client exited $?"
grep -q '^cut$' "$DF_TMP/stuck.out" || fail "the daemon did not close the client that does not read: $(cat "$DF_TMP/stuck.out")"
[ "$(shed_count)" = 1 ] || fail "dnsfence_shed_total{stage=\"tcp\"} went to $(shed_count), expected 1 (once per connection)"
ok "the client that does not read was cut off, counted once"
expect_dnsfence_running
