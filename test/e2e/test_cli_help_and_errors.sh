#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Command-line conventions: "dnsfence COMMAND --help" exits 0 and prints
# that command's usage and exit codes, for every command "--help" lists,
# and "dnsfence help COMMAND" prints the same; options may follow the
# command ("validate -c FILE"); usage and config errors are one plain
# "dnsfence: ..." line (no timestamp) and exit 2.
source "$(dirname "$0")/lib.sh"
df_init_noroot
cmds="$("$DNSFENCE_BIN" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')"
[ "$(wc -w <<<"$cmds")" -ge 12 ] || fail "--help lists too few commands: $cmds"
for c in $cmds; do
	rc=0
	out="$("$DNSFENCE_BIN" "$c" --help 2>&1)" || rc=$?
	[ "$rc" -eq 0 ] || fail "dnsfence $c --help exited $rc: $out"
	grep -q "^usage: dnsfence \[-c FILE\] $c" <<<"$out" || fail "dnsfence $c --help: no usage line for $c: $out"
	grep -q '^exit codes: 0' <<<"$out" || fail "dnsfence $c --help does not list its exit codes: $out"
	[ "$("$DNSFENCE_BIN" help "$c")" = "$out" ] || fail "dnsfence help $c differs from dnsfence $c --help"
done
ok "COMMAND --help exits 0 with usage and exit codes, and equals 'help COMMAND', for: $(echo $cmds)"

df_config allow='["www.allowed.test"]'
rc=0
out="$("$DNSFENCE_BIN" validate -c "$DF_DNSFENCE_CONF" 2>&1)" || rc=$?
[ "$rc" -eq 0 ] || fail "validate -c FILE (option after the command) exited $rc: $out"
grep -q '"www.allowed.test"' <<<"$out" || fail "validate -c FILE did not read FILE: $out"
ok "options after the command: validate -c FILE -> 0"

expect_plain_error() { # DESCRIPTION TEXT ARGS...
	local what=$1 text=$2 rc=0 err
	shift 2
	err="$("$DNSFENCE_BIN" "$@" 2>&1 >/dev/null)" || rc=$?
	[ "$rc" -eq 2 ] || fail "$what: expected exit 2, saw $rc: $err"
	grep -q "^dnsfence: .*$text" <<<"$err" || fail "$what: expected a 'dnsfence: ...$text' line: $err"
	! grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' <<<"$err" || fail "$what: the error carries a log timestamp: $err"
	ok "$what -> 2: $(head -1 <<<"$err")"
}
expect_plain_error "an unknown option" "status: unknown option '--bogus'" -c "$DF_DNSFENCE_CONF" status --bogus
expect_plain_error "an operand a command does not take" "validate: unexpected operand" -c "$DF_DNSFENCE_CONF" validate extra
expect_plain_error "an unknown command" "unknown command 'frobnicate'" frobnicate
expect_plain_error "help for an unknown command" "unknown command 'nope'" help nope
expect_plain_error "a missing config file" "$DF_TMP/none.json" validate -c "$DF_TMP/none.json"
expect_plain_error "a bad --min-count" "min-count" -c "$DF_DNSFENCE_CONF" suggest --min-count 0
