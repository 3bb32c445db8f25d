#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "dnsfence serve" does not create the sets: without them it exits 3 with a
# message naming the missing set (dnsfence4; then dnsfence6 when only that
# one is missing), and serves nothing. "dnsfence run" creates both
# (hash:ip, family inet / inet6, with timeout support) and serves: an
# allowed answer's addresses land in them.
source "$(dirname "$0")/lib.sh"
df_setup
df_config allow='["www.allowed.test"]'

serve_once() {
	DF_DIG_CMD="dnsfence serve (no sets)"
	DF_DIG_RC=0
	DF_OUT="$(wl timeout 10 env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		"$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" serve 2>&1)" || DF_DIG_RC=$?
}

! wl ipset list -n 2>/dev/null | grep . >/dev/null || fail "the new workload namespace already has sets"
serve_once
[ "$DF_DIG_RC" -eq 3 ] || fail "serve without sets: expected exit 3, saw $DF_DIG_RC"
expect_out_contains dnsfence4
! wl ss -Hlun 'sport = :53' | grep . >/dev/null || fail "serve without sets left a listener on port 53"
ok "serve without any set -> exit 3: $(grep -F dnsfence4 <<<"$DF_OUT" | head -n 1)"

wl ipset create dnsfence4 hash:ip family inet timeout 60
serve_once
[ "$DF_DIG_RC" -eq 3 ] || fail "serve without dnsfence6: expected exit 3, saw $DF_DIG_RC"
expect_out_contains dnsfence6
ok "serve with dnsfence4 but no dnsfence6 -> exit 3: $(grep -F dnsfence6 <<<"$DF_OUT" | head -n 1)"
wl ipset destroy dnsfence4

DF_DNSFENCE_CMD=run df_start_dnsfence allow='["www.allowed.test"]'
hdr="$(wl ipset -o save -t list dnsfence4)"
grep -q '^create dnsfence4 hash:ip family inet .*timeout ' <<<"$hdr" ||
	fail "run: dnsfence4 should be hash:ip family inet with timeout, saw: $hdr"
hdr="$(wl ipset -o save -t list dnsfence6)"
grep -q '^create dnsfence6 hash:ip family inet6 .*timeout ' <<<"$hdr" ||
	fail "run: dnsfence6 should be hash:ip family inet6 with timeout, saw: $hdr"
ok "run created dnsfence4 (hash:ip inet, timeout) and dnsfence6 (hash:ip inet6, timeout)"

df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_set_timeout dnsfence4 198.18.1.10 290 300
df_dig www.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
expect_set_timeout dnsfence6 2001:db8:1::10 290 300
ok "run serves: www.allowed.test A/AAAA answered, 198.18.1.10 and 2001:db8:1::10 in the sets it made"
expect_dnsfence_running
