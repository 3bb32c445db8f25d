#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The query type of an allowed name is a channel to its servers: only the
# common data types (and those `qtypes` adds) go upstream. Each forbidden
# type is asked for a name of its own under an allowed wildcard:
#   - meta, reserved and private-use types (TYPE0, OPT, TKEY, TSIG, MAILB,
#     MAILA, TYPE128, TYPE65280, TYPE65534, TYPE65535) and data types
#     nobody listed (NULL, TYPE1000, LOC while `qtypes` lacks it): REFUSED
#     with Extended DNS Error 21, locally;
#   - ANY: RFC 8482's synthesized HINFO "RFC8482", locally;
# and unbound's query log never shows any of those names. Controls: A and
# HTTPS are forwarded (unbound logs them), and LOC is forwarded once a
# reload adds it to `qtypes`.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<<'*.w IN A 198.18.3.1'
df_setup
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
df_start_dnsfence allow='["*.w.allowed.test"]' control="$(sock_conf)"
chmod 755 "$DF_TMP"

# ask NAME TYPE: one UDP query with EDNS; prints "RCODE EDE ANSWER".
ask() {
	wl "$DF_PY" - "$1" "$2" <<'PY'
import sys, dns.message, dns.query, dns.rdatatype, dns.edns
q = dns.message.make_query(sys.argv[1], int(sys.argv[2]), use_edns=0)
r = dns.query.udp(q, "127.0.0.1", timeout=3)
ede = [str(o.code) for o in r.options if o.otype == dns.edns.EDE]
ans = [rr.to_text() for rrset in r.answer for rr in rrset]
print(dns.rcode.to_text(r.rcode()), ",".join(ede) or "-", "|".join(ans) or "-")
PY
}

declare -A forbidden=([0]=TYPE0 [41]=OPT [249]=TKEY [250]=TSIG [253]=MAILB [254]=MAILA
	[128]=TYPE128 [65280]=TYPE65280 [65534]=TYPE65534 [65535]=TYPE65535
	[10]=NULL [1000]=TYPE1000 [29]=LOC)
declare -A got
for t in "${!forbidden[@]}" 255; do
	got[$t]="$(ask "q$t.w.allowed.test" "$t" 2>&1)" || got[$t]="no reply: ${got[$t]}"
done
sleep 0.5
for t in "${!forbidden[@]}" 255; do
	if df_unbound_saw "q$t.w.allowed.test"; then
		fail "q$t.w.allowed.test (type ${forbidden[$t]:-ANY}) reached the upstream: $(grep "q$t.w" "$DF_TMP/unbound.log")"
	fi
done
ok "none of the forbidden types reached unbound's query log"
for t in "${!forbidden[@]}"; do
	[ "${got[$t]% *}" = "REFUSED 21" ] ||
		fail "q$t.w.allowed.test ${forbidden[$t]}: expected REFUSED with EDE 21, got: ${got[$t]}"
done
ok "meta, private-use and unlisted types answered REFUSED + EDE 21 locally"

out="${got[255]}"
case "$out" in
"NOERROR - \"RFC8482\" \"\"") ;;
*) fail "ANY: expected NOERROR with the synthesized HINFO \"RFC8482\" \"\", got: $out" ;;
esac
ok "ANY answered with RFC 8482's HINFO"

out="$(ask qa.w.allowed.test 1)"
[ "$out" = "NOERROR - 198.18.3.1" ] || fail "control: A of qa.w.allowed.test: $out"
out="$(ask qh.w.allowed.test 65)"
case "$out" in NOERROR*) ;; *) fail "control: HTTPS of qh.w.allowed.test: $out" ;; esac
df_poll 30 df_unbound_saw qa.w.allowed.test || fail "control: the A question never reached unbound"
df_poll 30 df_unbound_saw qh.w.allowed.test || fail "control: the HTTPS question never reached unbound"
ok "control: A and HTTPS are forwarded"

df_config allow='["*.w.allowed.test"]' qtypes='["LOC"]' control="$(sock_conf)"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload with qtypes [LOC] exited $DF_CMD_RC: $DF_CMD_ERR"
out="$(ask qloc.w.allowed.test 29)"
case "$out" in NOERROR*) ;; *) fail "qtypes [LOC]: LOC of qloc.w.allowed.test: $out" ;; esac
df_poll 30 df_unbound_saw qloc.w.allowed.test || fail "qtypes [LOC]: the LOC question never reached unbound"
ok "control: qtypes [\"LOC\"] forwards LOC"
expect_dnsfence_running
