#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Learn an allowlist in audit mode: a workload (uid 12345) resolves and
# connects to a list of names under audit; `dnsfence suggest` then prints
# an allow list that, used as the enforce config, lets the same workload
# succeed, while a name outside it stays denied. The suggestion is exact
# names, `*.parent` only for three siblings under one registrable domain
# (svc1-3.svc.allowed.test, www/api/cdn.shop.co.uk), and never a public
# suffix: alice/bob/carol.github.io and a/b/c.co.uk stay exact (no
# *.github.io, no *.co.uk), never the readiness probe's .invalid name.
# Audit mode also says "would block" for a blocked flow (a port not in
# `ports`), and the suggestion proposes that port.
source "$(dirname "$0")/lib.sh"

U=12345
NAMES="www.allowed.test a.b.allowed.test svc1.svc.allowed.test svc2.svc.allowed.test
svc3.svc.allowed.test target.cdn.test alice.github.io bob.github.io carol.github.io
a.co.uk b.co.uk c.co.uk www.shop.co.uk api.shop.co.uk cdn.shop.co.uk"
EXPECT='["*.shop.co.uk", "*.svc.allowed.test", "a.b.allowed.test", "a.co.uk", "alice.github.io", "b.co.uk", "bob.github.io", "c.co.uk", "carol.github.io", "target.cdn.test", "www.allowed.test"]'

df_zone_add allowed.test.zone < <(seq 1 3 | sed 's/.*/svc&.svc IN A 198.18.1.20/')
df_setup
df_start_listener 80

# workload: resolve each name (glibc, A only) and connect to it on port 80,
# as uid $U; prints "NAME ok" or "NAME FAIL why"; exit 1 if any failed.
workload() {
	df_wl_as "$U" "$DF_PY" - $NAMES <<'PYEOF'
import socket, sys
bad = 0
for name in sys.argv[1:]:
    try:
        addr = socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)[0][4]
        socket.create_connection(addr, timeout=3).close()
        print(name, "ok")
    except OSError as e:
        print(name, "FAIL", e)
        bad += 1
sys.exit(1 if bad else 0)
PYEOF
}

df_start_dnsfence mode='"audit"' allow='[]'
out="$(workload)" || fail "the workload failed under audit: $out"
ok "audit: the workload reached all $(wc -w <<<"$NAMES") names"
if df_connect_as "$U" 198.18.1.20 22; then :; fi
df_poll 30 grep -q "would block tcp 198.18.0.2:[0-9]* -> 198.18.1.20:22 from uid $U: port tcp/22 is not in \`ports\`" \
	"$DF_DNSFENCE_LOG" || fail "no 'would block' line for 198.18.1.20:22"
ok "audit: $(grep -o 'would block tcp .*22 from.*' "$DF_DNSFENCE_LOG" | head -n 1)"
df_stop_dnsfence
[ -f "$DF_TMP/state/suggest.json" ] || fail "no state file $DF_TMP/state/suggest.json"

df_dnsfence suggest
[ "$DF_CMD_RC" -eq 0 ] || fail "suggest exited $DF_CMD_RC: $DF_CMD_ERR"
printf '%s\n' "$DF_CMD_OUT" >"$DF_TMP/allow.json"
"$DF_PY" - "$DF_TMP/allow.json" "$EXPECT" <<'PYEOF' || fail "suggest printed: $DF_CMD_OUT"
import json, sys
got = json.load(open(sys.argv[1]))
# the flow to 198.18.1.20:22 (answered for a name) proposes its port
assert list(got) == ["allow", "ports"], got
assert got["ports"] == ["tcp/80", "tcp/443", "tcp/8080", "tcp/22"], got["ports"]
allow = got["allow"]
assert "ready.dnsfence.invalid" not in allow, allow  # lib.sh's readiness probe
for bad in ("*.github.io", "github.io", "*.co.uk", "co.uk", "*.uk", "*.io"):
    assert bad not in allow, "public suffix suggested: " + bad
assert allow == json.loads(sys.argv[2]), allow
PYEOF
ok "suggest: $(tr -d ' \n' <"$DF_TMP/allow.json")"

df_dnsfence suggest --min-count 2
[ "$DF_CMD_RC" -eq 0 ] || fail "suggest --min-count 2 exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q "www.allowed.test" <<<"$DF_CMD_OUT" && fail "--min-count 2 kept a name seen once: $DF_CMD_OUT"
ok "suggest --min-count 2 leaves out names seen once"

allow="$("$DF_PY" -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["allow"]))' "$DF_TMP/allow.json")"
df_start_dnsfence mode='"enforce"' allow="$allow"
out="$(workload)" || fail "the workload failed under the suggested allowlist: $out"
ok "enforce with the suggestion: the workload reached all names"
df_dig www.evil.test A
expect_rcode NXDOMAIN
if df_connect_as "$U" 198.18.3.1 80; then fail "enforce lets 198.18.3.1:80 through"; fi
ok "enforce: www.evil.test is denied and its address unreachable"
