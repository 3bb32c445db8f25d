#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Under systemd (JOURNAL_STREAM set), every daemon line starts with an
# sd-daemon "<N>" priority prefix and carries no timestamp of its own (the
# journal keeps one): a DRIFT is <4> (warning) or more severe, a denied
# name <4> (warning, never below audit's "would deny"), the start lines <6>.
# Control: the same daemon without JOURNAL_STREAM writes timestamped lines
# with a level word, no prefix.
source "$(dirname "$0")/lib.sh"
df_setup
df_config allow='["www.allowed.test"]' guard_interval=1
df_setup_fence
DF_DNSFENCE_LOG="$DF_TMP/journal.log"
ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
	JOURNAL_STREAM=8:12345 "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" serve >>"$DF_DNSFENCE_LOG" 2>&1 &
DF_DNSFENCE_PID=$!
DF_PIDS+=("$DF_DNSFENCE_PID")
df_poll 50 df_dnsfence_answers || fail "dnsfence did not answer within 5 s: $(cat "$DF_DNSFENCE_LOG")"

df_dig www.denied.test A
expect_rcode NXDOMAIN
df_wait_log 20 "denied www.denied.test" || fail "the denial was not logged"
line="$(grep -m1 'denied www.denied.test' "$DF_DNSFENCE_LOG")"
[[ "$line" == "<4>policy: denied www.denied.test"* ]] || fail "a denial is not '<4>policy: denied ...': $line"
ok "denial: $line"

victim="$(grep -m1 -- '--match-set dnsfence4' <<<"$(wl iptables -S DNSFENCE-OUT)")"
eval "wl iptables -D ${victim#-A }"
df_wait_log 50 "DRIFT: ipv4" || fail "the drift was not logged"
line="$(grep -m1 'DRIFT: ipv4' "$DF_DNSFENCE_LOG")"
[[ "$line" =~ ^\<[0-4]\>guard:\ DRIFT:\ ipv4 ]] || fail "a DRIFT line is not '<4>guard: DRIFT' or more severe: $line"
ok "drift: $line"

grep -q '^<6>' "$DF_DNSFENCE_LOG" || fail "no <6> (info) line: $(head -3 "$DF_DNSFENCE_LOG")"
bad="$(awk '!/^<[0-7]>[a-z]+: / && n++ < 3' "$DF_DNSFENCE_LOG")"
[ -z "$bad" ] || fail "lines without a <N> prefix: $bad"
! grep -qE '^<[0-7]>.*[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]+Z (info|warning|error|debug) ' "$DF_DNSFENCE_LOG" ||
	fail "a line carries its own timestamp: $(grep -m1 -E 'T[0-9:]+Z' "$DF_DNSFENCE_LOG")"
ok "every line has a <N> prefix and no timestamp ($(wc -l <"$DF_DNSFENCE_LOG") lines)"
df_stop_dnsfence

# Control: without JOURNAL_STREAM, timestamped lines with the level word.
df_start_dnsfence allow='["www.allowed.test"]'
df_dig www.denied.test A
df_wait_log 20 "denied www.denied.test" || fail "control: the denial was not logged"
grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]+Z warning policy: denied www.denied.test' "$DF_DNSFENCE_LOG" ||
	fail "control: the denial is not a timestamped warning line: $(grep -m1 denied "$DF_DNSFENCE_LOG")"
! grep -q '^<[0-7]>' "$DF_DNSFENCE_LOG" || fail "control: a <N> prefix without JOURNAL_STREAM"
ok "control: without JOURNAL_STREAM, '$(grep -m1 'denied www.denied.test' "$DF_DNSFENCE_LOG" | cut -d' ' -f2-)'"
df_stop_dnsfence

# By config: "log": {"format": "journal"} gives the same form without the
# environment.
: >"$DF_DNSFENCE_LOG"
df_start_dnsfence allow='["www.allowed.test"]' log='{"level": "info", "format": "journal"}'
df_dig www.denied.test A
df_wait_log 20 "denied www.denied.test" || fail "journal format: the denial was not logged"
grep -q '^<4>policy: denied www.denied.test' "$DF_DNSFENCE_LOG" ||
	fail "log.format journal: the denial is not '<4>policy: denied ...': $(grep -m1 denied "$DF_DNSFENCE_LOG")"
ok "log.format \"journal\": $(grep -m1 'denied www.denied.test' "$DF_DNSFENCE_LOG")"
