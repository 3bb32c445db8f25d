#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Protocol edges, with real clients:
#  - a query of class CH, HS or ANY for an allowed name is answered here
#    (REFUSED with Extended DNS Error 21 Not Supported) and never reaches
#    the upstream (it used to be forwarded and come back SERVFAIL);
#  - an upstream's SERVFAIL is logged with its rcode and the query type
#    (c-ares alone says "Connection refused");
#  - a COOKIE option of a length RFC 7873 does not allow gets FORMERR; a
#    well-formed client cookie is answered (control);
#  - `validate` warns about deny_rcode "refused".
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["*.allowed.test", "*.unknown.test"]'

for class in CH HS ANY; do
	df_dig "www.allowed.test" A -c "$class"
	expect_rcode REFUSED
	grep -q "EDE: 21 (Not Supported)" <<<"$DF_OUT" ||
		fail "class $class: no Extended DNS Error 21 in the reply"
	ok "class $class for an allowed name -> REFUSED, EDE 21, locally"
done
df_dig www.allowed.test A
expect_rcode NOERROR
ok "control: class IN for the same name -> NOERROR"
n="$(df_count -iF " www.allowed.test. A " "$DF_TMP/unbound.log")"
[ "$n" -eq 1 ] || fail "the upstream saw www.allowed.test $n times, expected once (class IN only)"
ok "the upstream saw only the class IN query"

# unbound has no root hints: outside its zones it answers SERVFAIL.
df_dig "x-$$.unknown.test" AAAA
expect_rcode SERVFAIL
expect_log_contains "no answer for x-$$.unknown.test AAAA: upstream answered SERVFAIL"
ok "an upstream SERVFAIL is logged with the rcode and the type"

# cookie LEN: a query for www.allowed.test whose COOKIE option has LEN
# bytes; prints the rcode.
cookie() {
	wl "$DF_PY" - "$1" <<'PY'
import os, socket, struct, sys
n = int(sys.argv[1])
q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 1)
q += b"\x03www\x07allowed\x04test\x00" + struct.pack(">HH", 1, 1)
opt = struct.pack(">HH", 10, n) + os.urandom(n)
q += b"\x00" + struct.pack(">HHIH", 41, 1232, 0, len(opt)) + opt
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, ("127.0.0.1", 53))
m, _ = s.recvfrom(4096)
print({0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL"}.get(m[3] & 15, m[3] & 15))
PY
}
for len in 5 12 41; do
	rc="$(cookie "$len")"
	[ "$rc" = FORMERR ] || fail "a cookie of $len bytes got $rc, expected FORMERR"
done
ok "cookies of 5, 12 and 41 bytes -> FORMERR"
rc="$(cookie 8)"
[ "$rc" = NOERROR ] || fail "a client cookie of 8 bytes got $rc"
rc="$(cookie 24)"
[ "$rc" = NOERROR ] || fail "a client and server cookie of 24 bytes got $rc"
ok "control: cookies of 8 and 24 bytes -> NOERROR"

df_config deny_rcode='"refused"'
df_dnsfence validate
[ "$DF_CMD_RC" -eq 0 ] || fail "validate exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q 'deny_rcode: "refused": musl' <<<"$DF_CMD_ERR" ||
	fail "validate did not warn about deny_rcode refused: $DF_CMD_ERR"
df_config deny_rcode='"nxdomain"'
df_dnsfence validate
[ "$DF_CMD_RC" -eq 0 ] || fail "validate (nxdomain) exited $DF_CMD_RC: $DF_CMD_ERR"
! grep -q 'deny_rcode' <<<"$DF_CMD_ERR" || fail "validate warned about nxdomain: $DF_CMD_ERR"
ok "validate warns about deny_rcode \"refused\" (musl), not about \"nxdomain\""
