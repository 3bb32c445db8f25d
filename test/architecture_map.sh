#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/architecture.md matches the tree. Usage: architecture_map.sh SRCDIR
#
# 1. The layer sketch (the ```layers block: one line per folder, top layer
#    first, "LAYER -> the layers it includes") is the layer order, written
#    once. Every folder of src/ is a line of it and every line a folder.
# 2. No file of a folder includes "LAYER/..." of a layer above it, and
#    each line of the sketch names exactly the layers its folder includes
#    (so the sketch stays true), and src/LAYER/CMakeLists.txt links only
#    layers below it.
# 3. The module table: every src/LAYER/*.c and *.h is a row (or a row's
#    header), a header sits beside its .c with the same name, and every
#    row names files that exist.
# 4. No callback type is declared twice: two function-pointer typedefs
#    with the same return type and parameter list (names included) are
#    one type written twice (fence.c had three report types).
set -euo pipefail
src=${1:?usage: architecture_map.sh SRCDIR}
doc="$src/docs/architecture.md"
bad=0
fail() {
	echo "FAIL: $*"
	bad=1
}

[ -f "$doc" ] || { echo "FAIL: $doc missing"; exit 1; }

# --- 1. the layer order, from the sketch (top first)
sketch="$(awk '/^```layers$/{on=1; next} /^```/{on=0} on' "$doc")"
[ -n "$sketch" ] || { echo "FAIL: no \`\`\`layers block in $doc"; exit 1; }
declare -A rank=() says=()
order=()
while IFS= read -r line; do
	[[ "$line" =~ ^([a-z]+)\ +-\>\ *(.*)$ ]] || { fail "sketch line not \"LAYER -> LAYERS\": $line"; continue; }
	order+=("${BASH_REMATCH[1]}")
	says[${BASH_REMATCH[1]}]="$(tr ' ' '\n' <<<"${BASH_REMATCH[2]}" | grep -E '^[a-z]+$' | grep -vx nothing | sort | tr '\n' ' ' || true)"
done <<<"$sketch"
n=${#order[@]}
for i in "${!order[@]}"; do
	rank[${order[$i]}]=$((n - i)) # bottom layer = 1
done
for d in "$src"/src/*/; do
	l="${d%/}"
	l="${l##*/}"
	[ -n "${rank[$l]:-}" ] || fail "src/$l/ is not a layer of the sketch in docs/architecture.md"
done
for l in "${order[@]}"; do
	[ -d "$src/src/$l" ] || fail "the sketch names layer $l, but src/$l/ does not exist"
done
if ls "$src"/src/*.c "$src"/src/*.h >/dev/null 2>&1; then
	fail "files directly in src/ (each belongs to a layer folder): $(cd "$src" && ls src/*.[ch] | tr '\n' ' ')"
fi

# --- 2. includes and links follow the order
for l in "${order[@]}"; do
	[ -d "$src/src/$l" ] || continue
	used=""
	# "FILE INCLUDE" for every layer include of the folder, one sed for all.
	while read -r f inc; do
		m="${inc%%/*}"
		if [ -z "${rank[$m]:-}" ]; then
			fail "src/$l/${f##*/} includes \"$inc\": $m is no layer"
		elif [ "${rank[$m]}" -gt "${rank[$l]}" ]; then
			fail "src/$l/${f##*/} includes \"$inc\": $m is above $l"
		fi
		[ "$m" = "$l" ] || used+="$m"$'\n'
	done < <(grep -HE '^#include "[a-z]+/[A-Za-z0-9_]+\.h"' "$src"/src/"$l"/*.[ch] |
		sed -nE 's/^([^:]*):#include "([a-z]+\/[A-Za-z0-9_]+\.h)".*/\1 \2/p')
	used="$(sort -u <<<"$used" | grep -v '^$' | tr '\n' ' ' || true)"
	[ "$used" = "${says[$l]}" ] ||
		fail "sketch line \"$l -> ${says[$l]}\" but src/$l/ includes: ${used:-nothing}"
	cm="$src/src/$l/CMakeLists.txt"
	if [ ! -f "$cm" ]; then
		fail "src/$l/CMakeLists.txt missing"
		continue
	fi
	for m in $(grep -oE 'dnsfence_[a-z]+' "$cm" | sed 's/^dnsfence_//' | sort -u); do
		[ "$m" = "$l" ] && continue
		if [ -z "${rank[$m]:-}" ]; then
			fail "src/$l/CMakeLists.txt links dnsfence_$m, no layer"
		elif [ "${rank[$m]}" -ge "${rank[$l]}" ]; then
			fail "src/$l/CMakeLists.txt links dnsfence_$m, not below $l"
		fi
	done
	cmtext=$'\n'"$(<"$cm")"$'\n'
	for f in "$src"/src/"$l"/*.c; do
		b="${f##*/}"
		[ "$b" = main.c ] && continue
		[[ "$cmtext" =~ $'\n'\ +"$b"$'\n' ]] || fail "src/$l/$b is not in src/$l/CMakeLists.txt"
	done
done

# --- 3. the module table
# Rows: | `src/LAYER/NAME.c` | `src/LAYER/NAME.h` or (none) | owns |, and
# for a header without a source: | `src/LAYER/NAME.h` | (header only) | owns |
rows="$(grep -E '^\| `src/[a-z]+/[A-Za-z0-9_]+\.[ch]` \|' "$doc" || true)"
[ -n "$rows" ] || { echo "FAIL: no module rows in $doc"; exit 1; }
declare -A listed=()
while IFS='|' read -r _ c h owns _; do
	c="${c//[ \`]/}"
	h="${h//[ \`]/}"
	owns="${owns// /}"
	[ -z "${listed[$c]:-}" ] || fail "$c is listed twice"
	listed[$c]=1
	[ -f "$src/$c" ] || fail "the map names $c, which does not exist"
	[ -n "$owns" ] || fail "$c: no \"owns\" text"
	case "$h" in
	"(none)" | "(headeronly)") ;;
	*)
		[ "$h" = "${c%.c}.h" ] || fail "$c: header $h, expected ${c%.c}.h beside it"
		[ -f "$src/$h" ] || fail "the map names $h, which does not exist"
		listed[$h]=1
		;;
	esac
done <<<"$rows"
for f in "$src"/src/*/*.[ch]; do
	c="${f#"$src"/}"
	[ -n "${listed[$c]:-}" ] || fail "$c is missing from the module table in docs/architecture.md"
done

# --- 4. one callback type per signature
dups="$(for h in "$src"/src/*/*.h; do tr '\n\t' '  ' <"$h"; done |
	grep -oE 'typedef [^;]*\(\*[a-z_0-9]+\)\([^)]*\);' |
	sed -E 's/ +/ /g; s/^typedef (.*)\(\*([a-z_0-9]+)\)(\(.*\));$/\1\3 \2/' |
	awk '{ name = $NF; $NF = ""; names[$0] = names[$0] " " name; n[$0]++ }
		END { for (k in n) if (n[k] > 1) print names[k] ": " k }')"
[ -z "$dups" ] || fail "one callback type declared more than once:$dups"

[ "$bad" -eq 0 ] || exit 1
echo "ok: ${#listed[@]} files in ${#order[@]} layers (${order[*]}), no include or link up the order"
