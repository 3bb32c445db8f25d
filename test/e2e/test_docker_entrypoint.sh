#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/docker/entrypoint.sh, the single-container pattern, run in a
# network namespace instead of a container (paths from the environment):
# starting as root with the upstream in resolv.conf, it brings the fence
# up, points resolv.conf at 127.0.0.1 (search line kept, original saved)
# and execs the workload as uid 1000 with no capabilities and
# no_new_privs. The workload resolves and connects to the allowed name;
# the denied name neither resolves nor connects. A second start (a
# container restart, resolv.conf already rewritten) restores the saved
# upstream and works again. A config the daemon rejects starts no
# workload.
source "$(dirname "$0")/lib.sh"
df_setup
ENTRY="$DNSFENCE_SRC/contrib/docker/entrypoint.sh"
[ -x "$ENTRY" ] || fail "no executable $ENTRY"
df_start_listener 80

# What Docker writes: the upstream, a search list.
resolv="/etc/netns/$DF_WL/resolv.conf"
printf 'nameserver %s\nsearch allowed.test\noptions timeout:2 attempts:2\n' "$DF_UP4" >"$resolv"
# The image's default config plus one name; no "upstreams": from resolv.conf.
DF_DNSFENCE_CONF="$DF_TMP/dnsfence.json"
printf '{"allow": ["www.allowed.test"], "ports": ["tcp/80"], "log": {"level": "debug"}, "control": {"socket": "%s/control.sock"}}\n' "$DF_TMP" >"$DF_DNSFENCE_CONF"
DF_DNSFENCE_LOG="$DF_TMP/dnsfence.log"

# The workload: who it is, then the allowed and the denied name.
cat >"$DF_TMP/workload.sh" <<'WL'
echo "uid $(id -u) gid $(id -g) groups $(id -G)"
awk '/^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs):/ { print $1, $2 }' /proc/self/status
if getent ahosts www >/tmp/.wl.$$ 2>&1; then
	echo "allowed-resolves $(awk '{ print $1 }' /tmp/.wl.$$ | sort -u | tr '\n' ' ')"
fi
rm -f /tmp/.wl.$$
if timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.10/80' 2>/dev/null; then echo allowed-connects; fi
if getent ahosts www.evil.test >/dev/null 2>&1; then echo denied-resolves; fi
if timeout 2 bash -c 'exec 3<>/dev/tcp/198.18.3.1/80' 2>/dev/null; then echo denied-connects; fi
echo workload-done
WL
chmod 755 "$DF_TMP/workload.sh"

entry() {
	ip netns exec "$DF_WL" env -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		DNSFENCE_BIN="$DNSFENCE_BIN" DNSFENCE_CONFIG="$DF_DNSFENCE_CONF" \
		DNSFENCE_STATE_DIR="$DF_TMP/state" DNSFENCE_WORKLOAD_USER=1000:1000 \
		DNSFENCE_READY_TIMEOUT=10 timeout 60 "$ENTRY" "$@"
}
daemon_pid() {
	local p
	for p in $(ip netns pids "$DF_WL"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = dnsfence ] && echo "$p"
	done
}

check_run() {
	local what=$1 out
	out="$(entry bash -c "$(cat "$DF_TMP/workload.sh")" 2>>"$DF_DNSFENCE_LOG")" ||
		fail "$what: the entrypoint or workload failed: $out"
	grep -qx workload-done <<<"$out" || fail "$what: the workload did not run: $out"
	grep -q "^uid 1000 gid 1000 groups 1000$" <<<"$out" || fail "$what: workload identity: $(head -1 <<<"$out")"
	grep -qx "CapEff: 0000000000000000" <<<"$out" || fail "$what: workload has capabilities: $out"
	grep -qx "CapPrm: 0000000000000000" <<<"$out" || fail "$what: workload has permitted capabilities: $out"
	grep -qx "CapBnd: 0000000000000000" <<<"$out" || fail "$what: workload bounding set not empty: $out"
	grep -qx "NoNewPrivs: 1" <<<"$out" || fail "$what: workload without no_new_privs: $out"
	grep -q "^allowed-resolves .*198\.18\.1\.10 " <<<"$out" ||
		fail "$what: the workload did not resolve www (search allowed.test) to 198.18.1.10: $out"
	grep -qx allowed-connects <<<"$out" || fail "$what: the workload could not connect to the allowed name"
	! grep -qx denied-resolves <<<"$out" || fail "$what: the denied name resolved"
	! grep -qx denied-connects <<<"$out" || fail "$what: the workload reached the denied name's address"
	ok "$what: workload uid 1000, no capabilities, no_new_privs; allowed name resolves and connects, denied one does neither"
}

check_run "first start"
grep -qx "nameserver 127.0.0.1" "$resolv" || fail "resolv.conf was not pointed at 127.0.0.1: $(cat "$resolv")"
! grep -q "nameserver $DF_UP4" "$resolv" || fail "resolv.conf still names the upstream"
grep -qx "search allowed.test" "$resolv" || fail "the search line was lost: $(cat "$resolv")"
grep -q "nameserver $DF_UP4" "$DF_TMP/state/resolv.conf.orig" || fail "the original resolv.conf was not saved"
ok "resolv.conf -> 127.0.0.1 (search kept), original saved"
pid="$(daemon_pid)"
[ -n "$pid" ] || fail "no dnsfence left running in the namespace after the workload"
[ "$(df_proc_field "$pid" CapEff)" = 0000000000001000 ] || fail "daemon CapEff $(df_proc_field "$pid" CapEff)"
[ "$(awk '{ print $1 }' <<<"$(df_proc_field "$pid" Uid)")" != 0 ] || fail "the daemon runs as root"
ok "daemon (pid $pid) serves as uid $(awk '{ print $1 }' <<<"$(df_proc_field "$pid" Uid)") with cap_net_admin only"
! df_unbound_saw www.evil.test || fail "www.evil.test reached the upstream"

# Restart: the daemon is gone, resolv.conf names only 127.0.0.1.
kill -TERM "$pid"
df_wait_gone "$pid" 50 || kill -KILL "$pid"
check_run "second start (restart)"
kill -TERM "$(daemon_pid)" 2>/dev/null || true

# A config the daemon rejects: no workload, a non-zero exit.
printf '{"allow": ["www.allowed.test"], "no_such_key": 1}\n' >"$DF_TMP/bad.json"
rc=0
out="$(ip netns exec "$DF_WL" env DNSFENCE_BIN="$DNSFENCE_BIN" DNSFENCE_CONFIG="$DF_TMP/bad.json" \
	DNSFENCE_STATE_DIR="$DF_TMP/state" timeout 60 "$ENTRY" sh -c 'echo workload-ran' 2>&1)" || rc=$?
[ "$rc" -ne 0 ] || fail "a bad config: the entrypoint exited 0"
! grep -q workload-ran <<<"$out" || fail "a bad config: the workload ran unfenced"
grep -q "NOT started" <<<"$out" || fail "a bad config: no clear message: $out"
ok "a bad config: exit $rc, workload not started"
