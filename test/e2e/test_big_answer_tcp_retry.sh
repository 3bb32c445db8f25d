#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An answer larger than the client's UDP size (512 without EDNS) comes back
# truncated (TC) over UDP, and the client gets all of it by retrying over
# TCP: dig, and the glibc resolver.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["big.allowed.test"]'

df_dig big.allowed.test A +noedns +ignore
expect_rcode NOERROR
expect_flag tc
size="$(sed -n 's/.*MSG SIZE  rcvd: \([0-9]*\).*/\1/p' <<<"$DF_OUT")"
[ -n "$size" ] && [ "$size" -le 512 ] || fail "expected a UDP reply of at most 512 bytes, saw '${size:-none}'"
ok "dig +noedns +ignore big.allowed.test -> TC set, $size bytes"

df_dig big.allowed.test A +noedns
expect_rcode NOERROR
expect_out_contains "Truncated, retrying in TCP mode"
expect_no_flag tc
expect_answer_count A 60
ok "dig +noedns big.allowed.test -> retried over TCP, 60 A records"

# With EDNS and a 1232-byte buffer the ~1 KB answer fits in one datagram.
df_dig big.allowed.test A +bufsize=1232
expect_rcode NOERROR
expect_no_flag tc
expect_out_contains "(UDP)"
expect_answer_count A 60
ok "dig +bufsize=1232 big.allowed.test -> 60 A records over UDP"

# ... and with EDNS but a 512-byte buffer it is truncated again.
df_dig big.allowed.test A +bufsize=512 +ignore
expect_rcode NOERROR
expect_flag tc
ok "dig +bufsize=512 +ignore big.allowed.test -> TC set"

addrs="$(df_getent big.allowed.test)"
n="$(df_count '^198\.18\.2\.' <<<"$addrs")"
[ "$n" -eq 60 ] || fail "getent ahosts big.allowed.test: expected 60 addresses 198.18.2.1-60, saw $n: $addrs"
ok "getent ahosts big.allowed.test (glibc, TC then TCP) -> 60 addresses"
