#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# suggest can be reviewed: `suggest --explain` gives each learned entry
# its count, first seen, the uid that asked and, for a wildcard, the
# names behind it; a wildcard over labels that look like encoded data
# (base32 here: the exfiltration pattern) carries a warning, also said on
# stderr without --explain, so such names never collapse silently into
# `*.evil.example`. Counts are questions, not processes: one process
# asking a name twice counts 2 (--min-count 2 keeps it). Positive
# control: the wildcard over ordinary names (api, www, cdn.example.test)
# is proposed without a warning.
source "$(dirname "$0")/lib.sh"

U=12345
df_setup
df_start_dnsfence allow='["www.allowed.test"]'

# ask UID NAME...: one process (as UID) asks dnsfence for each NAME, A
# then AAAA, each a question of its own.
ask() {
	local uid=$1
	shift
	df_wl_as "$uid" "$DF_PY" -c '
import sys
import dns.message, dns.query
for name in sys.argv[1:]:
    for t in ("A", "AAAA"):
        r = dns.query.udp(dns.message.make_query(name, t), "127.0.0.1", timeout=3)
        print(name, t, r.rcode())
' "$@" || fail "asking $* as uid $uid failed"
}

ENC="mzxw6ytboi4tqmzq.evil.example nbswy3dpeb3w64tmmq.evil.example mfrggzdfmztwq2lk.evil.example"
# api.example.test twice in one process, at once: two questions.
ask "$U" $ENC api.example.test api.example.test www.example.test cdn.example.test >/dev/null

df_dnsfence suggest --explain
[ "$DF_CMD_RC" -eq 0 ] || fail "suggest --explain exited $DF_CMD_RC: $DF_CMD_ERR"
"$DF_PY" - "$DF_CMD_OUT" "$U" <<'PY' || fail "suggest --explain printed: $DF_CMD_OUT"
import json, sys
got = json.loads(sys.argv[1])
uid = int(sys.argv[2])
assert "*.evil.example" in got["allow"] and "*.example.test" in got["allow"], got["allow"]
ex = {e["entry"]: e for e in got["explain"]}
evil, ok = ex["*.evil.example"], ex["*.example.test"]
assert sorted(evil["names"]) == sorted(["mzxw6ytboi4tqmzq.evil.example",
    "nbswy3dpeb3w64tmmq.evil.example", "mfrggzdfmztwq2lk.evil.example"]), evil
assert "encoded data" in evil["warning"] and "exfiltration" in evil["warning"], evil
assert evil["count"] == 3 and evil["uids"] == [uid], evil
assert sorted(ok["names"]) == ["api.example.test", "cdn.example.test", "www.example.test"], ok
assert "warning" not in ok, ok          # the control: ordinary names are not flagged
assert ok["count"] == 4 and ok["uids"] == [uid], ok   # api asked twice
assert ok["first_seen"].endswith("Z") and ok["first_seen"][:2] == "20", ok
PY
ok "suggest --explain: $(tr -d '\n' <<<"$DF_CMD_OUT" | tr -s ' ')"

df_dnsfence suggest
grep -q 'suggest: 3 of the 3 names behind \*\.evil\.example have labels that look like encoded data (base32/base64' <<<"$DF_CMD_ERR" ||
	fail "suggest without --explain does not warn of the encoded labels: $DF_CMD_ERR"
! grep -q 'example\.test' <<<"$DF_CMD_ERR" || fail "suggest warns of the ordinary names: $DF_CMD_ERR"
ok "suggest (no --explain) warns: $(grep 'encoded' <<<"$DF_CMD_ERR")"

df_dnsfence suggest --min-count 2
[ "$DF_CMD_RC" -eq 0 ] || fail "suggest --min-count 2 exited $DF_CMD_RC: $DF_CMD_ERR"
"$DF_PY" - "$DF_CMD_OUT" <<'PY' || fail "suggest --min-count 2 printed: $DF_CMD_OUT"
import json, sys
allow = json.loads(sys.argv[1])["allow"]
assert "api.example.test" in allow, allow   # two questions of one process
assert "www.example.test" not in allow and "*.example.test" not in allow, allow
PY
ok "suggest --min-count 2 keeps the name one process asked twice: $(tr -d ' \n' <<<"$DF_CMD_OUT")"
