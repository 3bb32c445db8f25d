#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A journal that cannot keep up never stalls DNS: the daemon's native
# journal socket is non-blocking, so when the receiver's queue is full
# (journal_sink.py reads nothing until told, and the kernel queues at most
# net.unix.max_dgram_qlen datagrams) a log line is dropped and counted,
# not waited for (the test fills the queue before the daemon starts).
# 40 denied questions (each one a log line while the queue is full) all get their NXDOMAIN; once the sink reads again, the
# counters line (SIGUSR1) arrives and its journal_dropped is above zero,
# and /metrics' dnsfence_log_lines_dropped_total{reason="journal_full"}
# grew by the 40 lines at least.
# Positive control: once the sink reads, the daemon's next line (the
# counters) reaches it (the socket works; the drops were the full
# queue's).
source "$(dirname "$0")/lib.sh"
df_setup

JSOCK="$DF_TMP/journal.sock"
JOUT="$DF_TMP/journal.jsonl"
"$DF_PY" "$DF_E2E_DIR/journal_sink.py" "$JSOCK" "$JOUT" "$DF_TMP/gate" &
DF_PIDS+=("$!")
df_poll 50 test -S "$JSOCK" || fail "the test's journal socket was not bound"
# Fill the queue first, whatever max_dgram_qlen this host has.
n="$("$DF_PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(sys.argv[1])
s.setblocking(False)
n = 0
try:
    while n < 100000:
        s.send(b"FILLER=1\n")
        n += 1
except BlockingIOError:
    print(n)
    sys.exit(0)
sys.exit(1)' "$JSOCK")" || fail "could not fill the test's journal socket"
ok "the journal socket's queue is full ($n datagrams)"

export DNSFENCE_JOURNAL_SOCKET="$JSOCK"
df_start_dnsfence allow='["www.allowed.test"]' metrics='"127.0.0.1:9253"'
unset DNSFENCE_JOURNAL_SOCKET
# dropped REASON: the metrics' count of log lines left out for REASON.
dropped() {
	wl curl -sf --max-time 5 http://127.0.0.1:9253/metrics |
		sed -n "s/^dnsfence_log_lines_dropped_total{reason=\"$1\"} //p"
}
before="$(dropped journal_full)"
[ -n "$before" ] || fail "/metrics has no dnsfence_log_lines_dropped_total{reason=\"journal_full\"}"

for i in $(seq 1 40); do
	out="$(wl dig +time=3 +tries=1 @127.0.0.1 "n$i.evil.test" A 2>&1)" || true
	grep -q 'status: NXDOMAIN' <<<"$out" || fail "denied question $i while the journal is full: $out"
done
ok "40 denied questions answered while nothing reads the journal socket"

touch "$DF_TMP/gate"
df_poll 50 bash -c '[ "$(wc -l <"$1")" -ge "$2" ]' _ "$JOUT" "$n" || fail "the sink did not read its queue"
kill -USR1 "$DF_DNSFENCE_PID"
df_poll 50 grep -q 'journal_dropped=' "$JOUT" ||
	fail "control: no counters line reached the sink once it read: $(tail -n 3 "$JOUT")"
ok "control: the counters line reaches the sink once it reads"
n="$(grep -o 'journal_dropped=[0-9]*' "$JOUT" | tail -n 1 | cut -d= -f2)"
[ "$n" -gt 0 ] || fail "journal_dropped is $n after 40 lines into a full queue"
ok "the full queue's lines were dropped and counted: journal_dropped=$n"
after="$(dropped journal_full)"
[ "${after:-0}" -ge $((before + 40)) ] ||
	fail "/metrics: log lines dropped for a full journal went from $before to ${after:-none}, not by the 40 denials' lines or more"
[ -n "$(dropped suppressed)" ] || fail "/metrics has no dnsfence_log_lines_dropped_total{reason=\"suppressed\"}"
grep -q '^| `dnsfence_log_lines_dropped_total` | counter |' "$DNSFENCE_SRC/docs/metrics.md" ||
	fail "dnsfence_log_lines_dropped_total is not documented in docs/metrics.md"
ok "/metrics counts them: dnsfence_log_lines_dropped_total{reason=\"journal_full\"} $before -> $after"
expect_dnsfence_running
