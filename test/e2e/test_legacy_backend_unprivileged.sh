#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The iptables-legacy backend with the daemon unprivileged, as the systemd
# unit runs it (issue 14, bug 4). iptables-legacy-save without "-t" lists
# the tables from /proc/net/ip_tables_names, which only root may read: the
# unprivileged daemon used to fail there, take that for "no legacy rules",
# choose nft, find OUTPUT ACCEPT and refuse to serve; its guard repeated
# the same detection on every pass. Here setup (root) installs the fence
# with legacy (the namespace already holds a legacy rule, so that is the
# backend it must use, whatever this host's `iptables` alternative is),
# then serve runs as nobody with the unit's capabilities: it must serve,
# its guard must find the rules in place on its passes, and `check` as
# that user must agree. Positive control: the denied name is refused and
# the allowed one connects, so the fence is really the legacy one.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 8080
command -v iptables-legacy >/dev/null || fail "iptables-legacy is not installed"
df_config user='"nobody"' allow='["www.allowed.test"]' guard_interval=1
chmod 711 "$DF_TMP"
chmod 644 "$DF_DNSFENCE_CONF"
# A rule only the legacy backend holds: setup must pick legacy.
wl iptables-legacy -t filter -N DFLEGACY
df_setup_fence
wl iptables-legacy-save -t filter | grep '^-A OUTPUT -j DNSFENCE' >/dev/null ||
	fail "setup did not install the fence with iptables-legacy: $(wl iptables-legacy-save -t filter)"
! wl iptables-nft-save 2>/dev/null | grep DNSFENCE >/dev/null || fail "setup put rules in nft too"
ok "setup installed the fence with iptables-legacy"

nobody_uid="$(id -u nobody)"
nobody_gid="$(id -g nobody)"
caps=+net_admin,+net_bind_service,+net_raw
DF_DNSFENCE_LOG="$DF_TMP/dnsfence.log"
ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
	setpriv --reuid "$nobody_uid" --regid "$nobody_gid" --clear-groups \
	--inh-caps="-all,$caps" --ambient-caps="-all,$caps" --bounding-set="-all,$caps" \
	--no-new-privs "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" serve >>"$DF_DNSFENCE_LOG" 2>&1 &
DF_DNSFENCE_PID=$!
DF_PIDS+=("$DF_DNSFENCE_PID")
n=50
until df_dnsfence_answers; do
	kill -0 "$DF_DNSFENCE_PID" 2>/dev/null ||
		fail "unprivileged serve refused the legacy fence: $(tail -n 5 "$DF_DNSFENCE_LOG")"
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "unprivileged serve did not answer within 5 s"
	sleep 0.1
done
ok "serve as uid $nobody_uid (ambient $caps) serves behind the legacy fence"

# Two guard passes (guard_interval 1 s) that find everything in place.
df_poll 100 sh -c "[ \"\$(grep -c 'guard: rules and sets in place' '$DF_DNSFENCE_LOG')\" -ge 2 ]" ||
	fail "the guard did not report two clean passes within 10 s: $(grep guard "$DF_DNSFENCE_LOG" | tail -n 5)"
! grep -qE "guard.*(drift|missing|restor|cannot)" "$DF_DNSFENCE_LOG" ||
	fail "the guard saw drift on the legacy fence: $(grep guard "$DF_DNSFENCE_LOG" | tail -n 5)"
kill -0 "$DF_DNSFENCE_PID" 2>/dev/null || fail "the daemon stopped after its guard passes"
ok "the guard's passes find the legacy rules and sets in place"

rc=0
ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG setpriv --reuid "$nobody_uid" --regid "$nobody_gid" \
	--clear-groups --inh-caps="-all,$caps" --ambient-caps="-all,$caps" --no-new-privs \
	"$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" check >"$DF_TMP/check.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "check as the daemon's user: exit $rc: $(cat "$DF_TMP/check.out")"
ok "check as the daemon's user: exit 0"

df_ask_connect www.allowed.test A 8080
[ "$(df_asked_rcode)" = NOERROR ] && [ -n "$(df_asked_addrs)" ] || fail "allowed name: $DF_OUT"
[ "$DF_DIG_RC" -eq 0 ] || fail "allowed name does not connect: $DF_OUT"
df_ask_connect www.denied.test A 8080
[ "$(df_asked_rcode)" = NXDOMAIN ] || fail "denied name: $DF_OUT"
! df_connect_as 65534 198.18.3.1 8080 3 || fail "an unanswered address is reachable"
ok "allowed name resolves and connects, denied name NXDOMAIN, an unanswered address is dropped"
