#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The name check reads what the server reads: a ClientHello with two
# server_name extensions after 58 unknown ones (past the 64 extension
# types the reader used to remember). A front end
# that routes by the first server_name (tls_lab.py route, as SNI proxies
# do, on 198.18.1.10:443 and [2001:db8:1::10]:443) logs the name it
# routes by. With the check on, the hello naming evil.test first and
# www.allowed.test last is reset before the front end reads a byte, IPv4
# and IPv6, and so is the same with 10 extensions between. Controls: a
# real ClientHello for www.allowed.test reaches the front end on both;
# with the check off (a live reload) the front end routes the duplicate
# by evil.test.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

chmod 755 "$DF_TMP" # the daemon (its user) reads the config again at reload
df_tls_lab route 443 198.18.1.10 2001:db8:1::10

sock="$DF_TMP/control.sock"
COMMON=(allow='["www.allowed.test"]' ports='["tcp/443"]' control='{"socket": "'"$sock"'", "watch": false}')
df_start_dnsfence "${COMMON[@]}"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR

lab() { df_wl_as $WL_UID timeout 20 "$DF_PY" "$TLS_LAB" "$@"; }
routed() { grep -qx "route $1" "$SRV_LOG"; }

for addr in 198.18.1.10 2001:db8:1::10; do
	: >"$SRV_LOG"
	out="$(lab hello "$addr" 443 www.allowed.test 2>&1)" || fail "control: hello for www.allowed.test at $addr: $out"
	df_poll 30 routed www.allowed.test || fail "control: the front end did not route www.allowed.test at $addr: $(cat "$SRV_LOG")"
	ok "control: a real ClientHello for www.allowed.test reaches the front end at $addr"
done

for addr in 198.18.1.10 2001:db8:1::10; do
	for dummies in 58 10; do
		: >"$SRV_LOG"
		rc=0
		out="$(lab dupsni "$addr" 443 evil.test www.allowed.test "$dummies" 2>&1)" || rc=$?
		sleep 0.5
		! routed evil.test ||
			fail "two server_names with $dummies extensions between got out at $addr: the front end routed by evil.test"
		[ ! -s "$SRV_LOG" ] || fail "the front end read the duplicate at $addr: $(cat "$SRV_LOG")"
		[ "$rc" -eq 3 ] || fail "the duplicate ($dummies between) at $addr was not reset (exit $rc): $out"
		ok "server_name evil.test, $dummies extensions, server_name www.allowed.test at $addr: reset"
	done
done

# Positive control: with the check off, the front end routes by evil.test.
df_config "${COMMON[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload with the check off exited $DF_CMD_RC: $DF_CMD_ERR"
: >"$SRV_LOG"
out="$(lab dupsni 198.18.1.10 443 evil.test www.allowed.test 58 2>&1)" || true
df_poll 30 routed evil.test || fail "control: with the check off the front end did not route by evil.test ($out): $(cat "$SRV_LOG")"
ok "control: with the check off the duplicate is routed by evil.test"
expect_dnsfence_running
