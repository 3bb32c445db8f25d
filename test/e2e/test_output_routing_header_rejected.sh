#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 13 in the output scope: an unprivileged process cannot carry a
# packet past the set with an IPv6 routing header. It sets a segment
# routing header on its socket (IPV6_RTHDR, type 4, no capability needed)
# naming 2001:db8:1::10 (www.allowed.test, in the set) and connects to
# 2001:db8:1::20 (never answered): the packets' destination is the set
# member, so without the routing-header reject the set accept lets them
# out, and the SRv6-capable upstream host forwards them on to ::20.
#
# Far side: the listener logs which address each connection reached.
# Controls: without dnsfence's rules the routing header reaches ::20; with
# them the same uid connects to ::10 directly.
source "$(dirname "$0")/lib.sh"
df_setup
df_srv6_far_side 8080
M6=2001:db8:1::10
V6=2001:db8:1::20
APP=4242
SRH="$(df_share srh_connect.py)"
srh() { df_wl_as "$APP" "$DF_PY" "$SRH" "$V6" "$M6" 8080; }

[ "$(srh)" = connected ] || fail "control (no fence): uid $APP's SRH connection through $M6 to $V6 failed"
df_wait_arrived "$V6" 1 || fail "control (no fence): the listener saw no connection on $V6"
ok "control (no fence): uid $APP's segment routing header through $M6 reaches $V6"

df_start_dnsfence allow='["www.allowed.test"]'
df_dig www.allowed.test AAAA
expect_answer_contains "$M6"
df_connect_as "$APP" "$M6" 8080 || fail "uid $APP cannot connect to the allowed $M6"
df_wait_arrived "$M6" 1 || fail "the listener did not log the allowed connection to $M6"
got=$(srh)
[ "$got" != connected ] || fail "uid $APP's connection with a segment routing header through $M6 reached $V6"
[ "$(df_arrived "$V6")" -eq 1 ] || fail "the listener saw a connection on $V6 through the fence"
# The kernel matches the ICMP error to no socket (it quotes ::10, the
# socket is connected to ::20), so the client times out; the rule's
# counter says it was our reject, not a routing hole.
n=$(wl ip6tables-save -c -t filter |
	awk '/-A DNSFENCE-OUT -m rt -j REJECT --reject-with icmp6-adm-prohibited/ { gsub(/[\[\]]/, "", $1); split($1, c, ":"); n += c[1] } END { print n + 0 }')
[ "$n" -gt 0 ] || fail "the routing-header reject counted nothing (client: $got)"
ok "fenced: uid $APP reaches $M6 directly; its SRH connection through $M6 to $V6 is rejected by the routing-header rule ($n packets; client: $got)"
