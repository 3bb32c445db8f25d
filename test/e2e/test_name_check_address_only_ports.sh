#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every `ports` entry the name check leaves address-only is said at
# start: a tcp port in `ports` that neither name_check.tls_ports nor
# http_ports covers (tcp/8443 here, and the range tcp/9000-9001) is
# warned about, as udp ports outside quic_ports are; a covered one
# (tcp/443, tcp/80) is not named. Control: with the check off nothing is
# said (there is no check to leave a port to).
source "$(dirname "$0")/lib.sh"
df_setup

df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443", "tcp/80", "tcp/8443", "tcp/9000-9001"]'
expect_log_contains "warning namecheck: tcp/8443, tcp/9000-9001: address-only"
! grep -q "tcp/443\|tcp/80[,:]" <<<"$(grep "address-only" "$DF_DNSFENCE_LOG")" ||
	fail "a port the check reads was called address-only: $(grep address-only "$DF_DNSFENCE_LOG")"
ok "tcp ports of ports outside tls_ports and http_ports: warned at start as address-only"
df_stop_dnsfence

: >"$DF_DNSFENCE_LOG"
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443", "tcp/8443"]' name_check='{"mode": "off"}'
df_dnsfence status
! grep -q "address-only" "$DF_DNSFENCE_LOG" || fail "control: with the check off a port was called address-only"
ok "control: with the check off no port is named"
