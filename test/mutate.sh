#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Mutation check: does every test that should catch a break catch it?
#
#   test/mutate.sh [-l LIST] [-k] [ID...]
#
# Copies the working tree (uncommitted edits included, build/ left out)
# to a temp dir, builds it once, then for each entry of LIST
# (test/mutate.list by default; only the IDs named, if any) replaces one
# unique snippet of one source file with its break, rebuilds, runs the
# tests the entry names, and puts the file back. An entry is "killed"
# when at least one of its tests fails, "survived" when all pass.
# Prints a table and exits 1 if any entry survived, if a snippet does not
# match exactly once (the list must follow the code: a moved file is
# found by its basename anywhere under src/ or include/, a changed
# snippet is an error), or if a break does not build. -k keeps the copy.
#
# Not a ctest and not in CI's default run: it builds and runs e2e tests
# once per entry (root, network namespaces, as test/e2e/ needs), and
# takes a long time. Add an entry whenever a feature lands.
#
# Tests are named as in LIST: "e2e/test_X.sh" (run with bash, skip 77
# counts as a pass, so a break cannot be "killed" by a skipped test) or
# "unit/test_X" (the cmocka executable, built for the entry).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/.." && pwd)"
list="$here/mutate.list"
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	-l) list="$(realpath "$2")"; shift 2 ;;
	-k) keep=1; shift ;;
	-h | --help) sed -n '3,24p' "$0"; exit 0 ;;
	-*) echo "mutate.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -f "$list" ] || { echo "mutate.sh: no list $list" >&2; exit 2; }
if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=python3; fi

tmp="$(mktemp -d /tmp/dnsfence-mutate.XXXXXX)"
# Readable by the tests' unprivileged uids: some run a script of the
# copy as the workload (mktemp makes the directory 0700).
chmod 0755 "$tmp"
cleanup() {
	if [ "$keep" = 1 ]; then echo "mutate.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
tree="$tmp/tree"
mkdir -p "$tree"
# The working tree as it is (tracked and untracked files, not ignored
# ones, not build/).
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 -I{} sh -c 'test -e "$1" && printf "%s\0" "$1"' _ {} |
	tar --null -T - -cf -) | tar -xf - -C "$tree"

# The list, parsed and checked against the copy: one line per entry,
# "ID<TAB>PATH<TAB>TESTS<TAB>WHAT", where PATH is the file found.
"$py" - "$list" "$tree" "$tmp/entries" "$tmp/breaks" "$@" <<'EOF'
import os, sys
listf, tree, out, breaks, only = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], set(sys.argv[5:])
entries, cur, errors = [], None, []
def finish():
    if cur is None:
        return
    for k in ("id", "file", "tests", "what"):
        if not cur.get(k):
            errors.append("%s:%d: entry without '%s'" % (listf, cur["line"], k))
    if not cur["old"]:
        errors.append("%s:%d: entry %s has no '-' (original) lines" % (listf, cur["line"], cur.get("id")))
    entries.append(cur)
for n, raw in enumerate(open(listf), 1):
    line = raw.rstrip("\n")
    if line.startswith("#"):
        continue
    if line.strip() == "":
        finish(); cur = None
        continue
    if cur is None:
        cur = {"line": n, "old": [], "new": []}
    if line.startswith("- ") or line == "-":
        cur["old"].append(line[2:])
    elif line.startswith("+ ") or line == "+":
        cur["new"].append(line[2:])
    else:
        k, sep, v = line.partition(":")
        if not sep or k not in ("id", "file", "tests", "what"):
            errors.append("%s:%d: cannot read %r" % (listf, n, line))
            continue
        cur[k] = v.strip()
finish()
seen = set()
for e in entries:
    if e.get("id") in seen:
        errors.append("duplicate id %s" % e["id"])
    seen.add(e.get("id"))
unknown = only - seen
if unknown:
    errors.append("no such entries: " + " ".join(sorted(unknown)))
# Files by basename under src/ and include/ (the tree may move them).
where = {}
for top in ("src", "include"):
    for d, _, files in os.walk(os.path.join(tree, top)):
        for f in files:
            where.setdefault(f, []).append(os.path.relpath(os.path.join(d, f), tree))
os.makedirs(breaks, exist_ok=True)
rows = []
# Every entry is checked, also when only some run: the list cannot rot.
for e in entries:
    paths = where.get(e.get("file", ""), [])
    if len(paths) != 1:
        errors.append("%s: file %s found %d times under src/ and include/" % (e["id"], e.get("file"), len(paths)))
        continue
    text = open(os.path.join(tree, paths[0])).read()
    old = "\n".join(e["old"])
    new = "\n".join(e["new"])
    c = text.count(old)
    if c != 1:
        errors.append("%s: the snippet occurs %d times in %s (must be once):\n    %s" % (e["id"], c, paths[0], old.replace("\n", "\n    ")))
        continue
    for t in e["tests"].split():
        if not (t.startswith("e2e/test_") and t.endswith(".sh") and os.path.isfile(os.path.join(tree, "test", t))) and \
           not (t.startswith("unit/test_") and os.path.isfile(os.path.join(tree, "test", t + ".c"))):
            errors.append("%s: no such test %s" % (e["id"], t))
    with open(os.path.join(breaks, e["id"]), "w") as f:
        f.write(text.replace(old, new))
    if not only or e["id"] in only:
        rows.append("\t".join([e["id"], paths[0], e["tests"], e["what"]]))
if errors:
    print("mutate.sh: the list does not match the tree:", file=sys.stderr)
    for m in errors:
        print("  " + m, file=sys.stderr)
    sys.exit(1)
open(out, "w").write("".join(r + "\n" for r in rows))
EOF

build="$tree/build"
t0=$(date +%s)
echo "mutate.sh: building the copy in $tree" >&2
cmake -S "$tree" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$tmp/cmake.log" 2>&1 ||
	{ cat "$tmp/cmake.log" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)" >"$tmp/build.log" 2>&1 ||
	{ tail -n 40 "$tmp/build.log" >&2; exit 1; }

# run_tests TESTS...: 0 if all pass (or skip), 1 if one fails.
run_tests() {
	local t rc
	for t in "$@"; do
		rc=0
		case "$t" in
		e2e/*)
			DNSFENCE_BIN="$build/dnsfence" DNSFENCE_SRC="$tree" \
				timeout 300 bash "$tree/test/$t" >>"$tmp/run.log" 2>&1 || rc=$?
			;;
		unit/*)
			timeout 120 "$build/test/${t#unit/}" >>"$tmp/run.log" 2>&1 || rc=$?
			;;
		esac
		if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
			echo "$t"
			return 1
		fi
	done
	return 0
}

# Sanity: the unbroken tree passes every test the list names, or a
# "killed" would mean nothing.
mapfile -t all_tests < <(cut -f3 "$tmp/entries" | tr ' ' '\n' | sort -u)
echo "mutate.sh: control run of ${#all_tests[@]} tests on the unbroken tree" >&2
units=()
for t in "${all_tests[@]}"; do case "$t" in unit/*) units+=("${t#unit/}") ;; esac; done
if failed="$(run_tests "${all_tests[@]}")"; then :; else
	echo "mutate.sh: $failed fails on the unbroken tree; fix that first (log: $tmp/run.log)" >&2
	keep=1
	exit 1
fi

survived=0 broken=0
results="$tmp/results"
: >"$results"
: >"$tmp/why"
while IFS=$'\t' read -r id path tests what; do
	echo "mutate.sh: $id ($path)" >&2
	cp -p "$tree/$path" "$tmp/orig"
	cat "$tmp/breaks/$id" >"$tree/$path"
	# test_firewall_rules drives the firewall module through bench_fwtool.
	targets=(dnsfence bench_fwtool)
	for t in $tests; do case "$t" in unit/*) targets+=("${t#unit/}") ;; esac; done
	s0=$(date +%s)
	: >"$tmp/run.log"
	if ! cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >"$tmp/build.log" 2>&1; then
		result="no-build"
		by="$(grep -m1 -E 'error' "$tmp/build.log" || echo "see build log")"
		broken=$((broken + 1))
	else
		# shellcheck disable=SC2086
		if by="$(run_tests $tests)"; then
			result="SURVIVED"
			by="-"
			survived=$((survived + 1))
			cp "$tmp/run.log" "$tmp/survived-$id.log"
		else
			result="killed"
			why="$(grep -m1 -E '^(FAIL|\[  FAILED  \]|\[  ERROR   \])' "$tmp/run.log" | cut -c1-160)"
			printf '%s\t%s\n' "$id" "${why:-exit status only}" >>"$tmp/why"
		fi
	fi
	cp -p "$tmp/orig" "$tree/$path"
	touch "$tree/$path"
	printf '%s\t%s\t%s\t%ss\t%s\n' "$id" "$result" "$by" "$(($(date +%s) - s0))" "$what" >>"$results"
	printf '  %s: %s %s\n' "$id" "$result" "$by" >&2
done <"$tmp/entries"
# The last entry's file is back: rebuild so a kept copy is the real tree.
cmake --build "$build" -j"$(nproc)" >/dev/null 2>&1 || echo "mutate.sh: the copy did not rebuild" >&2

printf '\n%-28s %-9s %-52s %6s  %s\n' "break" "result" "caught by" "time" "what it breaks"
while IFS=$'\t' read -r id result by secs what; do
	printf '%-28s %-9s %-52s %6s  %s\n' "$id" "$result" "$by" "$secs" "$what"
done <"$results"
echo
echo "how each was caught (the first failure message):"
while IFS=$'\t' read -r id why; do
	printf '  %-26s %s\n' "$id" "$why"
done <"$tmp/why"
total=$(wc -l <"$results")
printf '\n%d breaks: %d killed, %d survived, %d did not build; %d s in all\n' \
	"$total" "$((total - survived - broken))" "$survived" "$broken" "$(($(date +%s) - t0))"
if [ "$survived" -gt 0 ] || [ "$broken" -gt 0 ]; then
	[ "$survived" -eq 0 ] || echo "survivors' test logs: $tmp/survived-*.log" >&2
	keep=1
	exit 1
fi
