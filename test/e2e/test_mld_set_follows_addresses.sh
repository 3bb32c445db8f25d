#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 6, kept as the namespace's addresses change: rule 4 lets out
# MLD reports only for groups in the MLD set (dnsfence6-mld), which the
# daemon keeps exactly the solicited-node groups of the namespace's own
# addresses. An address added while it runs gets its group in the set
# and its report out (neighbour discovery through snooping bridges keeps
# working); an address removed takes its group out again, so a workload
# that joins that group afterwards announces nothing; and a set flushed
# behind the daemon's back is refilled.
# Controls: before the address exists its group is not in the set; the
# capture sees the new address's report, so it sees reports at all.
source "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || fail "tcpdump is not installed (see contrib/deps.sh)"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'
SET=dnsfence6-mld
ADDR=2001:db8::1:2345
GROUP=ff02::1:ff01:2345
in_set() { wl ipset test "$SET" "$1" >/dev/null 2>&1; }

ll="$(wl ip -6 -o addr show dev "$DF_VETH_WL" scope link | awk '{print $4}' | cut -d/ -f1 | head -1)"
[ -n "$ll" ] || fail "the workload's veth has no link-local address"
llgroup="$("$DF_PY" -c 'import ipaddress, sys; a = ipaddress.IPv6Address(sys.argv[1]).packed; print(ipaddress.IPv6Address(bytes.fromhex("ff0200000000000000000001ff") + a[13:]))' "$ll")"
df_poll 30 in_set "$llgroup" || fail "the link-local address $ll's group $llgroup is not in $SET: $(wl ipset list "$SET")"
! in_set "$GROUP" || fail "control: $GROUP is in $SET before any address has it"
ok "$SET holds $llgroup (of $ll) and not yet $GROUP"

df_mld_pcap mld
wl ip addr add "$ADDR/64" dev "$DF_VETH_WL" nodad
df_poll 50 in_set "$GROUP" || fail "$ADDR was added, but its group $GROUP did not enter $SET within 5 s"
ok "$ADDR added: its group $GROUP entered $SET"
# The kernel's own reports may have met the set before the group was in
# it; asked as a snooping querier asks, it reports the group again.
reported() { tcpdump -r "$DF_TMP/mld.pcap" -n -v 2>/dev/null | grep "listener report.*$GROUP" >/dev/null; }
df_mld_query
df_poll 50 reported || fail "no MLD report for $GROUP (the group of $ADDR) left after a query: $(tcpdump -r "$DF_TMP/mld.pcap" -n -v 2>/dev/null)"
ok "the report for $ADDR's group $GROUP left the namespace"

wl ip addr del "$ADDR/64" dev "$DF_VETH_WL"
df_poll 50 bash -c "! ip netns exec '$DF_WL' ipset test '$SET' '$GROUP' >/dev/null 2>&1" ||
	fail "$ADDR was removed, but its group $GROUP stayed in $SET"
ok "$ADDR removed: $GROUP left $SET"

# The group is now the workload's to choose: joined, it is not announced.
df_mld_recapture mld2
df_join_groups 4242 "$GROUP"
sleep 0.5
! tcpdump -r "$DF_TMP/mld2.pcap" -n -v 2>/dev/null | grep "$GROUP" >/dev/null ||
	fail "after $ADDR was removed, uid 4242's join of $GROUP was announced: $(tcpdump -r "$DF_TMP/mld2.pcap" -n -v 2>/dev/null | grep "$GROUP")"
ok "uid 4242's join of $GROUP, no longer an address's group, is not announced"

wl ipset flush "$SET"
df_poll 50 in_set "$llgroup" || fail "$SET was flushed and not refilled within 5 s"
ok "$SET flushed behind the daemon's back: refilled ($llgroup back)"
expect_dnsfence_running
