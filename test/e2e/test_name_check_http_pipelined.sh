#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The name check reads every request head of the first flight on an HTTP
# port: nginx on 198.18.1.10:80 and [2001:db8:1::10]:80 serves
# www.allowed.test and evil.test by Host, per request (a shared front
# end). Two requests written at once (pipelined), the first for
# www.allowed.test and the second for evil.test, are reset, and evil.test's
# server block never logs the second, IPv4 and IPv6. Controls: two
# pipelined requests for www.allowed.test are both answered; with the
# check off (a live reload) the second request reaches evil.test.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

df_front_end_pages
df_start_nginx 80 \
	"server { listen 198.18.1.10:80 default_server; listen [2001:db8:1::10]:80 default_server; server_name www.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:80; listen [2001:db8:1::10]:80; server_name evil.test; root $DF_TMP/www/evil; access_log $DF_TMP/evil-access.log; }"

sock="$DF_TMP/control.sock"
chmod 755 "$DF_TMP"
COMMON=(allow='["www.allowed.test"]' ports='["tcp/80"]' control='{"socket": "'"$sock"'", "watch": false}')
df_start_dnsfence "${COMMON[@]}"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR

# pipelined ADDR SECRET HOST2: GET for www.allowed.test, then GET /?SECRET
# for HOST2 (Connection: close), in one write. Prints how many responses
# came back; exit 3 on a reset.
pipelined() {
	df_wl_as $WL_UID timeout 20 "$DF_PY" - "$@" <<'PY'
import socket, sys
addr, secret, host2 = sys.argv[1:4]
two = (b"GET /?first HTTP/1.1\r\nHost: www.allowed.test\r\n\r\n" +
       ("GET /?%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (secret, host2)).encode())
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(10)
reply = b""
try:
    s.connect((addr, 80))
    s.sendall(two)
    while True:
        c = s.recv(4096)
        if not c:
            break
        reply += c
except (ConnectionResetError, BrokenPipeError) as e:
    print("reset: %s" % e)
    sys.exit(3)
print("responses %d: %s" % (reply.count(b"HTTP/1.1 200"), b" ".join(l for l in reply.split(b"\n") if l.endswith(b"-page")).decode()))
PY
}
evil_saw() { [ -f "$DF_TMP/evil-access.log" ] && grep -qF "$1" "$DF_TMP/evil-access.log"; }

for addr in 198.18.1.10 2001:db8:1::10; do
	out="$(pipelined "$addr" twin www.allowed.test 2>&1)" || fail "control: two pipelined requests for www.allowed.test at $addr: $out"
	[ "$out" = "responses 2: allowed-page allowed-page" ] || fail "control: two pipelined requests at $addr got: $out"
	ok "control: two pipelined requests for www.allowed.test at $addr are both answered"
	rc=0
	out="$(pipelined "$addr" "pipe-secret-$$" evil.test 2>&1)" || rc=$?
	sleep 0.5
	! evil_saw "pipe-secret-$$" || fail "the pipelined request for evil.test at $addr reached its server block (client: $out)"
	[ "$rc" -eq 3 ] || fail "the pipelined request for evil.test at $addr was not reset (exit $rc): $out"
	ok "a pipelined second request for evil.test at $addr: reset, never served"
done
expect_log_contains "a second HTTP request in the first flight names another host than the first"

# Positive control: with the check off, the second request reaches evil.test.
df_config "${COMMON[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload with the check off exited $DF_CMD_RC: $DF_CMD_ERR"
out="$(pipelined 198.18.1.10 off-secret evil.test 2>&1)" || fail "control: pipelined with the check off: $out"
df_poll 30 evil_saw off-secret || fail "control: with the check off evil.test's server block never logged the second request ($out)"
ok "control: with the check off the pipelined request reaches evil.test ($out)"
expect_dnsfence_running
