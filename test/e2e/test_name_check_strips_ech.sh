#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 11 and ECH: a client that finds an "ech" config in an HTTPS
# record encrypts its real server name and shows the check only the outer
# name its provider chose. While the name check is on, the client's copy
# of an HTTPS (and SVCB) answer carries no "ech" param, so it sends a
# readable name instead; the rest of the record (alpn, hints) stays, with
# a correct RDLENGTH (dig and kdig parse it). A record whose "mandatory"
# lists ech means nothing without it and is left out whole, its hints
# kept out of the sets with it. Positive
# control: with name_check "off" (a live reload) the same query gets the
# ech param from the upstream (nsd, through unbound).
source "$(dirname "$0")/lib.sh"
ECH="AEX+DQBBpQAgACB/ZmFrZWVjaGNvbmZpZ2ZvcnRlc3RpbmdvbmwAAAAEAAEAAQASZWNoLnB1YmxpYy50ZXN0AAA="
df_zone_add allowed.test.zone <<EOF2
ech IN HTTPS 1 . alpn="h2,http/1.1" ech="$ECH" ipv4hint=198.18.1.10
ech IN A 198.18.1.10
_8443._https.ech IN SVCB 1 ech.allowed.test. port=8443 ech="$ECH"
must IN HTTPS 1 . mandatory=ech alpn="h2" ech="$ECH" ipv4hint=198.18.1.12
must IN HTTPS 2 . alpn="h2" ipv4hint=198.18.1.11
EOF2
df_setup

sock="$DF_TMP/control.sock"
chmod 755 "$DF_TMP" # a reload reads the config as the daemon's user
ALLOW='["ech.allowed.test", "_8443._https.ech.allowed.test", "must.allowed.test"]'
conf() { df_config allow="$ALLOW" control='{"socket": "'"$sock"'", "watch": false}' "$@"; }
df_start_dnsfence allow="$ALLOW" control='{"socket": "'"$sock"'", "watch": false}'

# The upstream serves ech (so the control below can see it).
out="$(up dig +time=2 +tries=1 @"$DF_UP4" ech.allowed.test HTTPS +short)"
grep -qF "ech=$ECH" <<<"$out" || fail "the upstream does not serve ech: $out"

df_dig ech.allowed.test HTTPS
expect_rcode NOERROR
expect_answer_contains 'alpn="h2,http/1.1"'
expect_answer_contains "ipv4hint=198.18.1.10"
expect_answer_lacks "ech="
ok "name check on: the HTTPS record reaches the client without ech, alpn and hint kept"
out="$(wl kdig +time=3 +retry=0 @127.0.0.1 ech.allowed.test HTTPS 2>&1)" || fail "kdig failed: $out"
grep -q 'alpn=h2,http/1.1' <<<"$out" || fail "kdig did not read the rewritten record: $out"
! grep -q 'ech=' <<<"$out" || fail "kdig sees ech: $out"
! grep -qi 'malformed\|warning' <<<"$out" || fail "kdig: $out"
ok "kdig parses the shortened record (RDLENGTH right)"
df_dig _8443._https.ech.allowed.test SVCB
expect_rcode NOERROR
expect_answer_contains "port=8443"
expect_answer_lacks "ech="
ok "SVCB: ech taken out, port kept"
df_dig must.allowed.test HTTPS
expect_rcode NOERROR
expect_answer_lacks "ech="
expect_answer_lacks "mandatory"
expect_answer_contains "ipv4hint=198.18.1.11"
expect_in_set dnsfence4 198.18.1.11
expect_not_in_set dnsfence4 198.18.1.12
ok "a record with mandatory=ech is left out whole (its hint not in the sets), the other one kept"
[ "$(df_status_value counters.ech_stripped)" -ge 2 ] || fail "ech_stripped not counted"
ok "counted: ech_stripped $(df_status_value counters.ech_stripped)"

# Positive control: the check off, the same client gets ech.
conf name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
df_dig ech.allowed.test HTTPS
expect_rcode NOERROR
expect_answer_contains "ech=$ECH"
df_dig must.allowed.test HTTPS
expect_answer_contains "mandatory=ech"
expect_in_set dnsfence4 198.18.1.12
ok "control: with name_check off the client gets ech (and mandatory=ech, its hint in the set) as served"
conf name_check='{"mode": "audit"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
df_dig ech.allowed.test HTTPS
expect_answer_lacks "ech="
expect_answer_contains "ipv4hint=198.18.1.10"
ok "name_check audit: ech taken out again (live on reload)"
expect_dnsfence_running
