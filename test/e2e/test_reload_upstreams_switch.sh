#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload that changes `upstreams` (198.18.0.1 -> [2001:db8::1], the same
# unbound) re-applies the rules and moves the daemon's questions to the
# new upstream, without a restart: `check` against the new file is 0, a
# fresh allowed name resolves and unbound logs it from the workload's IPv6
# address; the workload itself still cannot query the new upstream
# directly (the fence follows the new rules). Control: before the reload,
# names reach unbound over IPv4.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
df_start_dnsfence allow='["www.allowed.test", "*.b.allowed.test"]' control="$(sock_conf)"
chmod 755 "$DF_TMP"
pid=$DF_DNSFENCE_PID

df_dig www.allowed.test A
expect_rcode NOERROR
grep -q '198.18.0.2 www.allowed.test. A IN' "$DF_TMP/unbound.log" ||
	fail "before the reload, www.allowed.test did not reach unbound over IPv4"
ok "before: questions reach unbound over IPv4"

df_config allow='["www.allowed.test", "*.b.allowed.test"]' upstreams='["[2001:db8::1]"]' \
	control="$(sock_conf)"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q 'rules re-applied' <<<"$DF_CMD_OUT" || fail "reload did not re-apply the rules: $DF_CMD_OUT"
ok "reload: $DF_CMD_OUT"
# The old upstream's mark rules stay until its questions drained and its
# flows are deleted (test_upstream_change_reload_closes_old.sh); then the
# kernel holds exactly the new config's rules.
df_wait_log 100 "conntrack entries to replaced upstream(s) 198.18.0.1 deleted" ||
	fail "the replaced upstream's rules never went"
df_poll 50 wl "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" check ||
	fail "check against the new config is not 0 after the reload"

df_dig deep.a.b.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.12
grep -q '2001:db8::2 deep.a.b.allowed.test. A IN' "$DF_TMP/unbound.log" ||
	fail "deep.a.b.allowed.test did not reach unbound over IPv6: $(tail -n 3 "$DF_TMP/unbound.log")"
[ "$pid" = "$DF_DNSFENCE_PID" ] && kill -0 "$pid" || fail "the daemon was restarted"
ok "after: a fresh name resolves through [2001:db8::1], same daemon"

rc=0
out="$(df_wl_as $WL_UID dig +time=2 +tries=1 @2001:db8::1 www.allowed.test A 2>&1)" || rc=$?
[ "$rc" -ne 0 ] || fail "the workload queried the new upstream directly: $out"
ok "the workload still cannot query the new upstream directly"
expect_log_contains "new questions go to the new upstreams"
