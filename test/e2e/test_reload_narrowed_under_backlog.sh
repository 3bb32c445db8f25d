#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload that narrows what may enter the sets (allow_cidrs dropped)
# while set adds admitted under the old config still wait in the DNS
# process's queue. The parent judges every add with its own config; if
# it took the new config before those adds reached it, it would refuse
# them as a compromised DNS process's and stop the daemon (exit 3). So
# the DNS process sends the new rules only after the reload's deletes are
# acked, and they are queued behind every earlier add. (Since the parent
# reads a reloaded config beside its loop, it judges the adds already in
# the channel while it parses, so this test passes without that order
# too: it checks the outcome, not the order. Before, it failed without
# it: the parent's loop waited on its read and took the rules first.)
#
# How the backlog is made, without timing: the parent is stopped
# (SIGSTOP: its loop and its reload thread; it reads a reloaded config
# beside its loop, so holding that read would not hold the adds). 400
# names below *.priv.allowed.test, each answering an address in
# 10.0.0.0/8, asked again, then fill the channel to the parent and the
# DNS process's queue. The config becomes the file without allow_cidrs
# and a reload starts; once the DNS process has swapped (its log says it
# evicts the 400 addresses), the parent goes on (SIGCONT). The burst is
# answered from the cache (a fresh name would wait for an upstream socket
# from the stopped parent). Positive controls: the 400 answers come back
# NOERROR with their 10.x address (the backlog was real and the parent,
# still on the first file, accepted it), and after the reload none of
# them is in the set. (10.x is only data here: no interface or route has
# it.)
source "$(dirname "$0")/lib.sh"
N=400
df_zone_add allowed.test.zone < <(
	for i in $(seq 1 $N); do
		printf 'n%d.priv IN A 10.1.%d.%d\n' "$i" $((i / 200)) $((i % 200 + 1))
	done
)
df_setup
allow='["*.priv.allowed.test", "www.allowed.test"]'
control='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
df_start_dnsfence allow="$allow" allow_cidrs='["10.0.0.0/8"]' control="$control"
chmod 755 "$DF_TMP" # the daemon reads the config again after the privilege drop
conf=$DF_DNSFENCE_CONF
parent=$DF_DNSFENCE_PID

df_dig n0.priv.allowed.test A
df_dig n1.priv.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 10.1.0.2
ok "allow_cidrs 10.0.0.0/8: n1.priv.allowed.test's 10.1.0.2 is in dnsfence4"

# The 400 names once, so that the burst below is answered from the cache:
# a fresh name would need a new upstream socket, which the DNS process
# asks the parent for (stopped below). A hit more than a second after
# its add sends the add again (the DNS process's window).
wl "$DF_PY" - "$N" <<'PYEOF' || fail "the names did not resolve"
import socket, struct, sys
n = int(sys.argv[1])
for i in range(1, n + 1):
    q = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0)
    for label in ("n%d" % i, "priv", "allowed", "test"):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", 1, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(q, ("127.0.0.1", 53))
    m = s.recv(4096)
    if m[3] & 15 != 0 or b"\x00\x04\x0a\x01" not in m[12:]:
        sys.exit("n%d.priv.allowed.test: rcode %d, no 10.x address" % (i, m[3] & 15))
PYEOF
[ "$(df_set_members dnsfence4 | grep -c '^10\.1\.')" -ge "$N" ] || fail "the 400 addresses are not in dnsfence4"
ok "$N names below *.priv.allowed.test resolved, their 10.x addresses in dnsfence4"
sleep 1.5

# The file without allow_cidrs, for the reload.
df_config allow="$allow" control="$control"
cp "$conf" "$DF_TMP/narrow.json"
df_config allow="$allow" allow_cidrs='["10.0.0.0/8"]' control="$control"
chmod 644 "$DF_TMP/narrow.json"

# The parent stopped, the burst, the reload, then the parent goes on: one
# driver, so that it all happens well within the adds' 2 s deadline (and
# the parent goes on whatever happens to the driver).
wl "$DF_PY" - "$N" "$DNSFENCE_BIN" "$conf" "$DF_TMP" "$DF_DNSFENCE_LOG" "$parent" <<'PYEOF' >"$DF_TMP/burst.out" 2>&1 ||
import os, shutil, signal, socket, struct, subprocess, sys, time
n, binary, conf, tmp, log = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
parent = int(sys.argv[6])

def query(qid, name):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", 1, 1)

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
s.connect(("127.0.0.1", 53))
os.kill(parent, signal.SIGSTOP)
try:
    with open("/proc/%d/stat" % parent) as f:
        while f.read().rsplit(")", 1)[1].split()[0] != "T":
            time.sleep(0.01)
            f.seek(0)
    for i in range(1, n + 1):
        s.send(query(i, "n%d.priv.allowed.test" % i))
    time.sleep(0.3)  # the hits' adds queue
    shutil.copy(tmp + "/narrow.json", tmp + "/narrow.tmp")
    os.rename(tmp + "/narrow.tmp", conf)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNSFENCE_")}
    reload2 = subprocess.Popen([binary, "-c", conf, "reload"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    marker = "addresses leave the sets because the new config refuses them"
    deadline = time.monotonic() + 10
    while marker not in open(log).read():
        if time.monotonic() > deadline:
            reload2.kill()
            sys.exit("the DNS process did not swap to narrow.json: reload: %s"
                     % reload2.communicate()[0].decode().strip())
        time.sleep(0.02)
finally:
    os.kill(parent, signal.SIGCONT)
rcodes, with_addr = {}, 0
s.settimeout(5)
try:
    while sum(rcodes.values()) < n:
        m = s.recv(4096)
        rc = m[3] & 15
        rcodes[rc] = rcodes.get(rc, 0) + 1
        ancount = struct.unpack(">H", m[6:8])[0]
        if rc == 0 and ancount > 0 and b"\x00\x04\x0a\x01" in m[12:]:
            with_addr += 1
except socket.timeout:
    pass
out, _ = reload2.communicate(timeout=30)
print("rcodes", rcodes)
print("with_addr", with_addr)
print("reload2", reload2.returncode, out.decode().strip())
PYEOF
	fail "the burst driver failed: $(cat "$DF_TMP/burst.out")"
cat "$DF_TMP/burst.out"
kill -0 "$parent" || fail "the daemon stopped during the reload: $(grep -E 'refusing|stopping' "$DF_DNSFENCE_LOG" | head -3)"
! grep -q "refusing the DNS process's request" "$DF_DNSFENCE_LOG" ||
	fail "the parent refused an add: $(grep -m1 refusing "$DF_DNSFENCE_LOG")"
grep -q "^reload2 0 reloaded" "$DF_TMP/burst.out" || fail "the reload failed"
ok "the daemon still runs, the parent refused nothing, the reload succeeded"
with=$(awk '$1 == "with_addr" { print $2 }' "$DF_TMP/burst.out")
[ "$with" -ge $((N * 9 / 10)) ] ||
	fail "only $with of $N answers carried their 10.x address: the backlog did not reach the parent before the rules (no test of the race)"
ok "$with of $N answers carried their 10.x address (admitted under the first file, accepted by the parent)"
df_poll 20 sh -c "! ip netns exec $DF_WL ipset list dnsfence4 | grep -q '^10\.1\.'" ||
	fail "10.x addresses are still in dnsfence4: $(df_set_members dnsfence4 | grep -c '^10\.1\.')"
ok "after the reload no 10.x address is in dnsfence4"
df_dig www.allowed.test A
expect_rcode NOERROR
ok "the daemon serves on"
