#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Slow TCP clients are cut off by the server's timeouts (src/resolve/server.c: 5 s
# for a partly received message, 10 s idle), while other queries are
# answered meanwhile:
#  - a 2-byte length prefix, then one byte of the message a second: closed
#    4.5..7 s after the prefix (the 5 s message deadline is not reset by
#    each trickled byte);
#  - one byte of a length prefix, then nothing: closed in 4.5..7 s;
#  - a connection that sends nothing: closed in 9.5..12.5 s (idle).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'

res="$DF_TMP/slow.out"
ip netns exec "$DF_WL" timeout 30 "$DF_PY" - >"$res" 2>&1 <<'PY' &
import socket, struct, sys, threading, time

def closed_within(s, secs):
    """Wait up to secs for the server to close s; True if it did."""
    s.settimeout(secs)
    try:
        return s.recv(4096) == b""
    except socket.timeout:
        return False
    except OSError:
        return True

lock = threading.Lock()

def report(label, state, t0, sent):
    # One write per line: print(a, b, ...) from several threads can
    # interleave its pieces ("prefix-then-1Bpshalf-prefix closed ...").
    line = "%s %s %.2f %d\n" % (label, state, time.monotonic() - t0, sent)
    with lock:
        sys.stdout.write(line)
        sys.stdout.flush()

def trickle(label, first, then):
    s = socket.create_connection(("127.0.0.1", 53), timeout=3)
    t0 = time.monotonic()
    s.sendall(first)
    sent = 0
    while time.monotonic() - t0 < 20:
        if closed_within(s, 1.0):
            break
        if then:
            try:
                s.send(b"\x00")  # one byte of the message a second
                sent += 1
            except OSError:
                break
    else:
        report(label, "open", t0, sent)
        return
    report(label, "closed", t0, sent)

jobs = [threading.Thread(target=trickle, args=a) for a in [
    ("prefix-then-1Bps", struct.pack(">H", 40), True),
    ("half-prefix", b"\x00", False),
    ("idle", b"", False),
]]
for j in jobs:
    j.start()
for j in jobs:
    j.join()
PY
slow=$!
DF_PIDS+=("$slow")

# Meanwhile, other clients are served (UDP and TCP), once a second.
for i in 1 2 3 4 5 6; do
	df_dig www.allowed.test A
	expect_rcode NOERROR
	expect_answer_contains 198.18.1.10
	df_dig +tcp "slow-$i-$$.evil.test" A
	expect_rcode NXDOMAIN
	sleep 1
done
ok "while the slow clients trickle: UDP and TCP queries answered (6 rounds)"

df_wait_gone "$slow" 250 || fail "the slow clients did not finish within 25 s"
cat "$res"

# check LABEL LOW HIGH: the server closed LABEL's connection after LOW..HIGH s.
check() {
	local line st secs
	line="$(grep "^$1 " "$res")" || fail "no result for $1: $(cat "$res")"
	read -r _ st secs _ <<<"$line"
	[ "$st" = closed ] || fail "$1: the server did not close the connection within 20 s"
	awk -v t="$secs" -v lo="$2" -v hi="$3" 'BEGIN { exit !(t >= lo && t <= hi) }' ||
		fail "$1: expected the server to close after $2..$3 s, it closed after $secs s"
	ok "$1: closed by the server after $secs s (expected $2..$3 s)"
}
check prefix-then-1Bps 4.5 7
check half-prefix 4.5 7
check idle 9.5 12.5

expect_dnsfence_running
df_dig +tcp www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ok "dnsfence still running and answering over TCP"
