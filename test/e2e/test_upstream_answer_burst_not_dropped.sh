#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A burst of upstream answers fits in the DNS process's upstream socket.
# The socket comes from the privileged parent (IPC_SOCKET), and c-ares
# 1.18 applies none of its own socket options to a socket it did not
# make: unless the parent sizes the receive buffer, it is the kernel's
# default (net.core.rmem_default, 208 KiB), about 150 answers. Every
# answer beyond that is dropped, and its client waits a whole c-ares retry
# (a third of upstream_timeout) for a name the upstream answered at once.
#
# 1,200 questions for names below *.burst.test, from 12 client sockets,
# reach a fake upstream (python3, 198.18.0.1:53). Once it holds them all,
# the DNS process is stopped (SIGSTOP), the fake sends the 1,200 answers,
# and the process continues: every answer is queued in the socket while
# nothing reads it. Asserted: each client gets all its answers (positive
# control: the path works at all), the fake saw every name exactly once
# (a dropped answer is asked again), and the workload namespace counted no
# UDP receive-buffer error.
source "$(dirname "$0")/lib.sh"
df_setup_net

N=1200
fake_log="$DF_TMP/fake.log"
go="$DF_TMP/go"
ip netns exec "$DF_UP" "$DF_PY" - "$fake_log" "$go" "$N" >"$DF_TMP/fake.stderr" 2>&1 <<'PY' &
import os, socket, struct, sys, time
log = open(sys.argv[1], "a", buffering=1)
go, n = sys.argv[2], int(sys.argv[3])

def parse_q(m):
    o, labels = 12, []
    while m[o]:
        labels.append(m[o + 1:o + 1 + m[o]].decode())
        o += 1 + m[o]
    return ".".join(labels).lower(), struct.unpack(">H", m[o + 1:o + 3])[0], o + 5

def answer(m):
    name, qtype, end = parse_q(m)
    hdr = m[:2] + struct.pack(">HHHHH", 0x8180, 1, 0, 0, 0)
    if qtype != 1 or not name.startswith("b"):
        return name, hdr + m[12:end]
    i = int(name.split(".")[0][1:])
    rr = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 300, 4) + \
        bytes([198, 18, 8 + i // 256, i % 256])
    return name, m[:2] + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0) + m[12:end] + rr

u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
u.bind(("198.18.0.1", 53))
log.write("ready\n")
held, deadline = [], None
while True:
    u.settimeout(None if deadline is None else max(0.01, deadline - time.time()))
    try:
        m, peer = u.recvfrom(4096)
    except socket.timeout:
        m = None
    if m is not None:
        name, r = answer(m)
        log.write("q %s\n" % name)
        if held is None:          # after the burst: answer at once
            u.sendto(r, peer)
            continue
        held.append((r, peer))
        deadline = deadline or time.time() + 20
        if len(held) < n:
            continue
    if held is None:
        continue
    log.write("held %d\n" % len(held))
    while not os.path.exists(go):
        time.sleep(0.01)
    for r, peer in held:
        u.sendto(r, peer)
    log.write("sent %d\n" % len(held))
    held, deadline = None, None
PY
DF_PIDS+=("$!")
df_poll 50 grep -q ready "$fake_log" || fail "the fake upstream did not start: $(cat "$DF_TMP/fake.stderr")"

# upstream_timeout 12: c-ares asks again after 4 s, well after the burst.
df_start_dnsfence allow='["*.burst.test"]' upstream_timeout=12 \
	wildcard_budget="$DF_BUDGET_UNBOUNDED" log='{"level": "info"}'
dns_pid="$(pgrep -P "$DF_DNSFENCE_PID" -x dnsfence-dns)" ||
	fail "no DNS process (dnsfence-dns) under the daemon's pid $DF_DNSFENCE_PID"
udp_rcvbuf_errors() { wl awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { print $6 }' /proc/net/snmp; }
errors_before="$(udp_rcvbuf_errors)"

wl "$DF_PY" - "$N" >"$DF_TMP/clients.out" 2>"$DF_TMP/clients.err" <<'PY' &
import select, socket, struct, sys, time
n, per = int(sys.argv[1]), 100
socks = []
for c in range(n // per):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("127.0.0.1", 53))
    s.setblocking(False)
    socks.append(s)
    for i in range(c * per, (c + 1) * per):
        q = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0)
        q += b"".join(bytes([len(l)]) + l.encode() for l in ("b%d" % i, "burst", "test"))
        s.send(q + b"\0" + struct.pack(">HH", 1, 1))
got, shed, deadline = set(), set(), time.time() + 40
while len(got) + len(shed) < n and time.time() < deadline:
    r, _, _ = select.select(socks, [], [], 0.5)
    for s in r:
        while True:
            try:
                m = s.recv(4096)
            except BlockingIOError:
                break
            qid, flags, _, an = struct.unpack(">HHHH", m[:8])
            if flags & 0xf == 0 and an == 1:
                got.add(qid)
            elif flags & 0xf == 2:
                shed.add(qid)
print(len(got), len(shed))
PY
clients=$!
DF_PIDS+=("$clients")

df_poll 200 grep -q '^held ' "$fake_log" ||
	fail "the fake upstream never held all $N questions: $(grep -c '^q ' "$fake_log") arrived"
kill -STOP "$dns_pid"
touch "$go"
df_poll 100 grep -q '^sent ' "$fake_log" || { kill -CONT "$dns_pid"; fail "the fake upstream did not send its answers"; }
sleep 0.5 # the last answers cross the veth into the stopped process's socket
kill -CONT "$dns_pid"

wait "$clients" || fail "the clients failed: $(cat "$DF_TMP/clients.err")"
# Asked again means its answer was lost: give c-ares its retry time.
sleep 5
read -r answered servfail <"$DF_TMP/clients.out"
shed="$(df_status_value counters.shed_set_add)"
asked="$(grep -c '^q b' "$fake_log")"
dropped=$(($(udp_rcvbuf_errors) - errors_before))
[ "$asked" -eq "$N" ] ||
	fail "the fake upstream was asked $asked times for $N names: answers were lost in the DNS process's upstream socket and asked again (the workload namespace counted $dropped UDP receive-buffer errors; the clients got $answered of $N answers)"
[ "$dropped" -eq 0 ] ||
	fail "the workload namespace counted $dropped UDP receive-buffer errors during the burst"
# A loaded machine (the sanitizer build) may find the set channel behind
# its bound while 1,200 adds land at once: those questions are shed with
# SERVFAIL and counted (test_set_channel_stalled_sheds), not lost.
[ "$servfail" = "$shed" ] ||
	fail "the clients got $servfail SERVFAILs, but the daemon counted $shed questions shed at the set channel"
[ "$((answered + servfail))" = "$N" ] && [ "$answered" -gt 0 ] ||
	fail "the clients got $answered of $N answers and $servfail counted SERVFAILs (positive control: every question is answered)"
ok "control: $N questions, $answered answers with an address, $servfail shed at the set channel and counted"
expect_dnsfence_running
ok "a burst of $N answers, queued while the DNS process was stopped, all read: each name asked once, no receive-buffer error"
