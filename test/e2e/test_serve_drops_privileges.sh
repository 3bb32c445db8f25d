#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The serving daemon is not root: /proc/PID/status shows a non-zero uid and
# an effective capability set of cap_net_admin only (0x1000), with
# no_new_privs set. "serve" without "setup" refuses (exit 3) and binds
# nothing; a "user" that does not exist is exit 2 naming it.
source "$(dirname "$0")/lib.sh"
df_setup

# serve before setup: no sets, no rules -> exit 3, no listener.
df_config allow='["www.allowed.test"]'
df_dnsfence serve
[ "$DF_CMD_RC" -eq 3 ] || fail "serve without setup: expected exit 3, saw $DF_CMD_RC: $DF_CMD_ERR"
grep -q "refusing to serve" <<<"$DF_CMD_ERR" || fail "serve without setup: unclear message: $DF_CMD_ERR"
! wl ss -Hlun 'sport = :53' | grep . >/dev/null || fail "serve without setup left a listener on port 53"
ok "serve without setup -> exit 3 ($(grep -m1 refusing <<<"$DF_CMD_ERR"))"

# A missing user: exit 2, naming it.
df_config allow='["www.allowed.test"]' user='"no-such-user-df"'
df_dnsfence setup
[ "$DF_CMD_RC" -eq 2 ] || fail "missing user: expected exit 2, saw $DF_CMD_RC: $DF_CMD_ERR"
grep -qF no-such-user-df <<<"$DF_CMD_ERR" || fail "missing user: message does not name it: $DF_CMD_ERR"
! wl iptables -S DNSFENCE-OUT >/dev/null 2>&1 || fail "missing user: setup installed rules anyway"
ok "user \"no-such-user-df\" -> exit 2: $DF_CMD_ERR"
df_config allow='["www.allowed.test"]' user='"root"'
df_dnsfence setup
[ "$DF_CMD_RC" -eq 2 ] || fail "user root: expected exit 2, saw $DF_CMD_RC: $DF_CMD_ERR"
ok "user \"root\" -> exit 2: $DF_CMD_ERR"

# The serving daemon: uid, gid and capabilities.
df_start_dnsfence allow='["www.allowed.test"]'
uid="$(df_proc_field "$DF_DNSFENCE_PID" Uid)"
read -r ruid euid suid fsuid <<<"$uid"
[ "$ruid" -ne 0 ] && [ "$euid" -ne 0 ] && [ "$suid" -ne 0 ] && [ "$fsuid" -ne 0 ] ||
	fail "the serving daemon has a zero uid: Uid: $uid"
# The default user is dnsfence, falling back to nobody when the host has
# no such user (a host with the package installed has one).
want="$(id -u dnsfence 2>/dev/null || id -u nobody)"
[ "$ruid" = "$want" ] || fail "expected uid $want (dnsfence, else nobody), saw $ruid"
eff="$(df_proc_field "$DF_DNSFENCE_PID" CapEff)"
[ "$eff" = 0000000000001000 ] || fail "expected CapEff 0000000000001000 (cap_net_admin only), saw $eff"
amb="$(df_proc_field "$DF_DNSFENCE_PID" CapAmb)"
(((16#$amb & 16#1000) != 0)) || fail "cap_net_admin is not ambient (CapAmb $amb): the guard's iptables-restore would lack it"
nnp="$(df_proc_field "$DF_DNSFENCE_PID" NoNewPrivs)"
[ "$nnp" = 1 ] || fail "expected NoNewPrivs 1, saw $nnp"
ok "serving daemon: Uid $uid, CapEff $eff (cap_net_admin only), CapAmb $amb, NoNewPrivs $nnp"

# Still works as nobody: the set add needs cap_net_admin on every message.
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_in_set dnsfence4 198.18.1.10
ok "after the drop, an allowed answer still lands in the set"
expect_dnsfence_running
