#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dnsfence container entrypoint: fence the container, then run the
# workload as an unprivileged user.
#
#   1. Start as root. If /etc/resolv.conf was already pointed at dnsfence
#      by an earlier start of this container, put the saved original back,
#      so the daemon finds its upstreams there (Docker's 127.0.0.11 or the
#      host's servers).
#   2. "dnsfence run" in the background: set up the fence (sets, rules,
#      verified), drop to the config's "user", serve.
#   3. Wait until "dnsfence probe" gets a DNS reply (the fence is up).
#   4. Point /etc/resolv.conf at 127.0.0.1 (keeping search and options),
#      saving the original in $DNSFENCE_STATE_DIR/resolv.conf.orig (root's,
#      0644, in a 0700 directory): with no "upstreams" in the config,
#      dnsfence reads its upstreams there once resolv.conf names only it,
#      so "dnsfence check" and "probe" (the healthcheck) keep working.
#   5. With a command: exec it as DNSFENCE_WORKLOAD_USER (uid:gid) with no
#      capabilities, no supplementary groups and no_new_privs (setpriv,
#      util-linux). Without one (the Compose sidecar): wait for the daemon.
#
# Environment (defaults for the image; the tests point them elsewhere):
#   DNSFENCE_BIN            /usr/sbin/dnsfence
#   DNSFENCE_CONFIG         /etc/dnsfence/dnsfence.json
#   DNSFENCE_RESOLV_CONF    /etc/resolv.conf
#   DNSFENCE_STATE_DIR      /run/dnsfence (the saved resolv.conf; dnsfence
#                           itself reads it from there too)
#   DNSFENCE_WORKLOAD_USER  1000:1000 (uid:gid or user name; never 0)
#   DNSFENCE_READY_TIMEOUT  30 (seconds)
# DNSFENCE_MODE and DNSFENCE_EXTRA_HOSTS reach the daemon unchanged.
set -eu

BIN=${DNSFENCE_BIN:-/usr/sbin/dnsfence}
CONF=${DNSFENCE_CONFIG:-/etc/dnsfence/dnsfence.json}
RESOLV=${DNSFENCE_RESOLV_CONF:-/etc/resolv.conf}
STATE=${DNSFENCE_STATE_DIR:-/run/dnsfence}
WORKLOAD=${DNSFENCE_WORKLOAD_USER:-1000:1000}
TIMEOUT=${DNSFENCE_READY_TIMEOUT:-30}

say() { echo "dnsfence-entrypoint: $*" >&2; }
die() {
	say "$*"
	exit 1
}
# The shared part: in the image beside the other libraries, in the
# source tree beside this script.
lib=/usr/local/lib/dnsfence/entrypoint-lib.sh
[ -r "$lib" ] || lib=$(dirname "$0")/entrypoint-lib.sh
# shellcheck source=contrib/docker/entrypoint-lib.sh
. "$lib"

[ "$(id -u)" = 0 ] || die "start the container as root (it drops to $WORKLOAD itself)"
[ -r "$CONF" ] || die "no config at $CONF"
# Checked before anything starts: a read-only container (Compose's
# read_only: true) gets a read-only /etc/resolv.conf, and a fence the
# workload's resolver does not point at is no use.
[ -w "$RESOLV" ] ||
	die "$RESOLV is not writable (a read-only container?); the entrypoint must point it at 127.0.0.1"

# Does the resolv.conf name only dnsfence (127.0.0.1 / ::1)?
only_us() {
	awk '$1 == "nameserver" { n++; if ($2 != "127.0.0.1" && $2 != "::1") other = 1 }
	     END { exit !(n > 0 && !other) }' "$1"
}

mkdir -p "$STATE"
chmod 0700 "$STATE"
if only_us "$RESOLV" && [ -s "$STATE/resolv.conf.orig" ]; then
	cat "$STATE/resolv.conf.orig" >"$RESOLV"
fi

# The workload's identity, checked before anything starts: not root, and
# not the daemon's uid (which could signal the daemon; the fence trusts
# only the daemon's socket mark for DNS upstream).
if [ "$#" -gt 0 ]; then
	uid=${WORKLOAD%%:*}
	gid=${WORKLOAD#*:}
	[ "$gid" != "$WORKLOAD" ] || gid=$uid
	case "$uid" in *[!0-9]*) uid=$(id -u "$uid") || die "no user $uid" ;; esac
	case "$gid" in *[!0-9]*) gid=$(getent group "$gid" | cut -d: -f3) || die "no group $gid" ;; esac
	[ "$uid" != 0 ] && [ "$gid" != 0 ] || die "DNSFENCE_WORKLOAD_USER must not be root"
	json=$("$BIN" -c "$CONF" validate) ||
		die "dnsfence rejects $CONF; the workload is NOT started"
	duser=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"user":[[:space:]]*"\([^"]*\)".*/\1/p')
	case "$duser" in
	*[!0-9]*) duid=$(id -u "$duser" 2>/dev/null || id -u nobody) ;;
	*) duid=$duser ;;
	esac
	[ "$uid" != "$duid" ] ||
		die "DNSFENCE_WORKLOAD_USER is the daemon's uid ($duid); the workload is NOT started"
fi

start_daemon "the workload is NOT started"
trap 'signal TERM "$daemon"' TERM INT

# The workload asks dnsfence. Written in place: Docker bind-mounts the file.
if ! only_us "$RESOLV"; then
	rm -f "$STATE/resolv.conf.orig"
	cp "$RESOLV" "$STATE/resolv.conf.orig"
	chmod 0644 "$STATE/resolv.conf.orig"
	{
		echo "# written by the dnsfence entrypoint; the original is in $STATE"
		echo "nameserver 127.0.0.1"
		grep -E '^[[:space:]]*(search|domain|options)[[:space:]]' "$STATE/resolv.conf.orig" || true
	} >"$STATE/resolv.conf.new"
	cat "$STATE/resolv.conf.new" >"$RESOLV"
	rm -f "$STATE/resolv.conf.new"
fi
say "fence up, dnsfence (pid $daemon) answering on 127.0.0.1"

if [ "$#" -eq 0 ]; then
	# Sidecar: the daemon is the container's life.
	rc=0
	wait_for "$daemon" || rc=$?
	exit "$rc"
fi

# Also empty the bounding set when we may (CAP_SETPCAP, which Docker's
# default set has): the workload could not regain anything even by exec.
bnd=""
eff=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status)
if [ $((0x$eff >> 8 & 1)) -eq 1 ]; then
	bnd="--bounding-set=-all"
fi
# shellcheck disable=SC2086
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all \
	$bnd --no-new-privs -- "$@"
