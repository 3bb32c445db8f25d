#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 11 for QUIC: a UDP listener on 198.18.1.10:443 (www.allowed.test's
# address, a shared front end) records the DCID of every Initial that
# reaches it. Real QUIC v1 client Initials (quic_initial.py, RFC 9001
# protection with python3-cryptography) carrying a TLS 1.3 ClientHello:
# www.allowed.test arrives, in one datagram and split over two Initials
# with shuffled CRYPTO frames (a post-quantum key share); evil.test to the
# same address does not, and is logged; a first packet that is no Initial
# does not arrive; on a flow let through, a second connection's Initial
# (new DCID) naming evil.test does not arrive while the flow's own packets
# keep flowing. IPv6 likewise. Killed daemon: an accepted flow keeps
# flowing, a new one gets nothing. With name_check off (a live reload) the
# evil.test Initial arrives (positive control). A udp port of `ports`
# outside quic_ports (udp/4000) is named at start as address-only.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

Q="$(df_share quic_initial.py)"
ARR="$DF_TMP/quic-arrived.txt"
: >"$ARR"
ip netns exec "$DF_UP" "$DF_PY" "$Q" listen 443 "$ARR" >>"$DF_TMP/quic-listener.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 sh -c "ip netns exec $DF_UP ss -Huln 'sport = :443' | grep -q ." ||
	fail "the QUIC listener did not start"

sock="$DF_TMP/control.sock"
chmod 755 "$DF_TMP" # a reload reads the config as the daemon's user
ARGS=(allow='["www.allowed.test"]' ports='["tcp/443", "udp/443", "udp/4000"]'
	control='{"socket": "'"$sock"'", "watch": false}')
df_start_dnsfence "${ARGS[@]}"
as_wl() { df_wl_as $WL_UID "$@"; }
expect_log_contains "udp/4000: address-only"
ok "a udp port of ports outside quic_ports: said at start to be address-only"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR

# arrived DCID: how many datagrams under DCID reached the listener.
arrived() { awk -v d="$1" '$1 == d { n++ } END { print n + 0 }' "$ARR"; }
send() { as_wl "$DF_PY" "$Q" send "$@" >/dev/null || fail "quic_initial.py send $*: failed"; }
# expect_arrives DCID N: N datagrams under DCID arrive (waits 2 s).
expect_arrives() {
	df_poll 20 sh -c "[ \"\$(awk -v d=$1 '\$1 == d { n++ } END { print n + 0 }' $ARR)\" -ge $2 ]" ||
		fail "$3: $(arrived "$1") of $2 datagrams under DCID $1 arrived"
}
# expect_none DCID: none arrived (after the 1 s a verdict would take).
expect_none() {
	sleep 1
	[ "$(arrived "$1")" -eq 0 ] || fail "$2: $(arrived "$1") datagrams under DCID $1 arrived"
}

send 198.18.1.10 443 www.allowed.test a1a1a1a1a1a1a1a1
expect_arrives a1a1a1a1a1a1a1a1 1 "allowed name in one Initial"
ok "www.allowed.test in one Initial reaches the front end"
send 198.18.1.10 443 www.allowed.test a2a2a2a2a2a2a2a2 --split
expect_arrives a2a2a2a2a2a2a2a2 2 "allowed name split over two Initials"
ok "www.allowed.test split over two Initials (shuffled CRYPTO frames) arrives whole"
send 2001:db8:1::10 443 www.allowed.test a6a6a6a6a6a6a6a6 --split
expect_arrives a6a6a6a6a6a6a6a6 2 "allowed name over IPv6"
ok "IPv6: www.allowed.test split over two Initials arrives"

send 198.18.1.10 443 evil.test e1e1e1e1e1e1e1e1
expect_none e1e1e1e1e1e1e1e1 "evil.test through the shared front end"
expect_log_contains "198.18.1.10:443 from uid $WL_UID: QUIC server name evil.test is not allowed"
ok "evil.test to the same address: dropped and logged"
send 198.18.1.10 443 evil.test e2e2e2e2e2e2e2e2 --split
expect_none e2e2e2e2e2e2e2e2 "evil.test split over two Initials"
ok "evil.test split over two Initials: dropped"
send 2001:db8:1::10 443 evil.test e6e6e6e6e6e6e6e6
expect_none e6e6e6e6e6e6e6e6 "evil.test over IPv6"
ok "IPv6: evil.test dropped"

shorts=$(arrived short)
as_wl "$DF_PY" "$Q" short 198.18.1.10 443 >/dev/null || fail "short packet not sent"
sleep 1
[ "$(arrived short)" -eq "$shorts" ] || fail "a first packet that is no Initial arrived"
expect_log_contains "first packet is not a readable QUIC version 1 Initial"
ok "a flow whose first packet is no Initial: dropped and logged"

# One socket: allowed connection, then its own later packet (arrives), then
# a second connection's Initial for evil.test (does not).
send 198.18.1.10 443 www.allowed.test b1b1b1b1b1b1b1b1 --then short --then initial:evil.test:b2b2b2b2b2b2b2b2
expect_arrives b1b1b1b1b1b1b1b1 1 "allowed connection before the second one"
df_poll 20 sh -c "[ \$(awk '\$1 == \"short\" { n++ } END { print n + 0 }' $ARR) -gt $shorts ]" ||
	fail "the accepted flow's later packet did not arrive"
expect_none b2b2b2b2b2b2b2b2 "a second connection's Initial for evil.test on an accepted flow"
expect_log_contains "QUIC server name evil.test is not allowed"
ok "accepted flow: its own packets pass, a new connection for evil.test on the same four-tuple does not"
send 198.18.1.10 443 www.allowed.test c1c1c1c1c1c1c1c1 --then initial:www.allowed.test:c2c2c2c2c2c2c2c2
expect_arrives c2c2c2c2c2c2c2c2 1 "a second connection for the allowed name"
ok "accepted flow: a new connection for the allowed name passes the recheck"

# Killed daemon: an accepted flow keeps flowing (its short-header packets
# never leave the kernel), a new flow gets nothing (no --queue-bypass).
shorts=$(arrived short)
as_wl "$DF_PY" "$Q" send 198.18.1.10 443 www.allowed.test d1d1d1d1d1d1d1d1 \
	--then sleep:3 --then short >"$DF_TMP/held.out" 2>&1 &
held=$!
DF_PIDS+=("$held")
expect_arrives d1d1d1d1d1d1d1d1 1 "allowed connection before the kill"
kill -KILL "$DF_DNSFENCE_PID"
wait "$DF_DNSFENCE_PID" 2>/dev/null || :
DF_DNSFENCE_PID=""
wait "$held" || fail "the held flow's sender failed: $(cat "$DF_TMP/held.out")"
df_poll 20 sh -c "[ \$(awk '\$1 == \"short\" { n++ } END { print n + 0 }' $ARR) -gt $shorts ]" ||
	fail "an accepted flow's packet did not arrive after the daemon died"
ok "daemon killed: the accepted flow keeps flowing"
send 198.18.1.10 443 www.allowed.test d2d2d2d2d2d2d2d2
expect_none d2d2d2d2d2d2d2d2 "a new flow with no daemon to check it"
ok "daemon killed: a new QUIC flow gets nothing"

# Positive control: the same evil.test Initial with the check off.
df_start_dnsfence "${ARGS[@]}"
df_dig www.allowed.test A
expect_rcode NOERROR
df_config "${ARGS[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
send 198.18.1.10 443 evil.test f1f1f1f1f1f1f1f1
expect_arrives f1f1f1f1f1f1f1f1 1 "control: with name_check off, evil.test"
ok "control: with name_check off the same evil.test Initial reaches the front end"
