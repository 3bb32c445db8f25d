#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Regression (invariant 11, the name check): a verdict belongs to one
# connection, not to a four-tuple. A second connection on a just-decided
# flow's four-tuple is read anew and refused when it names a name not
# allowed; it never inherits the first connection's accept.
#
# The attack: uid 4242 opens a connection from a fixed port to
# 198.18.1.10:80 with Host www.allowed.test (accepted), closes it with a
# reset (SO_LINGER 0: no TIME_WAIT), binds the same port again at once and
# sends Host: evil.test. conntrack makes a new entry (NEW, marked pending,
# queued) while the daemon still keeps the first flow's verdict
# (KEEP_DECIDED_MS), and Linux's ISN for the same four-tuple a few ms
# later lies within RACE_WINDOW of the first one's: a check by four-tuple
# and sequence number alone repeated the accept and nginx served
# evil.test's page. The same over TLS on 443 (SNI evil.test after SNI
# www.allowed.test). The daemon now never repeats a verdict for a queued
# packet: one known to be of another connection (conntrack id, sequence
# number) is read at once, any other dropped until the verdict is
# forgotten (2 s) and then read; either way evil.test is reset.
#
# Asserts: no second connection gets evil.test's page (HTTP and TLS).
# Controls: evil.test on a fresh four-tuple is reset; every first
# connection gets the allowed page.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup
df_front_end_pages
df_front_end_cert www.allowed.test evil.test
df_start_nginx 443 \
	"ssl_certificate $DF_TMP/cert.pem;" "ssl_certificate_key $DF_TMP/key.pem;" \
	"server { listen 198.18.1.10:80 default_server; server_name www.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:80; server_name evil.test; root $DF_TMP/www/evil; }" \
	"server { listen 198.18.1.10:443 ssl default_server; server_name www.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:443 ssl; server_name evil.test; root $DF_TMP/www/evil; }"
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/80", "tcp/443"]'
df_dig www.allowed.test A
expect_answer_contains 198.18.1.10

# reuse MODE DPORT SPORT [TRIES]: fresh: one connection naming evil.test;
# again: TRIES pairs (www.allowed.test, then evil.test from the same port).
reuse() {
	df_wl_as $WL_UID timeout 90 "$DF_PY" - "$@" <<'PY'
import socket, ssl, struct, sys
mode, dport, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def conn(port, host, wait):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("198.18.0.2", port))
    s.settimeout(wait)
    # Closed with a reset (no TIME_WAIT), set ahead: a TLS handshake that
    # fails takes the socket with it.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    reply = b""
    try:
        s.connect(("198.18.1.10", dport))
        if dport == 443:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            s = ctx.wrap_socket(s, server_hostname=host)
        s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host).encode())
        while True:
            c = s.recv(4096)
            if not c:
                break
            reply += c
    except (OSError, ssl.SSLError) as e:
        reply += (" <%s>" % e).encode()
    s.close()
    if b"evil-page" in reply: return "evil-page"
    if b"allowed-page" in reply: return "allowed-page"
    return "no page: %r" % reply[-60:]
if mode == "fresh":
    print("fresh evil.test:", conn(port, "evil.test", 5), flush=True)
else:
    for i in range(int(sys.argv[4])):
        a = conn(port, "www.allowed.test", 5)
        e = conn(port, "evil.test", 8)
        print("try", i, "first:", a, "second:", e, flush=True)
        if e == "evil-page":
            break
        port += 1
PY
}
# The four runs (a fresh and a reused four-tuple, to ports 80 and 443)
# go side by side, from source ports of their own, into $DF_TMP/reuse-*.
pids=()
for dport in 80 443; do
	reuse fresh $dport $((41000 + dport)) >"$DF_TMP/reuse-fresh-$dport" 2>&1 &
	pids+=("$!")
	reuse again $dport $((42000 + 10 * dport)) 4 >"$DF_TMP/reuse-again-$dport" 2>&1 &
	pids+=("$!")
done
DF_PIDS+=("${pids[@]}")
wait "${pids[@]}" || true
for dport in 80 443; do
	out=$(cat "$DF_TMP/reuse-fresh-$dport")
	echo "$out" >&2
	grep -q 'fresh evil.test: no page' <<<"$out" ||
		fail "control: evil.test on a fresh four-tuple to port $dport was not refused: $out"
	ok "control: evil.test on a fresh four-tuple to port $dport is refused ($out)"

	out=$(cat "$DF_TMP/reuse-again-$dport")
	echo "$out" >&2
	! grep -q 'second: evil-page' <<<"$out" ||
		fail "a second connection on an accepted flow's four-tuple (port $dport) got evil.test's page past the name check: $(grep -m1 'second: evil-page' <<<"$out")"
	[ "$(grep -c '^try ' <<<"$out")" = 4 ] &&
		[ "$(grep -c 'first: allowed-page' <<<"$out")" = 4 ] ||
		fail "control: a first connection to port $dport got no allowed page: $out"
	ok "port $dport: a reused four-tuple is checked anew: $(tail -1 <<<"$out")"
done

# On a kernel that gives the queue no conntrack ids (the path this test
# covers without them: the sequence number and the wait), the daemon says
# so at start, in its one info line of environment facts (a fact of the
# machine, not the operator's to fix), and names what the kernel lacks.
kcfg="$(zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null || true)"
if grep -qx '# CONFIG_NETFILTER_NETLINK_GLUE_CT is not set' <<<"$kcfg"; then
	grep -q " info start: environment: .*NFQUEUE 4453: the kernel gives no conntrack ids (it needs CONFIG_NETFILTER_NETLINK_GLUE_CT" "$DF_DNSFENCE_LOG" ||
		fail "the environment line does not say the queue has no conntrack ids: $(grep -i 'conntrack ids' "$DF_DNSFENCE_LOG")"
	! grep -q " warning .*conntrack ids" "$DF_DNSFENCE_LOG" || fail "no conntrack ids is a warning, not an environment fact"
	ok "the daemon names the kernel option the queue's conntrack ids need (environment line, info)"
fi
