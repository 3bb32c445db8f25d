#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 5 across a restart that changes `upstreams` (198.18.0.1 ->
# [2001:db8::1]): the daemon stops, its conntrack entries to 198.18.0.1:53
# stay alive, and setup with the new config must delete them (it reads
# the old upstreams from the rules the kernel holds) before the rules
# that demanded the daemon's mark towards 198.18.0.1 go. The workload
# then binds the old daemon's source ports (range narrowed to
# 40000-40007) and queries a denied name at 198.18.0.1: nothing reaches
# unbound, no entry is left. Controls: the daemon's queries did open
# entries to the old upstream, the same ride before the restart gets
# nothing, and the new daemon resolves through the new upstream.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_zone_add allowed.test.zone <<<'*.w IN A 198.18.3.1'
df_setup
wl sysctl -qw net.ipv4.ip_local_port_range="40000 40007"
df_start_dnsfence allow='["*.w.allowed.test"]'

for n in 1 2 3 4; do
	df_dig "n$n.w.allowed.test" A
	expect_rcode NOERROR
done

expect_no_ride "$WL_UID" before "control, before the restart"

df_stop_dnsfence
[ "$(df_conntrack_to 198.18.0.1)" -gt 0 ] || fail "control: the stopped daemon left no conntrack entry to 198.18.0.1:53"
ok "control: the stopped daemon left $(df_conntrack_to 198.18.0.1) entries to the old upstream"

df_start_dnsfence allow='["*.w.allowed.test"]' upstreams='["[2001:db8::1]"]'
expect_no_ride "$WL_UID" after "after the restart with the new upstream"
[ "$(df_conntrack_to 198.18.0.1)" -eq 0 ] ||
	fail "setup left $(df_conntrack_to 198.18.0.1) conntrack entries to the old upstream 198.18.0.1:53"
grep -q "conntrack entries to replaced upstream(s) 198.18.0.1 deleted" <<<"$DF_CMD_ERR$DF_CMD_OUT" ||
	fail "setup did not say it deleted the flows to 198.18.0.1: $DF_CMD_ERR"
ok "setup: deleted the flows to the upstream the previous policy left"

df_dig fresh.w.allowed.test A
expect_rcode NOERROR
grep -q '2001:db8::2 fresh.w.allowed.test. A IN' "$DF_TMP/unbound.log" ||
	fail "control: fresh.w.allowed.test did not reach the new upstream over IPv6"
ok "control: the new upstream [2001:db8::1] answers"
expect_dnsfence_running
