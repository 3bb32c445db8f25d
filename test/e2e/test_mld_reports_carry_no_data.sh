#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 6: nothing leaves on the link beyond what neighbour discovery
# needs. An unprivileged workload joins IPv6 multicast groups whose
# addresses are its own bytes (IPV6_JOIN_GROUP needs no privilege); the
# kernel would announce them in MLDv2 reports. Captured on the upstream
# side of the veth: no report for those groups leaves.
# Controls: a report for a solicited-node group (ff02::1:ff00:99, joined
# when an address is added) does leave, so the capture sees reports (an
# MLDv1 report: setup sets force_mld_version=1 in the namespace); and
# neighbour discovery still works: after flushing the neighbour cache,
# an IPv6 connection to an allowed address succeeds.
source "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || fail "tcpdump is not installed (see contrib/deps.sh)"
df_setup
df_start_listener 443
df_start_dnsfence allow='["www.allowed.test"]'
WL_UID=4242
GROUP1=ff02::6461:7461:2d6c:6561:6b21   # "data-leak!"
GROUP2=ff05::5ec:4e7:da7a

# Control first (so that its reports are not merged with the others).
df_mld_capture
df_join_groups "$WL_UID" "$GROUP1" "$GROUP2"
ok "uid $WL_UID joined $GROUP1 and $GROUP2 (in /proc/net/igmp6)"

# ND control: forget the neighbours, then connect over IPv6.
wl ip -6 neigh flush dev "$DF_VETH_WL"
df_ask_connect www.allowed.test AAAA 443
expect_connected 2001:db8:1::10
ok "control: neighbour discovery works (connect to 2001:db8:1::10 after flushing the neighbour cache)"

expect_mld_reports_only_control "$GROUP1" "$GROUP2"
ok "control: the report for solicited-node group ff02::1:ff00:99 left; none for the workload's groups ($GROUP1, $GROUP2)"
expect_dnsfence_running
