#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence suggest` asks the running daemon over its control socket, so
# a name denied a moment ago is in its answer at once (the state file is
# rewritten only every 5 s). After the daemon has stopped, suggest reads
# the file it wrote on its way out: the name is still there.
source "$(dirname "$0")/lib.sh"
df_setup

df_start_dnsfence allow='["www.allowed.test"]'
df_dig fresh1.denied.test A
expect_rcode NXDOMAIN
df_dnsfence suggest
[ "$DF_CMD_RC" -eq 0 ] || fail "suggest exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q '"fresh1.denied.test"' <<<"$DF_CMD_OUT" ||
	fail "suggest right after the lookup lacks fresh1.denied.test: $DF_CMD_OUT"
grep -q '"www.allowed.test"' <<<"$DF_CMD_OUT" || fail "suggest lacks the config's own entry: $DF_CMD_OUT"
ok "suggest right after a denied lookup includes it"

df_stop_dnsfence
df_dnsfence suggest
[ "$DF_CMD_RC" -eq 0 ] || fail "suggest after the run exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q '"fresh1.denied.test"' <<<"$DF_CMD_OUT" ||
	fail "suggest after the run (from the state file) lacks fresh1.denied.test: $DF_CMD_OUT"
ok "after the run, suggest reads the state file the daemon left"
