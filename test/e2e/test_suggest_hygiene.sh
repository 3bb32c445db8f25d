#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# suggest proposes what a learning run needs and nothing else: after a run
# that used "dnsfence probe" and one curl (A and AAAA for one name), it
# proposes neither the probe name (nor lib.sh's readiness name) and counts
# the curl as one lookup, so --min-count 2 drops it; a flow to an answered
# name on a port not in `ports` is named with that name and proposes the
# `ports` entry; a query straight to a resolver is described as a DNS
# bypass. Control: the same name looked up in two lookups a second apart
# counts 2 and stays under --min-count 2.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 8080

df_start_dnsfence mode='"audit"' allow='["www.allowed.test"]'
df_dnsfence probe
[ "$DF_CMD_RC" -eq 0 ] || fail "probe exited $DF_CMD_RC: $DF_CMD_ERR"
wl curl -s -o /dev/null --max-time 5 http://once.evil.test:8080/ || fail "curl once.evil.test failed under audit"
wl curl -s -o /dev/null --max-time 5 http://twice.evil.test:8080/ || fail "curl twice.evil.test failed"
sleep 1.2
wl curl -s -o /dev/null --max-time 5 http://twice.evil.test:8080/ || fail "the second curl twice.evil.test failed"
df_dig www.allowed.test A
expect_answer_contains 198.18.1.10
if df_tcp_connect 198.18.1.10 22 1; then :; fi # audit lets the SYN through; nothing listens on 22
df_dig @198.18.0.1 bypass.evil.test A
expect_log_contains 'DNS to 198.18.0.1 bypassing dnsfence'
expect_log_contains '198.18.1.10:22'
df_stop_dnsfence

state="$DF_TMP/state/suggest.json"
"$DF_PY" - "$state" <<'PY' || fail "state counts: $(cat "$state")"
import json, sys
names = {n["name"]: n["count"] for n in json.load(open(sys.argv[1]))["names"]}
assert names.get("once.evil.test") == 1, names   # one curl: A and AAAA, one lookup
assert names.get("twice.evil.test") == 2, names  # control: two lookups a second apart
PY
ok "counts are lookups: one curl (A+AAAA) counts 1, two curls a second apart count 2"

df_dnsfence suggest
[ "$DF_CMD_RC" -eq 0 ] || fail "suggest exited $DF_CMD_RC: $DF_CMD_ERR"
"$DF_PY" - "$DF_CMD_OUT" <<'PY' || fail "suggest printed: $DF_CMD_OUT"
import json, sys
got = json.loads(sys.argv[1])
allow = got["allow"]
for bad in ("probe.dnsfence.invalid", "ready.dnsfence.invalid"):
    assert bad not in allow, allow
assert "once.evil.test" in allow and "twice.evil.test" in allow, allow
assert got["ports"][-1] == "tcp/22" and "tcp/80" in got["ports"], got
PY
grep -q 'to 198.18.1.10 tcp/22, answered for www.allowed.test: its port is not in `ports`; the suggestion adds "tcp/22" to "ports"' <<<"$DF_CMD_ERR" ||
	fail "suggest does not name the name behind the port-blocked flow: $DF_CMD_ERR"
grep -q 'went straight to 198.18.0.1 port 53, bypassing dnsfence' <<<"$DF_CMD_ERR" ||
	fail "suggest does not describe the DNS bypass: $DF_CMD_ERR"
ok "suggest: no probe or readiness name; \"ports\" gains tcp/22, named for www.allowed.test; the bypass is described"

df_dnsfence suggest --min-count 2
grep -q '"twice.evil.test"' <<<"$DF_CMD_OUT" || fail "--min-count 2 dropped a name looked up twice: $DF_CMD_OUT"
! grep -q '"once.evil.test"' <<<"$DF_CMD_OUT" || fail "--min-count 2 kept the name one curl looked up: $DF_CMD_OUT"
ok "suggest --min-count 2 drops the one-curl name, keeps the two-lookup one"
