#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The upstream sockets the parent makes for the DNS process carry the
# options c-ares would give a socket of its own: c-ares 1.18 sets none on
# a socket it did not make (configure_socket returns at once, and
# TCP_NODELAY is set only when no socket functions are installed). So the
# parent sets them: a UDP socket's 4 MiB receive buffer (a burst of
# answers beyond the default is dropped, see
# test_upstream_answer_burst_not_dropped.sh), a TCP socket's TCP_NODELAY
# (c-ares pipelines its TCP questions to a server on one connection, and
# Nagle holds each one sent while an earlier one is unacknowledged).
#
# A fake upstream (python3, 198.18.0.1:53) answers over UDP with TC=1 and
# accepts the TCP retry without ever answering, so both sockets of one
# question stay open. The test takes copies of the DNS process's two
# sockets (pidfd_getfd) and reads their options. Positive control: each
# copy carries the daemon's SO_MARK, so it is the daemon's upstream
# socket and the copy works.
source "$(dirname "$0")/lib.sh"
df_setup_net

fake_log="$DF_TMP/fake.log"
ip netns exec "$DF_UP" "$DF_PY" - "$fake_log" >"$DF_TMP/fake.stderr" 2>&1 <<'PY' &
import socket, struct, sys, threading
log = open(sys.argv[1], "a", buffering=1)
held = []

def tcp(ls):
    while True:
        c, peer = ls.accept()
        held.append(c)  # never answered, never closed
        log.write("tcp %s:%d\n" % peer)

t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("198.18.0.1", 53))
t.listen(8)
threading.Thread(target=tcp, args=(t,), daemon=True).start()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("198.18.0.1", 53))
log.write("ready\n")
while True:
    m, peer = u.recvfrom(4096)
    o = 12
    while m[o]:
        o += 1 + m[o]
    u.sendto(m[:2] + struct.pack(">HHHHH", 0x8380, 1, 0, 0, 0) + m[12:o + 5], peer)
    log.write("udp %s:%d\n" % peer)
PY
DF_PIDS+=("$!")
df_poll 50 grep -q ready "$fake_log" || fail "the fake upstream did not start: $(cat "$DF_TMP/fake.stderr")"

df_start_dnsfence allow='["*.allowed.test"]' upstream_timeout=20
dns_pid="$(pgrep -P "$DF_DNSFENCE_PID" -x dnsfence-dns)" ||
	fail "no DNS process (dnsfence-dns) under the daemon's pid $DF_DNSFENCE_PID"
mark="$(env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" validate |
	"$DF_PY" -c 'import json, sys; print(json.load(sys.stdin)["mark"])')"

wl dig +time=15 +tries=1 @127.0.0.1 held.allowed.test A >/dev/null 2>&1 &
DF_PIDS+=("$!")
df_poll 100 grep -q '^tcp ' "$fake_log" ||
	fail "the question never reached the fake upstream over TCP: $(cat "$fake_log")"

# fd_of PROTO: the DNS process's descriptor of its socket to 198.18.0.1:53.
fd_of() {
	wl ss -H -n -p "-$1" dst 198.18.0.1:53 2>/dev/null | grep -o "pid=$dns_pid,fd=[0-9]*" |
		head -n 1 | sed 's/.*fd=//' || true
}
both_fds() { [ -n "$(fd_of t)" ] && [ -n "$(fd_of u)" ]; }
df_poll 50 both_fds || true
tcp_fd="$(fd_of t)"
udp_fd="$(fd_of u)"
[ -n "$tcp_fd" ] && [ -n "$udp_fd" ] ||
	fail "the DNS process holds no TCP and UDP socket to 198.18.0.1:53 (tcp fd '$tcp_fd', udp fd '$udp_fd'): $(wl ss -tunap dst 198.18.0.1:53)"

opts="$("$DF_PY" - "$dns_pid" "$tcp_fd" "$udp_fd" <<'PY'
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
SYS_pidfd_getfd, SO_MARK = 438, 36
pidfd = os.pidfd_open(int(sys.argv[1]))
def sock(fd):
    n = libc.syscall(SYS_pidfd_getfd, pidfd, int(fd), 0)
    if n < 0:
        sys.exit("pidfd_getfd(%s): %s" % (fd, os.strerror(ctypes.get_errno())))
    return socket.socket(fileno=n)
t, u = sock(sys.argv[2]), sock(sys.argv[3])
print("tcp_mark", t.getsockopt(socket.SOL_SOCKET, SO_MARK))
print("tcp_nodelay", t.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
print("udp_mark", u.getsockopt(socket.SOL_SOCKET, SO_MARK))
print("udp_rcvbuf", u.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
PY
)" || fail "cannot read the DNS process's sockets' options: $opts"
opt() { awk -v k="$1" '$1 == k { print $2 }' <<<"$opts"; }

[ "$(opt tcp_mark)" = "$mark" ] && [ "$(opt udp_mark)" = "$mark" ] ||
	fail "control: the sockets' marks are $(opt tcp_mark) (TCP) and $(opt udp_mark) (UDP), not the daemon's $mark"
ok "control: the DNS process's TCP (fd $tcp_fd) and UDP (fd $udp_fd) sockets to the upstream carry the mark $mark"

[ "$(opt tcp_nodelay)" -ne 0 ] ||
	fail "the TCP upstream socket has no TCP_NODELAY: Nagle holds each pipelined question while an earlier one is unacknowledged"
# The kernel reports twice what was set; 4 MiB set reads 8 MiB.
[ "$(opt udp_rcvbuf)" -ge $((4 << 20)) ] ||
	fail "the UDP upstream socket's receive buffer is $(opt udp_rcvbuf) bytes, not 4 MiB: a burst of answers beyond it is dropped"
expect_dnsfence_running
ok "TCP_NODELAY on the TCP socket, a $(($(opt udp_rcvbuf) >> 20)) MiB receive buffer (as the kernel reports it) on the UDP one"
