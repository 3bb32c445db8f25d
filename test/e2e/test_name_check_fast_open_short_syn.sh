#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 11 against TCP Fast Open with 1, 2 or 3 bytes in the SYN:
# nginx on 198.18.1.10:80 and [2001:db8:1::10]:80 serves www.allowed.test
# and evil.test by Host with Fast Open on (net.ipv4.tcp_fastopen=3 in the
# upstream namespace only). Once the workload's kernel holds the server's
# cookie, sendto(MSG_FASTOPEN) puts the first write in the SYN; a SYN is
# NEW, so those bytes would reach the server before the check reads a
# packet, and the check would read the stream without its start. Every
# SYN with data to a checked port is dropped; the client's kernel sends
# it again without data and the bytes after the handshake, where the
# check reads the stream from its first byte. A capture in the upstream
# namespace sees no SYN with data, the allowed name's request (first
# write of 1, 2, 3 bytes) is answered, evil.test's is reset and never
# reaches its server block, IPv4 and IPv6. Control: with the check off
# (a live reload) the capture sees the SYN data arrive.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup
up sysctl -qw net.ipv4.tcp_fastopen=3

df_front_end_pages
df_start_nginx 80 \
	"server { listen 198.18.1.10:80 default_server fastopen=64; listen [2001:db8:1::10]:80 default_server fastopen=64; server_name www.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:80; listen [2001:db8:1::10]:80; server_name evil.test; root $DF_TMP/www/evil; access_log $DF_TMP/evil-access.log; }"

# Every SYN with payload that reaches the server's namespace.
SYNS="$DF_TMP/syn-data.txt"
up tcpdump -l -n -i "$DF_VETH_UP" \
	'(ip and tcp[tcpflags] & tcp-syn != 0 and tcp[tcpflags] & tcp-ack = 0 and ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2) > 0) or (ip6 and ip6[6] = 6 and ip6[40 + 13] & 0x12 = 0x02 and ip6[4:2] - ((ip6[40 + 12] & 0xf0) >> 2) > 0)' \
	>"$SYNS" 2>"$DF_TMP/tcpdump.err" &
DF_PIDS+=("$!")
df_poll 50 grep -q "listening on" "$DF_TMP/tcpdump.err" || fail "tcpdump did not start: $(cat "$DF_TMP/tcpdump.err")"

sock="$DF_TMP/control.sock"
chmod 755 "$DF_TMP"
COMMON=(allow='["www.allowed.test"]' ports='["tcp/80"]' control='{"socket": "'"$sock"'", "watch": false}')
df_start_dnsfence "${COMMON[@]}"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR

# tfo_get ADDR N SECRET HOST: a request for HOST whose first N bytes are
# written with MSG_FASTOPEN (in the SYN once a cookie is held), the rest
# after. Prints the answer's body; exit 3 on a reset.
tfo_get() {
	df_wl_as $WL_UID timeout 20 "$DF_PY" - "$@" <<'PY'
import socket, sys
addr, n, secret, host = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
head = ("GET /?%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (secret, host)).encode()
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
reply = b""
try:
    s.sendto(head[:n], socket.MSG_FASTOPEN, (addr, 80))
    s.settimeout(10)
    s.sendall(head[n:])
    while True:
        c = s.recv(4096)
        if not c:
            break
        reply += c
except (ConnectionResetError, BrokenPipeError) as e:
    print("reset: %s" % e)
    sys.exit(3)
except socket.timeout:
    print("timeout after %r" % reply[:80])
    sys.exit(4)
print("answered: %r" % reply.split(b"\r\n\r\n", 1)[-1][:40])
PY
}
evil_saw() { [ -f "$DF_TMP/evil-access.log" ] && grep -qF "$1" "$DF_TMP/evil-access.log"; }

for addr in 198.18.1.10 2001:db8:1::10; do
	out="$(tfo_get "$addr" 40 cookie www.allowed.test 2>&1)" || fail "control: the cookie request to $addr failed: $out"
	grep -q "allowed-page" <<<"$out" || fail "control: the cookie request to $addr got: $out"
	cookie="$(wl ip tcp_metrics show "$addr" 2>&1)"
	grep -q "fo_cookie" <<<"$cookie" || fail "control: the workload holds no Fast Open cookie for $addr: $cookie"
	ok "control: the workload holds the Fast Open cookie of $addr"
done
: >"$SYNS"

for addr in 198.18.1.10 2001:db8:1::10; do
	for n in 1 2 3; do
		out="$(tfo_get "$addr" "$n" "ok-$n" www.allowed.test 2>&1)" ||
			fail "www.allowed.test at $addr with $n bytes written by Fast Open failed: $out"
		grep -q "allowed-page" <<<"$out" || fail "www.allowed.test at $addr with $n bytes by Fast Open got: $out"
		rc=0
		out="$(tfo_get "$addr" "$n" "tfo-secret-$n" evil.test 2>&1)" || rc=$?
		[ "$rc" -eq 3 ] || fail "evil.test at $addr with $n bytes by Fast Open was not reset (exit $rc): $out"
		! evil_saw "tfo-secret-$n" || fail "evil.test's server got the request with $n bytes in the SYN at $addr"
		ok "Fast Open, $n bytes first, at $addr: www.allowed.test answered, evil.test reset"
	done
done
sleep 1
[ ! -s "$SYNS" ] || fail "SYNs with data reached the server: $(cat "$SYNS")"
ok "no SYN with data reached the server"

# Positive control: with the check off, the capture sees the SYN data.
df_config "${COMMON[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload with the check off exited $DF_CMD_RC: $DF_CMD_ERR"
out="$(tfo_get 198.18.1.10 2 off-2 www.allowed.test 2>&1)" || fail "control: Fast Open with the check off failed: $out"
df_poll 30 test -s "$SYNS" || fail "control: with the check off the capture saw no SYN with data ($out)"
ok "control: with the check off a SYN with 2 bytes reaches the server: $(head -1 "$SYNS")"
expect_dnsfence_running
