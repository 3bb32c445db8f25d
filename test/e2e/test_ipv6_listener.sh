#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The [::1]:53 listener answers allowed and denied names (UDP and TCP), and
# an IPv6 upstream written "[2001:db8::1]:53" is used.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'

df_dig @::1 www.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
expect_out_contains "SERVER: ::1#53"
df_dig @::1 www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ok "dig @::1 www.allowed.test A/AAAA -> 198.18.1.10, 2001:db8:1::10"

df_dig @::1 +tcp www.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
ok "dig @::1 +tcp www.allowed.test AAAA -> 2001:db8:1::10"

df_dig @::1 "denied-$$.evil.test" AAAA
expect_rcode NXDOMAIN
expect_out_contains "EDE: 15 (Blocked)"
ok "dig @::1 denied-$$.evil.test -> NXDOMAIN with EDE 15"

# An IPv6 upstream.
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test", "alias.allowed.test"]' upstreams='["[2001:db8::1]:53"]'
df_dig alias.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::20
df_poll 30 grep -qF "info: $DF_WL6 alias.allowed.test. AAAA IN" "$DF_TMP/unbound.log" ||
	fail "expected unbound to log the query from $DF_WL6 (the IPv6 upstream path)"
ok "upstreams [\"[2001:db8::1]:53\"]: alias.allowed.test AAAA -> 2001:db8:1::20, asked over IPv6"

df_dig @::1 www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ok "dig @::1 www.allowed.test A via the IPv6 upstream -> 198.18.1.10"
