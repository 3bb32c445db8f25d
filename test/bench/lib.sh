# SPDX-License-Identifier: GPL-2.0-or-later
# Scaffolding shared by the benchmark scripts (dnsperf.sh, reload.sh):
# sourced after the caller has set BENCH_NAME (a short prefix). It makes
# one network namespace "$ns" with loopback up and a temp dir "$tmp", and
# an EXIT trap that stops every pid in "pids", kills what is left in the
# namespace, deletes it and removes the temp dir (BENCH_KEEP=1 keeps it),
# also on failure or Ctrl-C. Nothing outside the namespace is touched.

ns=${BENCH_NAME}$$
tmp=$(mktemp -d "/tmp/${BENCH_NAME}.XXXXXX")
pids=()

bench_cleanup() {
	local rc=$? p
	set +e
	trap - EXIT INT TERM
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.3
	for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	ip netns del "$ns" 2>/dev/null
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
	exit "$rc"
}
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

in_ns() { ip netns exec "$ns" "$@"; }
# bench_dns_child PID: the DNS process of the daemon PID (its child named
# dnsfence-dns; not the guard's short-lived checks, forks of the parent
# that would count its pages again). Prints nothing when there is none.
bench_dns_child() { pgrep -P "$1" -x dnsfence-dns || :; }
say() { printf '== %s\n' "$*" >&2; }

ip netns add "$ns"
ip -n "$ns" link set lo up
