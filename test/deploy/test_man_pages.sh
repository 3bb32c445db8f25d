#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The man pages agree with the code: dnsfence.json(5) is exactly what
# docs/man/mkman.py makes of `dnsfence reference` (so every config key is
# in it), dnsfence(8)'s COMMANDS section lists exactly the commands of
# `dnsfence --help`, and groff renders both without warnings.
set -euo pipefail
SRC="${DNSFENCE_SRC:?}"
BIN="${DNSFENCE_BIN:?}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
fail() { echo "FAIL test_man_pages: $*" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$BIN" reference | "$PY" "$SRC/docs/man/mkman.py" >"$tmp/dnsfence.json.5"
diff -u "$SRC/docs/man/dnsfence.json.5" "$tmp/dnsfence.json.5" ||
	fail "docs/man/dnsfence.json.5 is stale: regenerate with '$BIN reference | docs/man/mkman.py > docs/man/dnsfence.json.5'"
keys="$("$BIN" reference | sed -n 's/^| `\([a-z0-9_.]*\)` |.*/\1/p')"
[ "$(wc -l <<<"$keys")" -ge 10 ] || fail "could not read the keys from 'dnsfence reference'"
for k in $keys; do
	grep -qF "\\fB$k\\fR" "$SRC/docs/man/dnsfence.json.5" || fail "key $k is not in dnsfence.json.5"
done
echo "ok   dnsfence.json.5 is generated from the code's key table ($(wc -l <<<"$keys") keys)"

help_cmds="$("$BIN" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' | sort)"
man_cmds="$(awk '/^\.SH COMMANDS/ { on = 1; next } on && /^\.SH/ { exit }
	on && prev == ".TP" { sub(/^\.B[IR]? /, ""); gsub(/"/, ""); print $1 } { prev = $0 }' \
	"$SRC/docs/man/dnsfence.8" | sort)"
[ -n "$help_cmds" ] || fail "no commands in --help"
[ "$help_cmds" = "$man_cmds" ] ||
	fail "dnsfence.8 COMMANDS ($(echo $man_cmds)) differ from --help ($(echo $help_cmds))"
echo "ok   dnsfence.8 lists the commands of --help: $(echo $help_cmds)"

# Each command's usage as the page renders it: no option run into its
# argument ("--min-countN"), one bold name per COMMANDS entry.
if command -v groff >/dev/null 2>&1; then
	text="$(MANWIDTH=200 groff -man -Tutf8 -P-cbou "$SRC/docs/man/dnsfence.8" 2>/dev/null)"
	grep -q 'suggest \[--min-count N\]' <<<"$text" || fail "dnsfence.8 does not render 'suggest [--min-count N]': $(grep -m1 'suggest \[' <<<"$text")"
	grep -q 'entries \[--json\] \[--name NAME\] \[--addr ADDR\]' <<<"$text" || fail "dnsfence.8 does not render the entries usage"
	grep -q 'prune \[--unused-for DURATION\]' <<<"$text" || fail "dnsfence.8 does not render 'prune [--unused-for DURATION]': $(grep -m1 'prune \[' <<<"$text")"
	echo "ok   dnsfence.8 renders the command usages with their spaces"
fi

if command -v groff >/dev/null 2>&1; then
	warn="$(groff -man -ww -z "$SRC/docs/man/dnsfence.8" "$SRC/docs/man/dnsfence.json.5" 2>&1)"
	[ -z "$warn" ] || fail "groff warnings: $warn"
	echo "ok   groff renders both pages without warnings"
fi
# man(1) as a reader runs it, with its own warnings on.
if command -v man >/dev/null 2>&1; then
	for page in dnsfence.8 dnsfence.json.5; do
		warn="$(MANWIDTH=80 man --warnings -l "$SRC/docs/man/$page" 2>&1 >/dev/null)"
		[ -z "$warn" ] || fail "man --warnings -l $page: $warn"
	done
	echo "ok   man --warnings renders both pages without warnings"
fi
