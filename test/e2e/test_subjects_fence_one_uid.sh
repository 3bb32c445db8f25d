#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "subjects": the fence applies to one program's uid (then to one cgroup),
# and every other process of the namespace keeps its own egress and its
# own resolver.
#
# resolv.conf names the original resolver (unbound, 198.18.0.1), as in a
# container whose service must keep working. uid 4242 is fenced, uid 4343
# is not. In the same namespace, at the same time:
#   fenced:   the allowed name resolves (its DNS to 198.18.0.1:53 is
#             redirected to dnsfence) and connects; a denied name fails and
#             never reaches unbound; an address nobody answered, and DNS
#             straight to the upstream's other port (nsd, 5300), are
#             refused; the conntrack ride of the daemon's closed upstream
#             port (test_upstream_only_from_daemon_sockets.sh) gets nothing.
#   unfenced: the same denied name resolves through unbound, the same
#             address connects, nsd answers it directly (the positive
#             control: everything the fenced uid is refused is reachable).
# Then the same with a cgroup v2 path as the subject (a cgroup this test
# creates and removes): a process in it is fenced, one outside is not.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
# A UDP echo on an address nobody answered: what reaches it is logged
# (the echo makes the sender's conntrack entry ESTABLISHED).
ip netns exec "$DF_UP" "$DF_PY" -u -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.1.11", 9999))
while True:
    d, a = s.recvfrom(2048)
    print(d.decode(errors="replace"), flush=True)
    s.sendto(d, a)
' >>"$DF_TMP/sink.log" 2>&1 &
DF_PIDS+=("$!")
printf 'nameserver 198.18.0.1\noptions timeout:2 attempts:1\n' >"/etc/netns/$DF_WL/resolv.conf"
FENCED=4242
OTHER=4343

# resolves_as UID NAME: the glibc resolver of UID finds NAME.
resolves_as() {
	df_wl_as "$1" getent ahosts "$2" >/dev/null 2>&1
}

# nsd_answers_as UID NAME: a query for NAME straight to nsd (198.18.0.1:5300).
nsd_answers_as() {
	df_wl_as "$1" dig +time=2 +tries=1 -p 5300 @198.18.0.1 "$2" A 2>/dev/null |
		grep "status: NOERROR" >/dev/null
}

check_subject() { # RUN-FENCED... (a command prefix that runs as the subject)
	local tag=$1
	shift
	local denied="denied-$tag-$$.evil.test"
	"$@" getent ahosts www.allowed.test >/dev/null 2>&1 ||
		fail "$tag: the fenced subject cannot resolve the allowed name"
	"$@" timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.10/80' 2>/dev/null ||
		fail "$tag: the fenced subject cannot connect to www.allowed.test:80"
	ok "$tag: the fenced subject resolves and reaches the allowed name"
	! "$@" getent ahosts "$denied" >/dev/null 2>&1 ||
		fail "$tag: the fenced subject resolved the denied name $denied"
	sleep 0.3
	! df_unbound_saw "$denied" ||
		fail "$tag: the fenced subject's query for $denied reached unbound"
	ok "$tag: the denied name fails for the subject and never reaches the upstream"
	! "$@" timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.11/80' 2>/dev/null ||
		fail "$tag: the fenced subject reached 198.18.1.11:80, which nobody answered"
	! "$@" dig +time=2 +tries=1 -p 5300 @198.18.0.1 www.allowed.test A 2>/dev/null |
		grep "status: NOERROR" >/dev/null ||
		fail "$tag: the fenced subject queried nsd on the upstream directly"
	ok "$tag: an unresolved address and DNS straight to the upstream are refused"
}

df_start_dnsfence allow='["www.allowed.test"]' subjects='{"users": ["4242"]}'
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check after setup found drift: $DF_CMD_OUT $DF_CMD_ERR"

check_subject uid df_wl_as "$FENCED"

# The positive control, in the same namespace at the same time.
other="other-$$.evil.test"
resolves_as "$OTHER" "$other" || fail "control: uid $OTHER cannot resolve $other through unbound"
df_poll 20 df_unbound_saw "$other" || fail "control: uid $OTHER's query did not go to unbound"
df_connect_as "$OTHER" 198.18.1.11 80 || fail "control: uid $OTHER cannot reach 198.18.1.11:80"
nsd_answers_as "$OTHER" www.allowed.test || fail "control: uid $OTHER cannot query nsd directly"
ok "control: uid $OTHER resolves through its own resolver and reaches all of it"

# Riding another process's conntrack entry: uid 4343 (not fenced) sends
# UDP to an address nobody answered from port 45000 and closes the socket;
# the fenced uid binds the same port and sends to the same place. Its
# packets belong to the entry uid 4343 made (ESTABLISHED), so only the
# connmark rule keeps them in. The control datagram proves the path works.
send_from() { # UID TEXT
	df_wl_as "$1" "$DF_PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 45000))
try:
    s.sendto(sys.argv[1].encode(), ("198.18.1.11", 9999))
except OSError:
    pass
' "$2"
}
send_from "$OTHER" "control-$$"
df_poll 20 grep -q "control-$$" "$DF_TMP/sink.log" || fail "control: uid $OTHER's datagram never reached the sink"
send_from "$FENCED" "ride-$$"
sleep 0.5
! grep -q "ride-$$" "$DF_TMP/sink.log" ||
	fail "the fenced uid rode uid $OTHER's conntrack entry to 198.18.1.11:9999"
ok "the fenced uid cannot ride another process's conntrack entry (control datagram arrived)"

# The conntrack ride as the fenced uid: the daemon's closed upstream
# port, rebound, carries nothing to the upstream (its port-53 packets are
# the policy's, the mark rule refuses the rest).
range="$(wl sysctl -n net.ipv4.ip_local_port_range)"
wl sysctl -qw net.ipv4.ip_local_port_range="40000 40007"
df_dig www.allowed.test A
ride="ride-$$.evil.test"
df_wl_as "$FENCED" "$DF_PY" - "$ride" <<'PY'
import socket, struct, sys, random
q = struct.pack(">HHHHHH", random.randrange(65536), 0x0100, 1, 0, 0, 0)
for label in sys.argv[1].split("."):
    q += bytes([len(label)]) + label.encode()
q += b"\0" + struct.pack(">HH", 1, 1)
for port in range(40000, 40008):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("0.0.0.0", port))
        s.sendto(q, ("198.18.0.1", 53))
    except OSError:
        pass
PY
sleep 0.5
! df_unbound_saw "$ride" || fail "conntrack ride: $ride reached unbound from the fenced uid"
ok "the conntrack ride from the daemon's old ports carries nothing upstream for the fenced uid"
wl sysctl -qw net.ipv4.ip_local_port_range="$range"
df_stop_dnsfence
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "teardown exited $DF_CMD_RC: $DF_CMD_ERR"
for t in filter nat raw; do
	left="$(wl iptables-save -t "$t")$(wl ip6tables-save -t "$t")"
	! grep -q DNSFENCE <<<"$left" || fail "teardown left rules of ours in the $t table: $(grep DNSFENCE <<<"$left")"
done
resolves_as "$FENCED" "after-$$.evil.test" || fail "after teardown uid $FENCED still cannot resolve"
ok "teardown removes the subjects' jumps, the nat redirect and its conntrack zone"

# --- a cgroup v2 path as the subject
cgroot="$(findmnt -n -t cgroup2 -o TARGET | head -1)"
[ -n "$cgroot" ] || fail "no cgroup2 mount on this machine"
cg="/df$$-agent"
mkdir "$cgroot$cg"
cleanup_cg() { rmdir "$cgroot$cg" 2>/dev/null || true; }
trap 'rc=$?; cleanup_cg; (exit $rc); df_cleanup' EXIT
# in_cg CMD...: run CMD in the workload namespace inside the cgroup, as
# uid 4343 (which is not a subject by uid).
in_cg() {
	bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$cgroot$cg" \
		ip netns exec "$DF_WL" setpriv --reuid "$OTHER" --regid "$OTHER" --clear-groups \
		--inh-caps=-all --bounding-set=-all "$@"
}
df_start_dnsfence allow='["www.allowed.test"]' subjects="{\"cgroups\": [\"$cg\"]}"
check_subject cgroup in_cg
other="cgother-$$.evil.test"
resolves_as "$OTHER" "$other" || fail "control: uid $OTHER outside the cgroup cannot resolve $other"
df_connect_as "$OTHER" 198.18.1.11 80 || fail "control: uid $OTHER outside the cgroup cannot reach 198.18.1.11:80"
ok "control: the same uid outside the cgroup is not fenced"
expect_dnsfence_running

# The kernel binds a cgroup rule to the cgroup that had the path when the
# rule went in: a unit restarted gets a new cgroup of the same path. The
# daemon restarted (its setup), as the systemd drop-in does before the
# unit starts, inserts the jumps afresh.
df_stop_dnsfence
rmdir "$cgroot$cg"
mkdir "$cgroot$cg"
df_start_dnsfence allow='["www.allowed.test"]' subjects="{\"cgroups\": [\"$cg\"]}"
! in_cg timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.11/80' 2>/dev/null ||
	fail "a cgroup made again, then the daemon restarted, is not fenced"
df_connect_as "$OTHER" 198.18.1.11 80 || fail "control: uid $OTHER outside the new cgroup cannot reach 198.18.1.11:80"
ok "a restarted daemon fences a cgroup that was removed and made again"
