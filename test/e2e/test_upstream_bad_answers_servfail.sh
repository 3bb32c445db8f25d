#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad upstream answers add nothing and give the client SERVFAIL (invariants
# 2 and 8). The upstream is a small fake DNS server (python3, UDP and TCP
# on 198.18.0.1:53, in place of unbound) that answers each allowed name
# with one kind of bad answer; every address in them is in 198.18.6.0/24,
# admissible if it were wrongly accepted. For each: the client gets
# SERVFAIL within upstream_timeout (2 s; c-ares drops answers it cannot
# match and the query times out), the address is not in the reply and not
# in dnsfence4, and the daemon keeps running. Kinds:
#   garbage   the query's ID, then random bytes
#   noise     random bytes (ID included)
#   other     a well-formed answer, same ID, for another question
#   trunc     QD=1 AN=1, the answer record cut after its TTL
#   rdata     QD=1 AN=1, RDLENGTH 4 but only 2 bytes of address
#   ancount   AN=3 but only one (complete) A record
#   wrongid   a well-formed answer with another ID
#   tc        TC=1 over UDP; over TCP a length prefix of 200 then 20 bytes
# Then answers with an address the snooper rightly skips (another owner
# name, the additional section, class CH): it must not reach the client
# either (stripped or SERVFAIL). "good" (198.18.1.77) is the control.
source "$(dirname "$0")/lib.sh"
df_setup_net

fake_log="$DF_TMP/fake.log"
ip netns exec "$DF_UP" "$DF_PY" - "$fake_log" >"$DF_TMP/fake.stderr" 2>&1 <<'PY' &
import os, random, socket, struct, sys, threading
log = open(sys.argv[1], "a", buffering=1)
rnd = random.Random()

def parse_q(m):
    qid, flags, qd = struct.unpack(">HHH", m[:6])
    o, labels = 12, []
    while m[o]:
        labels.append(m[o + 1:o + 1 + m[o]].decode())
        o += 1 + m[o]
    qtype, qclass = struct.unpack(">HH", m[o + 1:o + 5])
    return qid, ".".join(labels).lower(), qtype, m[12:o + 5]

def wire(name):
    return b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"

def rr_a(owner, addr, ttl=300):
    return owner + struct.pack(">HHIH", 1, 1, ttl, 4) + socket.inet_aton(addr)

def hdr(qid, an, flags=0x8180, qd=1):
    return struct.pack(">HHHHHH", qid, flags, qd, an, 0, 0)

def answer(m, tcp):
    qid, name, qtype, question = parse_q(m)
    kind = name.split(".")[0].split("-")[0]
    log.write("%s %s %d %s\n" % ("tcp" if tcp else "udp", name, qtype, kind))
    if qtype != 1:
        return hdr(qid, 0) + question
    ptr = b"\xc0\x0c"
    if kind == "good":
        return hdr(qid, 1) + question + rr_a(ptr, "198.18.1.77")
    if kind == "garbage":
        return struct.pack(">H", qid) + os.urandom(rnd.randint(1, 300))
    if kind == "noise":
        return os.urandom(rnd.randint(1, 300))
    if kind == "other":
        q2 = wire("decoy.allowed.test") + struct.pack(">HH", 1, 1)
        return hdr(qid, 1) + q2 + rr_a(b"\xc0\x0c", "198.18.6.2")
    if kind == "trunc":
        return (hdr(qid, 1) + question + rr_a(ptr, "198.18.6.3"))[:-6]
    if kind == "rdata":
        return (hdr(qid, 1) + question + rr_a(ptr, "198.18.6.4"))[:-2]
    if kind == "ancount":
        return hdr(qid, 3) + question + rr_a(ptr, "198.18.6.8")
    if kind == "wrongid":
        return hdr(qid ^ 0x5a5a, 1) + question + rr_a(ptr, "198.18.6.5")
    if kind == "owner":
        return hdr(qid, 1) + question + rr_a(wire("elsewhere.cdn.test"), "198.18.6.6")
    if kind == "additional":  # NOERROR, no answer, an A record as "glue"
        return struct.pack(">HHHHHH", qid, 0x8180, 1, 0, 0, 1) + question + \
            rr_a(wire("ns.elsewhere.test"), "198.18.6.9")
    if kind == "chaos":  # the question's owner, but class CH
        return hdr(qid, 1) + question + ptr + struct.pack(">HHIH", 1, 3, 300, 4) + \
            socket.inet_aton("198.18.6.10")
    if kind == "tc":
        if not tcp:
            return hdr(qid, 0, flags=0x8380) + question
        return None  # see serve_tcp
    return hdr(qid, 0, flags=0x8183) + question  # NXDOMAIN

def serve_udp(s):
    while True:
        m, peer = s.recvfrom(4096)
        try:
            r = answer(m, False)
        except Exception as e:
            log.write("bad query: %r\n" % e)
            continue
        if r is not None:
            s.sendto(r, peer)

def serve_tcp(ls):
    while True:
        c, _ = ls.accept()
        c.settimeout(5)
        try:
            ln = struct.unpack(">H", c.recv(2))[0]
            m = b""
            while len(m) < ln:
                m += c.recv(ln - len(m))
            r = answer(m, True)
            if r is None:  # tc: a cut TCP answer
                qid = struct.unpack(">H", m[:2])[0]
                c.sendall(struct.pack(">H", 200) + hdr(qid, 1) + b"\xc0\x0c\x00\x01\x00\x01\x00\x00")
            else:
                c.sendall(struct.pack(">H", len(r)) + r)
        except Exception as e:
            log.write("tcp: %r\n" % e)
        finally:
            c.close()

u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("198.18.0.1", 53))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("198.18.0.1", 53))
t.listen(16)
threading.Thread(target=serve_tcp, args=(t,), daemon=True).start()
log.write("ready\n")
serve_udp(u)
PY
DF_PIDS+=("$!")
df_poll 50 grep -q ready "$fake_log" || fail "the fake upstream did not start: $(cat "$DF_TMP/fake.stderr")"

df_start_dnsfence allow='["*.allowed.test"]' upstream_timeout=2

df_dig good.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.77
expect_in_set dnsfence4 198.18.1.77
ok "control: good.allowed.test -> 198.18.1.77 (a correct answer from the fake), in dnsfence4"

# bad KIND ADDR: KIND-<pid>.allowed.test -> SERVFAIL before the client
# gives up (dig waits 6 s; upstream_timeout is 2 s, the rest is room for a
# loaded machine); ADDR is neither in the reply nor in dnsfence4; the fake
# did get the query.
bad() {
	local kind=$1 addr=$2 name="$1-$$.allowed.test" t0 ms
	t0="$(df_now_ms)"
	df_dig "$name" A +time=6 +tries=1
	ms=$(($(df_now_ms) - t0))
	expect_rcode SERVFAIL
	expect_answer_empty
	expect_out_lacks "$addr"
	[ "$ms" -le 5500 ] || fail "$kind: expected SERVFAIL within 5500 ms (upstream_timeout 2 s, dig waits 6 s), took $ms ms"
	grep -q " $name 1 " "$fake_log" || fail "$kind: the fake upstream never saw $name"
	expect_not_in_set dnsfence4 "$addr"
	expect_dnsfence_running
	ok "$kind: $name -> SERVFAIL in $ms ms, $addr not in the reply nor in dnsfence4"
}
bad garbage 198.18.6.1
bad noise 198.18.6.1
bad other 198.18.6.2
bad trunc 198.18.6.3
bad rdata 198.18.6.4
bad ancount 198.18.6.8
bad wrongid 198.18.6.5
bad tc 198.18.6.7

# Over TCP from the client too, and a second round (nothing cached wrongly).
df_dig +tcp "trunc-$$.allowed.test" A +time=6 +tries=1
expect_rcode SERVFAIL
df_dig "other-$$.allowed.test" A +time=6 +tries=1
expect_rcode SERVFAIL

# members_check: the sets hold only the control's address.
members_check() {
	local members
	members="$(df_set_members dnsfence4 | tr '\n' ' ')"
	[ "$members" = "198.18.1.77 " ] || fail "expected only 198.18.1.77 in dnsfence4, saw: $members"
	[ -z "$(df_set_members dnsfence6)" ] ||
		fail "expected dnsfence6 empty, saw: $(df_set_members dnsfence6 | tr '\n' ' ')"
}
members_check
df_dig good.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.77
expect_dnsfence_running
kill -USR1 "$DF_DNSFENCE_PID"
df_wait_log 20 "bad_answer=" || fail "no stats line after SIGUSR1"
ok "sets hold only the control's 198.18.1.77; daemon running; $(grep -o 'bad_answer=[0-9]*\|upstream_fail=[0-9]*' "$DF_DNSFENCE_LOG" | tail -n 2 | tr '\n' ' ')"

# Addresses the snooper does not take (not on the question's CNAME chain,
# not in the answer section, not class IN) must not reach the client
# either: they are not in the set. Stripped (NOERROR without them) or
# refused (SERVFAIL), the daemon may choose; each kind is checked, then the
# test fails if any leaked.
#   owner       an A record whose owner is another name
#   additional  an A record in the additional section (NOERROR, no answer)
#   chaos       an A record for the question's name, class CH
# raw_reply NAME ADDR: ask 127.0.0.1 for NAME/A (UDP, EDNS) and print
# "rcode N ADDR-present|ADDR-absent", looking for ADDR's 4 bytes anywhere
# in the raw reply (dig may refuse to parse a reply, e.g. a class CH A
# record in an IN answer, and then shows only a hex dump).
raw_reply() {
	wl "$DF_PY" - "$1" "$2" <<'PY'
import random, socket, struct, sys
name, addr = sys.argv[1], socket.inet_aton(sys.argv[2])
qid = random.randrange(1, 65536)
q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1)
for l in name.split("."):
    q += bytes([len(l)]) + l.encode()
q += b"\0" + struct.pack(">HH", 1, 1) + b"\0" + struct.pack(">HHIH", 41, 1232, 0, 0)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(6)
s.sendto(q, ("127.0.0.1", 53))
while True:
    m = s.recv(65535)
    if m[:2] == q[:2]:
        break
print("rcode", m[3] & 15, "present" if addr in m[12:] else "absent")
PY
}
leaks=""
for spec in owner:198.18.6.6 additional:198.18.6.9 chaos:198.18.6.10; do
	kind=${spec%%:*} addr=${spec#*:}
	got="$(raw_reply "$kind-$$.allowed.test" "$addr")" || fail "$kind: no reply from 127.0.0.1"
	expect_not_in_set dnsfence4 "$addr"
	if [[ "$got" == *present ]]; then
		df_dig "$kind-$$.allowed.test" A
		echo "LEAK $kind: $addr reached the client ($got) but is not in dnsfence4; dig shows:" >&2
		{ df_answer; sed -n '/bad packet/,+3p' <<<"$DF_OUT"; sed -n '/ADDITIONAL SECTION/,/^$/p' <<<"$DF_OUT"; } >&2
		leaks="$leaks $kind"
	else
		ok "$kind: -> $got ($addr), not in dnsfence4"
	fi
done
members_check
expect_dnsfence_running
[ -z "$leaks" ] || fail "addresses not in the set reached the client (invariant 2) for:$leaks"
