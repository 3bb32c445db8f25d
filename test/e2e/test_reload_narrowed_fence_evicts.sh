#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariants 3, 5 and 9 across a live reload: an address the new config
# refuses as such leaves the sets at once, although a name that is still
# allowed answered it. (1) allow_cidrs ["10.0.0.0/8"] lets private.allowed.test's
# 10.1.2.3 into dnsfence4; a reload that drops allow_cidrs evicts it.
# (2) resolver2.allowed.test answers 198.18.0.9; a reload that names
# 198.18.0.9 as an upstream evicts it (no upstream's address is ever in
# the sets). Positive controls: both addresses are in the set before
# their reload, and www.allowed.test's address, which no reload refuses,
# stays through both. Each reload also drops the cached answers that
# carry the refused address: a cache hit would hand it out or ask the
# sets for it, which the parent refuses (it used to stop the daemon,
# exit 3). Restart makes the same judgement (restart.c:
# judge_member). (10.1.2.3 is only data here: no interface or route
# has it.)
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'ZONE'
resolver2 IN A 198.18.0.9
ZONE
df_setup
allow='["private.allowed.test", "www.allowed.test", "resolver2.allowed.test"]'
control='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
df_start_dnsfence allow="$allow" allow_cidrs='["10.0.0.0/8"]' control="$control"
chmod 755 "$DF_TMP" # the daemon reads the config again after the privilege drop

for n in private www resolver2; do
	df_dig $n.allowed.test A
	expect_rcode NOERROR
done
expect_in_set dnsfence4 10.1.2.3
expect_in_set dnsfence4 198.18.1.10
expect_in_set dnsfence4 198.18.0.9
ok "before the reloads: 10.1.2.3 (allow_cidrs), 198.18.1.10 and 198.18.0.9 are in dnsfence4"

# (1) allow_cidrs narrowed.
df_config allow="$allow" control="$control"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q '+0/-0 names' <<<"$DF_CMD_OUT" || fail "the reload changed names: $DF_CMD_OUT"
grep -q ' 1 addresses evicted' <<<"$DF_CMD_OUT" || fail "the reload did not evict exactly one address: $DF_CMD_OUT"
ok "reload without allow_cidrs: $DF_CMD_OUT"
expect_not_in_set dnsfence4 10.1.2.3
expect_in_set dnsfence4 198.18.1.10
expect_in_set dnsfence4 198.18.0.9
ok "10.1.2.3 left dnsfence4 although private.allowed.test is still allowed; the others stay"
df_wait_log 20 "1 addresses leave the sets because the new config refuses them" ||
	fail "no log line says why 10.1.2.3 left the set"
grep -F "refuses them" "$DF_DNSFENCE_LOG" | grep -F "10.1.2.3 first" >/dev/null ||
	fail "the log line does not name 10.1.2.3"
ok "the log says why, naming 10.1.2.3"
df_dig private.allowed.test A
expect_rcode NOERROR
expect_answer_lacks 10.1.2.3
expect_not_in_set dnsfence4 10.1.2.3
ok "asked again, private.allowed.test's 10.1.2.3 is stripped and stays out"

# (2) 198.18.0.9 becomes an upstream.
df_config allow="$allow" control="$control" upstreams='["198.18.0.1", "198.18.0.9"]'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q ' 1 addresses evicted' <<<"$DF_CMD_OUT" || fail "the reload did not evict exactly one address: $DF_CMD_OUT"
ok "reload naming 198.18.0.9 an upstream: $DF_CMD_OUT"
expect_not_in_set dnsfence4 198.18.0.9
expect_in_set dnsfence4 198.18.1.10
ok "198.18.0.9 left dnsfence4 when it became an upstream; 198.18.1.10 stays"
df_dig resolver2.allowed.test A
expect_rcode NOERROR
expect_answer_lacks 198.18.0.9
expect_not_in_set dnsfence4 198.18.0.9
ok "asked again, resolver2.allowed.test's 198.18.0.9 is stripped (an upstream's) and stays out"
kill -0 "$DF_DNSFENCE_PID" || fail "the daemon exited after the reloads"
df_dig www.allowed.test A
expect_rcode NOERROR
ok "the daemon still serves after both reloads (its cached answers with refused addresses were dropped, not served)"
