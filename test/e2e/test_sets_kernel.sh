#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The sets module against the real kernel, in a network namespace of its
# own: sets are created right, adds land with the clamped TTL as timeout,
# a shorter TTL never shortens an entry, a set of the wrong type is an
# error naming it, a missing set is ENOENT and a full one ENOSPC.
# Needs root; exits 77 (skip) otherwise.
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
if [ -z "${BENCH_SETS:-}" ]; then
	BENCH_SETS=$(dirname "${DNSFENCE_BIN:?DNSFENCE_BIN or BENCH_SETS}")/test/bench_sets
fi
[ -x "$BENCH_SETS" ] || { echo "FAIL: no bench_sets at $BENCH_SETS"; exit 1; }

ns=dfsets$$
trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
# timeout of member $2 in set $1
member_timeout() { in_ns ipset list "$1" | sed -n "s/^$2 timeout \([0-9]*\)$/\1/p"; }

# 1. creation: hash:ip, right family, timeout support, maxelem.
in_ns "$BENCH_SETS" --check create t4 t6 8 || fail "create"
hdr=$(in_ns ipset -o save -t list t4)
grep -q '^create t4 hash:ip family inet .*maxelem 8 timeout ' <<<"$hdr" || fail "t4 header: $hdr"
hdr=$(in_ns ipset -o save -t list t6)
grep -q '^create t6 hash:ip family inet6 .*maxelem 8 timeout ' <<<"$hdr" || fail "t6 header: $hdr"
# Existing sets of the right kind are accepted.
in_ns "$BENCH_SETS" --check create t4 t6 8 || fail "re-create of right sets"
in_ns "$BENCH_SETS" --check check t4 t6 || fail "check"

# 2. adds: timeout = clamp(TTL, 60, 86400); TTL 0 becomes 60; a shorter
# TTL later never shortens; a longer one lengthens.
out=$(in_ns "$BENCH_SETS" --check add t4 t6 60 86400 \
	'198.18.0.1/3600 2001:db8::1/100 198.18.0.2/0 198.18.0.3/999999' \
	'198.18.0.1/100 2001:db8::1/5000' '198.18.0.1/50')
echo "$out"
grep -q '^call 1: status 0 added 4 skipped 0$' <<<"$out" || fail "call 1"
grep -q '^call 2: status 0 added 1 skipped 1$' <<<"$out" || fail "call 2"
# Everything skipped: done still comes, from the event loop.
grep -q '^call 3: status 0 added 0 skipped 1$' <<<"$out" || fail "call 3"
t=$(member_timeout t4 198.18.0.1); [ "$t" -ge 3590 ] && [ "$t" -le 3600 ] || fail "198.18.0.1 timeout $t"
t=$(member_timeout t4 198.18.0.2); [ "$t" -ge 50 ] && [ "$t" -le 60 ] || fail "198.18.0.2 timeout $t"
t=$(member_timeout t4 198.18.0.3); [ "$t" -ge 86390 ] && [ "$t" -le 86400 ] || fail "198.18.0.3 timeout $t"
t=$(member_timeout t6 2001:db8::1); [ "$t" -ge 4990 ] && [ "$t" -le 5000 ] || fail "2001:db8::1 timeout $t"

# 3. a set of the wrong type is refused, by name, never reused.
in_ns ipset create dfwrong hash:net family inet timeout 60
in_ns ipset create dfnotime hash:ip family inet6
out=$(in_ns "$BENCH_SETS" --check create dfwrong t6 8) && fail "hash:net accepted"
grep -q 'set dfwrong exists as hash:net' <<<"$out" || fail "wrong type message: $out"
out=$(in_ns "$BENCH_SETS" --check create t4 dfnotime 8) && fail "set without timeout accepted"
grep -q 'set dfnotime exists as hash:ip family inet6 without timeout' <<<"$out" || fail "no-timeout message: $out"
out=$(in_ns "$BENCH_SETS" --check create t6 t4 8) && fail "swapped families accepted"
grep -q 'set t6 exists as hash:ip family inet6' <<<"$out" || fail "family message: $out"

# 4. a set that is full: ENOSPC ("Hash is full"); the client gets SERVFAIL.
out=$(in_ns "$BENCH_SETS" --check add t4 t6 60 86400 \
	'198.18.1.1 198.18.1.2 198.18.1.3 198.18.1.4 198.18.1.5 198.18.1.6') && fail "full set accepted"
echo "$out"
grep -q '^call 1: status ENOSPC' <<<"$out" || fail "full: $out"

# 5. a missing set: ENOENT.
in_ns ipset destroy t6
out=$(in_ns "$BENCH_SETS" --check add t4 t6 60 86400 '2001:db8::7/300') && fail "missing set accepted"
grep -q '^call 1: status ENOENT' <<<"$out" || fail "missing: $out"

# 6. destroy is idempotent.
in_ns "$BENCH_SETS" --check destroy t4 t6 || fail "destroy"
grep -qx t4 <<<"$(in_ns ipset list -n)" && fail "t4 still there"
in_ns "$BENCH_SETS" --check destroy t4 t6 || fail "destroy of missing sets"
echo "PASS"
