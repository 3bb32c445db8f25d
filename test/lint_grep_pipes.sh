#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The test scripts run under `set -o pipefail`. In `CMD | grep -q X`
# grep exits at its first match; if CMD still has output to write it dies
# of SIGPIPE, and the pipe fails although X was there (test 141 failures,
# a negated check passing over a match). Scripts read the whole output:
# `grep -q X <<<"$(CMD)"`, or `CMD | grep X >/dev/null`. A pipe inside a
# `sh -c "..."` string runs without pipefail and is left alone.
#
#   test/lint_grep_pipes.sh SOURCE_DIR    prints each offending line, exit 1
set -euo pipefail
root=${1:?usage: lint_grep_pipes.sh SOURCE_DIR}
bad=0
# One awk reads every script, a line at a time, a line ending in "|"
# joined to the next.
mapfile -t files < <(find "$root/test" "$root/contrib" "$root/.ci" -type f \( -name '*.sh' -o -name run \) | sort)
awk -v root="$root/" '
	FNR == 1 { held = "" }
	/^[ \t]*#/ { next }
	{ line = (held != "" ? held " " : "") $0; held = "" }
	line ~ /(^|[^|])\|[ \t]*$/ { held = line; next }
	line ~ /(^|[^|])\|[ \t]*grep[ \t]+(-[a-zA-Z]*[qm][a-zA-Z0-9]*|--quiet|--max-count)/ &&
	    line !~ /(ba)?sh -c ["\x27]/ {
		sub(/^[ \t]+/, "", line)
		f = FILENAME
		if (index(f, root) == 1) f = substr(f, length(root) + 1)
		printf "%s:%d: %s\n", f, FNR, line
		bad = 1
	}
	END { exit bad }
' "${files[@]}" || bad=1
if [ "$bad" -ne 0 ]; then
	echo "lint_grep_pipes: a pipe into grep -q or -m fails under pipefail when grep stops early; use 'grep -q X <<<\"\$(CMD)\"' or 'CMD | grep X >/dev/null'" >&2
	exit 1
fi
