#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The name check reads what the server reads: TCP urgent data. A byte
# sent with MSG_OOB is dropped from the stream by the receiving socket
# (the default everywhere), so a copy of the stream that keeps it reads
# other bytes than the server. The polyglot (tls_lab.py urgent) reads
# server_name www.allowed.test with the urgent byte kept and evil.test
# without it. A TLS server on 198.18.1.10:443 and [2001:db8:1::10]:443
# (Python's ssl) logs every server name its servername callback reads.
# With the check on, a flow sending any urgent segment before its verdict
# is reset and the server reads no name from it, IPv4 and IPv6. Controls:
# the allowed name's handshake completes on both; with the check off (a
# live reload) the server reads evil.test from the same polyglot.
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
server_read() { grep -qx "$1" "$SRV_LOG"; }

for addr in 198.18.1.10 2001:db8:1::10; do
	out="$(lab get "$addr" 443 www.allowed.test 2>&1)" || fail "control: www.allowed.test at $addr: $out"
	[ "$out" = "page www.allowed.test" ] || fail "control: www.allowed.test at $addr got '$out'"
	ok "control: the allowed name's handshake completes at $addr"
done

for addr in 198.18.1.10 2001:db8:1::10; do
	: >"$SRV_LOG"
	rc=0
	out="$(lab urgent "$addr" 443 www.allowed.test evil.test 2>&1)" || rc=$?
	sleep 1
	! server_read "sni evil.test" ||
		fail "the urgent-byte polyglot at $addr got out: the server read server_name evil.test (client: $out)"
	! grep -q '^sni' "$SRV_LOG" || fail "the server read a ClientHello from the urgent flow at $addr: $(cat "$SRV_LOG")"
	[ "$rc" -eq 3 ] || fail "the urgent flow at $addr was not reset (exit $rc): $out"
	ok "urgent byte in the first flight at $addr: reset, the server read no name"
done
expect_log_contains "urgent data"

# Positive control: with the check off, the server reads the hidden name.
df_config "${COMMON[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload with the check off exited $DF_CMD_RC: $DF_CMD_ERR"
: >"$SRV_LOG"
out="$(lab urgent 198.18.1.10 443 www.allowed.test evil.test 2>&1)" || true
df_poll 30 server_read "sni evil.test" ||
	fail "control: with the check off the server did not read evil.test from the polyglot ($out): $(cat "$SRV_LOG")"
ok "control: with the check off the server reads server_name evil.test from the polyglot"
expect_dnsfence_running
