#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A slow but legitimate ClientHello is read to its end: the name check's
# deadline is 5 s since the flow's last new byte, and 30 s in all
# (docs/firewall.md). A real TLS client writes its
# ClientHello for www.allowed.test in six segments 1.5 s apart (7.5 s in
# all) to a real server (Python's ssl, logging the server names it reads,
# on 198.18.1.10:443 and [2001:db8:1::10]:443): the handshake completes
# and the page comes back, IPv4 and IPv6. Controls: the same slow hello
# for evil.test (not allowed) is reset and the server never reads it; a
# hello that goes silent halfway for 8 s (past the 5 s idle bound) is
# reset and logged. The four run side by side.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

df_front_end_cert www.allowed.test evil.test
df_tls_lab serve "$DF_TMP/cert.pem" "$DF_TMP/key.pem" 443 198.18.1.10 2001:db8:1::10

df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443"]'
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR

lab() { df_wl_as $WL_UID timeout 40 "$DF_PY" "$TLS_LAB" "$@"; }
# Until the verdict the server acknowledges nothing, so the client's
# stack backs off its retransmission timer and, once it fired, sends
# new bytes only as that timer fires again. A connection's closing
# caches its RTT for the destination: the next one would start from the
# last slow flow's inflated RTT (about 0.3 s, rttvar 0.6 s) and its
# timer back off past 5 s, so the four slow hellos start together, from a
# fresh cache, each writing its exit status and output to
# $DF_TMP/slow-TAG.
slow() {
	local tag=$1 rc=0
	shift
	lab slow "$@" >"$DF_TMP/slow-$tag.out" 2>&1 || rc=$?
	echo "$rc" >"$DF_TMP/slow-$tag.rc"
}
wl ip tcp_metrics flush all || fail "cannot flush the workload's TCP metrics"
pids=()
slow v4 198.18.1.10 443 www.allowed.test 6 1.5 &
pids+=("$!")
slow v6 2001:db8:1::10 443 www.allowed.test 6 1.5 &
pids+=("$!")
slow evil 198.18.1.10 443 evil.test 6 1.5 &
pids+=("$!")
slow silent 198.18.1.10 443 www.allowed.test 2 8 &
pids+=("$!")
DF_PIDS+=("${pids[@]}")
wait "${pids[@]}"
# result TAG: "RC OUTPUT" of one slow hello.
result() { printf '%s %s' "$(cat "$DF_TMP/slow-$1.rc")" "$(cat "$DF_TMP/slow-$1.out")"; }

for tag in v4 v6; do
	[ "$(result $tag)" = "0 page www.allowed.test" ] ||
		fail "a ClientHello for www.allowed.test in six segments 1.5 s apart ($tag) got '$(result $tag)'"
	ok "a ClientHello in six segments 1.5 s apart ($tag): the handshake completes"
done

[ "$(cat "$DF_TMP/slow-evil.rc")" -eq 3 ] || fail "control: the slow hello for evil.test was not reset: $(result evil)"
! grep -qx "sni evil.test" "$SRV_LOG" || fail "control: the server read server_name evil.test"
expect_log_contains "TLS server name evil.test is not allowed"
ok "control: the same slow hello for evil.test is reset, the server never reads it"

[ "$(cat "$DF_TMP/slow-silent.rc")" -eq 3 ] || fail "control: a hello silent for 8 s halfway was not reset: $(result silent)"
expect_log_contains "no complete TLS server name in time (5 s without a new byte)"
ok "control: a hello silent for 8 s halfway is reset and logged"

expect_dnsfence_running
