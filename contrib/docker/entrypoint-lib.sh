# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dnsfence container entrypoints' shared part (sourced by entrypoint.sh and
# entrypoint-subjects.sh; in the image /usr/local/lib/dnsfence/): start
# the daemon, wait until it answers, and watch and signal the processes
# the entrypoint started.
#
# The entrypoint is root but holds only the capabilities the container
# was given (compose.yaml: NET_ADMIN, NET_RAW, NET_BIND_SERVICE, SETUID,
# SETGID), not CAP_KILL, and the daemon drops to its own user once the
# fence is up, the service and the agent run as theirs. So "kill -0" fails
# with EPERM on a process that is alive: a liveness test must not use it
# (the entrypoint took the daemon for dead and waited for its exit
# forever, the fence up but resolv.conf never switched), and a signal is
# sent as the process's own uid (CAP_SETUID, which the container has for
# the daemon's drop anyway).
# Expects say and die, BIN, CONF and TIMEOUT; sets daemon, and (its own
# names, POSIX sh has no locals) sig_uid and wait_st.

# alive PID: the child PID has not exited (a child that did is a zombie
# until it is waited for).
alive() {
	case "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)" in
	'' | Z | X) return 1 ;;
	esac
	return 0
}

# signal SIG PID: send SIG to PID as PID's own uid; nothing if it is gone.
signal() {
	sig_uid=$(awk '$1 == "Uid:" { print $2 }' "/proc/$2/status" 2>/dev/null) || return 0
	if [ -z "$sig_uid" ] || [ "$sig_uid" = "$(id -u)" ]; then
		kill -"$1" "$2" 2>/dev/null || true
	else
		# shellcheck disable=SC2016 # the inner shell expands them
		setpriv --reuid="$sig_uid" -- /bin/sh -c 'kill -"$1" "$2"' sh "$1" "$2" 2>/dev/null || true
	fi
}

# start_daemon NOT_STARTED: "dnsfence run" in the background as $daemon
# (a TERM or INT to the entrypoint goes to it from now on), then wait
# until "dnsfence probe" gets a reply, at most $TIMEOUT seconds.
# NOT_STARTED ends the messages that stop the entrypoint: the daemon
# exited, or did not answer in time (then it is stopped).
start_daemon() {
	"$BIN" -c "$CONF" run >&2 &
	daemon=$!
	trap 'signal TERM "$daemon"' TERM INT
	end=$(($(date +%s) + TIMEOUT))
	until "$BIN" -c "$CONF" probe 2>/dev/null; do
		if ! alive "$daemon"; then
			rc=0
			wait "$daemon" || rc=$?
			die "dnsfence exited with status $rc before it was ready; $1"
		fi
		if [ "$(date +%s)" -ge "$end" ]; then
			signal TERM "$daemon"
			die "dnsfence did not answer within $TIMEOUT s; $1"
		fi
		sleep 0.2
	done
}

# wait_for PID: its exit status, also when a trapped signal (docker stop)
# ends the first wait: the process still gets to finish.
wait_for() {
	wait_st=0
	wait "$1" || wait_st=$?
	while alive "$1"; do
		wait_st=0
		wait "$1" || wait_st=$?
	done
	return "$wait_st"
}
