#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope, the new-name budget below an allowed wildcard is kept per
# fenced interface: container A (root in its namespace) gives itself
# extra addresses of its network and floods unique names below
# *.w.allowed.test from each, so every address is a fresh client bucket
# and the flood empties the wildcard entry's bucket (burst 5 a client, 20
# the entry, one token a minute). Container B, behind a second fenced
# bridge, which sent nothing, then asks a new name below the wildcard:
# answered (before, B got REFUSED with EDE 18: A had spent the entry's
# bucket of every client). Positive controls: A itself is refused at the
# end of its flood (REFUSED, EDE 18, the log names its interface's
# shared bucket), and the allowed name resolves and connects.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<<'*.w IN A 198.18.3.1'
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
BR2="df$$br2"
CT3="df$$-ct3"
GW3=198.18.65.1
lab_bridge "$BR2" "$GW3" 2001:db8:65::1
lab_container "$CT3" "df$$e" "df$$j" 198.18.65.2 2001:db8:65::2 "$BR2" "$GW3" 2001:db8:65::1

# ask NS SRC SERVER NAME: "RCODE EDE" of one A question (EDE "-" when none).
ask() {
	local out
	out=$(ip netns exec "$1" dig +time=2 +tries=1 -b "$2" @"$3" "$4" A 2>&1) || true
	printf '%s %s\n' "$(sed -n 's/.*status: \([A-Z]*\).*/\1/p' <<<"$out" | head -n 1)" \
		"$(sed -n 's/.*EDE: \([0-9]*\).*/\1/p' <<<"$out" | head -n 1 | grep . || echo -)"
}

LAB_EXTRA=(interfaces="[\"$BR\", \"$BR2\"]" listen="[\"$GW4:53\", \"[$GW6]:53\", \"$GW3:53\"]"
	allow='["www.allowed.test", "*.w.allowed.test"]' wildcard_budget='{"burst": 5, "per_minute": 1}')
lab_fence nft
lab_allowed_works "nft, budget 5 a client"

# A's flood: 8 addresses x 5 unique names; the entry's 20 go after four.
# One dig asks them all, one after the other (dig -f): 40 dig processes
# took long enough on a loaded machine for the entry's bucket to earn a
# token back (4 a minute) before the control question below.
for h in 20 21 22 23 24 25 26 27; do
	ct ip addr add "198.18.64.$h/24" dev "$CT_IF"
	for i in 1 2 3 4 5; do
		echo "-b 198.18.64.$h @$GW4 a$h-$i.w.allowed.test A"
	done
done >"$DF_TMP/flood.batch"
ip netns exec "$CT" dig +time=2 +tries=1 -f "$DF_TMP/flood.batch" >"$DF_TMP/flood.out" 2>&1 || true
# Each answer's "RCODE EDE", in the order asked.
awk '/<<>> DiG/ { if (n++) print st, ede; st = "-"; ede = "-" }
	/status:/ { st = $0; sub(/.*status: /, "", st); sub(/,.*/, "", st) }
	/EDE: / { ede = $0; sub(/.*EDE: /, "", ede); sub(/[^0-9].*/, "", ede) }
	END { if (n) print st, ede }' "$DF_TMP/flood.out" >"$DF_TMP/flood.rcodes"
[ "$(wc -l <"$DF_TMP/flood.rcodes")" -eq 40 ] || fail "control: A's flood did not get 40 answers: $(cat "$DF_TMP/flood.out")"
refused=$(grep -cx "REFUSED 18" "$DF_TMP/flood.rcodes" || true)
[ "$refused" -gt 0 ] || fail "control: A's flood of 40 new names from 8 addresses was never refused"
r=$(ask "$CT" 198.18.64.27 "$GW4" "a-last.w.allowed.test")
[ "$r" = "REFUSED 18" ] || fail "control: after the flood, A's new name got '$r', expected REFUSED with EDE 18"
ok "control: A's flood from 8 addresses spent $BR's wildcard budget ($refused refused, EDE 18)"

r=$(ask "$CT3" 198.18.65.2 "$GW3" "b-first.w.allowed.test")
[ "$r" = "NOERROR -" ] || fail "B, behind $BR2, got '$r' for its first new name below the wildcard: A spent its budget"
ip netns exec "$CT3" dig +time=2 +tries=1 @"$GW3" b-second.w.allowed.test A +short | grep -x 198.18.3.1 >/dev/null ||
	fail "B's second new name did not resolve to 198.18.3.1"
ok "B, behind another fenced bridge, keeps its wildcard budget after A's flood"
df_wait_log 20 "new-name budget of *.w.allowed.test used up by all clients of interface $BR together" ||
	fail "the log does not name $BR's shared bucket"
ok "the refusal's log line names the interface whose clients share the bucket"
lab_unfence nft
