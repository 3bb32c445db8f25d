#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Logging to the journal, the daemon sends each line to journald's native
# socket as one datagram of fields (src/base/log.c): MESSAGE, PRIORITY,
# SYSLOG_IDENTIFIER and the event's fields upper-cased (DNSFENCE_EVENT,
# DNSFENCE_NAME, DNSFENCE_UID, ...). The host's journald is not touched:
# the test binds its own AF_UNIX datagram socket in $DF_TMP, names it in
# DNSFENCE_JOURNAL_SOCKET, and parses what arrives (the native protocol,
# journal_sink.py). A denied question and
# a blocked flow arrive with their fields; the lines go to the socket, not
# to stderr as well. Positive control: the allowed name resolves, and no
# query_denied datagram names it.
source "$(dirname "$0")/lib.sh"
U=4242
df_setup

JSOCK="$DF_TMP/journal.sock"
JOUT="$DF_TMP/journal.jsonl"
"$DF_PY" "$DF_E2E_DIR/journal_sink.py" "$JSOCK" "$JOUT" &
DF_PIDS+=("$!")
df_poll 50 test -S "$JSOCK" || fail "the test's journal socket was not bound"

export DNSFENCE_JOURNAL_SOCKET="$JSOCK"
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/80"]'
unset DNSFENCE_JOURNAL_SOCKET

df_wl_as $U dig +time=3 +tries=1 @127.0.0.1 www.evil.test A >"$DF_TMP/d1" 2>&1 || true
grep -q 'status: NXDOMAIN' "$DF_TMP/d1" || fail "www.evil.test: $(cat "$DF_TMP/d1")"
df_wl_as $U dig +time=3 +tries=1 @127.0.0.1 www.allowed.test A >"$DF_TMP/d2" 2>&1 || true
grep -q 'status: NOERROR' "$DF_TMP/d2" || fail "control: www.allowed.test: $(cat "$DF_TMP/d2")"
ok "control: www.allowed.test resolves, www.evil.test is denied"
if df_connect_as $U 198.18.1.11 80; then fail "198.18.1.11:80 (never answered) was reachable"; fi

# has KEY=VALUE...: one datagram has each field, printed; 1 when none has.
has() {
	"$DF_PY" -c '
import json, sys
want = dict(kv.partition("=")[::2] for kv in sys.argv[2:])
for line in open(sys.argv[1]):
    e = json.loads(line)
    if all(e.get(k) == v for k, v in want.items()):
        print(json.dumps(e))
        sys.exit(0)
sys.exit(1)' "$JOUT" "$@"
}
expect() { df_poll 50 has "$@" >/dev/null || fail "no journal datagram with $* (got: $(tail -n 5 "$JOUT"))"; has "$@"; }

line="$(expect DNSFENCE_EVENT=query_denied DNSFENCE_NAME=www.evil.test DNSFENCE_QTYPE=A DNSFENCE_UID=$U \
	DNSFENCE_REASON=not_allowed DNSFENCE_RCODE=NXDOMAIN DNSFENCE_SYS=policy PRIORITY=4 SYSLOG_IDENTIFIER=dnsfence)"
grep -q '"MESSAGE": "policy: denied www.evil.test A from 127.0.0.1:' <<<"$line" || fail "query_denied MESSAGE: $line"
ok "query_denied: $line"
line="$(expect DNSFENCE_EVENT=flow_blocked DNSFENCE_ACTION=blocked DNSFENCE_PROTO=tcp DNSFENCE_DST=198.18.1.11 \
	DNSFENCE_DPORT=80 DNSFENCE_REASON=never_answered DNSFENCE_UID=$U PRIORITY=4)"
grep -q '"MESSAGE": "blocked: blocked tcp 198.18.0.2:[0-9]* -> 198.18.1.11:80 from uid' <<<"$line" || fail "flow_blocked MESSAGE: $line"
ok "flow_blocked: $line"

if has DNSFENCE_EVENT=query_denied DNSFENCE_NAME=www.allowed.test >/dev/null; then
	fail "control: a query_denied datagram names the allowed www.allowed.test"
fi
if grep -q 'denied www.evil.test' "$DF_DNSFENCE_LOG"; then
	fail "the denial went to stderr as well as to the journal socket"
fi
ok "control: no denial of the allowed name; the lines went to the socket, not stderr"
expect_dnsfence_running
