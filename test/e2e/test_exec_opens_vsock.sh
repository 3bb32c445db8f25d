#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `dnsfence exec --user USER -- CMD`: CMD must not open a socket that no
# firewall rule sees.
#
# In a VM with a vsock device (Firecracker, Kata, cloud VMs: the machines
# agents' sandboxes run on), any unprivileged process may open an
# AF_VSOCK socket and connect to the hypervisor (CID 2), whose side often
# runs agents and proxies; netfilter never sees that traffic, so the
# fence's rules cannot hold it. The test does not connect (that would
# leave this machine): it checks that the fenced command cannot make the
# socket at all, by any of the four ways a 64-bit x86 process has:
# socket(2); io_uring (IORING_OP_SOCKET makes one without socket(2), out
# of a syscall filter's sight, so the ring itself must not be had); and
# the 32-bit entries through int 0x80, socket (359) and socketcall's
# SYS_SOCKET, which the same process may call.
#
# Controls: uid 4242 outside the fence makes each of them (so the
# refusals are the fence's, not the machine's); the fenced command still
# makes an AF_INET socket.
source "$(dirname "$0")/lib.sh"
df_exec_lab
USER_ID=4242
chmod 711 "$DF_TMP" # uid 4242 runs the script below from there

cat >"$DF_TMP/vsock.py" <<'PY'
import ctypes, mmap, os, socket, struct, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def report(what, fd, err):
    if fd >= 0:
        print("%s: created" % what)
        os.close(fd)
    else:
        print("%s: refused (%s)" % (what, os.strerror(err)))


for what, fam in (("vsock", socket.AF_VSOCK), ("inet", socket.AF_INET)):
    try:
        socket.socket(fam, socket.SOCK_STREAM).close()
        print("%s: created" % what)
    except OSError as e:
        print("%s: refused (%s)" % (what, e.strerror))
params = ctypes.create_string_buffer(120)  # struct io_uring_params
fd = libc.syscall(425, 4, params)  # io_uring_setup
report("io_uring", fd, ctypes.get_errno())

# int 0x80 from this 64-bit process: the i386 entries, code and
# socketcall's arguments below 4 GiB.
MAP_32BIT = 0x40
buf = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_32BIT,
                prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
buf[2048:2060] = struct.pack("<III", socket.AF_VSOCK, socket.SOCK_STREAM, 0)
# push rbx; mov eax,359 (socket); mov ebx,40; mov ecx,1; xor edx,edx;
# int 0x80; pop rbx; ret
direct = (b"\x53\xb8\x67\x01\x00\x00\xbb\x28\x00\x00\x00\xb9\x01\x00\x00\x00"
          b"\x31\xd2\xcd\x80\x5b\xc3")
# push rbx; mov eax,102 (socketcall); mov ebx,1 (SYS_SOCKET); mov ecx,args;
# int 0x80; pop rbx; ret
call = (b"\x53\xb8\x66\x00\x00\x00\xbb\x01\x00\x00\x00\xb9" +
        struct.pack("<I", base + 2048) + b"\xcd\x80\x5b\xc3")
# Each in a child: a kernel without 32-bit syscalls (no IA32 emulation)
# answers int 0x80 with SIGSEGV, and then there is no such way out.
for what, code, at in (("vsock32", direct, 0), ("vsock32-socketcall", call, 256)):
    buf[at:at + len(code)] = code
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        r = ctypes.CFUNCTYPE(ctypes.c_int)(base + at)()
        report(what, r, -r if r < 0 else 0)
        sys.stdout.flush()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == 11:
        print("%s: absent (int 0x80 is SIGSEGV: no 32-bit syscalls here)" % what, flush=True)
PY
chmod 644 "$DF_TMP/vsock.py"
[ "$(uname -m)" = x86_64 ] || fail "this test's int 0x80 probes are x86-64 code (machine: $(uname -m))"

df_wl_as "$USER_ID" "$DF_PY" "$DF_TMP/vsock.py" >"$DF_TMP/open.out" 2>&1 ||
	fail "control: the probe failed unfenced: $(cat "$DF_TMP/open.out")"
# A kernel without 32-bit syscalls has no int 0x80 way: those two probes
# are then left out of both runs (the line says "absent").
probes="vsock io_uring"
for w in vsock32 vsock32-socketcall; do
	grep -q "^$w: absent" "$DF_TMP/open.out" || probes+=" $w"
done
for w in inet $probes; do
	grep -qx "$w: created" "$DF_TMP/open.out" ||
		fail "control: unfenced, uid $USER_ID could not make $w (this machine lacks it?): $(tr '\n' ' ' <"$DF_TMP/open.out")"
done
ok "control: unfenced, uid $USER_ID makes each of: $probes"

st=0
df_wl_cg "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" exec --user "$USER_ID" -- \
	"$DF_PY" "$DF_TMP/vsock.py" >"$DF_TMP/exec.out" 2>"$DF_TMP/exec.err" || st=$?
[ "$st" -eq 0 ] || fail "exec exited $st: $(cat "$DF_TMP/exec.out" "$DF_TMP/exec.err")"
! grep -q "fencing uid" "$DF_TMP/exec.err" || fail "exec fell back to the uid: $(cat "$DF_TMP/exec.err")"
grep -qx "inet: created" "$DF_TMP/exec.out" ||
	fail "control: the fenced command cannot make an AF_INET socket: $(tr '\n' ' ' <"$DF_TMP/exec.out")"
ok "control: the fenced command makes an AF_INET socket"
for w in $probes; do
	grep -q "^$w: refused" "$DF_TMP/exec.out" ||
		fail "the fenced command made $w, a way past every firewall rule: $(tr '\n' ' ' <"$DF_TMP/exec.out")"
done
ok "the fenced command cannot make an AF_VSOCK socket nor an io_uring: $(grep -v '^inet' "$DF_TMP/exec.out" | tr '\n' ' ')"
