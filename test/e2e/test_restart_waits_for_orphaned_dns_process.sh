#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A daemon that crashed (SIGKILL) leaves its DNS process for a moment
# (PR_SET_PDEATHSIG kills it, but on a busy machine it takes a while to
# die) holding the control socket, whose peer credentials still name the
# dead parent, which bound it. A restart in that moment (a supervisor's,
# a test's) must wait for it, not refuse with "a dnsfence daemon (pid N)
# already serves this config" while pid N is dead. Made deterministic
# with a stand-in: a process binds and listens on the control socket,
# forks, and exits; its child keeps the socket, as the DNS process does.
# The child goes half a second after the next daemon starts: that daemon
# must wait and then serve. Control: while the child stays, setup waits
# and then refuses, naming the dead pid and the leftover process.
source "$(dirname "$0")/lib.sh"
df_setup
df_config allow='["www.allowed.test"]'
sock="$DF_TMP/control.sock"
wl "$DF_PY" - "$sock" "$DF_TMP/orphan.pid" <<'PYEOF' || fail "the stand-in did not start"
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(16)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # the orphan: keeps the listening socket
        open(sys.argv[2], "w").write("%d\n" % os.getpid())
        while True:
            time.sleep(60)
    os._exit(0)
os._exit(0)  # the "parent" that bound it: gone
PYEOF
df_poll 50 test -s "$DF_TMP/orphan.pid" || fail "the stand-in wrote no pid"
orphan=$(cat "$DF_TMP/orphan.pid")
kill -0 "$orphan" || fail "the stand-in (pid $orphan) is gone"
ok "a leftover process (pid $orphan) listens on the control socket, its binder gone"

# Control: the leftover stays; setup waits, then refuses.
df_dnsfence setup
[ "$DF_CMD_RC" -ne 0 ] || fail "setup ran while a leftover process holds the control socket"
grep -q "the DNS process of a dnsfence daemon whose pid [0-9]* is gone" <<<"$DF_CMD_ERR" ||
	fail "setup's refusal does not say the daemon is gone and its DNS process stayed: $DF_CMD_ERR"
ok "control: a leftover that does not exit is refused after the wait, named as such (exit $DF_CMD_RC)"

# The leftover exits while the next daemon waits for it.
(sleep 0.5 && kill -KILL "$orphan") &
df_start_dnsfence allow='["www.allowed.test"]'
df_dig www.allowed.test A
expect_rcode NOERROR
expect_dnsfence_running
ok "the next daemon waited for the leftover to exit and serves (pid $DF_DNSFENCE_PID)"
