#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The name check's cost, check on (enforce) against off (a live reload),
# in the e2e lab's two namespaces (test/e2e/lib.sh; everything removed
# after). Not a test: nothing here asserts a timing (test/bench/README.md).
#
#  1. connect-to-first-byte: a client connects to a set member, sends a
#     real ClientHello (SNI www.allowed.test) and waits for the first byte
#     of the answer; a small server (python, SO_REUSEPORT, 2 processes)
#     answers one byte as soon as it has read data. p50/p99 over N flows.
#  2. established-flow throughput: curl downloads a 512 MiB file over
#     HTTPS from nginx (the first packets are checked, the rest run in
#     the kernel).
#  3. new flows/s: C client threads open flows as fast as they can for S
#     seconds; the queue's kernel drops (/proc/net/netfilter/
#     nfnetlink_queue) and flow_queue_lost are read after.
#
#   test/bench/name_check.sh [N] [S] [C]     (defaults 2000 5 4)
set -euo pipefail
N=${1:-2000}
SECS=${2:-5}
CONC=${3:-4}
source "$(dirname "$0")/../e2e/lib.sh"
df_setup
chmod 755 "$DF_TMP"

# The one-byte server on 198.18.1.10:443 (first-byte and flows/s).
cat >"$DF_TMP/srv.py" <<'EOF'
import os, socket
for _ in range(1):
    if os.fork() == 0:
        break
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("198.18.1.10", 443))
s.listen(4096)
while True:
    c, _ = s.accept()
    try:
        if c.recv(65536):
            c.send(b"x")
    except OSError:
        pass
    c.close()
EOF
ip netns exec "$DF_UP" "$DF_PY" "$DF_TMP/srv.py" >>"$DF_TMP/srv.log" 2>&1 &
DF_PIDS+=("$!")
# nginx on 198.18.1.11:443 for the throughput run.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=a.b.allowed.test -keyout "$DF_TMP/key.pem" -out "$DF_TMP/cert.pem" 2>/dev/null
mkdir -p "$DF_TMP/www"
truncate -s 512M "$DF_TMP/www/big"
df_start_nginx 443 \
	"server { listen 198.18.1.11:443 ssl; ssl_certificate $DF_TMP/cert.pem; ssl_certificate_key $DF_TMP/key.pem; root $DF_TMP/www; }"

sock="$DF_TMP/control.sock"
conf() {
	df_config allow='["www.allowed.test", "a.b.allowed.test"]' ports='["tcp/443"]' \
		log='{"level": "info"}' control='{"socket": "'"$sock"'", "watch": false}' "$@"
}
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]' ports='["tcp/443"]' \
	log='{"level": "info"}' control='{"socket": "'"$sock"'", "watch": false}'
df_dig www.allowed.test A
df_dig a.b.allowed.test A

cat >"$DF_TMP/client.py" <<'EOF'
import socket, ssl, sys, threading, time
mode, n = sys.argv[1], int(sys.argv[2])
ctx = ssl.create_default_context()
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
t = ctx.wrap_bio(inc, out, server_hostname="www.allowed.test")
try:
    t.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = out.read()
def one():
    t0 = time.perf_counter()
    s = socket.create_connection(("198.18.1.10", 443), timeout=5)
    s.sendall(hello)
    b = s.recv(1)
    dt = time.perf_counter() - t0
    s.close()
    if b != b"x":
        raise SystemExit("no answer")
    return dt
if mode == "latency":
    for _ in range(50):
        one()
    v = sorted(one() for _ in range(n))
    print("p50_us %.0f p99_us %.0f" % (v[len(v) // 2] * 1e6, v[int(len(v) * 0.99)] * 1e6))
else:
    secs, conc = float(sys.argv[3]), int(sys.argv[4])
    count, fails, stop = [0] * conc, [0] * conc, time.time() + secs
    def loop(i):
        while time.time() < stop:
            try:
                one()
                count[i] += 1
            except Exception:
                fails[i] += 1
    th = [threading.Thread(target=loop, args=(i,)) for i in range(conc)]
    [x.start() for x in th]
    [x.join() for x in th]
    print("flows_per_s %.0f failed %d" % (sum(count) / secs, sum(fails)))
EOF
queue_drops() { wl cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null | awk '{ print "queue_dropped " $6 " user_dropped " $7 }'; }
measure() {
	echo "== name_check $1"
	wl "$DF_PY" "$DF_TMP/client.py" latency "$N"
	for _ in 1 2 3; do download; done
	wl "$DF_PY" "$DF_TMP/client.py" flows "$N" "$SECS" "$CONC"
	queue_drops
}
# The first download in a new lab runs at a third of the speed of the
# next ones, check on or off (nginx and the page cache warm up): it is
# made once and not counted, and each mode then prints three.
download() {
	wl curl -sk -o /dev/null -w 'throughput_MBps %{speed_download}\n' https://a.b.allowed.test/big |
		awk '{ printf "throughput_MBps %.0f\n", $2 / 1e6 }'
}
download >/dev/null
measure enforce
kill -USR1 "$DF_DNSFENCE_PID"
sleep 0.5
grep -o 'flow_checked=[0-9]* flow_accepted=[0-9]*.*flow_queue_lost=[0-9]*' "$DF_DNSFENCE_LOG" | tail -1
conf name_check='{"mode": "off"}'
df_dnsfence reload
measure off
