#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/docker/entrypoint-subjects.sh, the agent case in one container,
# run in a network namespace instead of a container (paths from the
# environment): root brings up a fence for uid 1001 only (the config's
# "subjects"), resolv.conf keeps naming the original resolver, the
# service runs as uid 1000 unfenced and the agent (the command) as uid
# 1001 with no capabilities and no_new_privs.
#   agent (fenced):    the allowed name resolves (its DNS to resolv.conf's
#                      server is answered by dnsfence) and connects; the
#                      denied name does not resolve and never reaches
#                      unbound; an unresolved address is refused.
#   service (control): the same denied name resolves through unbound and
#                      the same address connects.
# While it runs, another process of uid 1001 (docker exec -u agent) is
# fenced and one of uid 1000 is not. The entrypoint exits with the
# service's status. Refused before anything starts: an agent uid that is
# not a subject, a service uid that is one, the same uid for both.
source "$(dirname "$0")/lib.sh"
df_setup
ENTRY="$DNSFENCE_SRC/contrib/docker/entrypoint-subjects.sh"
[ -x "$ENTRY" ] || fail "no executable $ENTRY"
df_start_listener 80
printf 'nameserver %s\noptions timeout:2 attempts:1\n' "$DF_UP4" >"/etc/netns/$DF_WL/resolv.conf"
# The probes and their reports, for uids 1000 and 1001 (DF_TMP is 0700).
chmod 0711 "$DF_TMP"
IO="$DF_TMP/io"
mkdir -m 0777 "$IO"
# conf FILE SUBJECTS-JSON: a config with no "upstreams" (from resolv.conf).
conf() {
	printf '{"allow": ["www.allowed.test"], "ports": ["tcp/80"], "subjects": %s, "log": {"level": "debug"}, "state_dir": "%s/state", "control": {"socket": "%s/control.sock"}}\n' \
		"$2" "$DF_TMP" "$DF_TMP" >"$1"
}
conf "$DF_TMP/dnsfence.json" '{"users": ["1001"]}'
DF_DNSFENCE_CONF="$DF_TMP/dnsfence.json"
DF_DNSFENCE_LOG="$DF_TMP/dnsfence.log"

# What each process is and reaches (test/e2e/reach_probe.sh).
cp "$DNSFENCE_SRC/test/e2e/reach_probe.sh" "$IO/probe.sh"
chmod 0755 "$IO/probe.sh"

entry() { # CONFIG SERVICE-USER AGENT-USER SERVICE-CMDLINE [AGENT-CMD...]
	ip netns exec "$DF_WL" env -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		DNSFENCE_BIN="$DNSFENCE_BIN" DNSFENCE_CONFIG="$1" DNSFENCE_SERVICE_USER="$2" \
		DNSFENCE_AGENT_USER="$3" DNSFENCE_SERVICE="$4" DNSFENCE_READY_TIMEOUT=10 \
		timeout 60 "$ENTRY" "${@:5}"
}
daemon_pid() {
	local p
	for p in $(ip netns pids "$DF_WL"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = dnsfence ] && echo "$p"
	done
}

AGENT_DENIED="agent-$$.evil.test"
SERVICE_DENIED="service-$$.evil.test"
# The service: probe, then wait for the test's word to stop, exit 7.
service="bash $IO/probe.sh service $SERVICE_DENIED; while [ ! -e $IO/stop ]; do sleep 0.2; done; exit 7"
entry "$DF_DNSFENCE_CONF" 1000:1000 1001:1001 "$service" bash "$IO/probe.sh" agent "$AGENT_DENIED" \
	>"$DF_TMP/entry.out" 2>>"$DF_DNSFENCE_LOG" &
entry_pid=$!
DF_PIDS+=("$entry_pid")
df_poll 200 test -e "$IO/agent" -a -e "$IO/service" ||
	fail "the agent or the service did not report: $(tail -n 20 "$DF_DNSFENCE_LOG")"
agent="$(cat "$IO/agent")" svc="$(cat "$IO/service")"
grep -qx done <<<"$agent" && grep -qx done <<<"$svc" || fail "a probe did not finish: $agent / $svc"

grep -qx "uid 1001 gid 1001 groups 1001" <<<"$agent" || fail "agent identity: $(head -1 <<<"$agent")"
grep -qx "uid 1000 gid 1000 groups 1000" <<<"$svc" || fail "service identity: $(head -1 <<<"$svc")"
for who in agent svc; do
	grep -qx "CapEff: 0000000000000000" <<<"${!who}" || fail "$who has capabilities: ${!who}"
	grep -qx "CapBnd: 0000000000000000" <<<"${!who}" || fail "$who's bounding set is not empty: ${!who}"
	grep -qx "NoNewPrivs: 1" <<<"${!who}" || fail "$who without no_new_privs: ${!who}"
done
ok "agent uid 1001, service uid 1000, both without capabilities and with no_new_privs"

grep -qx allowed-resolves <<<"$agent" && grep -qx allowed-connects <<<"$agent" ||
	fail "the agent cannot resolve or reach the allowed name: $agent"
! grep -qx denied-resolves <<<"$agent" || fail "the agent resolved the denied name $AGENT_DENIED"
! grep -qx unresolved-connects <<<"$agent" || fail "the agent reached 198.18.3.1:80, which nobody resolved for it"
! df_unbound_saw "$AGENT_DENIED" || fail "the agent's query for $AGENT_DENIED reached unbound"
ok "agent (fenced): allowed name resolves and connects; denied name fails and never reaches unbound; unresolved address refused"

grep -qx denied-resolves <<<"$svc" || fail "control: the service cannot resolve $SERVICE_DENIED through its own resolver: $svc"
df_unbound_saw "$SERVICE_DENIED" || fail "control: the service's query did not go to unbound"
grep -qx unresolved-connects <<<"$svc" || fail "control: the service cannot reach 198.18.3.1:80: $svc"
grep -qx "nameserver $DF_UP4" "/etc/netns/$DF_WL/resolv.conf" || fail "resolv.conf was changed: $(cat "/etc/netns/$DF_WL/resolv.conf")"
ok "control: the service (unfenced) resolves the denied name through unbound and reaches the address; resolv.conf untouched"

# docker exec -u: later processes of each uid.
! df_connect_as 1001 198.18.3.1 80 || fail "a later process of uid 1001 is not fenced"
df_connect_as 1000 198.18.3.1 80 || fail "control: a later process of uid 1000 cannot reach 198.18.3.1:80"
ok "a later process of the agent's uid is fenced, one of the service's is not"

touch "$IO/stop"
rc=0
wait "$entry_pid" || rc=$?
[ "$rc" -eq 7 ] || fail "the entrypoint exited $rc, not the service's 7"
df_poll 50 test -z "$(daemon_pid)" || fail "the daemon still runs after the service exited"
! df_connect_as 1001 198.18.3.1 80 || fail "after the service exited, uid 1001 is not fenced any more"
ok "the entrypoint exits with the service's status (7), the daemon is stopped, the agent's uid stays fenced"
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown exited $DF_CMD_RC: $DF_CMD_ERR"

# Refused before anything starts.
conf "$DF_TMP/bad.json" '{"users": ["1002"]}'
refused() { # WHAT EXPECTED-TEXT CONFIG SERVICE-USER AGENT-USER
	local out rc=0
	out="$(entry "$3" "$4" "$5" "touch $IO/service-ran" touch "$IO/agent-ran" 2>&1)" || rc=$?
	[ "$rc" -ne 0 ] || fail "$1: the entrypoint exited 0"
	[ ! -e "$IO/service-ran" ] && [ ! -e "$IO/agent-ran" ] || fail "$1: something ran"
	grep -q "$2" <<<"$out" || fail "$1: no clear message: $out"
	[ -z "$(daemon_pid)" ] || fail "$1: a daemon was started"
	! grep -q DNSFENCE <<<"$(wl iptables-save)" || fail "$1: rules were set up"
}
refused "agent not a subject" "is not in subjects.users" "$DF_TMP/bad.json" 1000:1000 1001:1001
refused "service a subject" "it would be fenced" "$DF_TMP/bad.json" 1002:1002 1001:1001
refused "the same uid" "the same uid" "$DF_DNSFENCE_CONF" 1001:1001 1001:1001
refused "root" "is root" "$DF_DNSFENCE_CONF" 0:0 1001:1001
ok "refused before anything starts: agent not a subject, service a subject, one uid for both, root"
