#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A fenced uid's packets enter the fence by their socket's owner
# (`-m owner --uid-owner`). Once the program closes a TCP socket with
# data still unacknowledged, the kernel keeps sending it from an orphaned
# socket that has no owner any more: on the code before this test, those
# retransmissions skipped DNSFENCE-OUT, the name check with it.
#
# The attack: the fenced uid resolves www.allowed.test, connects to the
# shared front end's address (198.18.1.10:443), sends a ClientHello for
# evil.test and closes the socket. The first transmission is lost here
# (the test drops it in the raw table, as a full check queue or a lossy
# link would); the orphan's retransmission then carries the ClientHello
# out. A sink on the front end's address records what arrives.
#
# Now every packet of a connection a subject opened (its connmark carries
# the daemon's mark from its first packet on) enters the fence when it
# has no socket, so the retransmission is checked and reset.
#
# Controls: the ClientHello for evil.test sent without the loss is reset
# and never arrives (the check works); the same loss and close with a
# ClientHello for www.allowed.test arrives through its retransmission
# (the orphan does retransmit, and allowed traffic gets through).
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

# The sink: accepts on 198.18.1.10:443, appends every connection's bytes
# (hex) to sink.log.
ip netns exec "$DF_UP" "$DF_PY" -u -c '
import socket, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.1.10", 443))
s.listen(64)
def take(c):
    data = b""
    c.settimeout(10)
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    print(data.hex(), flush=True)
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=take, args=(c,), daemon=True).start()
' >>"$DF_TMP/sink.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$DF_UP" 443 || fail "the sink did not start"

df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443"]' \
	subjects="{\"users\": [\"$WL_UID\"]}"

# hello.py SNI LOSE DIR: as the fenced uid, connect to www.allowed.test's
# address on 443; with LOSE, write DIR/connected and wait for DIR/armed
# (the loss rule in place); send a ClientHello for SNI; with LOSE, close
# at once and write DIR/closed, else wait for the server to close.
chmod 711 "$DF_TMP"
cat >"$DF_TMP/hello.py" <<'PY'
import os, socket, ssl, sys, time
sni, lose, d = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
addr = socket.getaddrinfo("www.allowed.test", 443, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
s = socket.create_connection((addr, 443), timeout=5)
ctx = ssl.create_default_context()
o = ssl.MemoryBIO()
tls = ctx.wrap_bio(ssl.MemoryBIO(), o, server_hostname=sni)
try:
    tls.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = o.read()
if lose:
    open(d + "/connected", "w").write(addr)
    for _ in range(100):
        if os.path.exists(d + "/armed"):
            break
        time.sleep(0.05)
s.sendall(hello)
if lose:
    time.sleep(0.2)
    s.close()
    open(d + "/closed", "w").write("closed")
    print("sent and closed")
else:
    try:
        print("reply: %d bytes" % len(s.recv(4096)))
    except OSError as e:
        print("error: %s" % e)
PY
chmod 644 "$DF_TMP/hello.py"

# sni_hex NAME: the name as the sink logs it (hex of its bytes).
sni_hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
arrived() { grep -q "$(sni_hex "$1")" "$DF_TMP/sink.log"; }

# lose_first SNI: the attack; returns once the loss rule is gone again.
LOSS=(OUTPUT -p tcp -d 198.18.1.10 --dport 443 -m length --length 200:65535 -j DROP)
lose_first() {
	local d
	d=$(mktemp -d "$DF_TMP/lose.XXXXXX")
	chmod 777 "$d"
	df_wl_as "$WL_UID" "$DF_PY" "$DF_TMP/hello.py" "$1" 1 "$d" >"$d/out" 2>&1 &
	local hp=$!
	df_poll 50 test -s "$d/connected" || fail "the fenced uid did not connect: $(cat "$d/out")"
	wl iptables -t raw -I "${LOSS[@]}"
	: >"$d/armed"
	df_poll 50 test -s "$d/closed" || fail "the fenced uid did not send and close: $(cat "$d/out")"
	sleep 0.3
	wl iptables -t raw -D "${LOSS[@]}"
	wait "$hp" || fail "hello.py failed: $(cat "$d/out")"
}

# Control: sent at once, the ClientHello for evil.test is reset by the check.
out="$(df_wl_as "$WL_UID" "$DF_PY" "$DF_TMP/hello.py" evil.test 0 "$DF_TMP" 2>&1)"
grep -q "^error" <<<"$out" || fail "control: the ClientHello for evil.test was not cut: $out"
expect_log_contains "TLS server name evil.test is not allowed"
sleep 1
! arrived evil.test || fail "control: the ClientHello for evil.test reached the front end"
ok "control: a ClientHello for evil.test is reset and never arrives ($out)"

# Control: lost, then retransmitted by the orphan, the allowed one arrives.
lose_first www.allowed.test
df_poll 200 arrived www.allowed.test ||
	fail "control: the lost ClientHello for www.allowed.test never arrived after close(): no retransmission to judge"
ok "control: the orphaned socket retransmits, and the allowed ClientHello arrives"

# The attack.
refused() { awk '/TLS server name evil.test is not allowed/ { n++ } END { print n + 0 }' "$DF_DNSFENCE_LOG"; }
before=$(refused)
lose_first evil.test
# The orphan retransmits with backoff (0.2, 0.6, 1.4, 3, 6.2 s ...): wait
# until the check has refused it or it arrived, whichever comes first.
judged() { [ "$(refused)" -gt "$before" ] || arrived evil.test; }
df_poll 150 judged || echo "the retransmission was neither refused nor arrived within 15 s" >&2
sleep 0.5
! arrived evil.test ||
	fail "the ClientHello for evil.test reached the front end: retransmitted after close(), it skipped the fence"
[ "$(refused)" -gt "$before" ] || fail "the retransmitted ClientHello for evil.test was not checked (no new refusal in the log)"
ok "a ClientHello for evil.test retransmitted after close() is checked and never arrives"
