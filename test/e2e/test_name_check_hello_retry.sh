#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The name check reads the client's whole plaintext handshake: a TLS 1.3
# HelloRetryRequest. A first ClientHello names www.allowed.test and
# offers no key share, so the server (Python's ssl, on 198.18.1.10:443
# and [2001:db8:1::10]:443, logging every server name its servername
# callback reads) answers with a HelloRetryRequest; the client then sends
# a ChangeCipherSpec and a second ClientHello naming evil.test, which
# OpenSSL accepts. With the check on, the second hello is refused (reset)
# and the server never reads evil.test, IPv4 and IPv6. Controls: the same
# sequence with the same name in both hellos is answered with a
# ServerHello; a plain handshake completes; with the check off (a live
# reload) the server reads evil.test from the second hello.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

df_front_end_cert www.allowed.test evil.test
chmod 755 "$DF_TMP" # the daemon (its user) reads the config again at reload
df_tls_lab serve "$DF_TMP/cert.pem" "$DF_TMP/key.pem" 443 198.18.1.10 2001:db8:1::10

sock="$DF_TMP/control.sock"
COMMON=(allow='["www.allowed.test"]' ports='["tcp/443"]' control='{"socket": "'"$sock"'", "watch": false}')
df_start_dnsfence "${COMMON[@]}"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR

lab() { df_wl_as $WL_UID timeout 20 "$DF_PY" "$TLS_LAB" "$@"; }
server_reads() { [ "$(grep -cx "sni $1" "$SRV_LOG")" -ge "$2" ]; }

for addr in 198.18.1.10 2001:db8:1::10; do
	out="$(lab get "$addr" 443 www.allowed.test 2>&1)" || fail "control: www.allowed.test at $addr: $out"
	[ "$out" = "page www.allowed.test" ] || fail "control: www.allowed.test at $addr got '$out'"
	: >"$SRV_LOG"
	out="$(lab hrr "$addr" 443 www.allowed.test www.allowed.test 2>&1)" ||
		fail "control: HelloRetryRequest with the same name at $addr: $out"
	grep -q "answered b'\\\\x16\\\\x03\\\\x03" <<<"$out" || fail "control: the second hello at $addr got no ServerHello: $out"
	df_poll 30 server_reads www.allowed.test 2 || fail "control: the server did not read both hellos at $addr: $(cat "$SRV_LOG")"
	ok "control: at $addr a plain handshake completes, and a HelloRetryRequest with the same name is answered"
done

for addr in 198.18.1.10 2001:db8:1::10; do
	: >"$SRV_LOG"
	rc=0
	out="$(lab hrr "$addr" 443 www.allowed.test evil.test 2>&1)" || rc=$?
	sleep 0.5
	! grep -qx "sni evil.test" "$SRV_LOG" ||
		fail "the second ClientHello got out at $addr: the server read server_name evil.test (client: $out)"
	server_reads www.allowed.test 1 || fail "the first hello at $addr never reached the server: $(cat "$SRV_LOG")"
	[ "$rc" -eq 3 ] || fail "the second hello for evil.test at $addr was not reset (exit $rc): $out"
	ok "HelloRetryRequest, then a ClientHello for evil.test at $addr: reset, the server never read it"
done
expect_log_contains "a second TLS ClientHello names another server than the first"

# Positive control: with the check off, the server reads evil.test.
df_config "${COMMON[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload with the check off exited $DF_CMD_RC: $DF_CMD_ERR"
: >"$SRV_LOG"
out="$(lab hrr 198.18.1.10 443 www.allowed.test evil.test 2>&1)" || true
df_poll 30 server_reads evil.test 1 ||
	fail "control: with the check off the server did not read evil.test from the second hello ($out): $(cat "$SRV_LOG")"
ok "control: with the check off the server reads server_name evil.test from the second hello"
expect_dnsfence_running
