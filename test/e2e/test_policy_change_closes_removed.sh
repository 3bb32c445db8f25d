#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 9: a policy change closes what it removed; the same policy
# keeps its set entries across a restart.
#  1. audit -> enforce: in audit, a.b.allowed.test (not in allow) is
#     resolved and its address 198.18.1.11 enters the set. `check` with
#     the enforce config reports sets from another policy; after the
#     restart in enforce, 198.18.1.11 is out of the set and unreachable.
#  2. allow removal: enforce allowing a.b.allowed.test, resolved and
#     reachable; restarted without it: out of the set, unreachable.
#  3. control, the same policy: www.allowed.test resolved, the daemon
#     restarted with the same config (another order of `allow`): the entry
#     is still there and 198.18.1.10 connects without a new query.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 443

# --- 1. audit -> enforce
df_start_dnsfence mode='"audit"' allow='["www.allowed.test"]'
df_dig a.b.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.1.11
ok "audit: a.b.allowed.test (denied by enforce) resolved, 198.18.1.11 in the set"
df_stop_dnsfence
df_config allow='["www.allowed.test"]'
df_dnsfence check
[ "$DF_CMD_RC" -eq 1 ] || fail "check with the enforce config exited $DF_CMD_RC: $DF_CMD_OUT"
grep -q "another policy" <<<"$DF_CMD_OUT" || fail "check did not report the sets' other policy: $DF_CMD_OUT"
ok "check (enforce config) reports sets filled under another policy"
df_start_dnsfence allow='["www.allowed.test"]'
expect_not_in_set dnsfence4 198.18.1.11
expect_fenced 198.18.1.11 443
ok "after audit -> enforce: 198.18.1.11 out of the set and unreachable"

# --- 2. a name removed from allow
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test"]'
df_ask_connect a.b.allowed.test A 443
expect_connected 198.18.1.11
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]'
expect_not_in_set dnsfence4 198.18.1.11
expect_fenced 198.18.1.11 443
ok "after removing a.b.allowed.test from allow: 198.18.1.11 out of the set and unreachable"

# --- 3. control: the same policy keeps its entries
df_ask_connect www.allowed.test A 443
expect_connected 198.18.1.10
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test", "www.allowed.test"]'
expect_in_set dnsfence4 198.18.1.10
df_tcp_connect 198.18.1.10 443 || fail "198.18.1.10:443 unreachable after a restart with the same policy"
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check after the same-policy restart exited $DF_CMD_RC: $DF_CMD_OUT"
ok "control: the same policy keeps 198.18.1.10 in the set across a restart; it connects without a new query"
expect_dnsfence_running
