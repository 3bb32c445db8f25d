#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "subjects": a subject's redirected DNS flow and another process's flow
# to the same resolver never share a conntrack entry, whichever came
# first on a source port.
#
# The subjects' DNS is DNATed to our listener, and conntrack keeps that
# entry (30 s for one UDP question and answer). Ports are handed out at
# random and a closed socket's port is free at once, so a busy subject
# leaves many such entries behind. Without the fix:
#   - uid 4343 (not a subject) whose new socket gets a port a subject just
#     used sends into the subject's entry: its question goes to dnsfence,
#     which refuses a name its own resolver would answer;
#   - uid 4242 (the subject) whose new socket gets a port uid 4343 just
#     used sends into 4343's entry, straight at the upstream, and the
#     fence drops it (it is not the daemon's): its lookup fails.
# The test picks the ports itself so the collision happens every time.
# Positive controls: before the reuse, each uid gets its own answer on a
# port of its own (4343 from unbound, 4242 from the policy).
source "$(dirname "$0")/lib.sh"
df_setup
printf 'nameserver 198.18.0.1\noptions timeout:2 attempts:1\n' >"/etc/netns/$DF_WL/resolv.conf"
FENCED=4242
OTHER=4343

# ask_from UID PORT NAME: as UID, one A question for NAME from source port
# PORT to 198.18.0.1:53. Prints "RCODE ANCOUNT" of the answer, "EPERM"
# when the kernel refused the datagram, "TIMEOUT" when none came.
ask_from() {
	df_wl_as "$1" "$DF_PY" - "$2" "$3" <<'PY'
import random, socket, struct, sys
port, name = int(sys.argv[1]), sys.argv[2]
qid = random.randrange(1, 65536)
q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
for label in name.split("."):
    q += bytes([len(label)]) + label.encode()
q += b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", port))
s.settimeout(3)
try:
    s.sendto(q, ("198.18.0.1", 53))
    while True:
        d, a = s.recvfrom(4096)
        if len(d) >= 12 and struct.unpack(">H", d[:2])[0] == qid:
            break
except PermissionError:
    print("EPERM")
    sys.exit(0)
except socket.timeout:
    print("TIMEOUT")
    sys.exit(0)
print("%s %d" % ({0: "NOERROR", 3: "NXDOMAIN", 5: "REFUSED"}.get(d[3] & 15, str(d[3] & 15)),
                 struct.unpack(">H", d[6:8])[0]))
PY
}

df_start_dnsfence allow='["www.allowed.test"]' subjects='{"users": ["4242"]}' guard_interval=5

# Positive controls, each uid on a port nobody used.
got="$(ask_from "$OTHER" 45100 "ctl-$$.evil.test")"
[ "$got" = "NOERROR 1" ] || fail "control: uid $OTHER's own question for ctl-$$.evil.test got '$got', not unbound's answer"
df_poll 20 df_unbound_saw "ctl-$$.evil.test" || fail "control: uid $OTHER's question did not reach unbound"
got="$(ask_from "$FENCED" 45101 www.allowed.test)"
[ "$got" = "NOERROR 1" ] || fail "control: the subject's question for www.allowed.test got '$got', not the policy's answer"
got="$(ask_from "$FENCED" 45102 "ctl-$$.evil.test")"
[ "$got" = "NXDOMAIN 0" ] || fail "control: the subject's question for the denied ctl-$$.evil.test got '$got'"
ok "control: on ports of their own, uid $OTHER gets unbound's answers and the subject the policy's"

# The subject's entry first, then uid 4343 on the same port.
got="$(ask_from "$FENCED" 45110 www.allowed.test)"
[ "$got" = "NOERROR 1" ] || fail "the subject's question from port 45110 got '$got'"
wl conntrack -L -p udp --sport 45110 2>/dev/null | grep "dport=53" >/dev/null ||
	fail "no conntrack entry of the subject's redirected question on port 45110"
after="after-subject-$$.evil.test"
got="$(ask_from "$OTHER" 45110 "$after")"
[ "$got" = "NOERROR 1" ] ||
	fail "uid $OTHER, on the port the subject's redirected question just used, got '$got' for $after: its question went into the subject's entry, to dnsfence"
df_poll 20 df_unbound_saw "$after" || fail "uid $OTHER's question for $after never reached unbound"
ok "a process on the port a subject's redirected question just used gets its own resolver"

# uid 4343's entry first, then the subject on the same port.
got="$(ask_from "$OTHER" 45120 "before-$$.evil.test")"
[ "$got" = "NOERROR 1" ] || fail "uid $OTHER's question from port 45120 got '$got'"
got="$(ask_from "$FENCED" 45120 www.allowed.test)"
[ "$got" = "NOERROR 1" ] ||
	fail "the subject, on the port uid $OTHER's question just used, got '$got' for www.allowed.test: its question went into uid $OTHER's entry, at the upstream"
denied="after-other-$$.evil.test"
got="$(ask_from "$OTHER" 45121 "before2-$$.evil.test")"
[ "$got" = "NOERROR 1" ] || fail "uid $OTHER's question from port 45121 got '$got'"
got="$(ask_from "$FENCED" 45121 "$denied")"
[ "$got" = "NXDOMAIN 0" ] || fail "the subject, on the port uid $OTHER just used, got '$got' for the denied $denied"
sleep 0.3
! df_unbound_saw "$denied" || fail "the subject's question for the denied $denied reached unbound through uid $OTHER's entry"
ok "the subject on the port another process's question just used gets the policy's answer, and nothing of it reaches the upstream"

# The zone's jump is part of the fence: check names it gone, the guard
# (every 5 s) puts it back, and the collision is closed again.
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check after setup found drift: $DF_CMD_OUT $DF_CMD_ERR"
wl iptables -w -t raw -D OUTPUT -m owner --uid-owner "$FENCED" -j DNSFENCE-ZONE ||
	fail "no raw OUTPUT jump to DNSFENCE-ZONE for uid $FENCED to delete"
df_dnsfence check
[ "$DF_CMD_RC" -ne 0 ] && grep -q "DNSFENCE-ZONE" <<<"$DF_CMD_OUT$DF_CMD_ERR" ||
	fail "check did not report the deleted DNSFENCE-ZONE jump (exit $DF_CMD_RC): $DF_CMD_OUT $DF_CMD_ERR"
zone_back() { grep -q -- "-A OUTPUT -m owner --uid-owner $FENCED -j DNSFENCE-ZONE" <<<"$(wl iptables-save -t raw)"; }
df_poll 120 zone_back || fail "the guard did not put the DNSFENCE-ZONE jump back within 12 s"
got="$(ask_from "$FENCED" 45130 www.allowed.test)"
[ "$got" = "NOERROR 1" ] || fail "the subject's question from port 45130 got '$got'"
again="again-$$.evil.test"
got="$(ask_from "$OTHER" 45130 "$again")"
[ "$got" = "NOERROR 1" ] || fail "after the guard's repair, uid $OTHER on the subject's port got '$got' for $again"
ok "check reports the zone's jump gone, and the guard puts it back"
expect_dnsfence_running
