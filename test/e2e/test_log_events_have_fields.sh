#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# With log.format json, a denied question's line carries typed fields
# beside msg: event query_denied, name, qtype, client, proto, rcode,
# reason, entry (the exact allow entry to add) and uid, the uid of the
# process that asked, looked up by its socket (sock_diag), over UDP and
# TCP. With log.queries an allowed question is logged too (event
# query_allowed, the entry that matched, uid). Controls: two askers get
# their own uids (the field is not the daemon's nor a constant), the
# allowed name resolves, and every line of the log is one JSON object.
source "$(dirname "$0")/lib.sh"

df_setup
df_start_dnsfence allow='["www.allowed.test"]' log='{"level": "info", "format": "json", "queries": true}'

df_wl_as 4242 dig +time=3 +tries=1 @127.0.0.1 www.evil.test A >"$DF_TMP/d1" 2>&1 || true
grep -q 'status: NXDOMAIN' "$DF_TMP/d1" || fail "www.evil.test as uid 4242: $(cat "$DF_TMP/d1")"
df_wl_as 4243 dig +tcp +time=3 +tries=1 @127.0.0.1 www.evil.test AAAA >"$DF_TMP/d2" 2>&1 || true
grep -q 'status: NXDOMAIN' "$DF_TMP/d2" || fail "www.evil.test AAAA over TCP as uid 4243: $(cat "$DF_TMP/d2")"
df_wl_as 4244 dig +time=3 +tries=1 @127.0.0.1 www.allowed.test A >"$DF_TMP/d3" 2>&1 || true
grep -q 'status: NOERROR' "$DF_TMP/d3" || fail "www.allowed.test as uid 4244: $(cat "$DF_TMP/d3")"
df_poll 30 grep -q '"event":"query_allowed".*www.allowed.test' "$DF_DNSFENCE_LOG" || fail "no query_allowed line"

# event QTYPE KEY=VALUE...: one line of the log has event and qtype and
# each KEY=VALUE (a number where VALUE is digits).
expect_event() {
	"$DF_PY" - "$DF_DNSFENCE_LOG" "$@" <<'PYEOF' || fail "no log line with $*"
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
sys.exit(1)
PYEOF
}
line="$(expect_event event=query_denied name=www.evil.test qtype=A uid=4242 proto=udp rcode=NXDOMAIN reason=not_allowed entry=www.evil.test)"
grep -qE '"client": "127\.0\.0\.1:[0-9]+"' <<<"$line" || fail "the denied line's client is not 127.0.0.1:PORT: $line"
ok "UDP denial: $line"
line="$(expect_event event=query_denied name=www.evil.test qtype=AAAA uid=4243 proto=tcp)"
ok "TCP denial: $line"
line="$(expect_event event=query_allowed name=www.allowed.test qtype=A uid=4244 entry=www.allowed.test)"
ok "allowed (log.queries): $line"

"$DF_PY" - "$DF_DNSFENCE_LOG" <<'PYEOF' || fail "a line of the JSON log is not one JSON object"
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    assert {"ts", "level", "sys", "msg"} <= set(e), line
    n += 1
print("%d lines" % n)
PYEOF
ok "every line of the log is one JSON object with ts, level, sys, msg"
expect_dnsfence_running
