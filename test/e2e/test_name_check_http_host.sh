#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 11 on plain HTTP: nginx on 198.18.1.10:80 serves
# www.allowed.test and evil.test by Host, as a shared front end does; the
# workload resolved www.allowed.test through dnsfence. The name check
# (name_check.http_ports, default tcp/80) lets curl and a request head
# split over three segments reach www.allowed.test, and resets (and
# logs) `curl -H 'Host: evil.test'`, `--connect-to evil.test:80:...`, a
# request to the bare address, two Host headers, an absolute-form target
# that disagrees with Host, and the allowed name a.b.allowed.test, which
# was never answered with 198.18.1.10. Positive control: with the check
# off (a live reload) the same evil.test request gets evil.test's page.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

df_front_end_pages
df_start_nginx 80 \
	"server { listen 198.18.1.10:80 default_server; server_name www.allowed.test a.b.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:80; server_name evil.test; root $DF_TMP/www/evil; }"

sock="$DF_TMP/control.sock"
chmod 755 "$DF_TMP" # a reload reads the config as the daemon's user
ALLOW='["www.allowed.test", "a.b.allowed.test"]'
conf() { df_config allow="$ALLOW" ports='["tcp/80"]' metrics='"127.0.0.1:9253"' control='{"socket": "'"$sock"'", "watch": false}' "$@"; }
df_start_dnsfence allow="$ALLOW" ports='["tcp/80"]' metrics='"127.0.0.1:9253"' control='{"socket": "'"$sock"'", "watch": false}'

as_wl() { df_wl_as $WL_UID "$@"; }
CURL=(curl -sS --max-time 5)
df_dig a.b.allowed.test A
expect_rcode NOERROR

out="$(as_wl "${CURL[@]}" http://www.allowed.test/ 2>&1)" || fail "curl http://www.allowed.test/ failed: $out"
[ "$out" = "allowed-page" ] || fail "curl http://www.allowed.test/ got '$out'"
ok "allowed name through the front end: curl"

# A request head in three segments, each sent alone (TCP_NODELAY, a pause).
split_request() {
	as_wl timeout 20 "$DF_PY" - "$1" <<'EOF'
import socket, sys, time
host = sys.argv[1]
head = ("GET / HTTP/1.1\r\nHost: %s\r\nUser-Agent: split\r\nConnection: close\r\n\r\n" % host).encode()
s = socket.create_connection(("198.18.1.10", 80), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
third = len(head) // 3
try:
    for part in (head[:third], head[third:2 * third], head[2 * third:]):
        s.sendall(part)
        time.sleep(0.1)
    reply = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        reply += c
except (ConnectionResetError, BrokenPipeError) as e:
    print("reset: %s" % e)
    sys.exit(3)
if b"allowed-page" not in reply:
    print("no page: %r" % reply[:200])
    sys.exit(4)
print("request head of %d bytes in 3 segments: the server answered" % len(head))
EOF
}
out="$(split_request www.allowed.test 2>&1)" || fail "split request for www.allowed.test: $out"
ok "$out"

expect_reset() {
	local what=$1 rc=0
	shift
	out="$(as_wl "$@" 2>&1)" || rc=$?
	case "$rc" in
	56 | 52) ;;
	0) fail "$what got through: $out" ;;
	*) fail "$what: expected a reset, curl exited $rc: $out" ;;
	esac
}
expect_reset "curl -H 'Host: evil.test'" "${CURL[@]}" -H 'Host: evil.test' http://www.allowed.test/
expect_log_contains "198.18.1.10:80 from uid $WL_UID: HTTP host evil.test is not allowed"
ok "curl -H 'Host: evil.test' to the allowed address: reset and logged"
expect_reset "curl --connect-to evil.test" "${CURL[@]}" --connect-to evil.test:80:198.18.1.10:80 http://evil.test/
ok "curl --connect-to evil.test:80:198.18.1.10:80: reset"
expect_reset "curl to the bare address" "${CURL[@]}" http://198.18.1.10/
expect_log_contains "no HTTP host (a connection to the bare address)"
ok "Host 198.18.1.10 (an IP literal): reset and logged"
# Raw request heads curl would not send: each must be reset, not answered.
raw_request() {
	as_wl timeout 20 "$DF_PY" - "$1" <<'EOF'
import socket, sys
head = sys.argv[1].encode().decode("unicode_escape").encode()
s = socket.create_connection(("198.18.1.10", 80), timeout=5)
try:
    s.sendall(head)
    reply = s.recv(4096)
except (ConnectionResetError, BrokenPipeError) as e:
    print("reset: %s" % e)
    sys.exit(3)
print("answered: %r" % reply[:120])
EOF
}
for head in 'GET / HTTP/1.1\r\nHost: www.allowed.test\r\nHost: evil.test\r\n\r\n' \
	'GET http://www.allowed.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n' \
	'GET / HTTP/1.1\r\nHost : evil.test\r\n\r\n'; do
	rc=0
	out="$(raw_request "$head" 2>&1)" || rc=$?
	[ "$rc" -eq 3 ] || fail "request head '$head' was not reset (exit $rc): $out"
done
expect_log_contains "first bytes are not a readable HTTP host"
ok "two Host headers, a target that disagrees with Host, space before the colon: reset and logged"
out="$(raw_request 'GET http://www.allowed.test/ HTTP/1.1\r\nHost: www.allowed.test\r\n\r\n' 2>&1)" ||
	fail "control: an absolute-form request for www.allowed.test was refused: $out"
grep -q "answered: b'HTTP/1.1 200" <<<"$out" || fail "control: absolute-form got: $out"
ok "control: an absolute-form request whose target agrees with Host is answered"
expect_reset "a.b.allowed.test (allowed, never answered with 198.18.1.10)" \
	"${CURL[@]}" --connect-to a.b.allowed.test:80:198.18.1.10:80 http://a.b.allowed.test/
expect_log_contains "HTTP host a.b.allowed.test was not answered with 198.18.1.10"
ok "allowed name B on the address answered only for A: reset (strict rule)"
out="$(split_request evil.test 2>&1)" && fail "split request for evil.test got through: $out"
ok "split request for evil.test: $out"
[ "$(df_status_value counters.flow_refused_not_allowed)" -ge 2 ] || fail "refusals not counted"

# The verdicts and the queue, scraped (Prometheus) and in status.
m="$(wl curl -sS --max-time 5 http://127.0.0.1:9253/metrics)" || fail "no metrics: $m"
metric() { awk -v k="$1" '$1 == k { print $2 }' <<<"$m"; }
[ "$(metric 'dnsfence_name_check_flows_total{result="accepted"}')" -ge 3 ] ||
	fail "metrics: accepted flows: $(grep name_check <<<"$m")"
[ "$(metric 'dnsfence_name_check_flows_total{result="refused",reason="not_allowed"}')" -ge 3 ] ||
	fail "metrics: refused not_allowed: $(grep name_check <<<"$m")"
[ "$(metric 'dnsfence_name_check_flows_total{result="refused",reason="no_name"}')" -ge 1 ] ||
	fail "metrics: refused no_name: $(grep name_check <<<"$m")"
[ "$(metric 'dnsfence_name_check_flows_total{result="refused",reason="unreadable"}')" -ge 3 ] ||
	fail "metrics: refused unreadable: $(grep name_check <<<"$m")"
[ "$(metric 'dnsfence_name_check_flows_total{result="refused",reason="not_answered"}')" -ge 1 ] ||
	fail "metrics: refused not_answered: $(grep name_check <<<"$m")"
[ "$(metric dnsfence_name_check_flows_checked_total)" -ge 11 ] ||
	fail "metrics: flows checked: $(grep name_check <<<"$m")"
[ "$(metric dnsfence_name_check_queue_depth)" = 0 ] ||
	fail "metrics: the idle queue's depth: $(grep queue <<<"$m")"
[ "$(metric 'dnsfence_name_check_queue_dropped_total{reason="full"}')" = 0 ] ||
	fail "metrics: queue drops: $(grep queue <<<"$m")"
[ "$(df_status_value name_check.mode)" = enforce ] || fail "status: name_check.mode"
[ "$(df_status_value name_check.queue_depth)" = 0 ] || fail "status: name_check.queue_depth"
[ "$(df_status_value name_check.queue_dropped_full)" = 0 ] || fail "status: name_check.queue_dropped_full"
ok "metrics and status: verdicts by reason, the queue's depth and drops (kernel count)"

# Positive control: the same evil.test request without the check.
# reload_to WHAT KEY=JSON...: reload with that config.
reload_to() {
	local what=$1
	shift
	conf "$@"
	df_dnsfence reload
	[ "$DF_CMD_RC" -eq 0 ] || fail "reload to $what exited $DF_CMD_RC: $DF_CMD_ERR"
}
for control in 'name_check off:{"mode": "off"}' 'http_ports []:{"http_ports": []}'; do
	reload_to "${control%%:*}" name_check="${control#*:}"
	out="$(as_wl "${CURL[@]}" -H 'Host: evil.test' http://www.allowed.test/ 2>&1)" ||
		fail "control: with ${control%%:*}, Host: evil.test did not connect: $out"
	[ "$out" = "evil-page" ] || fail "control: with ${control%%:*} got '$out'"
	ok "control: with ${control%%:*} the same client reaches evil.test through the front end"
done
reload_to "the default"
expect_reset "Host: evil.test after turning the check back on by reload" \
	"${CURL[@]}" -H 'Host: evil.test' http://www.allowed.test/
ok "reload back to the default: Host: evil.test reset again"
expect_dnsfence_running
