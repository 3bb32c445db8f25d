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

up tcpdump -i "$DF_VETH_UP" -n -U --immediate-mode -w "$DF_TMP/mld.pcap" \
	ip6 >"$DF_TMP/tcpdump.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 grep -q "listening on" "$DF_TMP/tcpdump.log" || fail "tcpdump did not start: $(cat "$DF_TMP/tcpdump.log")"

# Control first (so that its reports are not merged with the others): a
# new address joins its solicited-node group.
wl ip addr add 2001:db8::99/64 dev "$DF_VETH_WL" nodad
sleep 2.5

ifindex="$(wl cat "/sys/class/net/$DF_VETH_WL/ifindex")"
df_wl_as "$WL_UID" "$DF_PY" - "$ifindex" "$GROUP1" "$GROUP2" <<'PY' || fail "the workload could not join its groups"
import socket, struct, sys, time
ifindex = int(sys.argv[1])
socks = []
for g in sys.argv[2:]:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                 socket.inet_pton(socket.AF_INET6, g) + struct.pack("@I", ifindex))
    socks.append(s)
joined = open("/proc/net/igmp6").read()
for g in sys.argv[2:]:
    if socket.inet_pton(socket.AF_INET6, g).hex() not in joined:
        sys.exit("not a member of %s" % g)
time.sleep(2.5)  # the kernel repeats the report (robustness 2, 1 s apart)
PY
ok "uid $WL_UID joined $GROUP1 and $GROUP2 (in /proc/net/igmp6)"

# ND control: forget the neighbours, then connect over IPv6.
wl ip -6 neigh flush dev "$DF_VETH_WL"
df_ask_connect www.allowed.test AAAA 443
expect_connected 2001:db8:1::10
ok "control: neighbour discovery works (connect to 2001:db8:1::10 after flushing the neighbour cache)"

sleep 0.5
report="$(tcpdump -r "$DF_TMP/mld.pcap" -n -v 2>/dev/null)"
grep -q "listener report.*ff02::1:ff00:99" <<<"$report" ||
	fail "control: no MLD report for the solicited-node group ff02::1:ff00:99 left: $report"
ok "control: the report for solicited-node group ff02::1:ff00:99 left"
for g in "$GROUP1" "$GROUP2"; do
	! grep -qF "$g" <<<"$report" || fail "an MLD report announcing the workload's group $g left the namespace:
$(grep -F "$g" <<<"$report")"
done
ok "no MLD report for the workload's groups ($GROUP1, $GROUP2) left the namespace"
expect_dnsfence_running
