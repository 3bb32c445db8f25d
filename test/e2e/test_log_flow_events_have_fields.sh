#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# With log.format json, the fence's other events carry typed fields beside
# msg (docs/metrics.md, "Log events"): a connect to an address dnsfence
# never answered and one to an answered address on a port not in `ports`
# give flow_blocked lines (action, proto, src, dst, dport, reason, uid,
# and the name the address was answered for); a request to an allowed
# front end naming another host gives a namecheck_refused line (the Host
# read as name, reason not_allowed); a reload gives a reload line (result
# ok, trigger, detail), and a SIGHUP reload refused for an unknown key
# result bad_config with the key in detail. Each line parses as JSON. Positive control: the
# allowed name's flow through the same front end connects and gets no
# flow_blocked or namecheck_refused line.
source "$(dirname "$0")/lib.sh"
U=4242
df_setup

df_front_end_pages
df_start_nginx 80 \
	"server { listen 198.18.1.10:80 default_server; server_name www.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:80; server_name evil.test; root $DF_TMP/www/evil; }"
sock="$DF_TMP/control.sock"
chmod 755 "$DF_TMP" # a reload reads the config as the daemon's user
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/80"]' \
	log='{"level": "info", "format": "json"}' \
	control='{"socket": "'"$sock"'", "watch": false}'

CURL=(curl -sS --max-time 5)
out="$(df_wl_as $U "${CURL[@]}" http://www.allowed.test/ 2>&1)" || fail "curl http://www.allowed.test/ failed: $out"
[ "$out" = "allowed-page" ] || fail "curl http://www.allowed.test/ got '$out'"
ok "control: uid $U reaches www.allowed.test:80 through the name check"

if df_connect_as $U 198.18.1.11 80; then fail "198.18.1.11:80 (never answered) was reachable"; fi
if df_connect_as $U 198.18.1.10 22; then fail "198.18.1.10:22 (port not in ports) was reachable"; fi
out="$(df_wl_as $U "${CURL[@]}" -H 'Host: evil.test' http://www.allowed.test/ 2>&1)" &&
	fail "Host: evil.test through the allowed front end connected: $out"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"

# expect_event KEY=VALUE...: one line of the log has each KEY=VALUE (a
# number where VALUE is digits), printed; 1 when none has.
expect_event() {
	"$DF_PY" -c '
import json, sys
want = {}
for kv in sys.argv[2:]:
    k, _, v = kv.partition("=")
    want[k] = int(v) if v.isdigit() else v
for line in open(sys.argv[1]):
    e = json.loads(line)
    if all(e.get(k) == v for k, v in want.items()):
        print(json.dumps(e))
        sys.exit(0)
sys.exit(1)' "$DF_DNSFENCE_LOG" "$@" || return 1
}
# has KEY=VALUE...: expect_event, polled (the lines come from the event loop).
has() { df_poll 50 expect_event "$@" >/dev/null || fail "no log line with $*"; expect_event "$@"; }

line="$(has event=flow_blocked action=blocked proto=tcp dst=198.18.1.11 dport=80 reason=never_answered uid=$U src=198.18.0.2)"
ok "never answered: $line"
line="$(has event=flow_blocked action=blocked proto=tcp dst=198.18.1.10 dport=22 reason=port uid=$U name=www.allowed.test)"
ok "port not in ports: $line"
line="$(has event=namecheck_refused action=blocked proto=tcp dst=198.18.1.10 dport=80 reason=not_allowed uid=$U name=evil.test)"
grep -q '"msg": "blocked tcp .*HTTP host evil.test is not allowed' <<<"$line" || fail "namecheck_refused lost its msg: $line"
ok "name check refusal: $line"
line="$(has event=reload result=ok trigger=control)"
"$DF_PY" -c 'import json, sys; e = json.loads(sys.argv[1]); assert isinstance(e["ms"], int) and e["detail"], e' "$line" ||
	fail "reload line without ms or detail: $line"
ok "reload: $line"
cp "$DF_DNSFENCE_CONF" "$DF_TMP/good.json"
printf '{"allow": ["www.allowed.test"], "metric": true}\n' >"$DF_DNSFENCE_CONF"
kill -HUP "$DF_DNSFENCE_PID" # `dnsfence reload` would refuse it before asking
line="$(has event=reload result=bad_config trigger=signal level=error)"
cp "$DF_TMP/good.json" "$DF_DNSFENCE_CONF"
grep -q '"detail": ".*metric' <<<"$line" || fail "the failed reload's detail does not name the key: $line"
ok "failed reload: $line"

# Positive control: the allowed flow to 198.18.1.10:80 left no line.
"$DF_PY" - "$DF_DNSFENCE_LOG" <<'PYEOF' || fail "the allowed flow was logged as blocked (or a line is not JSON)"
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    n += 1
    if e.get("event") == "flow_blocked" and e.get("dport") == 80 and e.get("dst") == "198.18.1.10":
        print(line)
        sys.exit(1)
    if e.get("event") == "namecheck_refused" and e.get("name") == "www.allowed.test":
        print(line)
        sys.exit(1)
print("%d lines" % n)
PYEOF
ok "control: no flow_blocked or namecheck_refused line for the allowed flow"
expect_dnsfence_running
