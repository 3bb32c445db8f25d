#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Per-client sets for the forward scope, measured on the kernel alone
# (no daemon): what keying the sets by (client, address) costs against
# today's per-address sets, in a fresh network namespace. Root only.
#
#   test/bench/client_sets.sh [CLIENTS [ADDRS]]     (default 100 5000)
#
# For each family, sets with timeouts, each filled by one `ipset restore`
# (lines written before the clock starts):
#   hash:ip          ADDRS addresses (what the forward scope keeps today);
#   then CLIENTS x ADDRS entries in each per-client type this kernel has
#   (a type it lacks is printed as such):
#   hash:net,net     (client/32, address), rule `--match-set S src,dst`;
#   hash:ip,port,ip  (client, tcp:443, address), `src,dst,dst` (the port
#                    is a dimension: one entry per allowed port);
#   hash:net,iface   (address, physdev:PORT), `dst,src` with the entry's
#                    physdev flag: the bridge port the container's frames
#                    come in on, which its root cannot forge;
#   hash:ip          filled again with the same ADDRS lines (-exist): the
#                    restore's fixed cost per line.
# A type whose set fills before CLIENTS x ADDRS (hash:net,iface: "Hash is
# full") shows the entries it took. Prints entries, the kernel's "Size in
# memory", bytes an entry, and the
# restore's time per entry; then, per type, the add time per entry of one
# more client's ADDRS entries into the full set and into an empty one
# (median of 5 restores each, less the median of 5 restores of nothing:
# process start and namespace entry are not the kernel's).
set -euo pipefail

CLIENTS=${1:-100}
ADDRS=${2:-5000}
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, ipsets)" >&2; exit 77; }
command -v ipset >/dev/null || { echo "no ipset" >&2; exit 77; }

ns=dfcsets$$
tmp=$(mktemp -d)
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }
now() { date +%s.%N; }

# client FAMILY I / addr FAMILY J: the I-th client, the J-th answered
# address (198.18.64.0/18 and 198.19.0.0/16; 2001:db8:64::/48 and
# 2001:db8:1::/48).
client() { if [ "$1" = inet ]; then echo "198.18.$((64 + $2 / 250)).$((2 + $2 % 250))"; else printf '2001:db8:64::%x\n' $((2 + $2)); fi; }
addr() { if [ "$1" = inet ]; then echo "198.19.$(($2 / 250)).$((1 + $2 % 250))"; else printf '2001:db8:1::%x:%x\n' $(($2 / 65536)) $(($2 % 65536)); fi; }
mem() { in_ns ipset list -t "$1" | sed -n 's/^Size in memory: //p'; }
entries() { in_ns ipset list -t "$1" | sed -n 's/^Number of entries: //p'; }

# timed_restore FILE: seconds one `ipset restore` of FILE takes (its
# error, a set that is full say, goes to $tmp/restore.err and stderr; the
# entries the set holds then tell how far it got).
timed_restore() {
	local t0 t1
	t0=$(now)
	in_ns ipset restore <"$1" 2>"$tmp/restore.err" || cat "$tmp/restore.err" >&2
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'
}
# median FILE: the median of its numbers.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# entries TYPE SET < "CLIENT INDEX" lines, with $tmp/addrs: the restore
# lines of every client's entries, one per answered address.
gen() {
	awk -v ty="$1" -v set="$2" -v af="$tmp/addrs" '
	BEGIN { while ((getline a < af) > 0) addr[n++] = a }
	{
		for (j = 0; j < n; j++) {
			if (ty == "hash:net,net") e = $1 "," addr[j]
			else if (ty == "hash:ip,port,ip") e = $1 ",tcp:443," addr[j]
			else e = addr[j] ",physdev:dfport" $2
			print "add " set " " e " timeout 600 -exist"
		}
	}'
}
TYPES=(hash:net,net hash:ip,port,ip hash:net,iface)

printf '| family | set | entries | memory (bytes) | bytes/entry | restore s | us/entry |\n|---|---|---|---|---|---|---|\n'
for fam in inet inet6; do
	for ((j = 0; j < ADDRS; j++)); do addr "$fam" "$j"; done >"$tmp/addrs"
	for ((i = 0; i < CLIENTS; i++)); do echo "$(client "$fam" "$i") $i"; done >"$tmp/clients"
	awk '{ print "add dfa " $1 " timeout 600" }' "$tmp/addrs" >"$tmp/a.restore"
	in_ns ipset create dfa hash:ip family "$fam" timeout 60 maxelem $((ADDRS + 1024))
	ta=$(timed_restore "$tmp/a.restore")
	awk -v f="$fam" -v n="$(entries dfa)" -v m="$(mem dfa)" -v t="$ta" \
		'BEGIN { printf "| %s | hash:ip | %d | %d | %.1f | %.3f | %.2f |\n", f, n, m, m / n, t, t * 1e6 / n }'
	sed 's/$/ -exist/' "$tmp/a.restore" >"$tmp/a2.restore"
	ta2=$(timed_restore "$tmp/a2.restore")
	awk -v f="$fam" -v n="$ADDRS" -v t="$ta2" \
		'BEGIN { printf "| %s | hash:ip, the same lines again (-exist) | %d | | | %.3f | %.2f |\n", f, n, t, t * 1e6 / n }'
	in_ns ipset destroy dfa
	for typ in "${TYPES[@]}"; do
		if ! in_ns ipset create dfp "$typ" family "$fam" timeout 60 maxelem $(((CLIENTS + 2) * ADDRS)) 2>"$tmp/err"; then
			echo "| $fam | $typ | not supported by this kernel ($(tr -d '\n' <"$tmp/err")) | | | | |"
			continue
		fi
		gen "$typ" dfp <"$tmp/clients" >"$tmp/p.restore"
		tp=$(timed_restore "$tmp/p.restore")
		awk -v f="$fam" -v ty="$typ" -v n="$(entries dfp)" -v m="$(mem dfp)" -v t="$tp" \
			'BEGIN { printf "| %s | %s | %d | %d | %.1f | %.3f | %.2f |\n", f, ty, n, m, m / n, t, t * 1e6 / n }'
		# One more client's ADDRS entries, into the full set and into
		# an empty one of the same type (deleted between runs).
		echo "$(client "$fam" $((CLIENTS + 1))) $((CLIENTS + 1))" | gen "$typ" dfp >"$tmp/full.restore"
		sed 's/ dfp / dfe /' "$tmp/full.restore" >"$tmp/empty.restore"
		sed 's/^add /del /; s/ timeout 600 -exist$/ -exist/' "$tmp/full.restore" >"$tmp/full.del"
		in_ns ipset create dfe "$typ" family "$fam" timeout 60
		: >"$tmp/full.t"
		: >"$tmp/empty.t"
		: >"$tmp/none.t"
		: >"$tmp/nothing"
		for ((k = 0; k < 5; k++)); do
			{ timed_restore "$tmp/full.restore"; echo; } >>"$tmp/full.t"
			in_ns ipset restore <"$tmp/full.del" 2>/dev/null || true
			{ timed_restore "$tmp/empty.restore"; echo; } >>"$tmp/empty.t"
			in_ns ipset flush dfe
			{ timed_restore "$tmp/nothing"; echo; } >>"$tmp/none.t"
		done
		awk -v f="$fam" -v ty="$typ" -v n="$ADDRS" -v full="$(median "$tmp/full.t")" \
			-v empty="$(median "$tmp/empty.t")" -v none="$(median "$tmp/none.t")" \
			'BEGIN { printf "%s %s: one more client'"'"'s %d entries: %.2f us/entry into the full set, %.2f us/entry into an empty one (a restore of nothing: %.1f ms)\n", f, ty, n, (full - none) * 1e6 / n, (empty - none) * 1e6 / n, none * 1e3 }'
		in_ns ipset destroy dfp
		in_ns ipset destroy dfe
	done
done
