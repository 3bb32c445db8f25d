#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence report` says what a daemon saw, from the running daemon
# (its control socket) and, once it stopped, from its state_dir.
#
# The workload asks an allowed name (www.allowed.test) and reaches it,
# asks a denied one (www.evil.test), connects to an address no name was
# answered with (198.18.1.11:80) and to the allowed name's address on a
# port not in `ports` (198.18.1.10:9999). `report --format json` from the
# running daemon holds the allowed name (count, addresses, its allow
# entry, first and last seen), the denied name with its fix and both
# blocked flows with their reasons; `--format md` gives Markdown tables;
# stderr names the control socket as the source. After the daemon
# stopped, `report` reads state_dir (and says so) and holds the same
# records; a restarted daemon still reports the allowed name with its
# first-seen time and addresses, the denied name and both blocked flows
# (suggest.json is read back at start, like usage.json). Positive
# control: the allowed name resolves and its page is served. Errors: no daemon and an empty state_dir name both and exit
# non-zero; a bad --format names the flag and the accepted values.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
df_start_dnsfence allow='["www.allowed.test"]'

wl curl -s -o /dev/null --max-time 5 "http://www.allowed.test/reached-$$" ||
	fail "control: curl of the allowed name failed"
grep -q "GET /reached-$$" "$DF_TMP/listener-80.log" ||
	fail "control: the allowed name was not reached"
ok "control: www.allowed.test resolves and its page is served"
df_dig www.evil.test A
expect_rcode NXDOMAIN
! df_tcp_connect 198.18.1.11 80 || fail "198.18.1.11:80 (never answered) connected: the fence is open"
! df_tcp_connect 198.18.1.10 9999 || fail "198.18.1.10:9999 (port not allowed) connected: the fence is open"

# check_json FILE SOURCE: the three kinds of record, as the report holds them.
check_json() {
	"$DF_PY" - "$1" "$2" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
src = sys.argv[2]
def need(cond, what):
    if not cond:
        sys.exit("%s: %s: %s" % (src, what, json.dumps(rep, indent=1)))
names = {n["name"]: n for n in rep.get("allowed_names", [])}
w = names.get("www.allowed.test")
need(w is not None, "no allowed name www.allowed.test")
need(w["count"] >= 1, "www.allowed.test count < 1")
need(w["entry"] == "www.allowed.test" and w["from"] == "allow", "www.allowed.test: entry/from")
need("198.18.1.10" in w["addresses"], "www.allowed.test: address 198.18.1.10 missing")
need(0 < w["first_seen"] <= w["last_seen"], "www.allowed.test: first/last seen")
need("www.evil.test" not in names, "the denied name is listed as allowed")
d = [x for x in rep["denied"] if x["name"] == "www.evil.test"]
need(d and d[0]["count"] >= 1 and d[0]["entry"] == "www.evil.test", "no denied www.evil.test with its entry")
b = rep["blocked"]
need(any(x["dst"] == "198.18.1.11" and x["port"] == "tcp/80" and x["reason"] == "never_answered" for x in b),
     "no blocked 198.18.1.11 tcp/80 never_answered")
need(any(x["dst"] == "198.18.1.10" and x["port"] == "tcp/9999" and x["reason"] == "port"
         and x["name"] == "www.allowed.test" for x in b),
     "no blocked 198.18.1.10 tcp/9999 (port) answered for www.allowed.test")
EOF
}
# all_in FILE: check_json passes (the flows reach the daemon through NFLOG).
all_in() { df_dnsfence report --format json && printf '%s\n' "$DF_CMD_OUT" >"$1" && check_json "$1" quiet 2>/dev/null; }

df_poll 100 all_in "$DF_TMP/running.json" || {
	df_dnsfence report --format json
	printf '%s\n' "$DF_CMD_OUT" >"$DF_TMP/running.json"
	check_json "$DF_TMP/running.json" "report from the running daemon (exit $DF_CMD_RC, stderr: $DF_CMD_ERR)" ||
		fail "report --format json from the running daemon lacks a record"
}
[ "$DF_CMD_RC" -eq 0 ] || fail "report exited $DF_CMD_RC"
grep -q "control.sock" <<<"$DF_CMD_ERR" || fail "report does not say it asked the control socket: $DF_CMD_ERR"
ok "running: report --format json holds the allowed name, the denied name and both blocked flows; stderr names the control socket"

df_dnsfence report --format md
[ "$DF_CMD_RC" -eq 0 ] || fail "report --format md exited $DF_CMD_RC: $DF_CMD_ERR"
md="$DF_CMD_OUT"
grep -q '^| `www.evil.test` | [1-9][0-9]* |' <<<"$md" || fail "md: no row of the denied name: $md"
grep -q '^| `198.18.1.11` | tcp/80 | never_answered:' <<<"$md" || fail "md: no row of the blocked flow: $md"
grep -q '^| `www.allowed.test` | [1-9][0-9]* | .*198.18.1.10.* | `www.allowed.test` (allow) |' <<<"$md" ||
	fail "md: no row of the allowed name with its address and entry: $md"
grep -q '^|---|' <<<"$md" || fail "md: no table separator: $md"
ok "running: report --format md gives Markdown tables"

df_dnsfence report
[ "$DF_CMD_RC" -eq 0 ] || fail "report (text) exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q 'denied .*www\.evil\.test.*www\.evil\.test' <<<"$DF_CMD_OUT" || fail "text: no denied name with its entry: $DF_CMD_OUT"
grep -q 'allowed .*www\.allowed\.test.*198\.18\.1\.10' <<<"$DF_CMD_OUT" || fail "text: no allowed name: $DF_CMD_OUT"
ok "running: report (text) names them"

df_stop_dnsfence
df_dnsfence report --format json
[ "$DF_CMD_RC" -eq 0 ] || fail "report after the stop exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q "$DF_TMP/state" <<<"$DF_CMD_ERR" || fail "report after the stop does not name state_dir as its source: $DF_CMD_ERR"
printf '%s\n' "$DF_CMD_OUT" >"$DF_TMP/stopped.json"
check_json "$DF_TMP/stopped.json" "report from state_dir" || fail "report from state_dir lacks a record"
ok "stopped: report from state_dir holds the same records and says where it read them"

# A restart keeps the allowed names (usage.json is read at start), the
# denied names and the blocked flows (suggest.json is).
first="$("$DF_PY" -c 'import json, sys
print([n for n in json.load(open(sys.argv[1]))["allowed_names"] if n["name"] == "www.allowed.test"][0]["first_seen"])' "$DF_TMP/stopped.json")"
df_start_dnsfence allow='["www.allowed.test"]'
df_dnsfence report --format json
[ "$DF_CMD_RC" -eq 0 ] || fail "report after the restart exited $DF_CMD_RC: $DF_CMD_ERR"
"$DF_PY" -c 'import json, sys
n = [n for n in json.loads(sys.argv[1])["allowed_names"] if n["name"] == "www.allowed.test"]
sys.exit(0 if n and n[0]["count"] >= 1 and n[0]["first_seen"] == float(sys.argv[2]) and "198.18.1.10" in n[0]["addresses"] else 1)' \
	"$DF_CMD_OUT" "$first" || fail "the restart lost www.allowed.test's record (first seen $first): $DF_CMD_OUT"
ok "restarted: the allowed name's record (first seen, addresses) is still there"
printf '%s\n' "$DF_CMD_OUT" >"$DF_TMP/restarted.json"
check_json "$DF_TMP/restarted.json" "report after the restart" ||
	fail "the restart lost the denied name or a blocked flow"
ok "restarted: the denied name and both blocked flows are still there"
df_stop_dnsfence

# No daemon, no records.
mkdir -m 0755 "$DF_TMP/empty"
"$DF_PY" -c 'import json, sys
c = json.load(open(sys.argv[1])); c["state_dir"] = sys.argv[2]; c["control"]["socket"] = sys.argv[3]
json.dump(c, open(sys.argv[4], "w"))' "$DF_DNSFENCE_CONF" "$DF_TMP/empty" "$DF_TMP/none.sock" "$DF_TMP/empty.json"
DF_DNSFENCE_CONF="$DF_TMP/empty.json" df_dnsfence report
[ "$DF_CMD_RC" -ne 0 ] || fail "report with no daemon and no records exited 0"
grep -q "$DF_TMP/none.sock" <<<"$DF_CMD_ERR" && grep -q "$DF_TMP/empty" <<<"$DF_CMD_ERR" ||
	fail "the error does not name the control socket and state_dir tried: $DF_CMD_ERR"
ok "no daemon, no records: exit $DF_CMD_RC, naming both ($DF_CMD_ERR)"

df_dnsfence report --format yaml
[ "$DF_CMD_RC" -eq 2 ] || fail "report --format yaml exited $DF_CMD_RC, expected 2"
grep -q -- '--format' <<<"$DF_CMD_ERR" && grep -q 'md' <<<"$DF_CMD_ERR" && grep -q 'json' <<<"$DF_CMD_ERR" &&
	grep -q 'text' <<<"$DF_CMD_ERR" || fail "the bad --format message does not name the flag and values: $DF_CMD_ERR"
ok "a bad --format names the flag and md, json, text"
