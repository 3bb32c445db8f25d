#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "dnsfence -c FILE validate" rejects a bad config with exit 2 and a message
# naming the key; a good config validates (exit 0) and its normalized output
# is itself a valid config that normalizes to the same text (round trip).
# Needs no namespaces and no root.
source "$(dirname "$0")/lib.sh"
df_init_noroot
df_require_bin

# validate_conf JSON: run validate on JSON; sets OUT (stdout+stderr), RC.
validate_conf() {
	printf '%s\n' "$1" >"$DF_TMP/c.json"
	RC=0
	OUT="$(env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		timeout 10 "$DNSFENCE_BIN" -c "$DF_TMP/c.json" validate 2>&1)" || RC=$?
}

# expect_bad JSON WORD: validate exits 2 and its message contains WORD.
expect_bad() {
	[ -n "$2" ] || fail "expect_bad $1: no WORD (an empty pattern matches any message)"
	validate_conf "$1"
	[ "$RC" -eq 2 ] || fail "config $1: expected exit 2, saw $RC; output: $OUT"
	grep -qF -- "$2" <<<"$OUT" || fail "config $1: expected the message to name '$2', saw: $OUT"
	ok "exit 2 naming '$2' for $1 ($(head -n 1 <<<"$OUT"))"
}

expect_bad '{"allow": ["www.allowed.test"], "bogus_key": 1}' bogus_key
expect_bad '{"ports": ["tcp/99999"]}' 'ports[0]'
expect_bad '{"ports": ["tcp/443", "sctp/80"]}' 'ports[1]'
expect_bad '{"allow": ["bad..name"]}' allow
expect_bad '{"ttl": {"min": 600, "max": 60}}' ttl
expect_bad '{"ttl": {"min": 60, "mx": 600}}' mx
expect_bad '{"deny_rcode": "servfail"}' deny_rcode
expect_bad '{"listen": ["127.0.0.1:99999"]}' listen
expect_bad '{"allow": "www.allowed.test"}' allow
expect_bad '{"allow": [' 'line 1, column 12'
expect_bad '{"upstream_timeout": -1}' upstream_timeout

good='{
  "listen": ["127.0.0.1:53", "[::1]:53"],
  "upstreams": ["198.18.0.1", "[2001:db8::1]:53"],
  "allow": ["www.allowed.test", "*.allowed.test"],
  "deny_rcode": "refused",
  "sets": {"ipv4": "dftest4", "ipv6": "dftest6"},
  "ttl": {"min": 30, "max": 3600},
  "ports": ["tcp/443", "udp/443", "tcp/8000-8080"],
  "allow_cidrs": ["198.18.5.0/24", "2001:db8:5::/48"],
  "mode": "audit",
  "upstream_timeout": 3
}'
validate_conf "$good"
[ "$RC" -eq 0 ] || fail "a good config: expected validate to exit 0, saw $RC: $OUT"
first="$(env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
	timeout 10 "$DNSFENCE_BIN" -c "$DF_TMP/c.json" validate 2>/dev/null)"
"$DF_PY" -c 'import json, sys; json.load(sys.stdin)' <<<"$first" ||
	fail "validate's output is not JSON: $first"
ok "a good config validates (exit 0) and prints JSON"

validate_conf "$first"
[ "$RC" -eq 0 ] || fail "validate's own output: expected exit 0, saw $RC: $OUT
input was: $first"
second="$(env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
	timeout 10 "$DNSFENCE_BIN" -c "$DF_TMP/c.json" validate 2>/dev/null)"
[ "$first" = "$second" ] || fail "round trip changed the config:
--- first
$first
--- second
$second"
ok "validate's output validates again and normalizes to the same text"

for key in deny_rcode ttl ports allow_cidrs mode; do
	grep -qF "\"$key\"" <<<"$first" || fail "the normalized config lost the key $key: $first"
done
ok "the normalized config keeps the keys that were set"

# Defaults fill every key that is left out.
validate_conf '{"upstreams": ["198.18.0.1"]}'
[ "$RC" -eq 0 ] || fail "a config with only upstreams: expected exit 0, saw $RC: $OUT"
ok "a minimal config validates"
