#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 45 item 3: the recheck reads every client Initial of a datagram,
# as the server does. On a flow let through (www.allowed.test), one
# 1200-byte datagram holding an Initial under a new DCID whose AEAD tag is
# broken, then a valid Initial under the same DCID naming evil.test: the
# server drops the first and reads the second (RFC 9000 12.2), so the
# check must too (it stopped at the first, took it for a later packet of
# a connection the server chose, and passed the datagram). And every
# Initial of a connection is read: the second ClientHello, as a client
# sends it after a HelloRetryRequest (under the server's DCID, protected
# with the first DCID's keys, its CRYPTO after the first hello's), must
# name the server the first named. The listener reads the datagrams as a
# server does (quic_initial.py listen). Controls: the same datagrams
# naming www.allowed.test reach the server, which reads that name; with
# name_check off the server reads evil.test from both. The refusal's JSON
# line names evil.test.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

chmod 755 "$DF_TMP" # the daemon (its user) reads the config again at reload
df_quic_lab

sock="$DF_TMP/control.sock"
ARGS=(allow='["www.allowed.test"]' ports='["tcp/443", "udp/443"]'
	control='{"socket": "'"$sock"'", "watch": false}' log='{"format": "json"}')
df_start_dnsfence "${ARGS[@]}"
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR

# Coalesced: a broken Initial, then a valid one, under one new DCID.
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 7a7a7a7a7a7a7a7a --then coalesced:www.allowed.test:7b7b7b7b7b7b7b7b
df_quic_expect_read 7a7a7a7a7a7a7a7a www.allowed.test "the flow's first connection"
df_quic_expect_read 7b7b7b7b7b7b7b7b www.allowed.test "control: broken then valid Initial of www.allowed.test"
ok "control: on an accepted flow, a broken Initial then a valid one naming www.allowed.test: the server reads it"
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 7c7c7c7c7c7c7c7c --then coalesced:evil.test:7d7d7d7d7d7d7d7d
df_quic_expect_read 7c7c7c7c7c7c7c7c www.allowed.test "the flow's first connection"
df_quic_expect_not_read 7d7d7d7d7d7d7d7d evil.test "a broken Initial then a valid one naming evil.test under a new DCID"
expect_log_contains "198.18.1.10:443 from uid $WL_UID: QUIC server name evil.test is not allowed"
ok "on an accepted flow, a broken Initial then a valid one naming evil.test in one datagram: refused"
df_quic_send $WL_UID 2001:db8:1::10 443 www.allowed.test 7e7e7e7e7e7e7e7e --then coalesced:evil.test:7f7f7f7f7f7f7f7f
df_quic_expect_read 7e7e7e7e7e7e7e7e www.allowed.test "IPv6: the flow's first connection"
df_quic_expect_not_read 7f7f7f7f7f7f7f7f evil.test "IPv6: a broken Initial then a valid one naming evil.test"
ok "IPv6: the same, refused"

# The second ClientHello (after a HelloRetryRequest) is read.
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 8a8a8a8a8a8a8a8a --then hrr:www.allowed.test:8b8b8b8b8b8b8b8b
df_quic_expect_read 8b8b8b8b8b8b8b8b www.allowed.test "control: a second ClientHello naming www.allowed.test"
ok "control: a second ClientHello of the connection naming the same server reaches the server"
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 8c8c8c8c8c8c8c8c --then hrr:evil.test:8d8d8d8d8d8d8d8d
df_quic_expect_read 8c8c8c8c8c8c8c8c www.allowed.test "the connection's first ClientHello"
df_quic_expect_not_read 8d8d8d8d8d8d8d8d evil.test "a second ClientHello naming evil.test"
expect_log_contains "a second QUIC ClientHello names evil.test, the connection was let through for www.allowed.test"
# The JSON line names the server the refused hello asks for, as the
# first Initial's refusal does (it had no name field).
"$DF_PY" - "$DF_DNSFENCE_LOG" <<'PYEOF' || fail "the second ClientHello's refusal does not carry name evil.test: $(grep -a 'second QUIC' "$DF_DNSFENCE_LOG" | head -1)"
import json, sys
for line in open(sys.argv[1], errors="replace"):
    e = json.loads(line)
    if (e.get("event") == "namecheck_refused" and "second QUIC ClientHello" in e.get("msg", "")
            and e.get("name") == "evil.test" and e.get("reason") == "not_allowed" and e.get("uid") == 4242):
        sys.exit(0)
sys.exit(1)
PYEOF
ok "a second ClientHello of the connection naming evil.test: dropped and logged (name evil.test, reason not_allowed)"
df_quic_send $WL_UID 2001:db8:1::10 443 www.allowed.test 8e8e8e8e8e8e8e8e --then hrr:evil.test:8f8f8f8f8f8f8f8f
df_quic_expect_read 8e8e8e8e8e8e8e8e www.allowed.test "IPv6: the connection's first ClientHello"
df_quic_expect_not_read 8f8f8f8f8f8f8f8f evil.test "IPv6: a second ClientHello naming evil.test"
ok "IPv6: the same, dropped"

# Positive control: both attacks reach the server with the check off.
df_config "${ARGS[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
df_quic_send $WL_UID 198.18.1.10 443 www.allowed.test 9a9a9a9a9a9a9a9a --then coalesced:evil.test:9b9b9b9b9b9b9b9b \
	--then hrr:evil.test:9c9c9c9c9c9c9c9c
df_quic_expect_read 9b9b9b9b9b9b9b9b evil.test "control: with name_check off, the coalesced datagram"
df_quic_expect_read 9c9c9c9c9c9c9c9c evil.test "control: with name_check off, the second ClientHello"
ok "control: with name_check off the server reads evil.test from both"
