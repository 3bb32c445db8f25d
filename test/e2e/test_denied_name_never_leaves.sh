#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A name that is not on the allowlist is answered by dnsfence itself
# (NXDOMAIN, or REFUSED with deny_rcode "refused"; with an Extended DNS
# Error 15 "Blocked" when the client speaks EDNS) and never reaches the
# upstream: unbound's query log never shows it (invariant 1), and the
# daemon's own count of upstream questions (status counters.forwarded)
# does not move for it, so the first policy check is proven by itself,
# not only by the second one after an answer (control: one allowed name
# moves it by exactly one).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'

secret="leak-$$-secret.evil.test"

# With EDNS (dig's default): NXDOMAIN + EDE 15 naming the rule and the entry
# that would admit the name.
df_dig "$secret" A
expect_rcode NXDOMAIN
expect_answer_empty
expect_out_contains "OPT PSEUDOSECTION"
expect_out_contains "EDE: 15 (Blocked)"
grep -i 'EDE: 15' <<<"$DF_OUT" | grep -F "not in allow; add \"$secret\" or \"*.evil.test\"" >/dev/null ||
	fail "expected the EDE text to say the name is not in allow and what to add"
expect_out_lacks 198.18.3.1
ok "dig $secret (EDNS) -> NXDOMAIN, EDE 15 (Blocked): $(grep -o 'not in allow;[^)]*' <<<"$DF_OUT")"

# Without EDNS: plain NXDOMAIN, no OPT record at all.
df_dig "$secret" A +noedns
expect_rcode NXDOMAIN
expect_answer_empty
expect_out_lacks "OPT PSEUDOSECTION"
expect_out_lacks "EDE"
ok "dig +noedns $secret -> NXDOMAIN without OPT"

# Other types, other case, over TCP: all answered locally.
df_dig "$secret" AAAA
expect_rcode NXDOMAIN
df_dig "$secret" TXT +tcp
expect_rcode NXDOMAIN
df_dig "LEAK-$$-Case.Evil.Test" A
expect_rcode NXDOMAIN
df_dig "leak-$$-dot.evil.test." HTTPS
expect_rcode NXDOMAIN
df_dig evil.test A
expect_rcode NXDOMAIN
ok "AAAA, TXT over TCP, mixed case, HTTPS and the apex of evil.test -> NXDOMAIN"

# The name is matched exactly: the listed name is not a suffix match.
df_dig "www.allowed.test.evil.test" A
expect_rcode NXDOMAIN
ok "www.allowed.test.evil.test -> NXDOMAIN"

n="$(df_status_value counters.forwarded)"
[ "$n" -eq 0 ] || fail "the daemon asked the upstream $n questions for denied names only (status counters.forwarded)"
n="$(df_status_value counters.denied)"
[ "$n" -ge 9 ] || fail "expected at least 9 denied queries counted (status counters.denied), saw $n"
ok "no upstream question for $n denied queries (status counters.forwarded 0)"

# deny_rcode "refused"
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]' deny_rcode='"refused"'
df_dig "leak-$$-refused.evil.test" A
expect_rcode REFUSED
expect_out_contains "EDE: 15 (Blocked)"
df_dig "leak-$$-refused.evil.test" A +noedns
expect_rcode REFUSED
expect_out_lacks "OPT PSEUDOSECTION"
ok "deny_rcode refused -> REFUSED (+EDE 15 with EDNS, no OPT without)"

n="$(df_status_value counters.forwarded)"
[ "$n" -eq 0 ] || fail "the daemon asked the upstream $n questions for denied names only (status counters.forwarded)"

# An allowed name does reach unbound's log and the counter, so both
# checks can fail.
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
n="$(df_status_value counters.forwarded)"
[ "$n" -eq 1 ] || fail "expected one upstream question (www.allowed.test) in status counters.forwarded, saw $n"
df_poll 30 df_unbound_saw www.allowed.test ||
	fail "expected www.allowed.test in unbound's query log ($DF_TMP/unbound.log)"
ok "the allowed name www.allowed.test appears in unbound's query log"

if grep -iE 'evil\.test|dnsfence\.invalid' "$DF_TMP/unbound.log" >&2; then
	fail "a denied name reached the upstream (lines above, from unbound's query log)"
fi
ok "no denied name (evil.test, dnsfence.invalid) appears in unbound's query log"
