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
# upstream and works again. With no "upstreams" in the config, check and
# the healthcheck work from the saved original once resolv.conf names only
# 127.0.0.1; the healthcheck is unhealthy before the switch. The sidecar
# form with compose.yaml's capabilities (no CAP_KILL) gets ready and
# stops its daemon on TERM. A read-only
# resolv.conf, or a config the daemon rejects, starts nothing.
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
printf '{"allow": ["www.allowed.test"], "ports": ["tcp/80"], "log": {"level": "debug"}, "state_dir": "%s/state", "control": {"socket": "%s/control.sock"}}\n' "$DF_TMP" "$DF_TMP" >"$DF_DNSFENCE_CONF"
df_check_own_state
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
		DNSFENCE_READY_TIMEOUT=30 timeout 60 "$ENTRY" "$@"
}
daemon_pid() {
	local p
	# the DNS process is "dnsfence-dns": this finds the main pid
	for p in $(ip netns pids "$DF_WL"); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dnsfence ]; then echo "$p"; fi
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

# The config has no "upstreams" and resolv.conf now names only 127.0.0.1:
# check and probe (the healthcheck) read the original the entrypoint saved
# (issue 14, bug 2); without it they cannot load the config at all.
in_wl() {
	ip netns exec "$DF_WL" env -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS DNSFENCE_BIN="$DNSFENCE_BIN" \
		DNSFENCE_CONFIG="$DF_DNSFENCE_CONF" DNSFENCE_STATE_DIR="$1" timeout 30 "${@:2}"
}
rc=0
in_wl "$DF_TMP/state" "$DNSFENCE_BIN" check >"$DF_TMP/check.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "check after the switch (no upstreams in the config): exit $rc: $(cat "$DF_TMP/check.out")"
rc=0
in_wl "$DF_TMP/nostate" "$DNSFENCE_BIN" check >"$DF_TMP/check.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "names no nameserver but our own" "$DF_TMP/check.out" ||
	fail "check without the saved original: expected exit 2 (no upstreams), saw $rc: $(cat "$DF_TMP/check.out")"
HC="$DNSFENCE_SRC/contrib/docker/healthcheck.sh"
rc=0
in_wl "$DF_TMP/state" "$HC" >"$DF_TMP/hc.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "healthcheck with the fence up and resolv.conf switched: exit $rc: $(cat "$DF_TMP/hc.out")"
ok "no upstreams in the config: check and the healthcheck pass from the saved original (exit 2 without it)"

# Before the switch the daemon already answers, but the workload would
# still ask the original resolver: the healthcheck must say unhealthy
# (issue 14, bug 3), although "dnsfence probe" alone passes.
cp "$resolv" "$DF_TMP/resolv.switched"
cp "$DF_TMP/state/resolv.conf.orig" "$resolv"
rc=0
in_wl "$DF_TMP/state" "$DNSFENCE_BIN" probe >"$DF_TMP/probe.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "probe with the daemon answering: exit $rc: $(cat "$DF_TMP/probe.out")"
rc=0
in_wl "$DF_TMP/state" "$HC" >"$DF_TMP/hc.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "healthcheck before the switch: expected exit 1, saw $rc: $(cat "$DF_TMP/hc.out")"
cp "$DF_TMP/resolv.switched" "$resolv"
ok "before resolv.conf is switched the healthcheck is unhealthy (exit 1), although probe passes"

# Restart: the daemon is gone, resolv.conf names only 127.0.0.1.
kill -TERM "$pid"
df_wait_gone "$pid" 50 || kill -KILL "$pid"
check_run "second start (restart)"
# Stop the second daemon and wait until it is gone (an ASan build takes a
# while to exit), so that the next check sees only what it starts.
for dp in $(daemon_pid); do
	kill -TERM "$dp" 2>/dev/null || true
	if ! df_wait_gone "$dp" 100; then
		kill -KILL "$dp" 2>/dev/null || true
		df_wait_gone "$dp" 50 || fail "the second daemon (pid $dp) did not exit"
	fi
done

# The sidecar form (no command) with the capabilities compose.yaml gives
# the container: no CAP_KILL, so root cannot signal the daemon once it
# runs as its own user. A probe that failed after that drop made the
# entrypoint take the daemon for dead ("kill -0": EPERM) and wait for its
# exit forever, the fence up but resolv.conf never switched (the Compose
# sidecar never became healthy); and a TERM (docker stop) never reached
# the daemon. Here the first five probes fail (a wrapper), so the check
# runs after the drop every time.
cp "$DF_TMP/state/resolv.conf.orig" "$resolv"
caps=$(/usr/bin/python3 -c 'import sys, yaml
print(",".join("+" + c.lower() for c in yaml.safe_load(open(sys.argv[1]))["services"]["dnsfence"]["cap_add"]))' \
	"$DNSFENCE_SRC/contrib/docker/compose.yaml")
case ",$caps," in *,+kill,*) fail "compose.yaml gives the sidecar CAP_KILL: this check would prove nothing" ;; esac
printf '#!/bin/sh\nif [ "$3" = probe ]; then\n\tn=$(cat "%s" 2>/dev/null || echo 0)\n\techo $((n + 1)) >"%s"\n\t[ "$n" -ge 5 ] || { sleep 0.2; exit 1; }\nfi\nexec "%s" "$@"\n' \
	"$DF_TMP/probes" "$DF_TMP/probes" "$DNSFENCE_BIN" >"$DF_TMP/slow-probe"
chmod 755 "$DF_TMP/slow-probe"
ip netns exec "$DF_WL" env -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
	DNSFENCE_BIN="$DF_TMP/slow-probe" DNSFENCE_CONFIG="$DF_DNSFENCE_CONF" DNSFENCE_STATE_DIR="$DF_TMP/state" \
	setpriv --bounding-set=-all,"$caps" -- "$ENTRY" 2>"$DF_TMP/sidecar.err" &
side=$!
DF_PIDS+=("$side")
df_poll 300 grep -q "fence up" "$DF_TMP/sidecar.err" ||
	fail "sidecar without CAP_KILL: the entrypoint never switched resolv.conf ($(cat "$DF_TMP/probes") probes): $(tail -n 5 "$DF_TMP/sidecar.err")"
grep -qx "nameserver 127.0.0.1" "$resolv" || fail "sidecar without CAP_KILL: fence up, but resolv.conf is: $(cat "$resolv")"
pid="$(daemon_pid)"
[ -n "$pid" ] && [ "$(awk '{ print $1 }' <<<"$(df_proc_field "$pid" Uid)")" != 0 ] ||
	fail "sidecar without CAP_KILL: no daemon running as its own user (pid '$pid')"
ok "sidecar with compose.yaml's capabilities (no CAP_KILL): resolv.conf switched after $(cat "$DF_TMP/probes") probes, the daemon (uid $(awk '{ print $1 }' <<<"$(df_proc_field "$pid" Uid)")) alive"
kill -TERM "$side"
rc=0
df_poll 100 sh -c '! kill -0 "$1" 2>/dev/null' sh "$side" || fail "sidecar: the entrypoint did not exit on TERM"
wait "$side" || rc=$?
[ -z "$(daemon_pid)" ] || fail "sidecar: TERM to the entrypoint left the daemon running (pid $(daemon_pid))"
grep -q "shutting down" "$DF_TMP/sidecar.err" || fail "sidecar: the daemon did not shut down on its own: $(tail -n 5 "$DF_TMP/sidecar.err")"
ok "sidecar: TERM to the entrypoint (docker stop) stops the daemon cleanly, and the entrypoint waits for it (exit $rc)"
cp "$DF_TMP/state/resolv.conf.orig" "$resolv"

# A read-only resolv.conf (a read-only container): refused before anything
# starts, with a message saying why (issue 14, bug 1).
rc=0
out="$(ip netns exec "$DF_WL" unshare -m sh -c 'mount -o remount,bind,ro /etc/resolv.conf && exec env "$@"' sh \
	DNSFENCE_BIN="$DNSFENCE_BIN" DNSFENCE_CONFIG="$DF_DNSFENCE_CONF" DNSFENCE_STATE_DIR="$DF_TMP/state" \
	timeout 60 "$ENTRY" sh -c 'echo workload-ran' 2>&1)" || rc=$?
[ "$rc" -ne 0 ] || fail "a read-only resolv.conf: the entrypoint exited 0"
! grep -q workload-ran <<<"$out" || fail "a read-only resolv.conf: the workload ran"
grep -q "is not writable" <<<"$out" || fail "a read-only resolv.conf: no clear message: $out"
[ -z "$(daemon_pid)" ] || fail "a read-only resolv.conf: a daemon was started"
ok "a read-only resolv.conf: exit $rc before starting anything ($(grep -o 'is not writable[^;]*' <<<"$out"))"

# A config the daemon rejects: no workload, a non-zero exit.
printf '{"allow": ["www.allowed.test"], "no_such_key": 1}\n' >"$DF_TMP/bad.json"
rc=0
out="$(ip netns exec "$DF_WL" env DNSFENCE_BIN="$DNSFENCE_BIN" DNSFENCE_CONFIG="$DF_TMP/bad.json" \
	DNSFENCE_STATE_DIR="$DF_TMP/state" timeout 60 "$ENTRY" sh -c 'echo workload-ran' 2>&1)" || rc=$?
[ "$rc" -ne 0 ] || fail "a bad config: the entrypoint exited 0"
! grep -q workload-ran <<<"$out" || fail "a bad config: the workload ran unfenced"
grep -q "NOT started" <<<"$out" || fail "a bad config: no clear message: $out"
ok "a bad config: exit $rc, workload not started"
