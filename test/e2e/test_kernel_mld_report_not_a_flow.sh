#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel's own MLDv2 report is no workload's blocked flow. setup makes
# the kernel announce multicast groups with MLDv1 (force_mld_version 1,
# docs/firewall.md), but a v2 report it scheduled before (a group joined,
# an interface brought up just before the daemon started) still goes out
# after the rules are in, and rule 4 drops it. It used to be logged as a
# warning, "blocked protocol 0 fe80::... -> ff02::16 from no socket:
# protocol 0 is never allowed": the daemon read no further than the
# hop-by-hop header, and a healthy start on a fresh interface warned
# (test_healthy_start_quiet failed so, now and then). Now it is one info
# line naming the kernel's report, and counted as no blocked flow.
#
# The report is made on purpose, at once and not by chance: once the
# daemon serves, the test puts the namespace back in MLDv2 mode (as it is
# for a report scheduled before setup) and a process of the workload
# joins three groups on its interface: the kernel announces them with
# MLDv2 reports to ff02::16 right away. Positive control: the info line
# is there (the report reached the rules and the daemon read it); a
# program's own ICMPv6 is still a blocked flow (a raw socket: uid 0,
# protocol ipv6-icmp).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'
wl sysctl -qw net.ipv6.conf.all.force_mld_version=0
wl sysctl -qw "net.ipv6.conf.$DF_VETH_WL.force_mld_version=0"
wl "$DF_PY" - "$DF_VETH_WL" >"$DF_TMP/join.log" 2>&1 <<'PY' &
import socket, struct, sys, time
idx = socket.if_nametoindex(sys.argv[1])
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for g in ("ff02::1:3", "ff02::fb", "ff02::1234"):
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                 socket.inet_pton(socket.AF_INET6, g) + struct.pack("@I", idx))
print("joined", flush=True)
time.sleep(30)
PY
DF_PIDS+=("$!")
df_poll 50 grep -q joined "$DF_TMP/join.log" || fail "the workload did not join its groups: $(cat "$DF_TMP/join.log")"
# The report's line, either way it is written.
df_poll 80 grep -qE "the kernel's MLDv2 report to ff02::16 dropped| warning blocked: .* -> ff02::16 " "$DF_DNSFENCE_LOG" ||
	fail "control: no MLDv2 report of the kernel reached the rules within 8 s (the test proves nothing): $(grep -i 'mld\|ff02::16' "$DF_DNSFENCE_LOG")"
! grep -E " warning blocked: .* -> ff02::16 " "$DF_DNSFENCE_LOG" ||
	fail "the kernel's MLDv2 report was logged as a blocked flow"
ok "the kernel's MLDv2 report after setup: $(grep -o "info blocked: the kernel's MLDv2 report to ff02::16 dropped[^;]*" "$DF_DNSFENCE_LOG" | head -n 1)"

wl "$DF_PY" -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
try:
    s.sendto(bytes([143, 0, 0, 0, 0, 0, 0, 0]), ("2001:db8:1::20", 0))
except OSError:
    pass
' || fail "the raw ICMPv6 sender failed"
df_wait_log 30 "blocked ipv6-icmp 2001:db8::2 -> 2001:db8:1::20 from uid 0: ipv6-icmp is never allowed" ||
	fail "control: a program's own ICMPv6 was not logged as a blocked flow: $(grep 'blocked' "$DF_DNSFENCE_LOG" | tail -n 3)"
ok "control: a program's own ICMPv6 (type 143, raw socket) is still a blocked flow"
