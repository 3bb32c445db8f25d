#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attribution, the recent-answer memory and suggest.json follow a reload:
# a daemon started in audit mode and switched to enforce with `dnsfence
# reload` logs a refused flow as "blocked", not "would block"; the flow's
# explanation uses the reloaded `ports` (tcp/80 removed: an answered
# address refused on 80 is "not in `ports`"); and suggest.json says
# "enforce". Positive control: before the reload the same daemon logs
# "would block" and the flow gets out (audit).
source "$(dirname "$0")/lib.sh"

U=12345
df_setup
df_start_listener 80
df_start_dnsfence mode='"audit"' allow='["www.allowed.test"]'
chmod 755 "$DF_TMP" # the daemon's user reads the reloaded file
state="$DF_TMP/state/suggest.json"

# Control: audit lets the flow out and says "would block".
df_connect_as "$U" 198.18.1.11 80 || fail "audit: 198.18.1.11:80 not reachable (control)"
df_poll 30 grep -qE "would block tcp 198\.18\.0\.2:[0-9]+ -> 198\.18\.1\.11:80 from uid $U: address was never answered" \
	"$DF_DNSFENCE_LOG" || fail "audit: no 'would block' line for 198.18.1.11:80"
ok "audit: the flow got out and was logged as 'would block'"

df_config mode='"enforce"' allow='["www.allowed.test"]' \
	ports='["tcp/443", "tcp/8080"]'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
ok "reload: $DF_CMD_OUT"

! df_connect_as "$U" 198.18.1.12 80 || fail "enforce: 198.18.1.12:80 reachable after the reload"
df_poll 30 grep -qE "blocked tcp 198\.18\.0\.2:[0-9]+ -> 198\.18\.1\.12:80 from uid $U: address was never answered" \
	"$DF_DNSFENCE_LOG" || fail "enforce: no 'blocked' line for 198.18.1.12:80"
if grep -qE "would block tcp [^ ]+ -> 198\.18\.1\.12:80" "$DF_DNSFENCE_LOG"; then
	fail "after the reload to enforce a refused flow is still logged as 'would block'"
fi
ok "enforce: the refused flow is logged as 'blocked'"

# The reloaded ports: tcp/80 is gone, so an answered address refused on
# port 80 is explained as "not in `ports`" (with the start-up ports it
# would be "should be in the set").
df_dig www.allowed.test A
expect_answer_contains 198.18.1.10
! df_connect_as "$U" 198.18.1.10 80 || fail "enforce: 198.18.1.10:80 reachable with tcp/80 removed"
df_poll 30 grep -qE "blocked tcp [^ ]+ -> 198\.18\.1\.10:80 from uid $U: port tcp/80 is not in" \
	"$DF_DNSFENCE_LOG" || fail "198.18.1.10:80 not explained as 'port tcp/80 is not in ports' after the reload removed it: $(grep -E -- '-> 198\.18\.1\.10:80' "$DF_DNSFENCE_LOG" | tail -n 1)"
ok "attribution judges ports by the reloaded config"

df_stop_dnsfence
[ -f "$state" ] || fail "no state file $state"
mode="$("$DF_PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["mode"])' "$state")"
[ "$mode" = enforce ] || fail "suggest.json says mode '$mode' after the reload to enforce"
ok "suggest.json: mode enforce"
