#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The addresses a client can take from an allowed answer enter the sets
# before it reads them, also when they are not the question name's own: the
# A and AAAA of a CNAME target in another zone (alias.allowed.test ->
# target.cdn.test), and the ipv4hint/ipv6hint of an HTTPS record
# (h3.allowed.test). A connect made at once passes a fence that only lets
# set members through.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 8080
df_start_dnsfence allow='["alias.allowed.test", "h3.allowed.test"]'
df_fence 8080
for a in 198.18.1.20 2001:db8:1::20 198.18.1.30 2001:db8:1::30; do
	expect_fenced "$a" 8080
done
ok "fence: no connection to the targets or hints before they are in the sets"

df_ask_connect alias.allowed.test A 8080
[ "$(df_asked_rcode)" = NOERROR ] || fail "alias.allowed.test A: expected NOERROR"
expect_connected 198.18.1.20
expect_set_timeout dnsfence4 198.18.1.20 290 300
ok "alias.allowed.test A (CNAME target.cdn.test) -> 198.18.1.20 in dnsfence4 before the answer"

df_ask_connect alias.allowed.test AAAA 8080
[ "$(df_asked_rcode)" = NOERROR ] || fail "alias.allowed.test AAAA: expected NOERROR"
expect_connected 2001:db8:1::20
expect_set_timeout dnsfence6 2001:db8:1::20 290 300
ok "alias.allowed.test AAAA (CNAME target.cdn.test) -> 2001:db8:1::20 in dnsfence6 before the answer"

# The CNAME target itself is still not on the list.
df_dig target.cdn.test A
expect_rcode NXDOMAIN
ok "target.cdn.test asked directly -> NXDOMAIN"

df_ask_connect h3.allowed.test HTTPS 8080
[ "$(df_asked_rcode)" = NOERROR ] || fail "h3.allowed.test HTTPS: expected NOERROR"
expect_connected 198.18.1.30 2001:db8:1::30
expect_set_timeout dnsfence4 198.18.1.30 290 300
expect_set_timeout dnsfence6 2001:db8:1::30 290 300
ok "h3.allowed.test HTTPS ipv4hint/ipv6hint -> 198.18.1.30 in dnsfence4, 2001:db8:1::30 in dnsfence6, before the answer"

df_dig h3.allowed.test HTTPS
expect_rcode NOERROR
expect_answer_contains ipv4hint=198.18.1.30
expect_answer_contains ipv6hint=2001:db8:1::30
ok "dig h3.allowed.test HTTPS: the client's record keeps its hints"
expect_dnsfence_running
