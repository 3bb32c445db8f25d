#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 11: an allowed address is a shared front end. nginx on
# 198.18.1.10:443 serves www.allowed.test and evil.test by SNI, as a CDN
# does; the workload resolved www.allowed.test through dnsfence. The name
# check lets curl (HTTP/1.1 and HTTP/2), openssl s_client and a ClientHello
# split over three segments reach www.allowed.test, and resets (and logs)
# evil.test on the same address, a connection with no SNI, and the allowed
# name a.b.allowed.test, which was never answered with 198.18.1.10. With
# the check off (a live reload) the same evil.test connection gets through
# (positive control). Each accepted flow's guard ends once the server has
# acknowledged its hello (its conntrack mark). Killed daemon: an established flow keeps working, a
# new one gets nothing (no --queue-bypass).
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

# The front end: one certificate for both names, one body per name.
df_front_end_pages
df_front_end_cert www.allowed.test evil.test a.b.allowed.test
df_start_nginx 443 \
	"ssl_certificate $DF_TMP/cert.pem;" "ssl_certificate_key $DF_TMP/key.pem;" \
	"server { listen 198.18.1.10:443 ssl http2 default_server; server_name www.allowed.test a.b.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:443 ssl http2; server_name evil.test; root $DF_TMP/www/evil; }"

sock="$DF_TMP/control.sock"
chmod 755 "$DF_TMP" # a reload reads the config as the daemon's user
conf() {
	df_config allow='["www.allowed.test", "a.b.allowed.test"]' ports='["tcp/443"]' \
		control='{"socket": "'"$sock"'", "watch": false}' "$@"
}
conf
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]' ports='["tcp/443"]' \
	control='{"socket": "'"$sock"'", "watch": false}'

as_wl() { df_wl_as $WL_UID "$@"; }
CURL=(curl -sS -k --max-time 5)

df_dig a.b.allowed.test A
expect_rcode NOERROR

# Allowed: curl HTTP/1.1 and HTTP/2, openssl s_client.
out="$(as_wl "${CURL[@]}" --http1.1 -w ' %{http_version}' https://www.allowed.test/ 2>&1)" ||
	fail "curl --http1.1 https://www.allowed.test/ failed: $out"
[ "$(echo $out)" = "allowed-page 1.1" ] || fail "curl --http1.1 got '$out'"
out="$(as_wl "${CURL[@]}" --http2 -w ' %{http_version}' https://www.allowed.test/ 2>&1)" ||
	fail "curl --http2 https://www.allowed.test/ failed: $out"
[ "$(echo $out)" = "allowed-page 2" ] || fail "curl --http2 got '$out'"
ok "allowed name through the front end: curl HTTP/1.1 and HTTP/2"
out="$(printf 'GET / HTTP/1.0\r\nHost: www.allowed.test\r\n\r\n' |
	as_wl timeout 5 openssl s_client -quiet -connect www.allowed.test:443 \
		-servername www.allowed.test 2>/dev/null)" || true
grep -q allowed-page <<<"$out" || fail "openssl s_client -servername www.allowed.test got: $out"
ok "allowed name: openssl s_client"
# Each accepted flow was guarded until the server acknowledged its hello
# (connmark 0x500000), then its next packet ended the guard (0x100000):
# the entries of the finished connections keep the mark.
marks="$(wl conntrack -L -p tcp -d 198.18.1.10 --dport 443 2>/dev/null | grep -o 'mark=[0-9]*' | sort | uniq -c)"
grep -q "mark=1048576" <<<"$marks" || fail "no accepted flow ended its guard: $marks"
! grep -q "mark=5242880" <<<"$marks" || fail "an accepted flow is still guarded after it finished: $marks"
ok "the guard of every accepted flow ended once the server acknowledged its hello"

# Three segments, each sent alone (TCP_NODELAY, a pause between).
split_hello() {
	as_wl timeout 20 "$DF_PY" - "$1" "$2" <<'EOF'
import socket, ssl, sys, time
addr, name = sys.argv[1], sys.argv[2]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
inc, outg = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = ctx.wrap_bio(inc, outg, server_hostname=name)
s = socket.create_connection((addr, 443), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
try:
    tls.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = outg.read()
third = len(hello) // 3
for part in (hello[:third], hello[third:2 * third], hello[2 * third:]):
    s.sendall(part)
    time.sleep(0.1)
try:
    reply = s.recv(5)
except (ConnectionResetError, BrokenPipeError) as e:
    print("reset: %s" % e)
    sys.exit(3)
if reply[:2] != b"\x16\x03":
    print("no ServerHello: %r" % reply)
    sys.exit(4)
print("hello of %d bytes in 3 segments: the server answered" % len(hello))
EOF
}
out="$(split_hello 198.18.1.10 www.allowed.test 2>&1)" || fail "split ClientHello for www.allowed.test: $out"
grep -q "the server answered" <<<"$out" || fail "split ClientHello got: $out"
ok "$out"

# The attacks: each one is reset (curl 35 or 56: the TLS handshake cut) and logged.
expect_reset() {
	local what=$1 rc=0
	shift
	out="$(as_wl "$@" 2>&1)" || rc=$?
	case "$rc" in
	35 | 56 | 52) ;;
	0) fail "$what got through: $out" ;;
	*) fail "$what: expected a reset, curl exited $rc: $out" ;;
	esac
}
expect_reset "evil.test through the shared front end" \
	"${CURL[@]}" --connect-to evil.test:443:198.18.1.10:443 https://evil.test/
expect_log_contains "198.18.1.10:443 from uid $WL_UID: TLS server name evil.test is not allowed"
ok "curl --connect-to evil.test:443:198.18.1.10:443: reset and logged"
out="$(printf 'GET / HTTP/1.0\r\nHost: evil.test\r\n\r\n' |
	as_wl timeout 5 openssl s_client -quiet -connect 198.18.1.10:443 -servername evil.test 2>&1)" || true
! grep -q evil-page <<<"$out" || fail "openssl s_client -servername evil.test got the evil page"
grep -qi "reset\|errno=104\|write:errno\|connect:errno" <<<"$out" || fail "s_client -servername evil.test was not reset: $out"
ok "s_client -servername evil.test: reset"
out="$(printf 'GET / HTTP/1.0\r\n\r\n' |
	as_wl timeout 5 openssl s_client -quiet -connect 198.18.1.10:443 -noservername 2>&1)" || true
! grep -q allowed-page <<<"$out" || fail "a connection without SNI got a page"
expect_log_contains "TLS server name (a connection to the bare address)"
ok "no SNI: reset and logged"
expect_reset "a.b.allowed.test (allowed, never answered with 198.18.1.10)" \
	"${CURL[@]}" --connect-to a.b.allowed.test:443:198.18.1.10:443 https://a.b.allowed.test/
expect_log_contains "TLS server name a.b.allowed.test was not answered with 198.18.1.10"
ok "allowed name B on the address answered only for A: reset (strict rule)"
out="$(split_hello 198.18.1.10 evil.test 2>&1)" && fail "split ClientHello for evil.test got through: $out"
ok "split ClientHello for evil.test: $out"

# Killed daemon: an established flow keeps working, a new one does not.
as_wl "$DF_PY" - >"$DF_TMP/held.out" 2>&1 <<'EOF' &
import socket, ssl, time
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
s = ctx.wrap_socket(socket.create_connection(("198.18.1.10", 443), timeout=5), server_hostname="www.allowed.test")
def get():
    s.sendall(b"GET / HTTP/1.1\r\nHost: www.allowed.test\r\n\r\n")
    b = b""
    while b"allowed-page" not in b:
        c = s.recv(65536)
        if not c:
            break
        b += c
    return b"allowed-page" in b
print("before", get(), flush=True)
time.sleep(4)  # the daemon is killed meanwhile
print("after", get(), flush=True)
EOF
held=$!
DF_PIDS+=("$held")
df_poll 50 grep -q "before True" "$DF_TMP/held.out" || fail "established connection not set up: $(cat "$DF_TMP/held.out")"
kill -KILL "$DF_DNSFENCE_PID"
wait "$DF_DNSFENCE_PID" 2>/dev/null || true
DF_DNSFENCE_PID=""
wait "$held" || fail "established connection after the kill: $(cat "$DF_TMP/held.out")"
grep -q "after True" "$DF_TMP/held.out" || fail "established connection broke when the daemon died: $(cat "$DF_TMP/held.out")"
ok "daemon killed: the established flow keeps working"
rc=0
out="$(as_wl curl -sS -k --max-time 3 --connect-to www.allowed.test:443:198.18.1.10:443 https://www.allowed.test/ 2>&1)" || rc=$?
[ "$rc" -ne 0 ] || fail "a new flow was accepted with no daemon to check it: $out"
ok "daemon killed: a new flow gets nothing (curl exit $rc)"

# Positive control: the same evil.test connection without the check.
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]' ports='["tcp/443"]' \
	control='{"socket": "'"$sock"'", "watch": false}'
df_dig www.allowed.test A
expect_rcode NOERROR
conf name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
out="$(as_wl "${CURL[@]}" --connect-to evil.test:443:198.18.1.10:443 https://evil.test/ 2>&1)" ||
	fail "control: with the check off, evil.test did not connect: $out"
[ "$out" = "evil-page" ] || fail "control: with the check off got '$out'"
ok "control: with name_check off the same client reaches evil.test through the front end"
conf
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
expect_reset "evil.test after turning the check back on by reload" \
	"${CURL[@]}" --connect-to evil.test:443:198.18.1.10:443 https://evil.test/
ok "reload back to enforce: evil.test reset again"
