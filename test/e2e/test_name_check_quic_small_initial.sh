#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 41 item 3: the QUIC check reads what the server reads. A server
# discards a client Initial in a datagram under 1200 bytes (RFC 9000
# 14.1), so such a datagram decides nothing: a 224-byte Initial naming
# www.allowed.test, then a 1200-byte Initial under the same DCID naming
# evil.test, must not let the server read evil.test (it did: the small one
# was judged, the recheck passed the same DCID). And once a connection is
# judged, a later Initial under its DCID whose CRYPTO bytes at offset 0
# differ from the judged ones is dropped. The listener reads the datagrams
# as a server does (quic_initial.py listen: under 1200 bytes discarded,
# Initials opened, the ClientHellos' server names recorded). Controls:
# the same small-then-full sequence naming www.allowed.test reaches the
# server, which reads www.allowed.test; the judged Initial sent again
# unchanged passes; with name_check off the attack reaches the server.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

chmod 755 "$DF_TMP" # the daemon (its user) reads the config again at reload
df_quic_lab

sock="$DF_TMP/control.sock"
ARGS=(allow='["www.allowed.test"]' ports='["tcp/443", "udp/443"]'
	control='{"socket": "'"$sock"'", "watch": false}')
df_start_dnsfence "${ARGS[@]}"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR

# Control: small then full, both naming the allowed name.
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 5c5c5c5c5c5c5c5c --size 224 --then initial:www.allowed.test:5c5c5c5c5c5c5c5c
df_quic_expect_read 5c5c5c5c5c5c5c5c www.allowed.test "control: small then full Initial of the allowed name"
ok "control: a 224-byte Initial then the same DCID's full Initial of www.allowed.test: the server reads it"

df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 5a5a5a5a5a5a5a5a --size 224 --then initial:evil.test:5a5a5a5a5a5a5a5a
df_quic_expect_not_read 5a5a5a5a5a5a5a5a evil.test "a 224-byte allowed Initial, then a full one naming evil.test"
expect_log_contains "198.18.1.10:443 from uid $WL_UID: QUIC server name evil.test is not allowed"
ok "a 224-byte Initial of www.allowed.test decides nothing: the full Initial naming evil.test is refused"
df_quic_send $WL_UID 2001:db8:1::10 443 www.allowed.test 5b5b5b5b5b5b5b5b --size 224 --then initial:evil.test:5b5b5b5b5b5b5b5b
df_quic_expect_not_read 5b5b5b5b5b5b5b5b evil.test "IPv6: a 224-byte allowed Initial, then a full one naming evil.test"
ok "IPv6: the same, refused"

# After a verdict: the same DCID's CRYPTO at offset 0 must be what was judged.
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 5d5d5d5d5d5d5d5d --then again
df_poll 20 sh -c "[ \$(awk '\$1 == \"5d5d5d5d5d5d5d5d\" { n++ } END { print n + 0 }' $ARR) -ge 2 ]" ||
	fail "control: the judged Initial sent again did not arrive ($(df_quic_arrived 5d5d5d5d5d5d5d5d) of 2)"
ok "control: the judged Initial sent again unchanged passes"
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 5e5e5e5e5e5e5e5e --then initial:evil.test:5e5e5e5e5e5e5e5e
df_quic_expect_read 5e5e5e5e5e5e5e5e www.allowed.test "the judged Initial"
sleep 1
[ "$(df_quic_arrived 5e5e5e5e5e5e5e5e)" -eq 1 ] ||
	fail "a same-DCID Initial naming evil.test after the verdict arrived ($(df_quic_arrived 5e5e5e5e5e5e5e5e) datagrams)"
ok "after the verdict, a same-DCID Initial whose CRYPTO differs from the judged bytes is dropped"
df_quic_send $WL_UID 2001:db8:1::10 443 www.allowed.test 5f5f5f5f5f5f5f5f --then initial:evil.test:5f5f5f5f5f5f5f5f
df_quic_expect_read 5f5f5f5f5f5f5f5f www.allowed.test "IPv6: the judged Initial"
sleep 1
[ "$(df_quic_arrived 5f5f5f5f5f5f5f5f)" -eq 1 ] ||
	fail "IPv6: a same-DCID Initial naming evil.test after the verdict arrived"
ok "IPv6: the same, dropped"

# Positive control: the attack reaches the server with the check off.
df_config "${ARGS[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 6a6a6a6a6a6a6a6a --size 224 --then initial:evil.test:6a6a6a6a6a6a6a6a
df_quic_expect_read 6a6a6a6a6a6a6a6a evil.test "control: with name_check off, the small-then-full attack"
ok "control: with name_check off the server reads evil.test from the same sequence"
