#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 11 for a flow that waits: the name check must read a flow's
# first bytes whenever they come, also after the address's set entry
# expired.
#
# The front end (nginx on 198.18.1.10:443, as in test_name_check_tls_sni)
# serves www.allowed.test and evil.test by SNI. The workload resolves
# www.allowed.test (entry timeout ttl.max = 2 s), connects to the answered
# address at once (the SYN passes rule 7), and sends nothing. The queue
# rule (2a) takes an undecided flow's packets only while the destination
# is in the set; once the entry has timed out, the flow's ClientHello,
# for evil.test, meets the ESTABLISHED accept (rule 3) first and reaches
# the server unread. (An established connection outliving its entry is
# invariant 4, but this one was never decided.)
#
# Controls: the same ClientHello sent at once is reset (the check works);
# the allowed name over a connection that waited gets its page (the
# connection itself survives the wait). The attack gets out when the
# waiting connection's ClientHello for evil.test gets the evil page.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup

df_front_end_pages
df_front_end_cert www.allowed.test evil.test
df_start_nginx 443 \
	"ssl_certificate $DF_TMP/cert.pem;" "ssl_certificate_key $DF_TMP/key.pem;" \
	"server { listen 198.18.1.10:443 ssl default_server; server_name www.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:443 ssl; server_name evil.test; root $DF_TMP/www/evil; }"
df_start_dnsfence allow='["www.allowed.test"]' ports='["tcp/443"]' ttl='{"min": 1, "max": 2}'

# waiting_hello WAIT SNI: as the workload, resolve www.allowed.test,
# connect to its address at once, wait WAIT seconds (printing whether the
# address is still in the set, read by the test through a file), then do
# the TLS handshake with SNI and GET /; prints the page or the error.
chmod 711 "$DF_TMP"
cat >"$DF_TMP/hello.py" <<'PY'
import socket, ssl, sys, time
wait, sni, mark = float(sys.argv[1]), sys.argv[2], sys.argv[3]
addr = socket.getaddrinfo("www.allowed.test", 443, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
s = socket.create_connection((addr, 443), timeout=5)
open(mark, "w").write("connected %s\n" % addr)
time.sleep(wait)
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    t = ctx.wrap_socket(s, server_hostname=sni)
    t.sendall(b"GET / HTTP/1.0\r\nHost: " + sni.encode() + b"\r\n\r\n")
    body = b""
    while True:
        b = t.recv(4096)
        if not b:
            break
        body += b
    print("page: %s" % body.split(b"\r\n\r\n", 1)[-1].decode().strip())
except OSError as e:
    print("error: %s" % e)
PY
chmod 644 "$DF_TMP/hello.py"
mark="$DF_TMP/connected"
: >"$mark"
chmod 666 "$mark"
hello() { df_wl_as $WL_UID "$DF_PY" "$DF_TMP/hello.py" "$1" "$2" "$mark" 2>&1; }

out="$(hello 0 evil.test)"
! grep -q "evil-page" <<<"$out" || fail "control: evil.test sent at once got the evil page: $out"
grep -q "^error" <<<"$out" || fail "control: evil.test sent at once was not cut: $out"
expect_log_contains "TLS server name evil.test is not allowed"
ok "control: a ClientHello for evil.test sent at once is reset and logged ($out)"

# The allowed name over a connection that waits past the entry's timeout.
hello 4 www.allowed.test >"$DF_TMP/allowed.out" &
hp=$!
df_poll 50 grep -q connected "$mark" || fail "the waiting connection did not connect: $(cat "$DF_TMP/allowed.out")"
df_poll 60 bash -c "! ip netns exec '$DF_WL' ipset test dnsfence4 198.18.1.10" ||
	fail "198.18.1.10 stayed in the set past its 2 s timeout"
wait "$hp" || true
grep -q "page: allowed-page" "$DF_TMP/allowed.out" ||
	fail "control: the allowed name over a connection that waited did not get its page: $(cat "$DF_TMP/allowed.out")"
ok "control: a connection that waits past its entry still works for the allowed name"

# The attack: the same wait, then evil.test.
: >"$mark"
hello 4 evil.test >"$DF_TMP/evil.out" &
hp=$!
df_poll 50 grep -q connected "$mark" || fail "the waiting connection did not connect: $(cat "$DF_TMP/evil.out")"
df_poll 60 bash -c "! ip netns exec '$DF_WL' ipset test dnsfence4 198.18.1.10" ||
	fail "198.18.1.10 stayed in the set past its 2 s timeout"
wait "$hp" || true
! grep -q "evil-page" "$DF_TMP/evil.out" ||
	fail "a flow that stayed silent until 198.18.1.10 left the set sent its ClientHello for evil.test unchecked and got the evil page ($(cat "$DF_TMP/evil.out"))"
ok "a flow that waits past its entry is still checked: evil.test refused ($(cat "$DF_TMP/evil.out"))"
