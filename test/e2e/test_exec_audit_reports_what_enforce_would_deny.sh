#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec --audit` denies nothing and reports what enforce would.
#
# One command reaches the allowed www.allowed.test, asks the denied
# www.evil.test and fetches from it, and connects to 198.18.1.11, an
# address nobody answered; then exits 3. Under --audit all three requests
# reach the web server, exec's status is 3, its stderr summary says it
# is an audit and names www.evil.test (with `--allow www.evil.test`) and
# 198.18.1.11 (never_answered) as what enforce would deny, and --report
# x.json says mode "audit" and holds both. DNSFENCE_MODE=audit in exec's
# environment does the same and is said, not dropped. Positive control:
# the same command without --audit reaches only the allowed name.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242

# fexec ARGS...: dnsfence exec in the workload namespace; DF_CMD_RC.
fexec() {
	DF_CMD_RC=0
	df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec \
		--user "$USER_ID" "$@" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
}
# cmd TAG: the command, its requests marked TAG-PID.
cmd() {
	printf '%s\n' \
		"curl -s -o /dev/null --max-time 5 http://www.allowed.test/$1-allowed-$$" \
		"curl -s -o /dev/null --max-time 5 http://www.evil.test/$1-evil-$$" \
		"curl -s -o /dev/null --max-time 3 http://198.18.1.11/$1-addr-$$" \
		"exit 3"
}
# served TAG-KIND: whether the web server logged that request.
served() { [ "$(df_served "$1-$$")" -ge 1 ]; }

fexec -- sh -c "$(cmd enforce)"
[ "$DF_CMD_RC" -eq 3 ] || fail "control: exec exited $DF_CMD_RC, expected 3: $(cat "$DF_TMP/exec.err")"
served enforce-allowed || fail "control: the allowed name was not reached"
! served enforce-evil || fail "control: enforce let the denied www.evil.test through"
! served enforce-addr || fail "control: enforce let 198.18.1.11 through"
ok "control: without --audit only the allowed name is reached"

fexec --audit --report "$DF_TMP/x.json" -- sh -c "$(cmd audit)"
err="$(cat "$DF_TMP/exec.err")"
[ "$DF_CMD_RC" -eq 3 ] || fail "exec --audit exited $DF_CMD_RC, expected the command's 3: $err"
served audit-allowed || fail "--audit: the allowed name was not reached: $err"
served audit-evil || fail "--audit: the denied www.evil.test was not reached: $err"
served audit-addr || fail "--audit: 198.18.1.11 was not reached: $err"
ok "--audit: all three get through and the command's status (3) passes through"

grep -q 'audit: .* would be denied' <<<"$err" || fail "the summary does not say it is an audit: $err"
grep -q 'denied .*www\.evil\.test.*fix: --allow www\.evil\.test' <<<"$err" ||
	fail "the summary does not name www.evil.test with its fix: $err"
grep -q 'blocked .*198\.18\.1\.11 tcp/80 (never_answered' <<<"$err" ||
	fail "the summary does not name 198.18.1.11: $err"
js="$DF_TMP/x.json"
jq -e '.mode == "audit" and .exit_status == 3' "$js" >/dev/null ||
	fail "x.json does not say mode audit and status 3: $(cat "$js")"
jq -e '.denied[] | select(.name == "www.evil.test" and .fix == "--allow www.evil.test")' "$js" >/dev/null ||
	fail "x.json lacks the name enforce would deny: $(cat "$js")"
jq -e '.blocked[] | select(.dst == "198.18.1.11" and .reason == "never_answered")' "$js" >/dev/null ||
	fail "x.json lacks the flow enforce would block: $(cat "$js")"
ok "--audit: stderr and --report name what enforce would deny and block"

DF_CMD_RC=0
DNSFENCE_MODE=audit df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" \
	-- sh -c "$(cmd env)" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
err="$(cat "$DF_TMP/exec.err")"
[ "$DF_CMD_RC" -eq 3 ] || fail "DNSFENCE_MODE=audit exec exited $DF_CMD_RC: $err"
grep -q 'DNSFENCE_MODE=audit applies' <<<"$err" || fail "exec did not say DNSFENCE_MODE=audit applies: $err"
served env-evil || fail "DNSFENCE_MODE=audit was dropped: www.evil.test was not reached: $err"
ok "DNSFENCE_MODE=audit applies to exec's fence, and is said"
