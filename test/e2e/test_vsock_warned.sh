#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the fence cannot hold, the daemon says: on a VM with a vsock
# device, an AF_VSOCK socket reaches the hypervisor (CID 2) from any
# network namespace, unprivileged, and no firewall rule sees it. The
# daemon (at start, in its one info line of environment facts: a fact of
# the machine, no setting of dnsfence's) and `dnsfence selftest` (a
# warning) say it once, naming the local CID and what to do (the
# workload's seccomp profile, or exec); where the machine has no such
# device they say nothing of it.
#
# The test reads the truth itself, as root, from /dev/vsock's
# IOCTL_VM_SOCKETS_GET_LOCAL_CID, and checks that a workload uid in the
# fenced namespace can open such a socket (so the warning is about a
# real way past the fence) before it expects the warning; on a machine
# without the device it expects none. It never connects (that would
# leave the machine).
source "$(dirname "$0")/lib.sh"
df_setup
cid="$("$DF_PY" - <<'PY'
import fcntl, struct
try:
    with open("/dev/vsock", "rb") as f:
        cid = struct.unpack("I", fcntl.ioctl(f, 0x7b9, b"\0" * 4))[0]
except OSError:
    cid = 0
print(cid if 2 < cid < 0xffffffff else 0)
PY
)"
df_start_dnsfence allow='["www.allowed.test"]'
df_dig www.allowed.test A
expect_rcode NOERROR
ok "control: the daemon serves (www.allowed.test answered)"
df_dnsfence selftest
if [ "$cid" -gt 0 ]; then
	df_wl_as 4242 "$DF_PY" -c 'import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()' ||
		fail "this VM has a vsock device (CID $cid) but uid 4242 in the namespace cannot open an AF_VSOCK socket"
	ok "uid 4242 in the fenced namespace opens an AF_VSOCK socket (this VM's CID is $cid)"
	want="a VM with a vsock device (local CID $cid): AF_VSOCK sockets"
	[ "$(grep -cF "$want" "$DF_DNSFENCE_LOG")" -eq 1 ] ||
		fail "the daemon did not warn once of vsock (CID $cid): $(grep -i vsock "$DF_DNSFENCE_LOG" || echo 'no line')"
	# The daemon says it once, as a fact of this machine in its one
	# info line of environment facts (no setting of dnsfence changes it;
	# the workload's seccomp profile does); `dnsfence selftest`, asked by
	# the operator, warns.
	grep -q " info start: environment: " <<<"$(grep -F "$want" "$DF_DNSFENCE_LOG")" ||
		fail "the daemon's vsock line is not in the environment line: $(grep -i vsock "$DF_DNSFENCE_LOG")"
	grep -q "refuse socket family 40 and io_uring_setup in the workload's seccomp profile" "$DF_DNSFENCE_LOG" ||
		fail "the vsock warning does not say what to do: $(grep -i vsock "$DF_DNSFENCE_LOG")"
	grep -qF "$want" <<<"$DF_CMD_ERR$DF_CMD_OUT" ||
		fail "dnsfence selftest did not warn of vsock: $DF_CMD_OUT $DF_CMD_ERR"
	ok "the daemon and dnsfence selftest warn of vsock (CID $cid) and say what to do"
else
	! grep -qi "vsock" "$DF_DNSFENCE_LOG" "$DF_CMD_ERR" ||
		fail "no vsock device here, yet a vsock warning: $(grep -i vsock "$DF_DNSFENCE_LOG")"
	ok "no vsock device on this machine: no vsock warning"
fi
