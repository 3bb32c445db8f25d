#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 5 with a Docker-style embedded resolver as the upstream: a
# forwarder listens on 127.0.0.11 at a random high port inside the
# workload namespace and relays from OUTSIDE it (its upstream socket lives
# in the upstream namespace, as dockerd's lives in the host's), and the
# nat table DNATs 127.0.0.11:53 to that port, as Docker installs it. The
# config's upstream is 127.0.0.11.
# Control: the daemon's own queries go through the forwarder (answered,
# and seen in unbound's query log). Attack: an unprivileged workload sends
# a query for a denied name straight to 127.0.0.11:PORT (the port is in
# /proc/net/udp for anyone to read): rejected, never reaches unbound. So
# is the same query to 127.0.0.11:53 (through the DNAT).
source "$(dirname "$0")/lib.sh"
df_setup
WL_UID=4242
PORT=$((40000 + RANDOM % 20000))

# The forwarder: root in the workload namespace binds 127.0.0.11:PORT,
# then moves itself into the upstream namespace and relays each datagram
# from a socket opened there.
cat >"$DF_TMP/relay.py" <<'PY'
import ctypes, os, select, socket, sys
port, upns = int(sys.argv[1]), sys.argv[2]
lst = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
lst.bind(("127.0.0.11", port))
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/run/netns/" + upns, os.O_RDONLY)
if libc.setns(fd, 0x40000000) != 0:
    sys.exit("setns: errno %d" % ctypes.get_errno())
os.close(fd)
print("ready", flush=True)
clients = {}
while True:
    r, _, _ = select.select([lst] + list(clients), [], [], 5)
    for s in r:
        if s is lst:
            data, peer = lst.recvfrom(65535)
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.connect(("198.18.0.1", 53))
            u.send(data)
            clients[u] = peer
        else:
            try:
                lst.sendto(s.recv(65535), clients[s])
            except OSError:
                pass
            del clients[s]
            s.close()
PY
ip netns exec "$DF_WL" "$DF_PY" "$DF_TMP/relay.py" "$PORT" "$DF_UP" >"$DF_TMP/relay.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 grep -q ready "$DF_TMP/relay.log" || fail "the forwarder did not start: $(cat "$DF_TMP/relay.log")"
for p in udp tcp; do
	wl iptables -w -t nat -A OUTPUT -d 127.0.0.11/32 -p "$p" --dport 53 \
		-j DNAT --to-destination "127.0.0.11:$PORT"
done
wl ss -Huln | grep -q "127.0.0.11:$PORT" || fail "127.0.0.11:$PORT is not listed"
ok "forwarder on 127.0.0.11:$PORT (relaying from the upstream namespace), 127.0.0.11:53 DNATed to it"

df_start_dnsfence allow='["www.allowed.test"]' upstreams='["127.0.0.11"]'

# Control: the daemon resolves through the forwarder.
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
df_poll 30 df_unbound_saw www.allowed.test || fail "the daemon's query did not reach unbound through the forwarder"
ok "control: the daemon's query went through 127.0.0.11 to the upstream"

# Attack: straight at the forwarder's real port, and at :53.
for port in "$PORT" 53; do
	name="docker-$port-$$.evil.test"
	rc=0
	df_wl_as "$WL_UID" dig +time=1 +tries=1 -p "$port" @127.0.0.11 "$name" A >/dev/null 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "uid $WL_UID got an answer from 127.0.0.11:$port"
	sleep 0.3
	! df_unbound_saw "$name" || fail "$name reached unbound through 127.0.0.11:$port"
done
ok "uid $WL_UID querying 127.0.0.11:$PORT and :53 directly: rejected, nothing reaches the upstream"

# The daemon still works after the attempts.
df_dig www.allowed.test AAAA
expect_rcode NOERROR
ok "control: the daemon still resolves through the forwarder"
expect_dnsfence_running
