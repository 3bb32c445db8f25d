#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What is allowed can be seen. After the workload resolves www.allowed.test
# (A and AAAA) and a.b.allowed.test, "dnsfence entries" lists each name
# with its addresses and the seconds left of their set timeout (text and
# --json), --name and --addr filter, and every address it lists is in the
# kernel set. "dnsfence allowed NAME" names the entry that allows NAME
# (an exact entry, a wildcard, a preset) and exits 0, or exits 1 for a
# name nothing allows (control: that name is indeed denied).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test", "*.b.allowed.test"]' ecosystems='["npm"]' ttl='{"min": 600, "max": 3600}'

df_dig www.allowed.test A
expect_answer_contains 198.18.1.10
df_dig www.allowed.test AAAA
expect_answer_contains 2001:db8:1::10
df_dig a.b.allowed.test A
expect_answer_contains 198.18.1.11

df_dnsfence entries
[ "$DF_CMD_RC" -eq 0 ] || fail "entries exited $DF_CMD_RC: $DF_CMD_ERR"
grep -qE '^www\.allowed\.test -> 198\.18\.1\.10 \(expires in [0-9]+ s\), 2001:db8:1::10 \(expires in [0-9]+ s\)$' <<<"$DF_CMD_OUT" ||
	fail "entries does not list www.allowed.test with both addresses and their expiry: $DF_CMD_OUT"
grep -qE '^a\.b\.allowed\.test -> 198\.18\.1\.11 ' <<<"$DF_CMD_OUT" || fail "entries lacks a.b.allowed.test: $DF_CMD_OUT"
expect_in_set dnsfence4 198.18.1.10
expect_in_set dnsfence4 198.18.1.11
expect_in_set dnsfence6 2001:db8:1::10
ok "entries: $(tr '\n' ';' <<<"$DF_CMD_OUT")"

df_dnsfence entries --json --name allowed.test
"$DF_PY" - "$DF_CMD_OUT" <<'PY' || fail "entries --json is not what was answered: $DF_CMD_OUT"
import json, sys
d = json.loads(sys.argv[1])
names = {n["name"]: n["addresses"] for n in d["names"]}
assert d["mode"] == "enforce", d
assert sorted(names) == ["a.b.allowed.test", "www.allowed.test"], names
addrs = {a["address"]: a["expires_in_s"] for a in names["www.allowed.test"]}
assert set(addrs) == {"198.18.1.10", "2001:db8:1::10"}, addrs
# the timeout is clamp(TTL, 600, 3600): above 500 s left, at most 3600
assert all(500 < s <= 3600 for s in addrs.values()), addrs
PY
ok "entries --json --name allowed.test: both names, addresses, 500 < expires_in_s <= 3600"

df_dnsfence entries --addr 198.18.1.11
[ "$DF_CMD_RC" -eq 0 ] || fail "entries --addr exited $DF_CMD_RC: $DF_CMD_ERR"
[ "$(wc -l <<<"$DF_CMD_OUT")" -eq 1 ] && grep -q '^a\.b\.allowed\.test -> 198\.18\.1\.11 ' <<<"$DF_CMD_OUT" ||
	fail "entries --addr 198.18.1.11 should list only a.b.allowed.test: $DF_CMD_OUT"
df_dnsfence entries --name nothing.test
[ "$DF_CMD_RC" -eq 0 ] && [ -z "$DF_CMD_OUT" ] || fail "entries --name nothing.test: expected nothing, exit 0; saw $DF_CMD_RC: $DF_CMD_OUT"
df_dnsfence entries --addr not-an-address
[ "$DF_CMD_RC" -eq 2 ] || fail "entries --addr not-an-address: expected 2, saw $DF_CMD_RC"
ok "entries --addr and --name filter (one name; none; a bad address -> 2)"

expect_allowed() { # NAME ENTRY-TEXT
	df_dnsfence allowed "$1"
	[ "$DF_CMD_RC" -eq 0 ] || fail "allowed $1: expected 0, saw $DF_CMD_RC: $DF_CMD_OUT $DF_CMD_ERR"
	grep -qF -- "$2" <<<"$DF_CMD_OUT" || fail "allowed $1 does not name '$2': $DF_CMD_OUT"
	ok "allowed $1 -> 0: $DF_CMD_OUT"
}
expect_allowed www.allowed.test 'by allow entry "www.allowed.test"'
expect_allowed deep.a.b.allowed.test 'by allow entry "*.b.allowed.test"'
expect_allowed registry.npmjs.org 'by "registry.npmjs.org" of ecosystem "npm"'
df_dnsfence allowed --json a.b.allowed.test
"$DF_PY" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["allowed"] and d["entry"] == "*.b.allowed.test" and d["source"] == "allow", d' "$DF_CMD_OUT" ||
	fail "allowed --json: $DF_CMD_OUT"
df_dnsfence allowed www.evil.test
[ "$DF_CMD_RC" -eq 1 ] || fail "allowed www.evil.test: expected 1, saw $DF_CMD_RC: $DF_CMD_OUT"
grep -q '^not allowed: www.evil.test' <<<"$DF_CMD_OUT" || fail "allowed www.evil.test: $DF_CMD_OUT"
df_dig www.evil.test A
expect_rcode NXDOMAIN
ok "allowed www.evil.test -> 1 ($DF_CMD_OUT), and the daemon denies it"
