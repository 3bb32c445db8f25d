#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "serve" as contrib/systemd/dnsfence.service runs it: setup as root, then
# serve started directly as the unprivileged user with the unit's ambient
# capabilities and bounding set (CAP_NET_ADMIN, CAP_NET_BIND_SERVICE,
# CAP_NET_RAW) and no_new_privs, with $NOTIFY_SOCKET set (an abstract
# socket, as systemd's may be). READY=1 arrives, and the daemon answers at
# that moment; CapEff is cap_net_admin only; on SIGTERM STOPPING=1 arrives
# and the fence stays in place ("check" exits 0 after the stop). Started
# without CAP_NET_BIND_SERVICE, serve exits 3 naming what is missing and
# binds nothing.
source "$(dirname "$0")/lib.sh"
df_setup
df_config user='"nobody"' allow='["www.allowed.test"]'
df_setup_fence
# The unit's user reads /etc/dnsfence/dnsfence.json: here, the test's copy.
chmod 711 "$DF_TMP"
chmod 644 "$DF_DNSFENCE_CONF"
nobody_uid="$(id -u nobody)"
nobody_gid="$(id -g nobody)"
DF_DNSFENCE_LOG="$DF_TMP/dnsfence.log"
sock="@dnsfence-e2e-notify-$$"

# The "systemd" side: an abstract datagram socket in the workload
# namespace (abstract names are per network namespace); each datagram is
# written to notify.log, with whether 127.0.0.1:53 answered when it came.
ip netns exec "$DF_WL" "$DF_PY" - "$sock" "$DF_TMP/notify.log" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + sys.argv[1][1:])
q = bytes.fromhex("abcd01000001000000000000") + b"\x05ready\x08dnsfence\x07invalid\x00\x00\x01\x00\x01"
while True:
    msg = s.recv(4096).decode()
    answered = "no"
    if "READY=1" in msg:
        c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        c.settimeout(2)
        try:
            c.sendto(q, ("127.0.0.1", 53))
            answered = "yes" if c.recv(4096)[:2] == q[:2] else "no"
        except OSError:
            pass
    with open(sys.argv[2], "a") as f:
        f.write("%s answered=%s\n" % (msg.replace("\n", "|"), answered))
PYEOF
DF_PIDS+=("$!")
sleep 0.3

# as_unit CAPS CMD...: uid nobody with CAPS ambient (so permitted and
# effective after exec), the same bounding set, no_new_privs: what systemd
# gives User= + AmbientCapabilities= + CapabilityBoundingSet= +
# NoNewPrivileges=yes.
as_unit() {
	local caps=$1
	shift
	ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		NOTIFY_SOCKET="$sock" setpriv --reuid "$nobody_uid" --regid "$nobody_gid" --clear-groups \
		--inh-caps="-all,$caps" --ambient-caps="-all,$caps" --bounding-set="-all,$caps" \
		--no-new-privs "$@"
}

# Without CAP_NET_BIND_SERVICE: exit 3, the message names it.
rc=0
as_unit +net_admin,+net_raw "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" serve >"$DF_TMP/short.log" 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "serve without cap_net_bind_service: expected exit 3, saw $rc: $(cat "$DF_TMP/short.log")"
grep -q "missing cap_net_bind_service" "$DF_TMP/short.log" ||
	fail "serve without cap_net_bind_service: the message does not name it: $(cat "$DF_TMP/short.log")"
! wl ss -Hlun 'sport = :53' | grep . >/dev/null || fail "serve without cap_net_bind_service left a listener"
ok "reduced start: exit 3, $(grep -o 'missing cap_net_bind_service[^(]*' "$DF_TMP/short.log" | head -1)"

# The unit's set (not through as_unit: $! must be the daemon itself).
caps=+net_admin,+net_bind_service,+net_raw
ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
	NOTIFY_SOCKET="$sock" setpriv --reuid "$nobody_uid" --regid "$nobody_gid" --clear-groups \
	--inh-caps="-all,$caps" --ambient-caps="-all,$caps" --bounding-set="-all,$caps" \
	--no-new-privs "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" serve >>"$DF_DNSFENCE_LOG" 2>&1 &
DF_DNSFENCE_PID=$!
DF_PIDS+=("$DF_DNSFENCE_PID")
df_poll 50 grep -q "READY=1" "$DF_TMP/notify.log" || fail "no READY=1 on \$NOTIFY_SOCKET within 5 s"
grep -q "READY=1.*answered=yes" "$DF_TMP/notify.log" ||
	fail "READY=1 came before the daemon answered: $(cat "$DF_TMP/notify.log")"
grep -q "STATUS=serving" "$DF_TMP/notify.log" || fail "no STATUS= with READY=1"
ok "READY=1 once the daemon answers: $(grep READY "$DF_TMP/notify.log")"
eff="$(df_proc_field "$DF_DNSFENCE_PID" CapEff)"
[ "$eff" = 0000000000001000 ] || fail "CapEff $eff, expected cap_net_admin only"
[ "$(awk '{ print $1 }' <<<"$(df_proc_field "$DF_DNSFENCE_PID" Uid)")" = "$nobody_uid" ] || fail "not running as nobody"
df_dig www.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.1.10
ok "unprivileged serve: uid nobody, CapEff $eff, answers and fills the set"

kill -TERM "$DF_DNSFENCE_PID"
df_wait_gone "$DF_DNSFENCE_PID" 50 || fail "serve did not stop on SIGTERM"
df_poll 20 grep -q "STOPPING=1" "$DF_TMP/notify.log" || fail "no STOPPING=1 on shutdown"
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "after the stop, the fence is not intact (check exit $DF_CMD_RC): $DF_CMD_OUT"
ok "SIGTERM: STOPPING=1, and the fence stays in place (check exits 0)"
