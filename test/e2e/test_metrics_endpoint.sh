#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The `metrics` endpoint answers GET /metrics in the Prometheus text format
# (checked with prometheus_client's own parser) and its counters move with
# the traffic: queries, results (allowed, denied, cache_hit), upstream
# latency, set adds and entries, blocked flows, and each query's latency
# by path and by stage and the shed counts under the names
# docs/metrics.md gives them. As the workload (an unprivileged uid on
# loopback) it cannot do more than read: other paths are 404, POST is
# refused, and 60 idle connections hold at most
# METRICS_MAX_CONNS (8) descriptors of the daemon while DNS is answered as
# usual; once they are gone a scrape is answered again. (They can delay
# scrapes while they last: docs/metrics.md says so.) The query results
# partition queries_total, every family has a real HELP, no sample is a -1
# sentinel, the config-load gauges follow a refused and a good reload, and
# every metric contrib/prometheus/alerts.yaml and contrib/grafana/ use is
# exported.
source "$(dirname "$0")/lib.sh"

U=12345
df_setup
df_start_dnsfence allow='["www.allowed.test"]' metrics='"127.0.0.1:9253"'
expect_log_contains "Prometheus metrics on http://127.0.0.1:9253/metrics"

# scrape OUT: GET /metrics as the workload uid, parsed; OUT is "name{labels} value" lines.
scrape() {
	df_wl_as "$U" curl -sf --max-time 10 http://127.0.0.1:9253/metrics >"$DF_TMP/$1.txt" ||
		fail "scrape $1 failed"
	"$DF_PY" - "$DF_TMP/$1.txt" >"$DF_TMP/$1.parsed" <<'PYEOF' || fail "scrape $1 is not valid exposition format"
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
n = 0
for fam in text_string_to_metric_families(text):
    for s in fam.samples:
        labels = ",".join('%s="%s"' % kv for kv in sorted(s.labels.items()))
        print("%s{%s} %g" % (s.name, labels, s.value))
        n += 1
if n < 30:
    sys.exit("only %d samples" % n)
PYEOF
}
# val FILE METRIC{LABELS}: a sample's value from a parsed scrape.
val() {
	awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "missing" }' "$DF_TMP/$1.parsed"
}
expect_grew() {
	local a b
	a="$(val before "$1")"
	b="$(val after "$1")"
	[ "$a" != missing ] && [ "$b" != missing ] || fail "$1 missing from a scrape"
	"$DF_PY" -c "import sys; sys.exit(0 if float('$b') >= float('$a') + $2 else 1)" ||
		fail "$1 went from $a to $b, expected +$2 or more"
	ok "$1: $a -> $b"
}

scrape before
ok "GET /metrics parses ($(wc -l <"$DF_TMP/before.parsed") samples)"

df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.allowed.test A
expect_rcode NOERROR
df_dig www.evil.test A
expect_rcode NXDOMAIN
df_dig www.allowed.test CH TXT
expect_rcode REFUSED
if df_connect_as "$U" 198.18.1.11 80; then fail "198.18.1.11:80 was reachable"; fi
df_poll 30 grep -q "198.18.1.11:80 from uid $U" "$DF_DNSFENCE_LOG" || fail "blocked connect not attributed"
sleep 1.1 # the set sizes are cached for a second
scrape after

expect_grew 'dnsfence_queries_total{}' 3
expect_grew 'dnsfence_query_results_total{result="allowed"}' 1
expect_grew 'dnsfence_query_results_total{result="denied"}' 1
expect_grew 'dnsfence_query_results_total{result="cache_hit"}' 1
expect_grew 'dnsfence_upstream_queries_total{}' 1
expect_grew 'dnsfence_upstream_latency_seconds_count{}' 1
expect_grew 'dnsfence_upstream_latency_seconds_bucket{le="+Inf"}' 1
expect_grew 'dnsfence_set_adds_total{}' 1
expect_grew 'dnsfence_set_entries{family="ipv4"}' 1
expect_grew 'dnsfence_blocked_flows_total{reason="never_answered"}' 1
# The latency histograms: each path and stage counted its query, under
# the names docs/metrics.md documents.
for path in forwarded cached denied; do
	expect_grew "dnsfence_query_duration_seconds_count{path=\"$path\"}" 1
	expect_grew "dnsfence_query_duration_seconds_bucket{le=\"+Inf\",path=\"$path\"}" 1
done
expect_grew 'dnsfence_set_add_duration_seconds_count{}' 1
for stage in receive_queue to_upstream upstream to_set_add set_add to_reply; do
	expect_grew "dnsfence_query_stage_duration_seconds_count{stage=\"$stage\"}" 1
done
for h in dnsfence_query_duration_seconds dnsfence_set_add_duration_seconds \
	dnsfence_query_stage_duration_seconds; do
	grep -q "^| \`$h\` | histogram |" "$(dirname "$0")/../../docs/metrics.md" ||
		fail "$h is not documented in docs/metrics.md"
	grep -q "^# HELP $h [A-Z]" "$DF_TMP/after.txt" || fail "$h has no HELP text"
done
ok "the latency histograms are exported and documented"
for stage in receive set_add upstream reply tcp; do
	[ "$(val after "dnsfence_shed_total{stage=\"$stage\"}")" != missing ] ||
		fail "dnsfence_shed_total{stage=\"$stage\"} is not exported"
done
grep -q '^| `dnsfence_shed_total` | counter |' "$(dirname "$0")/../../docs/metrics.md" ||
	fail "dnsfence_shed_total is not documented in docs/metrics.md"
ok "dnsfence_shed_total is exported by stage and documented"
[ "$(val after 'dnsfence_upstream_queries_in_flight{}')" = 0 ] || fail "queries still in flight"
expect_grew 'dnsfence_query_results_total{result="local"}' 1
# Each parsed query has one result: the results sum to queries_total (a
# cache hit is not also an allowed answer).
"$DF_PY" - "$DF_TMP/after.parsed" <<'PYEOF' || fail "the query results do not sum to dnsfence_queries_total"
import re, sys
q, parts = None, {}
for line in open(sys.argv[1]):
    k, v = line.split()
    if k == "dnsfence_queries_total{}":
        q = float(v)
    m = re.match(r'dnsfence_query_results_total\{result="(\w+)"\}$', k)
    if m:
        parts[m.group(1)] = float(v)
print("queries_total %g, results %s" % (q, parts))
sys.exit(0 if q and q == sum(parts.values()) else 1)
PYEOF
ok "the results partition queries_total"
# Every family has a real HELP (not a placeholder), and no sample is a
# -1 "unknown" sentinel.
"$DF_PY" - "$DF_TMP/after.txt" <<'PYEOF' || fail "a family has no real HELP text, or a sample is -1"
import re, sys
helps, types, bad = {}, [], []
for line in open(sys.argv[1]):
    m = re.match(r"# HELP (\S+) (.*)$", line)
    if m:
        helps[m.group(1)] = m.group(2)
    m = re.match(r"# TYPE (\S+) ", line)
    if m:
        types.append(m.group(1))
    if not line.startswith("#") and line.split()[-1] == "-1":
        bad.append("sentinel: " + line.strip())
for f in types:
    h = helps.get(f, "")
    if len(h) < 20 or re.match(r"stats counter ", h):
        bad.append("%s: HELP %r" % (f, h))
print("\n".join(bad) or "%d families, each with a HELP" % len(types))
sys.exit(1 if bad else 0)
PYEOF
ok "every family has a real HELP text; no -1 sample"
# Every metric the shipped alert rules and dashboard use exists here.
"$DF_PY" - "$DF_TMP/after.txt" "$DNSFENCE_SRC/contrib/prometheus/alerts.yaml" \
	"$DNSFENCE_SRC/contrib/grafana/dnsfence.json" <<'PYEOF' || fail "alerts.yaml or the dashboard use a metric the daemon does not export"
import re, sys
types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", open(sys.argv[1]).read(), re.M))
missing, n = [], 0
for path in sys.argv[2:]:
    for name in sorted(set(re.findall(r"\bdnsfence_[a-z0-9_]+", open(path).read()))):
        n += 1
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if name not in types and types.get(base) != "histogram":
            missing.append("%s: %s" % (path, name))
print("\n".join(missing) or "%d metric names used, all exported" % n)
sys.exit(1 if missing or n < 10 else 0)
PYEOF
ok "every metric in contrib/prometheus/alerts.yaml and contrib/grafana/dnsfence.json is exported"

# The last config load: 1 with a timestamp; a refused reload makes it 0
# and keeps the timestamp of the last good one; a good reload makes it 1.
[ "$(val after 'dnsfence_config_last_reload_successful{}')" = 1 ] || fail "the start's config load is not reported successful"
# raw FILE METRIC: a sample's value as the daemon wrote it (not %g).
raw() { awk -v k="$2" '$1 == k { print $2 }' "$DF_TMP/$1.txt"; }
t_good="$(raw after dnsfence_config_last_reload_success_timestamp_seconds)"
[ -n "$t_good" ] && [ "$t_good" -gt 1000000000 ] || fail "no success timestamp: '$t_good'"
chmod 755 "$DF_TMP" # the daemon's uid reads the config it reloads
cp "$DF_DNSFENCE_CONF" "$DF_TMP/good.json"
"$DF_PY" -c 'import json, sys; c = json.load(open(sys.argv[1])); c["ttl"] = {"min": "x"}; json.dump(c, open(sys.argv[1], "w"))' "$DF_DNSFENCE_CONF"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 2 ] && grep -q ttl.min <<<"$DF_CMD_ERR" ||
	fail "reload of a bad config exited $DF_CMD_RC: $DF_CMD_ERR"
scrape badreload
[ "$(val badreload 'dnsfence_config_last_reload_successful{}')" = 0 ] || fail "a refused reload left last_reload_successful at $(val badreload 'dnsfence_config_last_reload_successful{}')"
[ "$(raw badreload dnsfence_config_last_reload_success_timestamp_seconds)" = "$t_good" ] || fail "a refused reload moved the success timestamp"
expect_grew_in() { "$DF_PY" -c "import sys; sys.exit(0 if float('$(val "$2" "$3")') >= float('$(val "$1" "$3")') + 1 else 1)"; }
expect_grew_in after badreload 'dnsfence_reload_fail_total{}' || fail "dnsfence_reload_fail_total did not grow"
cp "$DF_TMP/good.json" "$DF_DNSFENCE_CONF"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload of the good config exited $DF_CMD_RC: $DF_CMD_ERR"
scrape goodreload
[ "$(val goodreload 'dnsfence_config_last_reload_successful{}')" = 1 ] || fail "a good reload did not set last_reload_successful back to 1"
ok "last_reload_successful: 1 at start, 0 after a refused reload (timestamp kept), 1 after a good one"
grep -q "evil\|allowed.test\|198.18" "$DF_TMP/after.txt" && fail "the metrics name a name or an address"
ok "no name or address in the metrics"

# What else the workload can do: nothing.
code="$(df_wl_as "$U" curl -s -o /dev/null -w '%{http_code}' --max-time 5 http://127.0.0.1:9253/other)"
[ "$code" = 404 ] || fail "GET /other answered $code, expected 404"
code="$(df_wl_as "$U" curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST http://127.0.0.1:9253/metrics)"
[ "$code" = 405 ] || fail "POST /metrics answered $code, expected 405 (method not allowed)"
# A body is refused before the method is read (no body is ever taken in).
code="$(df_wl_as "$U" curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST -d x http://127.0.0.1:9253/metrics)"
[ "$code" = 413 ] || fail "POST /metrics with a body answered $code, expected 413 (body too large: none is allowed)"
ok "other paths 404, POST 405, POST with a body 413"

# Idle connections: the daemon holds a bounded number, for a bounded time.
fds_before="$(ls /proc/"$DF_DNSFENCE_PID"/fd | wc -l)"
df_wl_as "$U" "$DF_PY" - >"$DF_TMP/idle.out" <<'PYEOF' &
import select, socket, sys, time
socks = []
for _ in range(60):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", 9253))
    socks.append(s)
# Connected = the handshake completed (the kernel's backlog takes them
# even while the daemon does not accept).
pending, connected, t0 = list(socks), 0, time.time()
while pending and time.time() - t0 < 1.5:
    _, w, _ = select.select([], pending, [], 0.2)
    for s in w:
        pending.remove(s)
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
            connected += 1
print(connected, flush=True)
time.sleep(4 - (time.time() - t0))
PYEOF
idle_pid=$!
DF_PIDS+=("$idle_pid")
sleep 2
fds_during="$(ls /proc/"$DF_DNSFENCE_PID"/fd | wc -l)"
[ "$(cat "$DF_TMP/idle.out")" = 60 ] ||
	fail "expected all 60 idle clients connected, $(cat "$DF_TMP/idle.out") did"
[ $((fds_during - fds_before)) -le 8 ] ||
	fail "60 idle connections took $((fds_during - fds_before)) descriptors (cap 8)"
ok "60 idle connections hold $((fds_during - fds_before)) descriptors of the daemon (cap 8)"
df_dig www.allowed.test A
expect_rcode NOERROR
ok "DNS is answered meanwhile"
wait "$idle_pid" || fail "the idle clients exited $?"
t0=$(date +%s)
scrape late
ok "a scrape after they closed is answered after $(($(date +%s) - t0)) s"
expect_dnsfence_running
