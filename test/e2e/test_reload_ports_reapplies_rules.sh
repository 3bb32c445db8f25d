#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload that changes `ports` re-applies the rules at once and the guard
# follows the new ones: after `dnsfence reload` adds tcp/8080, `check`
# against the new file is 0, the workload connects to an allowed address
# on 8080 (refused before: the control), and a deleted 8080 rule is put
# back by the guard in its NEW form (never the old rule set), while
# `check` against the old file reports drift.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup
df_start_listener 443
df_start_listener 8080
# No watch: the rewritten file is read by the explicit reload alone.
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443"]' guard_interval=1 \
	control='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
chmod 755 "$DF_TMP"
cp "$DF_DNSFENCE_CONF" "$DF_TMP/old.json"
sock="$DF_TMP/control.sock"

check_with() { wl "$DNSFENCE_BIN" -c "$1" check >/dev/null 2>&1; }
df_dig www.allowed.test A
expect_rcode NOERROR
df_connect_as $WL_UID 198.18.1.10 443 || fail "443 not reachable (control)"
! df_connect_as $WL_UID 198.18.1.10 8080 || fail "8080 reachable before the reload"
ok "before: 443 connects, 8080 refused"

df_config allow='["www.allowed.test"]' ports='["tcp/443", "tcp/8080"]' guard_interval=1 \
	control='{"socket": "'"$sock"'", "watch": false}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q 'rules re-applied' <<<"$DF_CMD_OUT" || fail "reload did not re-apply the rules: $DF_CMD_OUT"
ok "reload: $DF_CMD_OUT"
check_with "$DF_DNSFENCE_CONF" || fail "check against the new config is not 0 right after reload"
! check_with "$DF_TMP/old.json" || fail "check against the OLD config is 0: rules not changed"
df_connect_as $WL_UID 198.18.1.10 8080 || fail "8080 not reachable after the reload"
ok "new rules in place at once: check 0, 8080 connects"

victim="$(wl iptables -S DNSFENCE-OUT | awk '/8080/ && !f { print; f = 1 }')"
[ -n "$victim" ] || fail "no 8080 rule in: $(wl iptables -S DNSFENCE-OUT)"
eval "wl iptables -D ${victim#-A }"
! check_with "$DF_DNSFENCE_CONF" || fail "check still 0 after deleting '$victim'"
df_poll 80 check_with "$DF_DNSFENCE_CONF" || fail "the guard did not restore the new rules"
grep -qF -- "$victim" <<<"$(wl iptables -S DNSFENCE-OUT)" || fail "the 8080 rule is not back"
ok "deleted '$victim': the guard restored the new form"
sleep 2.5 # a few more guard rounds: nothing reverts to the old rules
check_with "$DF_DNSFENCE_CONF" || fail "the rules drifted from the new config"
! check_with "$DF_TMP/old.json" || fail "the guard went back to the old rules"
df_connect_as $WL_UID 198.18.1.10 8080 || fail "8080 no longer reachable"
expect_dnsfence_running
ok "the guard keeps the new rules"
