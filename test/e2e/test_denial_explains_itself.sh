#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A refused program gets a reason it can act on. A denied name's answer
# carries EDE 15 whose text names the rule and the allow entries that
# would admit it (read with dnspython, as a program would); a name below
# a public suffix gets no wildcard. A TCP connection the fence rejects is
# reset at once ("connection refused", not a timeout). `dnsfence why`
# explains an address answered for an allowed name and then refused on a
# port not in `ports`, an address never answered, and an upstream.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 8080
df_start_listener 9999
df_start_dnsfence allow='["www.allowed.test"]'

# ede NAME: "RCODE|EDE-CODE|EXTRA-TEXT" of dnsfence's answer for NAME.
ede() {
	wl "$DF_PY" - "$1" <<'PYEOF'
import sys
import dns.edns, dns.message, dns.query, dns.rcode
q = dns.message.make_query(sys.argv[1], "A", use_edns=0, payload=1232)
r = dns.query.udp(q, "127.0.0.1", timeout=3)
for o in r.options:
    if o.otype == dns.edns.OptionType.EDE:
        print("%s|%d|%s" % (dns.rcode.to_text(r.rcode()), o.code, o.text))
        break
else:
    print("%s|none|" % dns.rcode.to_text(r.rcode()))
PYEOF
}

got="$(ede api.evil.test)"
[ "$got" = 'NXDOMAIN|15|not in allow; add "api.evil.test" or "*.evil.test"' ] ||
	fail "EDE for api.evil.test: expected the rule and both entries, saw '$got'"
ok "api.evil.test: $got"
got="$(ede shop.co.uk)"
[ "$got" = 'NXDOMAIN|15|not in allow; add "shop.co.uk"' ] ||
	fail "EDE for shop.co.uk (co.uk is a public suffix): expected no wildcard, saw '$got'"
ok "shop.co.uk: $got"
got="$(ede www.allowed.test)"
[ "$got" = "NOERROR|none|" ] || fail "the allowed name (control) carries '$got'"
ok "www.allowed.test (control): $got"

# An address answered for an allowed name, then a port not in `ports`.
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
df_tcp_connect 198.18.1.10 8080 || fail "the control: 198.18.1.10:8080 (allowed) did not connect"
err="$(wl timeout 10 "$DF_PY" -c '
import socket, sys
s = socket.socket()
s.settimeout(8)
try:
    s.connect(("198.18.1.10", 9999))
    print("connected")
except OSError as e:
    print(type(e).__name__)
')"
[ "$err" = ConnectionRefusedError ] || fail "tcp/9999 to an answered address: expected a reset at once, saw $err"
ok "tcp/9999 (not in ports): reset at once ($err); tcp/8080 connects"
up_port_open="$(up ss -Htln 'sport = :9999' | wc -l)"
[ "$up_port_open" -ge 1 ] || fail "the listener on 9999 is gone: the refusal would prove nothing"

df_dnsfence why 198.18.1.10:9999
[ "$DF_CMD_RC" -eq 0 ] || fail "why exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q "^198.18.1.10: answered for www.allowed.test at [0-9:]*; its set entry lasts until" <<<"$DF_CMD_OUT" ||
	fail "why does not say which name answered it: $DF_CMD_OUT"
grep -qF 'tcp/9999: blocked (port): port tcp/9999 is not in `ports`' <<<"$DF_CMD_OUT" ||
	fail "why does not name the rule: $DF_CMD_OUT"
grep -qF 'would allow: add "tcp/9999" to ports' <<<"$DF_CMD_OUT" || fail "why does not say what would allow it: $DF_CMD_OUT"
printf '%s\n' "$DF_CMD_OUT" | sed 's/^/    /'
ok "why 198.18.1.10:9999 explains the name, the rule and the remedy"

df_dnsfence why 198.18.1.11:443
grep -q "^198.18.1.11: never answered by dnsfence" <<<"$DF_CMD_OUT" || fail "why of an unknown address: $DF_CMD_OUT"
grep -qF 'tcp/443: blocked (never_answered)' <<<"$DF_CMD_OUT" || fail "why of an unknown address: $DF_CMD_OUT"
grep -qF '"198.18.1.11/32" in allow_cidrs' <<<"$DF_CMD_OUT" || fail "why of an unknown address: $DF_CMD_OUT"
ok "why 198.18.1.11:443: never answered, and what would allow it"
df_dnsfence why 198.18.0.1
grep -q "^198.18.0.1: an upstream" <<<"$DF_CMD_OUT" || fail "why of the upstream: $DF_CMD_OUT"
ok "why 198.18.0.1: $(head -1 <<<"$DF_CMD_OUT")"
df_dnsfence why 'not an address'
[ "$DF_CMD_RC" -eq 2 ] || fail "why 'not an address' exited $DF_CMD_RC, expected 2"
ok "why with a bad operand: exit 2"
