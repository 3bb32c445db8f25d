#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec` says what the command asked and reached when it ends.
#
# One command reaches the allowed name, asks a denied one, connects to
# an address nobody answered and to the allowed name on a port not in
# `ports`, then exits 3. exec's status is 3; its
# stderr names the denied name with its fix (`--allow www.evil.test`) and
# the blocked address with its reason (never_answered), the port with
# its fix (`--port tcp/9999`, the flag exec takes); `--report x.md`
# holds all three in Markdown tables, `--report x.json` parses and holds
# them. Positive control: the allowed name was reached (the web server's
# log has the request). A command that only reaches the allowed name
# prints no summary. A --report path in a missing directory is refused
# before any fence exists, naming the flag.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242

# fexec ARGS...: dnsfence exec in the workload namespace; DF_CMD_RC.
fexec() {
	DF_CMD_RC=0
	df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec \
		--user "$USER_ID" "$@" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || DF_CMD_RC=$?
}
CMD='curl -s -o /dev/null --max-time 5 http://www.allowed.test/reached-'$$'
curl -s -o /dev/null --max-time 5 http://www.evil.test/
curl -s -o /dev/null --max-time 3 http://198.18.1.11/
curl -s -o /dev/null --max-time 3 http://www.allowed.test:9999/
exit 3'

fexec --report "$DF_TMP/nodir/x.md" -- sh -c 'exit 0'
[ "$DF_CMD_RC" -eq 125 ] || fail "--report in a missing directory: exec exited $DF_CMD_RC, expected 125"
grep -q -- '--report' "$DF_TMP/exec.err" || fail "the refusal does not name --report: $(cat "$DF_TMP/exec.err")"
[ -z "$(find "$DF_TMP/state" -mindepth 1 -path '*exec/*' 2>/dev/null)" ] || fail "a refused --report left an exec directory"
ok "a --report path in a missing directory is refused before anything is made"

fexec --report "$DF_TMP/x.md" -- sh -c "$CMD"
[ "$DF_CMD_RC" -eq 3 ] || fail "exec exited $DF_CMD_RC, expected the command's 3: $(cat "$DF_TMP/exec.err")"
grep -q "GET /reached-$$" "$DF_TMP/listener-80.log" ||
	fail "control: the allowed name was not reached under exec"
ok "control: the allowed name is reached; the command's status (3) passes through"
err="$(cat "$DF_TMP/exec.err")"
grep -q 'denied .*www\.evil\.test.*fix: --allow www\.evil\.test' <<<"$err" ||
	fail "the summary does not name the denied name with --allow: $err"
grep -q 'blocked .*198\.18\.1\.11 tcp/80 (never_answered' <<<"$err" ||
	fail "the summary does not name the blocked address with its reason: $err"
grep -q 'allowed .*www\.allowed\.test' <<<"$err" ||
	fail "the summary does not name the allowed name used: $err"
grep -q 'blocked .*tcp/9999 (port: .*answered for www\.allowed\.test.*fix: --port tcp/9999' <<<"$err" ||
	fail "the summary does not give the port's fix: $err"
ok "stderr: the denied name with --allow, the blocked address with its reason, the port with its fix, the allowed name"

md="$DF_TMP/x.md"
[ -s "$md" ] || fail "--report x.md wrote nothing"
grep -q '^| `www.evil.test` | [1-9][0-9]* | `--allow www.evil.test` |$' "$md" ||
	fail "x.md has no table row of the denied name: $(cat "$md")"
grep -q '^| `198.18.1.11` | tcp/80 | never_answered:' "$md" ||
	fail "x.md has no table row of the blocked flow: $(cat "$md")"
grep -q '^| `www.allowed.test` | [1-9]' "$md" ||
	fail "x.md has no table row of the allowed name: $(cat "$md")"
ok "--report x.md: the three in Markdown tables"

fexec --report "$DF_TMP/x.json" -- sh -c "$CMD"
[ "$DF_CMD_RC" -eq 3 ] || fail "exec (json report) exited $DF_CMD_RC, expected 3"
js="$DF_TMP/x.json"
jq -e '.exit_status == 3' "$js" >/dev/null || fail "x.json does not parse or lacks exit_status 3: $(cat "$js")"
jq -e '.denied[] | select(.name == "www.evil.test" and .fix == "--allow www.evil.test" and .count >= 1)' \
	"$js" >/dev/null || fail "x.json lacks the denied name: $(cat "$js")"
jq -e '.blocked[] | select(.dst == "198.18.1.11" and .port == "tcp/80" and .reason == "never_answered")' \
	"$js" >/dev/null || fail "x.json lacks the blocked flow: $(cat "$js")"
jq -e '.blocked[] | select(.port == "tcp/9999" and .reason == "port" and .name == "www.allowed.test" and (.fix | contains("tcp/9999")))' \
	"$js" >/dev/null || fail "x.json lacks the port's block with its fix: $(cat "$js")"
jq -e '.allowed[] | select(.entry == "www.allowed.test" and .questions >= 1)' \
	"$js" >/dev/null || fail "x.json lacks the allowed name: $(cat "$js")"
ok "--report x.json parses and holds the three"

fexec -- curl -s -o /dev/null --max-time 5 http://www.allowed.test/
[ "$DF_CMD_RC" -eq 0 ] || fail "exec of the allowed curl exited $DF_CMD_RC"
! grep -q 'denied\|blocked' "$DF_TMP/exec.err" || fail "a clean run printed a summary: $(cat "$DF_TMP/exec.err")"
ok "a run with nothing denied or blocked prints no summary"
