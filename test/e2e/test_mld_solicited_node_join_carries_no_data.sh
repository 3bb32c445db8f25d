#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 6: nothing the workload chose leaves on the link. Rule 4 lets
# MLDv1 reports out for solicited-node groups (ff02::1:ff00:0/104) because
# snooping bridges need them to deliver neighbour solicitations; but the
# group of such a report is only a solicited-node group of one of the
# namespace's own addresses when the kernel joined it. An unprivileged
# workload can join any group (IPV6_JOIN_GROUP), ff02::1:ffXX:XXXX
# included, and the group's low 24 bits are then its own: three bytes a
# join, repeated as often as it likes, to whoever listens on the link.
# The workload joins ff02::1:ff65:7866 and ff02::1:ff69:6c21 ("exfil!");
# no report naming them may leave.
# Controls: the report for ff02::1:ff00:99 (the kernel's own, joined when
# the address 2001:db8::99 is added) leaves, so the capture sees reports;
# the workload's join of a data group outside the solicited-node range
# stays in, as before; and, with the fence's rules removed, the
# workload's solicited-node joins are announced.
source "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || fail "tcpdump is not installed (see contrib/deps.sh)"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'
WL_UID=4242
DATA1=ff02::1:ff65:7866 # "exf"
DATA2=ff02::1:ff69:6c21 # "il!"
PLAIN=ff02::6461:7461:2d6c:6561:6b21

df_mld_capture
df_join_groups "$WL_UID" "$DATA1" "$DATA2" "$PLAIN"
ok "uid $WL_UID joined $DATA1, $DATA2 and $PLAIN (in /proc/net/igmp6)"
expect_mld_reports_only_control "$PLAIN" "ff65:7866" "ff69:6c21"
ok "no MLD report for the workload's solicited-node groups $DATA1, $DATA2 (or $PLAIN) left; the kernel's own for ff02::1:ff00:99 did"

# Positive control: without the fence's rules, the same joins are
# announced (the capture would have seen them).
kill -TERM "${DF_PIDS[-1]}"
df_wait_gone "${DF_PIDS[-1]}" 30 || fail "tcpdump did not stop"
df_stop_dnsfence
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown exited $DF_CMD_RC: $DF_CMD_ERR"
df_mld_pcap mld-open
CTRL=ff02::1:ff44:4444
df_join_groups "$WL_UID" "$CTRL"
sleep 0.5
report="$(tcpdump -r "$DF_TMP/mld-open.pcap" -n -v 2>/dev/null)"
grep -q "listener report.*ff02::1:ff44:4444" <<<"$report" ||
	fail "control: with the rules removed, no report for the workload's group $CTRL left: $report"
ok "control: without the fence the workload's solicited-node join $CTRL is announced on the link"
