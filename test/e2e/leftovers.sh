#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Removes what an interrupted e2e run left behind (Ctrl-C, a killed test,
# a lost machine), before the suite starts (ctest fixture e2e_leftovers),
# and says what it removed. It only takes names the suite itself makes,
# each carrying the pid of the test shell that made it (lib.sh's df<PID>-
# prefix), and only when that pid is no longer a test of this suite: a
# test running meanwhile, from this checkout or another, keeps its own.
#   network namespaces df<PID>-* (their processes killed, their veths and
#   ipsets go with them), /etc/netns/df<PID>-*, /run/dnsfence-df<PID>-*
#   (default state dirs of test_two_namespaces_default_state), the empty
#   cgroups df<PID>-* of the exec tests, and the temp dirs
#   /tmp/df<PID>-e2e.* and /tmp/df<PID>-share.*.
set -uo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (the leftovers are root's)" >&2
	exit 77
fi

removed=0
say() { echo "leftovers: removed $*"; removed=$((removed + 1)); }

# alive PID: PID may still be the test shell that made the name (a
# shell runs there): a test in progress, from any checkout, keeps its own.
# A pid reused by another shell keeps a leftover until a later run.
alive() {
	case "$(cat "/proc/$1/comm" 2>/dev/null)" in
	bash | sh | dash) return 0 ;;
	esac
	return 1
}

# owner NAME: the pid in a df<PID>... name, or nothing.
owner() { sed -n 's/^df\([0-9][0-9]*\).*/\1/p' <<<"$1"; }

for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
	pid="$(owner "$ns")"
	[ -n "$pid" ] && ! alive "$pid" || continue
	for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	ip netns del "$ns" 2>/dev/null && say "network namespace $ns"
done
cgroot="$(findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -1)"
if [ -n "$cgroot" ]; then
	while IFS= read -r cg; do
		pid="$(owner "${cg##*/}")"
		[ -n "$pid" ] && ! alive "$pid" || continue
		# Only empty ones: rmdir fails on a cgroup that holds a process.
		rmdir "$cg" 2>/dev/null && say "cgroup $cg"
	done < <(find "$cgroot" -depth -mindepth 1 -type d -name 'df[0-9]*' 2>/dev/null)
fi
for d in /etc/netns/df* /run/dnsfence-df* /tmp/df[0-9]*-e2e.* /tmp/df[0-9]*-share.*; do
	[ -e "$d" ] || continue
	name="${d##*/}"
	pid="$(owner "${name#dnsfence-}")"
	[ -n "$pid" ] && ! alive "$pid" || continue
	rm -rf "$d" && say "$d"
done
echo "leftovers: $removed removed"
