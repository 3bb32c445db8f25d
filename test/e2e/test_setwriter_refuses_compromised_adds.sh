#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The privileged parent's set writer against a compromised DNS process:
# a harness holds the other end of the SOCK_SEQPACKET channel and sends
# frames by hand to test/bench/bench_setwriter (the writer alone, with a
# real kernel set in the workload namespace). Positive controls: an add
# of a public address (and of an internal one that allow_cidrs covers) is
# acked with status 0 only once it is in the kernel's set. Then, each on
# a fresh writer: an internal address (10.0.0.1, ::1), an upstream's
# address (198.18.0.1, and its IPv4-mapped form), an oversized frame and
# a frame of the parent's own type are refused: the writer logs why and
# exits 3, nothing enters the set, and the adds sent in the same burst
# before the bad frame do not matter. A reload's frames (IPC_SHORTEN,
# IPC_DEL) only shorten and remove: a del with a timeout or a shorten to
# none is malformed.
source "$(dirname "$0")/lib.sh"

SW="$(dirname "$DNSFENCE_BIN")/test/bench_setwriter"
[ -x "$SW" ] || fail "no bench_setwriter at $SW"
df_setup_net
df_config allow_cidrs='["10.1.0.0/16"]' upstreams='["198.18.0.1", "[2001:db8::1]"]'
df_create_sets

# harness CASE: run the writer on one end of a socketpair and play CASE
# on the other; prints what it saw, exits non-zero on a surprise.
harness() {
	wl "$DF_PY" - "$SW" "$DF_DNSFENCE_CONF" "$1" <<'PYEOF'
import ipaddress, socket, struct, subprocess, sys, time
sw, conf, case = sys.argv[1:4]

def frame(t, count, rid, body=b""):
    return struct.pack("=HHI", t, count, rid) + body

def add(rid, *addrs, ttl=60, t=1):
    body = b""
    for a in addrs:
        ip = ipaddress.ip_address(a)
        fam = 4 if ip.version == 4 else 6
        body += struct.pack("=B3xI", fam, ttl) + ip.packed.ljust(16, b"\0")
    return frame(t, len(addrs), rid, body)

def timeout(addr):
    out = subprocess.run(["ipset", "list", "dnsfence4"], capture_output=True,
                         text=True, check=True).stdout.split("Members:")[1]
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == addr:
            return int(f[2])
    return None

mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p = subprocess.Popen([sw, conf, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                     stderr=subprocess.PIPE, text=True)
theirs.close()
mine.settimeout(5)

def done(rid):
    t, count, got, status = struct.unpack("=HHIi", mine.recv(64))
    assert (t, count, got) == (2, 0, rid), (t, count, got)
    return status

if case == "good":
    mine.send(add(1, "198.18.1.10", "2001:db8:1::30"))
    print("status", done(1))
    mine.send(add(2, "10.1.2.3", ttl=5))
    print("status", done(2))
elif case == "reload":
    # a reload's eviction and shortening: IPC_SHORTEN (4), IPC_DEL (3).
    # The writer judges a shorten against the acks of the last second
    # (SETS_FRESH_SECONDS; an older entry reads as unknown, and a shorten
    # of it is an add): the add and both shortens go out at the start of
    # one monotonic second, as a reload's follow its own adds.
    time.sleep(1.02 - time.monotonic() % 1)
    mine.send(add(1, "198.18.1.20", "198.18.1.22", ttl=600))
    print("status", done(1), "added", timeout("198.18.1.20"))
    mine.send(add(2, "198.18.1.20", ttl=30, t=4))
    print("status", done(2), "shortened", timeout("198.18.1.20"))
    mine.send(add(3, "198.18.1.20", ttl=500, t=4))
    print("status", done(3), "lengthen", timeout("198.18.1.20"))
    mine.send(add(4, "10.0.0.9", ttl=30, t=4))
    print("status", done(4), "internal", timeout("10.0.0.9"))
    mine.send(add(5, "198.18.1.21", ttl=4000000, t=4))
    print("status", done(5), "unknown", timeout("198.18.1.21"))
    mine.send(add(6, "198.18.1.20", "198.18.1.22", ttl=0, t=3))
    print("status", done(6), "deleted", timeout("198.18.1.20"), timeout("198.18.1.22"))
else:
    bad = {"internal4": add(3, "10.0.0.1"),
           "internal6": add(3, "::1"),
           "upstream": add(3, "198.18.0.1"),
           "upstream_mapped": add(3, "::ffff:198.18.0.1"),
           "upstream6": add(3, "2001:db8::1"),
           "oversized": add(3, *(["198.18.1.11"] * 129)),
           "parent_type": frame(2, 0, 3, struct.pack("=i", 0)),
           "del_timeout": add(3, "198.18.1.12", ttl=5, t=3),
           "shorten_zero": add(3, "198.18.1.12", ttl=0, t=4)}[case]
    mine.send(add(2, "198.18.1.12"))
    print("status", done(2))
    mine.send(bad)
try:
    p.wait(timeout=5) if case not in ("good", "reload") else None
finally:
    mine.close()
print("exit", p.wait(timeout=5))
sys.stdout.write(p.stderr.read())
PYEOF
}

out="$(harness good)" || fail "harness good: $out"
grep -qx "status 0" <<<"$(sed -n 1p <<<"$out")" || fail "good add not acked 0: $out"
[ "$(grep -c '^status 0$' <<<"$out")" -eq 2 ] || fail "allow_cidrs add not acked 0: $out"
for a in 198.18.1.10 10.1.2.3; do
	df_set_members dnsfence4 | grep -x "$a" >/dev/null || fail "$a acked but not in dnsfence4"
done
df_set_members dnsfence6 | grep -x 2001:db8:1::30 >/dev/null || fail "2001:db8:1::30 acked but not in dnsfence6"
grep -q "the DNS process closed its channel" <<<"$out" || fail "no line for the closed channel: $out"
ok "control: public and allow_cidrs adds acked after the kernel has them; a closed channel stops the writer"

# A reload's frames: a shorten lowers the kernel's timeout and never
# raises it, on an entry the writer does not know it is an add (an
# internal address stays out, a public one gets at most ttl.max), a del
# takes the entries out; none of it stops the writer.
out="$(harness reload)" || fail "harness reload: $out"
want() { grep -qE "$1" <<<"$out" || fail "reload: no line matching '$1': $out"; }
want '^status 0 added (59[0-9]|600)$'
want '^status 0 shortened (2[0-9]|30)$'
want '^status 0 lengthen (2[0-9]|30)$'
want '^status 0 internal None$'
want '^status 0 unknown (86[0-9]{3}|86400)$'
want '^status 0 deleted None None$'
grep -q "stopping (exit 3)" <<<"$out" && ! grep -q "closed its channel" <<<"$out" && fail "reload: the writer stopped: $out"
ok "reload frames: shorten 600 -> 30 s, not back to 500; unknown internal kept out, unknown public clamped to ttl.max; del removed both"

check_refused() { # CASE ADDR SET REASON
	local out
	out="$(harness "$1")" || fail "harness $1: $out"
	grep -qx "exit 3" <<<"$out" || fail "$1: the writer did not exit 3: $out"
	grep -qF -- "$4" <<<"$out" || fail "$1: no line saying '$4': $out"
	grep -q "stopping (exit 3); the fence stays in place" <<<"$out" || fail "$1: no stop line: $out"
	if [ -n "$2" ] && df_set_members "$3" | grep -x -- "$2" >/dev/null; then
		fail "$1: $2 entered $3"
	fi
	ok "$1 refused: $(grep -o 'refusing.*' <<<"$out" | head -n 1)"
}
check_refused internal4 10.0.0.1 dnsfence4 "asks to add internal address 10.0.0.1"
check_refused internal6 ::1 dnsfence6 "asks to add internal address ::1"
check_refused upstream 198.18.0.1 dnsfence4 "asks to add an upstream's address 198.18.0.1"
check_refused upstream_mapped ::ffff:198.18.0.1 dnsfence6 "asks to add an upstream's address ::ffff:198.18.0.1"
check_refused upstream6 2001:db8::1 dnsfence6 "asks to add an upstream's address 2001:db8::1"
check_refused oversized 198.18.1.11 dnsfence4 "malformed frame (3104 bytes): oversized frame"
check_refused parent_type "" dnsfence4 "malformed frame: type 2 is not a request"
check_refused del_timeout "" dnsfence4 "malformed frame (32 bytes): a del with a timeout"
check_refused shorten_zero "" dnsfence4 "malformed frame (32 bytes): a shorten to no timeout"
