#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel set adds: dnsfence's sets_add (batched libmnl netlink, every add
# acked) against `ipset restore` of the same addresses, in one run, in a
# fresh network namespace. Prints both rates and the ratio. Root only.
#
#   test/bench/netlink_adds.sh [N [PER_CALL [WINDOW]]]
#   BENCH_SETS=path/to/bench_sets (default: build/test/bench_sets)
set -euo pipefail

N=${1:-200000}
PER_CALL=${2:-16}
WINDOW=${3:-64}
here=$(cd "$(dirname "$0")" && pwd)
BENCH_SETS=${BENCH_SETS:-$here/../../build/test/bench_sets}
[ -x "$BENCH_SETS" ] || { echo "bench_sets not found: $BENCH_SETS" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, ipsets)" >&2; exit 77; }

ns=dfbench$$
tmp=$(mktemp -d)
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }

maxelem=$((N + 1024))
"$BENCH_SETS" --print-restore -n "$N" --set4 dfr4 --set6 dfr6 >"$tmp/adds"

# dnsfence: sets created by bench_sets itself (libipset), then timed adds.
out=$(in_ns "$BENCH_SETS" -n "$N" -b "$PER_CALL" -w "$WINDOW" \
	--set4 dfb4 --set6 dfb6 2>/dev/null)
echo "$out"
ours=$(sed -n 's/.* \([0-9.]*\) adds\/s.*/\1/p' <<<"$out")
[ "$(in_ns ipset list -t dfb4 | sed -n 's/^Number of entries: //p')" -gt 0 ]

# ipset restore: same addresses, same timeouts, sets created first
# (untimed), one process, one restore.
in_ns ipset create dfr4 hash:ip family inet timeout 60 maxelem $maxelem
in_ns ipset create dfr6 hash:ip family inet6 timeout 60 maxelem $maxelem
t0=$(date +%s.%N)
in_ns ipset restore <"$tmp/adds"
t1=$(date +%s.%N)
n4=$(in_ns ipset list -t dfr4 | sed -n 's/^Number of entries: //p')
n6=$(in_ns ipset list -t dfr6 | sed -n 's/^Number of entries: //p')
theirs=$(awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
echo "ipset restore: $N addresses ($n4 + $n6 in the sets): $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s, $theirs adds/s"
awk -v o="$ours" -v t="$theirs" 'BEGIN { printf "ratio sets_add / ipset restore: %.2f\n", o / t }'
