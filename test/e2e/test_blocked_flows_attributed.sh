#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every kind of blocked flow produces exactly one attributed log line with
# the sender's uid and the reason (enforce mode, NFLOG rules before the
# rejects, nflog.c + attrib.c):
#   - a connect to an address dnsfence never answered (IPv4 and IPv6);
#   - a connect to an answered address on a port not in `ports`;
#   - a connect to an answered address whose set entry expired (ttl5's
#     record has TTL 5, ttl.min is 1, and the test waits until the kernel
#     entry is gone: a real expiry, not an ipset del);
#   - DNS sent straight to another resolver.
# Each is tried twice (dedup: still one line). Positive control: the
# answered address is reachable on an allowed port, so the lines cannot
# come from a fence that blocks everything.
source "$(dirname "$0")/lib.sh"

U=12345
df_setup
df_start_listener 80
df_start_dnsfence allow='["www.allowed.test", "ttl5.allowed.test"]' \
	ttl='{"min": 1, "max": 86400}'
# The startup line proves the NFLOG group was bound, not skipped.
if grep -q "blocked flows will not be attributed" "$DF_DNSFENCE_LOG"; then
	fail "the daemon could not bind the NFLOG group"
fi

# lines PATTERN: how many log lines match the extended regex PATTERN.
lines() { df_count -E -- "$1" "$DF_DNSFENCE_LOG"; }

# expect_one_line PATTERN: exactly one line (waits up to 3 s for it).
expect_one_line() {
	df_poll 30 grep -qE -- "$1" "$DF_DNSFENCE_LOG" ||
		fail "no log line matches: $1"
	sleep 0.3
	local n
	n="$(lines "$1")"
	[ "$n" -eq 1 ] || fail "expected one line matching '$1', saw $n"
	ok "one line: $(grep -E -- "$1" "$DF_DNSFENCE_LOG" | sed 's/^.*blocked/blocked/')"
}

# Positive control: an answered name on an allowed port connects.
df_dig www.allowed.test A
expect_answer_contains 198.18.1.10
if df_connect_as "$U" 198.18.1.10 80; then
	ok "control: uid $U reaches www.allowed.test:80"
else
	fail "control: uid $U cannot reach www.allowed.test:80"
fi

# 1. Never answered (198.18.1.11 is a.b.allowed.test's, never asked).
for _ in 1 2; do
	if df_connect_as "$U" 198.18.1.11 80; then fail "198.18.1.11:80 was reachable"; fi
done
expect_one_line "blocked tcp 198\.18\.0\.2:[0-9]+ -> 198\.18\.1\.11:80 from uid $U: address was never answered by dnsfence$"

# ... and over IPv6 (2001:db8:1::30 is only an HTTPS hint, never asked).
if df_connect_as "$U" 2001:db8:1::30 80; then fail "[2001:db8:1::30]:80 was reachable"; fi
expect_one_line "blocked tcp \[2001:db8::2\]:[0-9]+ -> \[2001:db8:1::30\]:80 from uid $U: address was never answered by dnsfence$"

# 2. Answered, wrong port.
for _ in 1 2; do
	if df_connect_as "$U" 198.18.1.10 22; then fail "198.18.1.10:22 was reachable"; fi
done
expect_one_line "blocked tcp 198\.18\.0\.2:[0-9]+ -> 198\.18\.1\.10:22 from uid $U: port tcp/22 is not in \`ports\` \(address answered for www\.allowed\.test at [0-9:]{8}\)$"

# 3. Answered, expired: wait until the kernel entry is gone.
df_dig ttl5.allowed.test A
expect_answer_contains 198.18.1.5
expect_in_set dnsfence4 198.18.1.5
df_poll 100 bash -c "! ip netns exec $DF_WL ipset test dnsfence4 198.18.1.5" ||
	fail "198.18.1.5 still in the set 10 s after a 5 s TTL"
sleep 0.5
for _ in 1 2; do
	if df_connect_as "$U" 198.18.1.5 80; then fail "expired 198.18.1.5:80 was reachable"; fi
done
expect_one_line "blocked tcp 198\.18\.0\.2:[0-9]+ -> 198\.18\.1\.5:80 from uid $U: answered for ttl5\.allowed\.test at [0-9:]{8}, entry expired at [0-9:]{8}$"

# 4. DNS around the resolver, to another server.
for _ in 1 2; do
	! df_wl_as "$U" dig +time=1 +tries=1 @198.18.0.1 www.allowed.test A >/dev/null 2>&1 ||
		fail "uid $U queried the upstream 198.18.0.1 directly"
done
expect_one_line "blocked udp 198\.18\.0\.2:[0-9]+ -> 198\.18\.0\.1:53 from uid $U: DNS to 198\.18\.0\.1 bypassing dnsfence$"
expect_dnsfence_running
