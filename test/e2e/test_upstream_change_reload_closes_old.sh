#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 5 across a reload that changes `upstreams` (198.18.0.1 ->
# [2001:db8::1], the same unbound): the daemon's conntrack entries to the
# old upstream must not outlive the rules that demanded its mark. The
# workload binds the daemon's old source ports (the ephemeral range is
# narrowed to 40000-40007 so the sweep is short) and queries a denied name
# at the old upstream: right after the reload (while the old channel
# drains) and again once the daemon says the old upstream's flows are
# deleted, the query never reaches unbound and no entry to 198.18.0.1:53
# is left. Controls: the same ride before the change gets nothing (the
# mark rules), the daemon's own queries did open entries to the old
# upstream, and after the reload a fresh name reaches unbound over IPv6.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_zone_add allowed.test.zone <<<'*.w IN A 198.18.3.1'
df_setup
wl sysctl -qw net.ipv4.ip_local_port_range="40000 40007"
sock_conf() { echo '{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'; }
df_start_dnsfence allow='["www.allowed.test", "*.w.allowed.test"]' control="$(sock_conf)"
chmod 755 "$DF_TMP"

for n in 1 2 3 4; do
	df_dig "n$n.w.allowed.test" A
	expect_rcode NOERROR
done
[ "$(df_conntrack_to 198.18.0.1)" -gt 0 ] || fail "control: the daemon's queries left no conntrack entry to 198.18.0.1:53"
ok "control: the daemon's queries opened $(df_conntrack_to 198.18.0.1) entries to the old upstream"

expect_no_ride "$WL_UID" before "control, before the change"

df_config allow='["www.allowed.test", "*.w.allowed.test"]' upstreams='["[2001:db8::1]"]' \
	control="$(sock_conf)"
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
ok "reload: $DF_CMD_OUT"
expect_no_ride "$WL_UID" draining "right after the reload"

df_wait_log 100 "conntrack entries to replaced upstream(s) 198.18.0.1 deleted" ||
	fail "the daemon never said it deleted the flows to the replaced upstream 198.18.0.1"
df_wait_log 50 "the new rules are in place" || fail "the rules without the old upstream never came"
[ "$(df_conntrack_to 198.18.0.1)" -eq 0 ] ||
	fail "$(df_conntrack_to 198.18.0.1) conntrack entries to the old upstream 198.18.0.1:53 are left: $(wl conntrack -L -d 198.18.0.1 2>&1)"
expect_no_ride "$WL_UID" after "after the old upstream drained"
wl "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" check >/dev/null 2>&1 ||
	fail "check against the new config is not 0 once the old upstream's rules are gone"
ok "check: the rules are the new config's, the old upstream's gone"

df_dig fresh.w.allowed.test A
expect_rcode NOERROR
grep -q '2001:db8::2 fresh.w.allowed.test. A IN' "$DF_TMP/unbound.log" ||
	fail "control: fresh.w.allowed.test did not reach the new upstream over IPv6"
ok "control: the new upstream [2001:db8::1] answers"
expect_dnsfence_running
