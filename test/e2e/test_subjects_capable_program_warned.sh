#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A uid subject that may run a program with a file capability granting
# cap_net_admin (the rules themselves) or cap_net_raw, or a setuid-root
# one, is beyond the uid fence: `check` and `selftest` say so, naming the
# program, for the directories of PATH.
#
# Here PATH is a folder of the test's own: `netadm` (a copy of true with
# cap_net_admin=ep), `rawsend` (cap_net_raw=ep), `suidtool` (setuid root)
# and `plain` (none of these). check and selftest of a config with
# `subjects.users` [4242] name the three and not `plain`. Controls: the
# same folder without the capabilities and the setuid bit gets no
# warning, and a config without uid subjects scans nothing.
source "$(dirname "$0")/lib.sh"
df_setup
bin="$DF_TMP/bin"
mkdir "$bin"
for f in netadm rawsend suidtool plain; do cp /bin/true "$bin/$f"; done
chmod 0755 "$bin"/*
setcap cap_net_admin=ep "$bin/netadm"
setcap cap_net_raw=ep "$bin/rawsend"
chmod 4755 "$bin/suidtool"

# dnsfence_on_path CMD: dnsfence -c CONFIG CMD in the workload namespace
# with PATH the test's folder; DF_CMD_ERR.
dnsfence_on_path() {
	DF_CMD_ERR="$(ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG PATH="$bin" \
		"$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" "$1" 2>&1 >/dev/null)" || true
}

df_config allow='["www.allowed.test"]' subjects='{"users": ["4242"]}'
df_setup_fence
for cmd in check selftest; do
	dnsfence_on_path "$cmd"
	grep -q "2 program(s) on PATH that the uid subjects may run hold a file capability granting cap_net_admin or cap_net_raw: .*$bin/netadm" <<<"$DF_CMD_ERR" ||
		fail "$cmd did not warn about $bin/netadm (cap_net_admin): $DF_CMD_ERR"
	grep -q "cap_net_raw: .*$bin/rawsend" <<<"$DF_CMD_ERR" || fail "$cmd did not name $bin/rawsend (cap_net_raw): $DF_CMD_ERR"
	grep -q "1 setuid-root program(s) on PATH that the uid subjects may run: $bin/suidtool;" <<<"$DF_CMD_ERR" ||
		fail "$cmd did not warn about the setuid-root $bin/suidtool: $DF_CMD_ERR"
	! grep -q "$bin/plain" <<<"$DF_CMD_ERR" || fail "$cmd named $bin/plain, which grants nothing: $DF_CMD_ERR"
done
ok "check and selftest name the programs a uid subject may run that grant cap_net_admin, cap_net_raw or root"

# Controls.
setcap -r "$bin/netadm"
setcap -r "$bin/rawsend"
chmod 0755 "$bin/suidtool"
dnsfence_on_path check
! grep -q "program(s) on PATH" <<<"$DF_CMD_ERR" || fail "control: check warned about programs that grant nothing: $DF_CMD_ERR"
setcap cap_net_admin=ep "$bin/netadm"
df_config allow='["www.allowed.test"]'
dnsfence_on_path check
! grep -q "program(s) on PATH" <<<"$DF_CMD_ERR" || fail "control: check warned without uid subjects: $DF_CMD_ERR"
ok "controls: nothing is said of programs that grant nothing, nor without uid subjects"
