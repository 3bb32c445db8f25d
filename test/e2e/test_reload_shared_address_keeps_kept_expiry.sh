#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Timeouts follow what is still allowed. long.s.allowed.test (TTL 3600)
# and short.s.allowed.test (TTL 15) answer the same 198.18.2.50; a reload
# removes long.s: the address rightly stays (short.s still links to it),
# but its set entry must now expire with short.s's answer (within 15 s),
# not an hour later, and the never-shorten memory must not put the hour
# back: after short.s's TTL the address is gone from the set and a connect
# to it is refused. Likewise a reload that lowers ttl.max cuts a longer
# entry (198.18.2.51, TTL 3600, still allowed) to the new maximum.
# Controls: before the reload the shared entry holds long.s's hour, and
# short.s still resolves after it.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'EOF2'
long.s 3600 IN A 198.18.2.50
short.s 15 IN A 198.18.2.50
long2.s 3600 IN A 198.18.2.51
EOF2
df_setup
df_start_listener 8080
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
both='["long.s.allowed.test", "short.s.allowed.test", "long2.s.allowed.test"]'
df_start_dnsfence allow="$both" ttl='{"min": 1, "max": 86400}' control="$(sock_conf)"
chmod 755 "$DF_TMP"

df_dig long.s.allowed.test A
expect_answer_contains 198.18.2.50
df_dig short.s.allowed.test A
expect_answer_contains 198.18.2.50
df_dig long2.s.allowed.test A
expect_answer_contains 198.18.2.51
expect_set_timeout dnsfence4 198.18.2.50 3500 3600
ok "control: the shared 198.18.2.50 holds long.s's hour"

# short.s asked again just before the reload: its 15 s run from here, so a
# slow machine's seconds above do not let its answer expire before the
# reload is judged.
df_dig short.s.allowed.test A
df_config allow='["short.s.allowed.test", "long2.s.allowed.test"]' ttl='{"min": 1, "max": 86400}' \
	control="$(sock_conf)"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
df_poll 20 wl ipset test dnsfence4 198.18.2.50 || fail "the shared address left the set at once (short.s still links to it)"
t="$(df_set_timeout dnsfence4 198.18.2.50)"
[ -n "$t" ] && [ "$t" -le 15 ] ||
	fail "after removing long.s, 198.18.2.50 keeps a timeout of ${t:-?} s; short.s's answer asked 15"
ok "reload: 198.18.2.50 stays with short.s's expiry ($t s left)"

# Another answer for short.s (TTL 15 or less) must not bring the hour back.
df_dig short.s.allowed.test A
expect_rcode NOERROR
t="$(df_set_timeout dnsfence4 198.18.2.50)"
[ -n "$t" ] && [ "$t" -le 15 ] || fail "a new answer for short.s put back a timeout of ${t:-?} s"
sleep 16
expect_not_in_set dnsfence4 198.18.2.50
expect_fenced 198.18.2.50 8080
ok "198.18.2.50 closed on time once short.s's answer expired"

df_config allow='["short.s.allowed.test", "long2.s.allowed.test"]' ttl='{"min": 1, "max": 20}' \
	control="$(sock_conf)"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload (ttl.max 20) exited $DF_CMD_RC: $DF_CMD_ERR"
sleep 0.5
t="$(df_set_timeout dnsfence4 198.18.2.51)"
[ -n "$t" ] && [ "$t" -le 20 ] || fail "after lowering ttl.max to 20, 198.18.2.51 keeps ${t:-?} s"
ok "ttl.max lowered to 20: 198.18.2.51 now expires within $t s"

df_dig short.s.allowed.test A
expect_answer_contains 198.18.2.50
df_tcp_connect 198.18.2.50 8080 || fail "control: short.s's address, answered again, is not reachable"
ok "control: short.s resolves and connects again"
expect_dnsfence_running
