#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The firewall module against the real kernel, in a network namespace of
# its own, driven by test/bench/bench_fwtool (not the daemon): apply puts
# in the rules and the DROP policy for both families; a second apply
# changes nothing (one jump, no duplicate rule); check is clean, then
# reports exactly a deleted rule and a flipped policy; a foreign OUTPUT
# rule survives apply and remove; a blocked connection fails at once
# (TCP reset) and is counted; remove leaves no chain, no jump, policy
# ACCEPT; rules in both iptables backends make apply refuse; a namespace
# with IPv6 disabled still gets the ip6tables DROP policy (invariant 6).
# The rules are compared with a text written in this file, never with
# what the binary under test renders.
# Needs root; exits 77 (skip) otherwise.
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
if [ -z "${BENCH_FWTOOL:-}" ]; then
	BENCH_FWTOOL=$(dirname "${DNSFENCE_BIN:?DNSFENCE_BIN or BENCH_FWTOOL}")/test/bench_fwtool
fi
[ -x "$BENCH_FWTOOL" ] || { echo "FAIL: no bench_fwtool at $BENCH_FWTOOL"; exit 1; }

ns=dffw$$
ns6=dffw$$-no6
tmp=$(mktemp -d)
trap 'ip netns del "$ns" 2>/dev/null || true; ip netns del "$ns6" 2>/dev/null || true; rm -rf "$tmp"' EXIT
ip netns add "$ns"
in_ns() { ip netns exec "$ns" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok   $*"; }
conf=$tmp/fw.json
cat >"$conf" <<'JSON'
{
  "upstreams": ["198.18.0.1", "[2001:db8::1]:53"],
  "ports": ["tcp/80", "tcp/443", "udp/443", "tcp/8000-8080"],
  "allow_cidrs": ["198.18.5.0/24", "2001:db8:5::/48"]
}
JSON
fw() { in_ns "$BENCH_FWTOOL" "$1" "$conf"; }
save4() { in_ns iptables-save -t filter 2>/dev/null | grep -v '^#'; }
save6() { in_ns ip6tables-save -t filter 2>/dev/null | grep -v '^#'; }

# The sets belong to the sets module; the rules only need them to exist.
in_ns ip link set lo up
in_ns ipset create dnsfence4 hash:ip family inet timeout 0
in_ns ipset create dnsfence6 hash:ip family inet6 timeout 0
in_ns ipset create dnsfence6-mld hash:ip family inet6
# A veth pair inside the namespace so that 198.18.0.0/24 has a route:
# blocked traffic then meets our reject, not "network unreachable".
in_ns ip link add dfa0 type veth peer name dfb0
in_ns ip addr add 198.18.0.2/24 dev dfa0
in_ns ip link set dfa0 up
in_ns ip link set dfb0 up

# A foreign rule, put there before us: apply and remove leave it alone.
foreign='-A OUTPUT -d 198.51.100.7/32 -p tcp -m tcp --dport 25 -j DROP'
in_ns iptables -A OUTPUT -d 198.51.100.7/32 -p tcp --dport 25 -j DROP

# What the kernel must hold for this config, written out here (not
# rendered by the binary under test, so a rendering mistake fails): the
# kernel's own iptables-save form, the policy fingerprint replaced by
# FINGERPRINT. A change to the rules changes this text, on purpose: after
# a deliberate one, read the new rules in the failure message ("---
# kernel"), check each, and paste them here.
want4=$(cat <<'RULES'
-A DNSFENCE-OUT -d 127.0.0.1/32 -p udp -m udp --dport 53 -j ACCEPT
-A DNSFENCE-OUT -d 127.0.0.1/32 -p tcp -m tcp --dport 53 -j ACCEPT
-A DNSFENCE-OUT -m conntrack --ctorigdst 198.18.0.1 -m mark --mark 0x64000000 -j ACCEPT
-A DNSFENCE-OUT -m conntrack --ctorigdst 198.18.0.1 --ctdir REPLY -m owner --uid-owner 0-4294967294 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-answer
-A DNSFENCE-OUT -m conntrack --ctorigdst 198.18.0.1 --ctdir REPLY -m owner --uid-owner 0-4294967294 -j DROP
-A DNSFENCE-OUT -m conntrack --ctorigdst 198.18.0.1 --ctdir REPLY -j ACCEPT
-A DNSFENCE-OUT -m conntrack --ctorigdst 198.18.0.1 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p tcp -m conntrack --ctorigdst 198.18.0.1 -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -m conntrack --ctorigdst 198.18.0.1 -j REJECT --reject-with icmp-admin-prohibited
-A DNSFENCE-OUT -m conntrack --ctorigsrc 198.18.0.1 --ctorigsrcport 53 -m mark --mark 0x64000000 -j ACCEPT
-A DNSFENCE-OUT -m conntrack --ctorigsrc 198.18.0.1 --ctorigsrcport 53 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -m conntrack --ctorigsrc 198.18.0.1 --ctorigsrcport 53 -j DROP
-A DNSFENCE-OUT -m mark --mark 0x100000 -j CONNMARK --set-xmark 0x100000/0x700000
-A DNSFENCE-OUT -m mark --mark 0x200000 -j CONNMARK --set-xmark 0x200000/0x700000
-A DNSFENCE-OUT -m mark --mark 0x500000 -j CONNMARK --set-xmark 0x500000/0x700000
-A DNSFENCE-OUT -p tcp -m connmark --mark 0x200000/0x300000 -m conntrack --ctdir ORIGINAL -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence4 dst -m multiport --dports 443 -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m u32 --u32 "0x0>>0x18&0xf=0x6:0xf" -j DROP
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence4 dst -m multiport --dports 443 -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m u32 --u32 "0x20>>0x1a&0x3c@0x11=0x0:0xffffffff" -j DROP
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence4 dst -m multiport --dports 443 -m conntrack --ctstate NEW -j CONNMARK --set-xmark 0x300000/0x300000
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence4 dst -m multiport --dports 80 -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m u32 --u32 "0x0>>0x18&0xf=0x6:0xf" -j DROP
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence4 dst -m multiport --dports 80 -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m u32 --u32 "0x20>>0x1a&0x3c@0x11=0x0:0xffffffff" -j DROP
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence4 dst -m multiport --dports 80 -m conntrack --ctstate NEW -j CONNMARK --set-xmark 0x300000/0x300000
-A DNSFENCE-OUT -p tcp -m connmark --mark 0x300000/0x300000 -m conntrack --ctstate ESTABLISHED --ctdir ORIGINAL -j NFQUEUE --queue-num 4453
-A DNSFENCE-OUT -p tcp -m connmark --mark 0x400000/0x400000 -m mark ! --mark 0x500000 -m conntrack --ctdir ORIGINAL -j NFQUEUE --queue-num 4454
-A DNSFENCE-OUT -p udp -m connmark --mark 0x200000/0x300000 -m conntrack --ctdir ORIGINAL -j DROP
-A DNSFENCE-OUT -p udp -m set --match-set dnsfence4 dst -m multiport --dports 443 -m connmark --mark 0x0/0x300000 -m conntrack --ctdir ORIGINAL -j NFQUEUE --queue-num 4453
-A DNSFENCE-OUT -p udp -m set --match-set dnsfence4 dst -m multiport --dports 443 -m connmark --mark 0x100000/0x300000 -m mark ! --mark 0x100000 -m u32 --u32 "0x0>>0x16&0x3c@0x8>>0x18&0x80=0x80" -m conntrack --ctdir ORIGINAL -j NFQUEUE --queue-num 4454
-A DNSFENCE-OUT -p udp -m udp --dport 53 -m conntrack --ctdir REPLY -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p udp -m udp --dport 53 -m conntrack --ctdir REPLY -j REJECT --reject-with icmp-admin-prohibited
-A DNSFENCE-OUT -p tcp -m tcp --dport 53 -m conntrack --ctdir REPLY -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p tcp -m tcp --dport 53 -m conntrack --ctdir REPLY -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A DNSFENCE-OUT -p udp -m conntrack --ctorigdstport 53 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p udp -m conntrack --ctorigdstport 53 -j REJECT --reject-with icmp-admin-prohibited
-A DNSFENCE-OUT -p tcp -m conntrack --ctorigdstport 53 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p tcp -m conntrack --ctorigdstport 53 -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -d 127.0.0.11/32 -p tcp -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -d 127.0.0.11/32 -p tcp -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -d 127.0.0.11/32 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -d 127.0.0.11/32 -j REJECT --reject-with icmp-admin-prohibited
-A DNSFENCE-OUT -o lo -j ACCEPT
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence4 dst -m multiport --dports 80,443,8000:8080 -j ACCEPT
-A DNSFENCE-OUT -d 198.18.5.0/24 -p tcp -m multiport --dports 80,443,8000:8080 -j ACCEPT
-A DNSFENCE-OUT -p udp -m set --match-set dnsfence4 dst -m multiport --dports 443 -j ACCEPT
-A DNSFENCE-OUT -d 198.18.5.0/24 -p udp -m multiport --dports 443 -j ACCEPT
-A DNSFENCE-OUT -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-block
-A DNSFENCE-OUT -p tcp -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -m comment --comment "dnsfence policy FINGERPRINT" -j REJECT --reject-with icmp-admin-prohibited
RULES
)
want6=$(cat <<'RULES'
-A DNSFENCE-OUT -m rt -j REJECT --reject-with icmp6-adm-prohibited
-A DNSFENCE-OUT -d ::1/128 -p udp -m udp --dport 53 -j ACCEPT
-A DNSFENCE-OUT -d ::1/128 -p tcp -m tcp --dport 53 -j ACCEPT
-A DNSFENCE-OUT -m conntrack --ctorigdst 2001:db8::1 -m mark --mark 0x64000000 -j ACCEPT
-A DNSFENCE-OUT -m conntrack --ctorigdst 2001:db8::1 --ctdir REPLY -m owner --uid-owner 0-4294967294 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-answer
-A DNSFENCE-OUT -m conntrack --ctorigdst 2001:db8::1 --ctdir REPLY -m owner --uid-owner 0-4294967294 -j DROP
-A DNSFENCE-OUT -m conntrack --ctorigdst 2001:db8::1 --ctdir REPLY -j ACCEPT
-A DNSFENCE-OUT -m conntrack --ctorigdst 2001:db8::1 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p tcp -m conntrack --ctorigdst 2001:db8::1 -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -m conntrack --ctorigdst 2001:db8::1 -j REJECT --reject-with icmp6-adm-prohibited
-A DNSFENCE-OUT -m conntrack --ctorigsrc 2001:db8::1 --ctorigsrcport 53 -m mark --mark 0x64000000 -j ACCEPT
-A DNSFENCE-OUT -m conntrack --ctorigsrc 2001:db8::1 --ctorigsrcport 53 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -m conntrack --ctorigsrc 2001:db8::1 --ctorigsrcport 53 -j DROP
-A DNSFENCE-OUT -m mark --mark 0x100000 -j CONNMARK --set-xmark 0x100000/0x700000
-A DNSFENCE-OUT -m mark --mark 0x200000 -j CONNMARK --set-xmark 0x200000/0x700000
-A DNSFENCE-OUT -m mark --mark 0x500000 -j CONNMARK --set-xmark 0x500000/0x700000
-A DNSFENCE-OUT -p tcp -m connmark --mark 0x200000/0x300000 -m conntrack --ctdir ORIGINAL -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence6 dst -m multiport --dports 443 -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m u32 --u32 "0x34>>0x1a&0x3c@0x25=0x0:0xffffffff" -j DROP
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence6 dst -m multiport --dports 443 -m conntrack --ctstate NEW -j CONNMARK --set-xmark 0x300000/0x300000
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence6 dst -m multiport --dports 80 -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m u32 --u32 "0x34>>0x1a&0x3c@0x25=0x0:0xffffffff" -j DROP
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence6 dst -m multiport --dports 80 -m conntrack --ctstate NEW -j CONNMARK --set-xmark 0x300000/0x300000
-A DNSFENCE-OUT -p tcp -m connmark --mark 0x300000/0x300000 -m conntrack --ctstate ESTABLISHED --ctdir ORIGINAL -j NFQUEUE --queue-num 4453
-A DNSFENCE-OUT -p tcp -m connmark --mark 0x400000/0x400000 -m mark ! --mark 0x500000 -m conntrack --ctdir ORIGINAL -j NFQUEUE --queue-num 4454
-A DNSFENCE-OUT -p udp -m connmark --mark 0x200000/0x300000 -m conntrack --ctdir ORIGINAL -j DROP
-A DNSFENCE-OUT -p udp -m set --match-set dnsfence6 dst -m multiport --dports 443 -m connmark --mark 0x0/0x300000 -m conntrack --ctdir ORIGINAL -j NFQUEUE --queue-num 4453
-A DNSFENCE-OUT -p udp -m set --match-set dnsfence6 dst -m multiport --dports 443 -m connmark --mark 0x100000/0x300000 -m mark ! --mark 0x100000 -m u32 --u32 "0x30>>0x18&0x80=0x80" -m conntrack --ctdir ORIGINAL -j NFQUEUE --queue-num 4454
-A DNSFENCE-OUT -p udp -m udp --dport 53 -m conntrack --ctdir REPLY -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p udp -m udp --dport 53 -m conntrack --ctdir REPLY -j REJECT --reject-with icmp6-adm-prohibited
-A DNSFENCE-OUT -p tcp -m tcp --dport 53 -m conntrack --ctdir REPLY -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p tcp -m tcp --dport 53 -m conntrack --ctdir REPLY -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A DNSFENCE-OUT -d ff02::2/128 -p ipv6-icmp -m icmp6 --icmpv6-type 133 -m hl --hl-eq 255 -j ACCEPT
-A DNSFENCE-OUT -d ff02::1:ff00:0/104 -p ipv6-icmp -m icmp6 --icmpv6-type 135 -m hl --hl-eq 255 -j ACCEPT
-A DNSFENCE-OUT -p ipv6-icmp -m icmp6 --icmpv6-type 135 -m addrtype --dst-type UNICAST -m hl --hl-eq 255 -j ACCEPT
-A DNSFENCE-OUT -p ipv6-icmp -m icmp6 --icmpv6-type 136 -m hl --hl-eq 255 -j ACCEPT
-A DNSFENCE-OUT -d ff02::1:ff00:0/104 -p ipv6-icmp -m icmp6 --icmpv6-type 131 -m hl --hl-eq 1 -m set --match-set dnsfence6-mld dst -j ACCEPT
-A DNSFENCE-OUT -p udp -m conntrack --ctorigdstport 53 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p udp -m conntrack --ctorigdstport 53 -j REJECT --reject-with icmp6-adm-prohibited
-A DNSFENCE-OUT -p tcp -m conntrack --ctorigdstport 53 -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-dns
-A DNSFENCE-OUT -p tcp -m conntrack --ctorigdstport 53 -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -o lo -j ACCEPT
-A DNSFENCE-OUT -p tcp -m set --match-set dnsfence6 dst -m multiport --dports 80,443,8000:8080 -j ACCEPT
-A DNSFENCE-OUT -d 2001:db8:5::/48 -p tcp -m multiport --dports 80,443,8000:8080 -j ACCEPT
-A DNSFENCE-OUT -p udp -m set --match-set dnsfence6 dst -m multiport --dports 443 -j ACCEPT
-A DNSFENCE-OUT -d 2001:db8:5::/48 -p udp -m multiport --dports 443 -j ACCEPT
-A DNSFENCE-OUT -m limit --limit 10/sec --limit-burst 20 -j NFLOG --nflog-prefix dnsfence-block
-A DNSFENCE-OUT -p tcp -j REJECT --reject-with tcp-reset
-A DNSFENCE-OUT -m comment --comment "dnsfence policy FINGERPRINT" -j REJECT --reject-with icmp6-adm-prohibited
RULES
)

# 1. apply: policy, jump first, every rule above, both families.
fw apply || fail "apply"
for fam in 4 6; do
	if [ $fam = 4 ]; then s=$(save4); else s=$(save6); fi
	grep -qx ':OUTPUT DROP \[[0-9]*:[0-9]*\]' <<<"$s" || fail "ipv$fam policy: $s"
	[ "$(grep '^-A OUTPUT ' <<<"$s" | head -1)" = '-A OUTPUT -j DNSFENCE-OUT' ] ||
		fail "ipv$fam: jump not first: $s"
	if [ $fam = 4 ]; then want=$want4; else want=$want6; fi
	got=$(grep '^-A DNSFENCE-OUT ' <<<"$s" |
		sed 's/"dnsfence policy [0-9a-f]\{16\}"/"dnsfence policy FINGERPRINT"/')
	[ "$want" = "$got" ] || fail "ipv$fam rules differ:
--- expected
$want
--- kernel
$got"
done
grep -qx -- "$foreign" <<<"$(save4)" || fail "foreign rule gone after apply"
grep -q -- '--icmpv6-type 135' <<<"$(save6)" || fail "no neighbour solicitation rule"
ok "apply installs policy DROP, one jump first, every rule (ipv4 and ipv6)"

# 2. apply again: nothing duplicated.
before4=$(save4); before6=$(save6)
fw apply || fail "second apply"
[ "$(save4)" = "$before4" ] || fail "second apply changed ipv4: $(save4)"
[ "$(save6)" = "$before6" ] || fail "second apply changed ipv6: $(save6)"
[ "$(save4 | grep -c '^-A OUTPUT -j DNSFENCE-OUT$')" = 1 ] || fail "jump duplicated"
ok "a second apply changes nothing (one jump, no duplicate rule)"

# 3. check is clean.
out=$(fw check) || fail "check after apply: $out"
[ -z "$out" ] || fail "check printed: $out"
ok "check exits 0 after apply"

# 4. blocked traffic is refused at once and counted; other DNS too.
start=$(date +%s%N)
if in_ns timeout 5 bash -c 'exec 3<>/dev/tcp/198.18.0.99/22' 2>/dev/null; then
	fail "connection to 198.18.0.99:22 was allowed"
fi
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 2000 ] || fail "blocked connect took ${ms} ms (not a reset)"
# counter of the rule ending in $1, from iptables-save -c ("[pkts:bytes] -A ...")
counter() { in_ns iptables-save -c -t filter | grep -- "$1\$" | sed -n 's/^\[\([0-9]*\):.*/\1/p'; }
cnt=$(counter '-A DNSFENCE-OUT -p tcp -j REJECT --reject-with tcp-reset')
[ "${cnt:-0}" -ge 1 ] || fail "reject counter did not count: $(in_ns iptables-save -c -t filter)"
if in_ns timeout 5 bash -c 'exec 3<>/dev/tcp/198.18.0.1/53' 2>/dev/null; then
	fail "root reached the upstream's DNS port"
fi
up=$(counter '-A DNSFENCE-OUT -p tcp -m conntrack --ctorigdst 198.18.0.1 -j REJECT --reject-with tcp-reset')
[ "${up:-0}" -ge 1 ] || fail "unmarked traffic to the upstream was not rejected by the upstream rule"
if in_ns timeout 5 bash -c 'exec 3<>/dev/tcp/198.18.0.99/53' 2>/dev/null; then
	fail "root reached another resolver's DNS port"
fi
dns=$(counter '-A DNSFENCE-OUT -p tcp -m conntrack --ctorigdstport 53 -j REJECT --reject-with tcp-reset')
[ "${dns:-0}" -ge 1 ] || fail "DNS to another resolver was not rejected by the DNS rule"
ok "blocked connect refused in ${ms} ms and counted; unmarked traffic to the upstream and other DNS rejected"

# 5. drift: a deleted rule is reported exactly; so is a flipped policy.
in_ns iptables -D DNSFENCE-OUT -o lo -j ACCEPT
set +e; out=$(fw check); rc=$?; set -e
[ $rc = 1 ] || fail "check after delete: rc $rc: $out"
[ "$out" = 'ipv4: rule missing: -A DNSFENCE-OUT -o lo -j ACCEPT' ] || fail "check said: $out"
in_ns ip6tables -P OUTPUT ACCEPT
set +e; out=$(fw check); rc=$?; set -e
[ $rc = 1 ] || fail "check after policy flip: rc $rc"
grep -qx 'ipv6: OUTPUT policy is ACCEPT, expected DROP' <<<"$out" || fail "policy not reported: $out"
in_ns iptables -A OUTPUT -j DNSFENCE-OUT
set +e; out=$(fw check); rc=$?; set -e
grep -qx 'ipv4: jump from OUTPUT to DNSFENCE-OUT appears 2 times' <<<"$out" || fail "double jump not reported: $out"
fw apply || fail "re-apply after drift"
out=$(fw check) || fail "check after re-apply: $out"
[ "$(save4 | grep -c '^-A OUTPUT -j DNSFENCE-OUT$')" = 1 ] || fail "re-apply left two jumps"
ok "check reports a deleted rule, a flipped policy, a second jump; apply repairs them"

# 6. remove: no chain, no jump, policy ACCEPT; the foreign rule stays.
in_ns "$BENCH_FWTOOL" remove || fail "remove"
for fam in 4 6; do
	if [ $fam = 4 ]; then s=$(save4); else s=$(save6); fi
	grep -q DNSFENCE <<<"$s" && fail "ipv$fam: left over after remove: $s"
	grep -qx ':OUTPUT ACCEPT \[[0-9]*:[0-9]*\]' <<<"$s" || fail "ipv$fam policy after remove: $s"
done
grep -qx -- "$foreign" <<<"$(save4)" || fail "foreign rule gone after remove"
in_ns "$BENCH_FWTOOL" remove || fail "second remove"
ok "remove leaves no chain, no jump, policy ACCEPT, foreign rule in place"

# 7. rules in both backends: apply refuses and says why.
in_ns iptables-legacy -A OUTPUT -d 198.51.100.8/32 -j ACCEPT
set +e; out=$(fw apply 2>&1); rc=$?; set -e
[ $rc != 0 ] || fail "apply accepted rules in both backends"
grep -q 'both iptables backends hold rules' <<<"$out" || fail "unclear refusal: $out"
save4 | grep DNSFENCE >/dev/null && fail "apply installed rules despite refusing"
ok "apply refuses when iptables-nft and iptables-legacy both hold rules"

# 8. IPv6 disabled in the namespace: the ip6tables DROP policy and chain
# are installed all the same.
ip netns add "$ns6"
ip netns exec "$ns6" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$ns6" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
ip netns exec "$ns6" ipset create dnsfence4 hash:ip family inet timeout 0
ip netns exec "$ns6" ipset create dnsfence6 hash:ip family inet6 timeout 0
ip netns exec "$ns6" ipset create dnsfence6-mld hash:ip family inet6
ip netns exec "$ns6" "$BENCH_FWTOOL" apply "$conf" || fail "apply without IPv6"
s=$(ip netns exec "$ns6" ip6tables-save -t filter)
grep -qx ':OUTPUT DROP \[[0-9]*:[0-9]*\]' <<<"$s" || fail "no ip6tables DROP without IPv6: $s"
out=$(ip netns exec "$ns6" "$BENCH_FWTOOL" check "$conf") || fail "check without IPv6: $out"
ok "IPv6 disabled: ip6tables policy DROP and rules installed and checked"

# 9. audit mode and a loopback upstream (Docker's 127.0.0.11) render in
# the kernel's own form too: apply verifies, check is clean, and the
# chain ends in a logging accept.
audit=$tmp/audit.json
cat >"$audit" <<'JSON'
{"mode": "audit", "upstreams": ["127.0.0.11"], "listen": ["127.0.0.1:53", "0.0.0.0:5353"]}
JSON
ip netns exec "$ns6" "$BENCH_FWTOOL" apply "$audit" || fail "audit apply"
out=$(ip netns exec "$ns6" "$BENCH_FWTOOL" check "$audit") || fail "audit check: $out"
s=$(ip netns exec "$ns6" iptables-save -t filter | grep '^-A DNSFENCE-OUT' | tail -2)
grep -qx -- '-A DNSFENCE-OUT -j NFLOG --nflog-prefix dnsfence-audit' <<<"$(head -1 <<<"$s")" &&
	grep -qx -- '-A DNSFENCE-OUT -m comment --comment "dnsfence policy [0-9a-f]\{16\}" -j ACCEPT' <<<"$(tail -1 <<<"$s")" ||
	fail "audit chain ends with: $s"
ok "audit mode and a loopback upstream: applied, verified, ends in NFLOG + ACCEPT"
