#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 45 item 5: one uid cannot starve everyone's name check. Each flow
# being read holds a packet in the queue (4096 in the kernel, no bypass),
# so 6000 new flows from uid 4243 that each send a TLS record header and
# wait filled it, and every other user's first bytes waited behind them.
# Now a subject (uid) holds at most its share of the pending flows and
# opens them at a bounded rate: the rest of its new flows are refused
# unread (reset), counted (flow_shed_pending / flow_shed_rate, the
# metric dnsfence_namecheck_shed_total) and logged for that uid only.
# While the flood holds its sockets, uid 4242's ten TLS handshakes to
# www.allowed.test through nginx all complete (completion asserted, no
# time), and its flows are never shed; the flood's excess was reset.
# Control: the same handshakes complete without the flood first.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
FLOOD_UID=4243
FLOWS=6000
df_setup

chmod 755 "$DF_TMP" # the workload uids run the scripts from here
F="$DF_TMP/flood_flows.py"
install -m 644 "$DF_E2E_DIR/flood_flows.py" "$F"

df_front_end_pages
df_front_end_cert www.allowed.test
df_start_nginx 443 \
	"ssl_certificate $DF_TMP/cert.pem;" "ssl_certificate_key $DF_TMP/key.pem;" \
	"server { listen 198.18.1.10:443 ssl default_server; server_name www.allowed.test; root $DF_TMP/www/allowed; }"
# The flood's target: a.b.allowed.test (198.18.1.11), a sink that accepts
# and reads, so its flows are established and their bytes queued.
ip netns exec "$DF_UP" "$DF_PY" "$F" sink 198.18.1.11 443 >>"$DF_TMP/sink.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 sh -c "ip netns exec $DF_UP ss -Htln 'sport = :443' | grep -q 198.18.1.11" ||
	fail "the sink did not start"

df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]' ports='["tcp/443"]'
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig a.b.allowed.test A
expect_rcode NOERROR

# handshakes N: N TLS handshakes (and a GET) of uid 4242 to
# www.allowed.test; prints how many got the allowed page.
handshakes() {
	local i good=0 out
	for i in $(seq 1 "$1"); do
		out="$(df_wl_as $WL_UID curl -sS -k --max-time 20 https://www.allowed.test/ 2>&1)" || true
		[ "$out" = "allowed-page" ] && good=$((good + 1))
	done
	echo "$good"
}

[ "$(handshakes 5)" -eq 5 ] || fail "control: uid $WL_UID's handshakes failed without a flood"
ok "control: uid $WL_UID's TLS handshakes complete without the flood"

df_wl_as $FLOOD_UID "$DF_PY" "$F" flood 198.18.1.11 443 $FLOWS 15 >"$DF_TMP/flood.out" 2>&1 &
flood=$!
DF_PIDS+=("$flood")
df_poll 200 grep -q ready "$DF_TMP/flood.out" || fail "the flood did not start: $(cat "$DF_TMP/flood.out")"
shed=$(($(df_status_value counters.flow_shed_pending) + $(df_status_value counters.flow_shed_rate)))
[ "$shed" -gt 0 ] || fail "the flood of $FLOWS flows from uid $FLOOD_UID shed nothing"
expect_log_contains "uid $FLOOD_UID: new flows refused unread"
ok "uid $FLOOD_UID's flood: $shed new flows refused unread, counted and logged"

good=$(handshakes 10)
kill -0 "$flood" 2>/dev/null || fail "the flood ended before the handshakes did: $(cat "$DF_TMP/flood.out")"
[ "$good" -eq 10 ] || fail "during uid $FLOOD_UID's flood only $good of uid $WL_UID's 10 handshakes completed"
! grep -q "uid $WL_UID: new flows refused" "$DF_DNSFENCE_LOG" ||
	fail "uid $WL_UID's flows were shed: $(grep "uid $WL_UID: new flows refused" "$DF_DNSFENCE_LOG")"
ok "during the flood, uid $WL_UID's 10 TLS handshakes all complete, none of its flows shed"

wait "$flood" || fail "the flood failed: $(cat "$DF_TMP/flood.out")"
read -r _ connected _ sent _ reset < <(tail -n 1 "$DF_TMP/flood.out")
[ "$reset" -gt 0 ] || fail "none of the flood's $sent flows was reset ($(cat "$DF_TMP/flood.out"))"
ok "the flood's excess was reset ($(tail -n 1 "$DF_TMP/flood.out"))"
