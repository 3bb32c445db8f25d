#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Audit mode says what it is, and has a variant that keeps denied names
# local. Plain audit: the start line says loudly that nothing is blocked
# and denied names are forwarded, and they are (the upstream sees them;
# DNS straight to a resolver gets out too). With "audit_denied": "local":
# a denied name is answered NXDOMAIN and never reaches the upstream, DNS
# straight to a resolver is rejected, yet other flows are still only
# logged ("would block", the connect succeeds), and suggest still learns
# the denied name.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 8080

df_start_dnsfence mode='"audit"' allow='["www.allowed.test"]'
expect_log_contains 'mode is "audit": NOTHING IS BLOCKED. Names not on the allowlist are FORWARDED upstream'
df_dig x1.evil.test A
expect_rcode NOERROR
df_poll 20 df_unbound_saw x1.evil.test || fail "audit: the denied name did not reach the upstream"
df_dig @198.18.0.1 x2.evil.test A
expect_rcode NOERROR
ok "audit: loud start line; a denied name is forwarded, and so is DNS straight to the resolver (the leak the variant closes)"
df_stop_dnsfence
# The log goes on across daemons: the first one's lines (its "would block"
# of the DNS sent straight to the resolver) are not the variant's.
first_lines="$(wc -l <"$DF_DNSFENCE_LOG")"

df_start_dnsfence mode='"audit"' audit_denied='"local"' allow='["www.allowed.test"]'
expect_log_contains 'mode is "audit" (audit_denied "local"): flows are NOT BLOCKED'
df_dig x3.evil.test A
expect_rcode NXDOMAIN
expect_log_contains 'audit: denied x3.evil.test A'
df_dig @198.18.0.1 x4.evil.test A
[ "$DF_DIG_RC" -ne 0 ] || [ "$(df_status)" != NOERROR ] || fail "audit local: DNS straight to the resolver was answered: $DF_OUT"
expect_log_contains 'blocked udp 198.18.0.2'
! grep -q 'would block udp .* -> 198.18.0.1:53' <<<"$(tail -n +"$((first_lines + 1))" "$DF_DNSFENCE_LOG")" || fail "audit local: the rejected DNS is logged as 'would block'"
df_dig www.allowed.test A
expect_rcode NOERROR
sleep 1
! df_unbound_saw x3.evil.test || fail "audit local: the denied name x3.evil.test reached the upstream"
! df_unbound_saw x4.evil.test || fail "audit local: x4.evil.test, sent straight to the resolver, reached it"
df_unbound_saw www.allowed.test || fail "control: the allowed name did not reach the upstream"
ok "audit local: denied name NXDOMAIN and never upstream; DNS straight to the resolver rejected; allowed names resolve"

df_tcp_connect 198.18.1.11 8080 || fail "audit local: a flow to a never-answered address was blocked (audit must only log it)"
expect_log_contains 'would block tcp'
ok "audit local: a flow to a never-answered address still gets through, logged as would block"

df_stop_dnsfence
df_dnsfence suggest
grep -q '"x3.evil.test"' <<<"$DF_CMD_OUT" || fail "suggest did not learn the locally denied name: $DF_CMD_OUT $DF_CMD_ERR"
ok "suggest learned x3.evil.test from the local-denial run"
