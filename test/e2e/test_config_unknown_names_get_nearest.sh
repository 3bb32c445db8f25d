#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A misspelt key or preset is refused (exit 2) with the one meant ("did you
# mean", by edit distance) and the whole list of what is known: every key
# that `validate` prints for that object, every preset `reference` lists
# (the list used to stop at 256 bytes, before "metrics", and looked
# complete). A leading-dot name gets both right forms, a bare port number
# its "tcp/N" form, another non-string entry the key's type. Controls: the
# forms the messages suggest validate (exit 0), and a key that is near
# nothing gets no guess.
source "$(dirname "$0")/lib.sh"
df_init_noroot

validate_conf() { # JSON
	printf '%s\n' "$1" >"$DF_TMP/c.json"
	RC=0
	OUT="$(env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		timeout 10 "$DNSFENCE_BIN" -c "$DF_TMP/c.json" validate 2>&1)" || RC=$?
}
expect_refused() { # JSON TEXT...: exit 2 and each TEXT in the message
	local json=$1 t
	shift
	validate_conf "$json"
	[ "$RC" -eq 2 ] || fail "config $json: expected exit 2, saw $RC: $OUT"
	for t in "$@"; do
		grep -qF -- "$t" <<<"$OUT" || fail "config $json: expected '$t' in: $OUT"
	done
	ok "$json -> 2: $(sed 's/^dnsfence: config: [^:]*: //' <<<"$OUT" | cut -c1-150)"
}
# expect_lists OBJ: the last message's "known:" list holds every key that
# `validate {}` prints at OBJ ("" the top level).
expect_lists() {
	local keys k n=0
	validate_conf '{}'
	[ "$RC" -eq 0 ] || fail "validate {} exited $RC: $OUT"
	keys="$("$DF_PY" -c 'import json, sys
v = json.loads(sys.argv[1])
for k in filter(None, sys.argv[2].split(".")):
    v = v[k]
print("\n".join(v))' "$OUT" "$1")"
	for k in $keys; do
		grep -qE "known: (.*, )?$k(,|\))" <<<"$SAVED" || fail "the unknown-key message lacks the key $k: $SAVED"
		n=$((n + 1))
	done
	[ "$n" -ge 4 ] || fail "only $n keys at '$1'"
	ok "the message lists all $n keys of '${1:-the top level}'"
}

expect_refused '{"metric": "127.0.0.1:9253"}' 'metric: unknown key; did you mean "metrics"?' 'known: '
SAVED=$OUT
expect_lists ""
expect_refused '{"name_check": {"mod": "audit"}}' 'name_check.mod: unknown key; did you mean "mode"?'
SAVED=$OUT
expect_lists name_check
expect_refused '{"Upstream": ["198.18.0.1"]}' 'did you mean "upstreams"?'
expect_refused '{"zzzzqq": 1}' 'zzzzqq: unknown key (known: '
grep -q 'did you mean' <<<"$OUT" && fail "a key near nothing got a guess: $OUT"
ok "a key near nothing gets the list and no guess"

expect_refused '{"ecosystems": ["crate"]}' 'unknown preset "crate"; did you mean "crates"?'
presets="$(env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" reference |
	awk '/^## Ecosystem presets/ { on = 1; next } on && /^## / { exit } on && /^\| `/ { split($0, f, "`"); print f[2] }')"
n=0
for pr in $presets; do
	grep -qE "known: (.*, )?$pr(,|\))" <<<"$OUT" || fail "the unknown-preset message lacks $pr: $OUT"
	n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "reference lists only $n presets"
ok "the message lists all $n presets"

expect_refused '{"allow": [".github.com"]}' '"*.github.com" for every name below github.com' '"github.com" for the name itself'
expect_refused '{"ports": [443]}' 'ports[0]: expected a string' '"tcp/443" (or "udp/443")'
expect_refused '{"name_check": {"tls_ports": [8443]}}' 'a port is written with its protocol, "tcp/8443"'
grep -q udp/8443 <<<"$OUT" && fail "tls_ports (tcp only) was offered udp/8443: $OUT"
expect_refused '{"name_check": {"quic_ports": [443]}}' 'a port is written with its protocol, "udp/443"'
expect_refused '{"listen": [53]}' 'listen[0]: expected a string (the key is an array of "addr:port"'

# Controls: what the messages suggest is accepted.
for json in '{"metrics": "127.0.0.1:9253"}' '{"name_check": {"mode": "audit"}}' \
	'{"ecosystems": ["crates"]}' '{"allow": ["*.github.com", "github.com"]}' '{"ports": ["tcp/443"]}'; do
	validate_conf "$json"
	[ "$RC" -eq 0 ] || fail "the suggested form $json is refused ($RC): $OUT"
done
ok "the suggested forms validate"
