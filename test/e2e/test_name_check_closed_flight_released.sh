#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A TLS 1.3 flow whose first hello was judged and sent on is still read
# for the rest of its first flight, and holds one of its uid's 512
# pending places meanwhile. A client that reads the server's first answer
# and closes (a probe, a health check) sends nothing more of the flight:
# its FIN (half of them, shutdown) or RST (the others: closed with the
# server's answer unread) must decide the flow (accepted, its place given
# back at once), not the 5 s deadline. 700 such connections from one uid in a row, to
# Python's ssl server on 198.18.1.10:443 naming www.allowed.test: every
# one is answered with a ServerHello (before, the 513th and later were
# reset unread as over the uid's share), all 700 are counted accepted,
# none timed out, none shed. Positive control: a full handshake with an
# HTTP request still completes after them.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

df_front_end_cert www.allowed.test
df_tls_lab serve "$DF_TMP/cert.pem" "$DF_TMP/key.pem" 443 198.18.1.10
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443"]' metrics='"127.0.0.1:9253"'
df_dig www.allowed.test A
expect_rcode NOERROR

cat >"$DF_TMP/probe.py" <<'PY'
import socket, ssl, sys
n, ok = int(sys.argv[1]), 0
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.minimum_version = ssl.TLSVersion.TLSv1_3
for i in range(n):
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_hostname="www.allowed.test")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    s = socket.create_connection(("198.18.1.10", 443), timeout=5)
    try:
        s.sendall(out.read())
        if s.recv(5)[:1] == b"\x16":
            ok += 1
        else:
            print("connection %d: no ServerHello" % i, file=sys.stderr)
        if i % 2:  # a FIN first; the others close at once: an RST
            s.shutdown(socket.SHUT_WR)
    except OSError as e:
        print("connection %d: %s" % (i, e), file=sys.stderr)
    s.close()
print(ok)
PY
chmod 644 "$DF_TMP/probe.py"
chmod 755 "$DF_TMP"

got="$(df_wl_as $WL_UID timeout 120 "$DF_PY" "$DF_TMP/probe.py" 700 2>"$DF_TMP/probe.err")" ||
	fail "the probes exited $?: $(tail -n 5 "$DF_TMP/probe.err")"
[ "$got" = 700 ] || fail "$got of 700 probes got a ServerHello: $(sort "$DF_TMP/probe.err" | uniq -c | sort -rn | head -n 5)"
ok "700 TLS 1.3 probes from one uid in a row, each closed after the server's first answer: all answered"

# metric NAME: its value on the metrics endpoint now ("" when absent).
metric() { wl curl -sS --max-time 5 http://127.0.0.1:9253/metrics | awk -v k="$1" '$1 == k { print $2 }'; }
flows() { metric "dnsfence_name_check_flows_total{result=\"$1\"${2:+,reason=\"$2\"}}"; }
accepted() { [ "$(flows accepted)" -ge 700 ]; }
df_poll 50 accepted || fail "$(flows accepted) of 700 closed flows counted accepted: $(wl curl -sS http://127.0.0.1:9253/metrics | grep name_check_flows)"
sleep 6 # past the 5 s deadline a flow left pending would meet
for r in timeout busy; do
	[ "$(flows refused $r)" = 0 ] || fail "$(flows refused $r) flows refused ($r) after the probes"
done
for r in pending rate; do
	n="$(metric "dnsfence_namecheck_shed_total{reason=\"$r\"}")"
	[ "${n:-0}" = 0 ] || fail "$n flows shed ($r) after the probes"
done
ok "each closed flow decided by its FIN: 700 accepted, none timed out, none shed"

out="$(df_wl_as $WL_UID timeout 20 "$DF_PY" "$TLS_LAB" get 198.18.1.10 443 www.allowed.test 2>&1)" ||
	fail "control: a full handshake after the probes: $out"
[ "$out" = "page www.allowed.test" ] || fail "control: a full handshake after the probes got '$out'"
ok "control: a full handshake and request still complete"
