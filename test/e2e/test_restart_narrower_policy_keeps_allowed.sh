#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A restart is as precise as a reload (invariant 9): the names that put
# each set entry there are kept in state_dir (prov.state) when the daemon
# stops, and setup after a policy change evicts exactly what only
# removed names brought in.
#  1. allow *.allowed.test and target.cdn.test, resolve and connect to
#     www.allowed.test (198.18.1.10) and target.cdn.test (198.18.1.20);
#     restart with target.cdn.test removed: 198.18.1.20 is out of the set
#     and unreachable, target.cdn.test refused, while 198.18.1.10 is still
#     in the set and connects without a new lookup (a client that cached
#     it keeps working).
#  2. audit -> enforce across a restart: in audit, a.b.allowed.test (not
#     allowed by enforce) put 198.18.1.11 in the set; restarted in enforce
#     allowing www.allowed.test: 198.18.1.11 is out, 198.18.1.10 kept.
#  3. control, fail closed: the same restart as 1 with the state file
#     deleted flushes both sets and says so in one log line; 198.18.1.10
#     no longer connects until it is looked up again.
#  4. fail closed after a crash: a daemon killed with SIGKILL leaves no
#     state (it removes the file when it loads it), so the next policy
#     change flushes too.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 443
state="$DF_TMP/state/prov.state"

# Both names allowed, both resolved and connected to, the daemon stopped.
run_wide_policy() {
	df_start_dnsfence allow='["*.allowed.test", "target.cdn.test"]'
	df_ask_connect www.allowed.test A 443
	expect_connected 198.18.1.10
	df_ask_connect target.cdn.test A 443
	expect_connected 198.18.1.20
	df_stop_dnsfence
}

# --- 1. a narrower policy
run_wide_policy
df_start_dnsfence allow='["*.allowed.test"]'
df_tcp_connect 198.18.1.10 443 || fail "198.18.1.10:443 (www.allowed.test, still allowed) unreachable after the restart"
expect_in_set dnsfence4 198.18.1.10
# (df_start_dnsfence ran setup: its log is DF_CMD_ERR)
grep -q "1 set entries kept .*, 1 evicted" <<<"$DF_CMD_ERR" || fail "setup did not keep entries precisely: $DF_CMD_ERR"
expect_not_in_set dnsfence4 198.18.1.20
expect_not_in_set dnsfence6 2001:db8:1::20
expect_fenced 198.18.1.20 443
df_dig target.cdn.test A
expect_rcode NXDOMAIN
ok "restart without target.cdn.test: its address evicted and refused, www.allowed.test's kept and connecting without a lookup"

# --- 2. audit -> enforce
df_stop_dnsfence
df_start_dnsfence mode='"audit"' allow='["www.allowed.test"]'
df_ask_connect a.b.allowed.test A 443
expect_connected 198.18.1.11
df_ask_connect www.allowed.test A 443
expect_connected 198.18.1.10
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]'
grep -q "1 set entries kept .*, 1 evicted" <<<"$DF_CMD_ERR" ||
	fail "setup after audit -> enforce did not keep entries precisely: $DF_CMD_ERR"
expect_not_in_set dnsfence4 198.18.1.11
expect_fenced 198.18.1.11 443
expect_in_set dnsfence4 198.18.1.10
df_tcp_connect 198.18.1.10 443 || fail "198.18.1.10:443 unreachable after audit -> enforce"
ok "audit -> enforce across a restart: what only audit let in is evicted, the allowed name's entry kept"

# --- 3. control: the state file deleted
df_stop_dnsfence
run_wide_policy
rm -f "$state"
df_start_dnsfence allow='["*.allowed.test"]'
grep -q "flushed.*names that filled them are not known: .*prov.state: No such file" <<<"$DF_CMD_ERR" ||
	fail "setup without the state file did not say it flushed: $DF_CMD_ERR"
[ "$(grep -c "flushed" <<<"$DF_CMD_ERR")" = 1 ] || fail "expected one log line about the flush: $DF_CMD_ERR"
expect_not_in_set dnsfence4 198.18.1.20
expect_not_in_set dnsfence4 198.18.1.10
expect_fenced 198.18.1.10 443
ok "control: without the state file the restart flushes (one log line), 198.18.1.10 is closed until looked up again"

# --- 4. after a crash
df_ask_connect www.allowed.test A 443
expect_connected 198.18.1.10
[ ! -e "$state" ] || fail "$state still there while the daemon runs"
df_kill_dnsfence
df_start_dnsfence allow='["www.allowed.test"]'
grep -q "flushed.*not known" <<<"$DF_CMD_ERR" || fail "setup after a crash did not flush: $DF_CMD_ERR"
expect_not_in_set dnsfence4 198.18.1.10
ok "after a crash no state is trusted: the next policy change flushes"
expect_dnsfence_running
