#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Privilege separation (invariant 12): the serving daemon is two processes.
# The DNS process, which reads every byte from the network, holds no
# capability in any set, runs with no_new_privs and a seccomp filter
# (Seccomp 2) as the daemon's uid; its parent, the only process of the two
# holding cap_net_admin, makes the kernel writes for it. Positive control:
# an allowed name is answered and its address lands in the set (the add
# crossed from the DNS process to the parent and reached the kernel).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'

child="$(sed -n 's/.* the DNS process is pid \([0-9][0-9]*\) .*/\1/p' "$DF_DNSFENCE_LOG" | head -n1)"
[ -n "$child" ] || fail "no DNS process: the daemon (pid $DF_DNSFENCE_PID) did not split ($(grep -c . "$DF_DNSFENCE_LOG") log lines, none naming a DNS process)"
[ -r "/proc/$child/status" ] || fail "the DNS process (pid $child) is not running"
ppid="$(df_proc_field "$child" PPid)"
[ "$ppid" = "$DF_DNSFENCE_PID" ] || fail "pid $child is not the daemon's child (PPid $ppid, daemon $DF_DNSFENCE_PID)"

for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	v="$(df_proc_field "$child" "$f")"
	[ "$v" = 0000000000000000 ] || fail "the DNS process holds $f $v, expected none"
done
nnp="$(df_proc_field "$child" NoNewPrivs)"
[ "$nnp" = 1 ] || fail "the DNS process: NoNewPrivs $nnp, expected 1"
sec="$(df_proc_field "$child" Seccomp)"
[ "$sec" = 2 ] || fail "the DNS process: Seccomp $sec, expected 2 (a filter)"
read -r ruid euid _ <<<"$(df_proc_field "$child" Uid)"
[ "$ruid" -ne 0 ] && [ "$euid" -ne 0 ] || fail "the DNS process runs as uid $ruid/$euid"
ok "DNS process $child: CapInh/CapPrm/CapEff/CapBnd/CapAmb 0, NoNewPrivs 1, Seccomp 2, uid $ruid"

# Of the daemon's processes, only the parent holds cap_net_admin (bit 12),
# effective or permitted: the DNS process and everything under it hold
# none. The walk follows this daemon's own tree (PPid links), so another
# dnsfence on the machine is not counted; the parent's own short-lived
# children (the guard's and the self-test's forks of it, privileged by
# design) are not the DNS process's and are left out.
subtree=("$child")
for ((i = 0; i < ${#subtree[@]}; i++)); do
	for st in /proc/[0-9]*/status; do
		pid="${st#/proc/}"
		pid="${pid%/status}"
		[ "$(df_proc_field "$pid" PPid 2>/dev/null)" = "${subtree[i]}" ] && subtree+=("$pid")
	done
done
holders=()
for pid in "$DF_DNSFENCE_PID" "${subtree[@]}"; do
	eff="$(df_proc_field "$pid" CapEff 2>/dev/null)"
	prm="$(df_proc_field "$pid" CapPrm 2>/dev/null)"
	[ -n "$eff" ] || continue
	if (((16#$eff | 16#$prm) & 16#1000)); then holders+=("$pid"); fi
done
[ "${holders[*]}" = "$DF_DNSFENCE_PID" ] ||
	fail "cap_net_admin held by pid(s) '${holders[*]}' of the daemon (DNS process $child and its ${#subtree[@]} process(es)), expected only the parent $DF_DNSFENCE_PID"
eff="$(df_proc_field "$DF_DNSFENCE_PID" CapEff)"
ok "only the parent ($DF_DNSFENCE_PID, CapEff $eff) holds cap_net_admin"

df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_in_set dnsfence4 198.18.1.10
ok "the DNS process answers; its add reached the set through the parent"
expect_dnsfence_running
