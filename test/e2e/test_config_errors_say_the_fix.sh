#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The config mistakes people make get exit 2 and a message that says the
# fix, not only what is wrong: an address or CIDR in "allow" points to
# allow_cidrs; a URL or host:port names the bare name and "ports"; a
# non-ASCII name shows its punycode form (a row's \n is a newline); a comment or trailing comma is
# named as what JSON lacks; a preset's name as a single label points to
# "ecosystems"; a wildcard on a public suffix is refused, naming the
# switch that allows it; validate resolves "user" as run does; an error in
# DNSFENCE_EXTRA_HOSTS is blamed on the environment, not the file.
# Controls: the same configs written right validate (exit 0), the switch
# lets "*.com" through, and --effective prints the presets' names.
source "$(dirname "$0")/lib.sh"
df_init_noroot

validate_conf() { # JSON [ENV=VALUE]...
	printf '%s\n' "$1" >"$DF_TMP/c.json"
	shift
	RC=0
	OUT="$(env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS "$@" \
		timeout 10 "$DNSFENCE_BIN" -c "$DF_TMP/c.json" validate 2>&1)" || RC=$?
}

n=0
while IFS='|' read -r json fix; do
	[ -n "$json" ] || continue
	json="${json//\\n/$'\n'}" # a row's \n is a newline
	validate_conf "$json"
	[ "$RC" -eq 2 ] || fail "config $json: expected exit 2, saw $RC: $OUT"
	grep -qF -- "$fix" <<<"$OUT" || fail "config $json: expected the fix '$fix' in: $OUT"
	n=$((n + 1))
	ok "$json -> 2: $(tail -n 1 <<<"$OUT" | sed 's/^dnsfence: config: [^:]*: //')"
done <<'EOF_TABLE'
{"allow": ["140.82.112.3"]}|"allow_cidrs" ("140.82.112.3/32")
{"allow": ["140.82.112.0/20"]}|"allow_cidrs" ("140.82.112.0/20")
{"allow": ["2001:db8::1"]}|"allow_cidrs" ("2001:db8::1/128")
{"allow": ["https://github.com"]}|bare name "github.com" here; the port goes in "ports" ("tcp/443")
{"allow": ["github.com:443"]}|bare name "github.com" here; the port goes in "ports" ("tcp/443")
{"allow": ["http://example.com/path"]}|bare name "example.com" here; the port goes in "ports" ("tcp/80")
{"allow": ["bücher.example"]}|punycode form "xn--bcher-kva.example"
{"allow": ["github"]}|put it in "ecosystems": ["github"]
{"allow": ["*.com"]}|"allow_public_suffix_wildcards": true
{"allow": ["*.co.uk"]}|wildcard on the public suffix "co.uk"
{"allow": ["*.github.io"]}|wildcard on the public suffix "github.io"
{"allow": ["a.test"], }|JSON allows no trailing comma
{"allow": ["a.test",]}|JSON allows no trailing comma
{"allow": [] // the list\n}|JSON has no comments
{# the list\n"allow": []}|JSON has no comments
{"allow": [] /* the list */}|JSON has no comments
{"user": "root"}|user: "root" is uid 0
{"user": "no-such-user-df"}|no such user "no-such-user-df"
EOF_TABLE
[ "$n" -eq 18 ] || fail "ran $n rows of the table, expected 18"

validate_conf '{"allow": ["www.allowed.test"]}' DNSFENCE_EXTRA_HOSTS=github.com:443
[ "$RC" -eq 2 ] || fail "a bad DNSFENCE_EXTRA_HOSTS: expected exit 2, saw $RC: $OUT"
grep -q 'the environment (not .*): DNSFENCE_EXTRA_HOSTS\[0\]: .*bare name "github.com"' <<<"$OUT" ||
	fail "a bad DNSFENCE_EXTRA_HOSTS is not blamed on the environment: $OUT"
ok "DNSFENCE_EXTRA_HOSTS=github.com:443 -> 2, blamed on the environment"

# Controls: the fixes themselves validate.
for json in '{"allow_cidrs": ["140.82.112.3/32"], "allow": ["github.com"], "ports": ["tcp/443"]}' \
	'{"allow": ["xn--bcher-kva.example", "*.example.co.uk", "intranet"]}' \
	'{"ecosystems": ["github"]}' \
	'{"allow": ["*.com"], "allow_public_suffix_wildcards": true}'; do
	validate_conf "$json"
	[ "$RC" -eq 0 ] || fail "the fixed config $json: expected exit 0, saw $RC: $OUT"
done
ok "the fixed configs validate (exit 0), the public-suffix switch included"

printf '%s\n' '{"allow": ["api.example.com"], "ecosystems": ["npm"]}' >"$DF_TMP/e.json"
eff="$(env -u DNSFENCE_EXTRA_HOSTS "$DNSFENCE_BIN" validate --effective -c "$DF_TMP/e.json" 2>/dev/null)"
"$DF_PY" - "$eff" <<'PY' || fail "validate --effective does not expand the preset: $eff"
import json, sys
c = json.loads(sys.argv[1])
assert c["allow"][0] == "api.example.com", c["allow"]
assert "registry.npmjs.org" in c["allow"], c["allow"]
assert c["ecosystems"] == [], c["ecosystems"]
PY
plain="$(env -u DNSFENCE_EXTRA_HOSTS "$DNSFENCE_BIN" validate -c "$DF_TMP/e.json" 2>/dev/null)"
grep -q '"ecosystems": \["npm"\]' <<<"$plain" || fail "plain validate lost the ecosystems: $plain"
ok "validate --effective expands npm into allow (registry.npmjs.org), plain validate keeps the preset"
