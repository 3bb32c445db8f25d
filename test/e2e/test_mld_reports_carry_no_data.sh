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
# Then against MLDv2, the kernel's default where setup cannot set
# force_mld_version (a read-only /proc/sys): the test raises it to 2 in
# its namespace after setup, the workload joins two more groups, and raw
# reports of every shape are sent. No MLDv2 report leaves (no rule can
# compare its groups with the namespace's own), not even one naming only
# solicited-node groups; of raw MLDv1 reports, the one for this
# namespace's own group leaves (the control: the raw socket's reports
# reach the capture) and one for a solicited-node group of no address
# here stays in.
source "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || fail "tcpdump is not installed (see contrib/deps.sh)"
df_setup
df_start_listener 443
df_start_dnsfence allow='["www.allowed.test"]'
WL_UID=4242
GROUP1=ff02::6461:7461:2d6c:6561:6b21   # "data-leak!"
GROUP2=ff05::5ec:4e7:da7a
GROUP3=ff02::7632:6c65:616b             # "v2leak"
GROUP4=ff05::7632:da7a

# Control first (so that its reports are not merged with the others).
df_mld_capture

ifindex="$(wl cat "/sys/class/net/$DF_VETH_WL/ifindex")"
join_groups() { df_join_groups "$WL_UID" "$@"; }
join_groups "$GROUP1" "$GROUP2"
ok "uid $WL_UID joined $GROUP1 and $GROUP2 (in /proc/net/igmp6)"

# ND control: forget the neighbours, then connect over IPv6.
wl ip -6 neigh flush dev "$DF_VETH_WL"
df_ask_connect www.allowed.test AAAA 443
expect_connected 2001:db8:1::10
ok "control: neighbour discovery works (connect to 2001:db8:1::10 after flushing the neighbour cache)"

expect_mld_reports_only_control "$GROUP1" "$GROUP2"
ok "control: the report for solicited-node group ff02::1:ff00:99 left; none for the workload's groups ($GROUP1, $GROUP2)"
report="$(tcpdump -r "$DF_TMP/mld.pcap" -n -v 2>/dev/null)"

# MLDv2: the kernel now writes version 2 reports (group records in the
# payload, to ff02::16), which no rule lets out.
df_mld_recapture mld2
wl sysctl -qw net.ipv6.conf.all.force_mld_version=2
wl sysctl -qw "net.ipv6.conf.$DF_VETH_WL.force_mld_version=2"
join_groups "$GROUP3" "$GROUP4"
ok "MLDv2 forced; uid $WL_UID joined $GROUP3 and $GROUP4"

# Reports written as the kernel writes them (hop-by-hop router alert, hop
# limit 1; v2 to ff02::16 with records of 20 bytes, v1 to its group)
# through a raw socket (root, so they meet OUTPUT like the kernel's own).
wl "$DF_PY" - "$ifindex" <<'PY' || fail "could not send the raw MLD reports"
import socket, struct, sys, time
ifindex = int(sys.argv[1])
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)
# next header (the kernel's), length 0, router alert (5, 2, MLD 0), PadN
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_HOPOPTS, bytes([0, 0, 5, 2, 0, 0, 1, 0]))
def record(group, sources=()):
    r = struct.pack(">BBH", 4, 0, len(sources)) + socket.inet_pton(socket.AF_INET6, group)
    return r + b"".join(socket.inet_pton(socket.AF_INET6, a) for a in sources)
reports = [
    [record("ff02::1:ff00:98")],
    [record("ff02::1:ff00:97"), record("ff02::1:ff00:96")],
    [record("ff02::1:ff00:99")],  # this namespace's own group, as v2
    [record("ff02::6461:7461:3321")],
    [record("ff02::1:ff00:95"), record("ff02::6461:7461:3322")],
    [record("ff02::1:ff00:91"), record("ff02::1:ff00:92"), record("ff02::1:ff00:93")],
    [record("ff02::1:ff00:94", ["2001:db8::6461:7461"])],
]
# A report the fence drops fails with EPERM; the capture decides.
def send(msg, dst):
    try:
        s.sendto(msg, (dst, 0, 0, ifindex))
    except PermissionError:
        pass
    time.sleep(0.05)
for recs in reports:
    send(struct.pack(">BBHHH", 143, 0, 0, 0, len(recs)) + b"".join(recs), "ff02::16")
# MLDv1 (type 131, max delay 0, the group in the message and as the
# destination): the namespace's own group, then one of no address here.
for g in ("ff02::1:ff00:99", "ff02::1:ff00:9a"):
    send(struct.pack(">BBHHH", 131, 0, 0, 0, 0) + socket.inet_pton(socket.AF_INET6, g), g)
PY
sleep 0.5
report2="$(tcpdump -r "$DF_TMP/mld2.pcap" -n -v 2>/dev/null)"
grep -q "listener report.*ff02::1:ff00:99" <<<"$report2" ||
	fail "control: the raw MLDv1 report for this namespace's own group ff02::1:ff00:99 did not leave: $report2"
ok "control: a raw MLDv1 report for the namespace's own group ff02::1:ff00:99 left"
! grep -q "listener report v2" <<<"$report2" || fail "an MLDv2 report left the namespace:
$(grep "listener report v2" <<<"$report2")"
for g in "$GROUP3" "$GROUP4" ff02::1:ff00:9a ff02::1:ff00:98 ff02::6461:7461:3321 2001:db8::6461:7461; do
	! grep -qF "$g" <<<"$report2" || fail "an MLD report naming $g left the namespace:
$(grep -F "$g" <<<"$report2")"
done
ok "MLDv2: no report left, of any shape (solicited-node groups included); MLDv1: none for ff02::1:ff00:9a, a solicited-node group of no address here"
# Every group any report named, v1 ("addr: G") or v2 ("[gaddr G"), is a
# solicited-node group.
groups="$(awk '/listener (report|done)/ {
		for (i = 1; i < NF; i++) if ($i == "[gaddr" || $i == "addr:") print $(i + 1)
	}' <<<"$report"$'\n'"$report2" | sort -u)"
[ -n "$groups" ] || fail "no group found in the reports that left: $report$report2"
others="$(awk '!/^ff02::1:ff[0-9a-f]?[0-9a-f]?:[0-9a-f]+$/' <<<"$groups" | tr '\n' ' ')"
[ -z "$others" ] || fail "MLD reports named groups that are not solicited-node: $others"
ok "every group in every report that left is solicited-node: $(tr '\n' ' ' <<<"$groups")"
expect_dnsfence_running
