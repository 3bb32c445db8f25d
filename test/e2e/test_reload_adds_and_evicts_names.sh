#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A live policy change, without a restart. Adding a name and running
# `dnsfence reload`: the name resolves and connects at once (same daemon
# pid). Removing names and reloading: an address only the removed name
# answered leaves the set and stops connecting at once, while an address
# that a still-allowed name also answered stays in the set and keeps
# connecting; the removed name is denied (its cached answer is gone).
# Positive controls: the same connects succeed before the removal.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_zone_add allowed.test.zone <<'ZONE'
solo     IN A 198.18.7.1
shared-a IN A 198.18.7.2
shared-b IN A 198.18.7.2
ZONE
df_setup
up ip addr add 198.18.7.1/32 dev lo
up ip addr add 198.18.7.2/32 dev lo
df_start_listener 443
# No watch: the file changes below are read by the explicit reloads alone
# (with the watch on, its own reload may come first, and the explicit one
# then finds no change).
df_start_dnsfence allow='["www.allowed.test", "solo.allowed.test", "shared-a.allowed.test"]' \
	ports='["tcp/443"]' control='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
chmod 755 "$DF_TMP" # the daemon reads the config again after the privilege drop
pid=$DF_DNSFENCE_PID

# Add a name.
df_dig shared-b.allowed.test A
expect_rcode NXDOMAIN
df_config allow='["www.allowed.test", "solo.allowed.test", "shared-a.allowed.test", "shared-b.allowed.test"]' \
	ports='["tcp/443"]' control='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q '+1/-0 names' <<<"$DF_CMD_OUT" || fail "reload did not report +1/-0 names: $DF_CMD_OUT"
ok "reload: $DF_CMD_OUT"
df_ask_connect shared-b.allowed.test A 443
[ "$(df_asked_rcode)" = NOERROR ] || fail "added name not answered: $DF_OUT"
expect_connected 198.18.7.2
[ "$pid" = "$DF_DNSFENCE_PID" ] && kill -0 "$pid" || fail "the daemon was restarted"
ok "added name resolves and connects without a restart"

# Positive control: everything connects before the removal.
for n in solo shared-a www; do
	df_ask_connect $n.allowed.test A 443
	[ "$DF_DIG_RC" -eq 0 ] || fail "$n.allowed.test did not connect before the removal: $DF_OUT"
done
expect_in_set dnsfence4 198.18.7.1
df_connect_as $WL_UID 198.18.7.1 443 || fail "198.18.7.1 not reachable before the removal"
ok "before the removal: solo, shared-a, www connect"

# Remove solo and shared-a; shared-b (same address as shared-a) stays.
df_config allow='["www.allowed.test", "shared-b.allowed.test"]' ports='["tcp/443"]' \
	control='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q '+0/-2 names' <<<"$DF_CMD_OUT" || fail "reload did not report +0/-2 names: $DF_CMD_OUT"
grep -q '1 addresses evicted' <<<"$DF_CMD_OUT" || fail "reload did not evict exactly one address: $DF_CMD_OUT"
ok "reload: $DF_CMD_OUT"
expect_not_in_set dnsfence4 198.18.7.1
! df_connect_as $WL_UID 198.18.7.1 443 || fail "removed name's address 198.18.7.1 still connects"
ok "solo's address left the set and stops connecting at once"
expect_in_set dnsfence4 198.18.7.2
df_connect_as $WL_UID 198.18.7.2 443 || fail "shared address 198.18.7.2 no longer connects"
expect_in_set dnsfence4 198.18.1.10
ok "the shared address (shared-b still allowed) and www stay"
df_dig solo.allowed.test A
expect_rcode NXDOMAIN
df_dig shared-a.allowed.test A
expect_rcode NXDOMAIN
ok "removed names are denied (no cached answer served)"
expect_log_contains "reload"
[ "$pid" = "$DF_DNSFENCE_PID" ] && kill -0 "$pid" || fail "the daemon was restarted"
