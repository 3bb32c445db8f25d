#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Snoop what the client gets: an HTTPS record with an internal hint next
# to ordinary ones is left out of the client's copy whole (its hints are
# not in the sets), so none of its hints may enter the sets either:
# mixed.allowed.test HTTPS 1 . ipv4hint=198.18.2.40,10.0.0.5
# ipv6hint=2001:db8:1::20. Afterwards neither 198.18.2.40 nor
# 2001:db8:1::20 is in the sets, and a connect to 198.18.2.40 is refused.
# Controls: the client's copy indeed lacks the HTTPS record (EDE 17), an
# HTTPS record with only ordinary hints (h3.allowed.test) still puts them
# in the sets and reaches the client, and an A record for 198.18.2.41
# next to the dropped record is kept.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'EOF2'
mixed IN HTTPS 1 . alpn="h2" ipv4hint=198.18.2.40,10.0.0.5 ipv6hint=2001:db8:1::20
mixed IN HTTPS 2 . alpn="h3" ipv4hint=198.18.2.41
EOF2
df_setup
df_start_listener 8080
df_start_dnsfence allow='["mixed.allowed.test", "h3.allowed.test"]'

df_dig mixed.allowed.test HTTPS
expect_rcode NOERROR
expect_answer_lacks 198.18.2.40
expect_answer_contains 198.18.2.41
grep -q "EDE: 17" <<<"$DF_OUT" || fail "the client was not told a record was left out (EDE 17): $DF_OUT"
ok "control: the client's copy drops the HTTPS record with the internal hint, keeps the other"
expect_in_set dnsfence4 198.18.2.41
expect_not_in_set dnsfence4 198.18.2.40
expect_not_in_set dnsfence6 2001:db8:1::20
expect_not_in_set dnsfence4 10.0.0.5
expect_fenced 198.18.2.40 8080
ok "no hint of the dropped HTTPS record entered the sets"

df_dig h3.allowed.test HTTPS
expect_rcode NOERROR
expect_answer_contains 198.18.1.30
expect_in_set dnsfence4 198.18.1.30
expect_in_set dnsfence6 2001:db8:1::30
ok "control: an HTTPS record with ordinary hints still puts them in the sets"
expect_dnsfence_running
