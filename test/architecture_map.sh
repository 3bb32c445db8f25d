#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/architecture.md's module table matches the tree: every src/*.c is a
# row, every row names a src/*.c that exists, and the header it names
# (include/dnsfence/NAME.h, or "(none)" for main.c only) exists and is
# the file's own: one header = one file. Usage: architecture_map.sh SRCDIR
set -euo pipefail
src=${1:?usage: architecture_map.sh SRCDIR}
doc="$src/docs/architecture.md"
bad=0

[ -f "$doc" ] || { echo "FAIL: $doc missing"; exit 1; }
# Rows: | `src/NAME.c` | `include/dnsfence/NAME.h` or (none) | owns |
rows="$(grep -E '^\| `src/[A-Za-z0-9_]+\.c` \|' "$doc" || true)"
if [ -z "$rows" ]; then
	echo "FAIL: no module rows in $doc"
	exit 1
fi

declare -A listed=()
while IFS= read -r row; do
	c="$(sed -E 's/^\| `(src\/[A-Za-z0-9_]+\.c)` \|.*/\1/' <<<"$row")"
	h="$(awk -F'|' '{print $3}' <<<"$row" | tr -d ' `')"
	owns="$(awk -F'|' '{print $4}' <<<"$row" | tr -d ' ')"
	name="$(basename "$c" .c)"
	if [ -n "${listed[$c]:-}" ]; then
		echo "FAIL: $c is listed twice"
		bad=1
	fi
	listed[$c]=1
	[ -f "$src/$c" ] || { echo "FAIL: the map names $c, which does not exist"; bad=1; }
	[ -n "$owns" ] || { echo "FAIL: $c: no \"owns\" text"; bad=1; }
	if [ "$h" = "(none)" ]; then
		[ "$name" = main ] || { echo "FAIL: $c has no header in the map"; bad=1; }
	elif [ "$h" != "include/dnsfence/$name.h" ]; then
		echo "FAIL: $c: header $h, expected include/dnsfence/$name.h"
		bad=1
	elif [ ! -f "$src/$h" ]; then
		echo "FAIL: the map names $h, which does not exist"
		bad=1
	fi
done <<<"$rows"

for f in "$src"/src/*.c; do
	c="src/$(basename "$f")"
	[ -n "${listed[$c]:-}" ] || { echo "FAIL: $c is missing from the module map in docs/architecture.md"; bad=1; }
done
# A header without its .c is a second half of some other module.
for h in "$src"/include/dnsfence/*.h; do
	name="$(basename "$h" .h)"
	[ -f "$src/src/$name.c" ] || { echo "FAIL: include/dnsfence/$name.h has no src/$name.c"; bad=1; }
done

if [ "$bad" -ne 0 ]; then
	exit 1
fi
echo "ok: ${#listed[@]} modules, map and tree agree"
