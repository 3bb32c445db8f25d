#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dnsfence container entrypoint, subject form: one container, a
# long-running service unfenced under its own uid, the agent fenced under
# another uid (docs/deployment.md, "One program").
#
#   1. Start as root. The config names the agent's user in "subjects"
#      ({"users": ["agent"]}): only that uid's packets meet the fence, and
#      its DNS to whatever resolver resolv.conf names (Docker's 127.0.0.11
#      included) is answered by dnsfence. resolv.conf is left alone: the
#      service keeps resolving through it.
#   2. "dnsfence run" in the background (sets, rules, drop to the config's
#      "user", serve); wait until "dnsfence probe" gets a reply.
#   3. With a command: run it as DNSFENCE_AGENT_USER in the background (no
#      capabilities, no supplementary groups, no_new_privs). Any later
#      process of that uid is fenced the same way, whoever starts it
#      (docker exec -u agent CONTAINER CMD).
#   4. Run DNSFENCE_SERVICE (a shell command line) as DNSFENCE_SERVICE_USER
#      the same way, unfenced; the container lives as long as the service,
#      and exits with its status (the daemon is stopped then; its rules
#      stay, so the agent's uid stays fenced until the container is gone).
#
# Environment (defaults for an image; the tests point them elsewhere):
#   DNSFENCE_BIN            /usr/sbin/dnsfence
#   DNSFENCE_CONFIG         /etc/dnsfence/dnsfence.json
#   DNSFENCE_SERVICE        the service's command line (required)
#   DNSFENCE_SERVICE_USER   1000:1000 (uid:gid or user name)
#   DNSFENCE_AGENT_USER     1001:1001 (must be one of subjects.users)
#   DNSFENCE_READY_TIMEOUT  30 (seconds)
# Neither user may be root or the daemon's user; they must differ.
set -eu

BIN=${DNSFENCE_BIN:-/usr/sbin/dnsfence}
CONF=${DNSFENCE_CONFIG:-/etc/dnsfence/dnsfence.json}
SERVICE=${DNSFENCE_SERVICE:-}
SERVICE_USER=${DNSFENCE_SERVICE_USER:-1000:1000}
AGENT_USER=${DNSFENCE_AGENT_USER:-1001:1001}
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

[ "$(id -u)" = 0 ] || die "start the container as root (it drops to the service's and the agent's users itself)"
[ -r "$CONF" ] || die "no config at $CONF"
[ -n "$SERVICE" ] || die "DNSFENCE_SERVICE (the service's command line) is not set"

# uid_of NAME-OR-UID: the numeric uid.
uid_of() {
	case "$1" in
	*[!0-9]*) id -u "$1" 2>/dev/null ;;
	*) echo "$1" ;;
	esac
}
# split USER[:GROUP] into $uid and $gid (numeric).
split_user() {
	uid=${1%%:*}
	gid=${1#*:}
	[ "$gid" != "$1" ] || gid=$uid
	uid=$(uid_of "$uid") || die "no user ${1%%:*}"
	case "$gid" in *[!0-9]*) gid=$(getent group "$gid" | cut -d: -f3) || die "no group $gid" ;; esac
	[ -n "$gid" ] || die "no group for $1"
	[ "$uid" != 0 ] && [ "$gid" != 0 ] || die "$1 is root; the service and the agent never run as root"
}

json=$("$BIN" -c "$CONF" validate) || die "dnsfence rejects $CONF; nothing is started"
duser=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"user":[[:space:]]*"\([^"]*\)".*/\1/p')
duid=$(uid_of "$duser" || id -u nobody)
subjects=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"users":[[:space:]]*\[\(.*\)\].*/\1/p' | tr -d '" ' | tr ',' ' ')

split_user "$SERVICE_USER"
suid=$uid sgid=$gid
split_user "$AGENT_USER"
auid=$uid agid=$gid
[ "$suid" != "$auid" ] || die "the service and the agent have the same uid ($suid): the agent's fence would fence the service"
[ "$suid" != "$duid" ] && [ "$auid" != "$duid" ] ||
	die "the service or the agent is the daemon's uid ($duid); nothing is started"
fenced=""
for s in $subjects; do
	su=$(uid_of "$s") || continue
	[ "$su" != "$suid" ] || die "the service's uid $suid is a subject in $CONF; it would be fenced"
	[ "$su" != "$auid" ] || fenced=1
done
[ -n "$fenced" ] || die "the agent's uid $auid is not in subjects.users of $CONF; nothing is started"

start_daemon "nothing is started"
say "fence up for uid $auid, dnsfence (pid $daemon) answering; uid $suid is not fenced"

# Also empty the bounding set when we may (CAP_SETPCAP, which Docker's
# default set has).
bnd=""
eff=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status)
if [ $((0x$eff >> 8 & 1)) -eq 1 ]; then
	bnd="--bounding-set=-all"
fi
# as UID GID CMD...: run CMD as UID:GID with nothing to gain.
as() {
	u=$1 g=$2
	shift 2
	# shellcheck disable=SC2086
	setpriv --reuid="$u" --regid="$g" --clear-groups --inh-caps=-all $bnd --no-new-privs -- "$@"
}

if [ "$#" -gt 0 ]; then
	as "$auid" "$agid" "$@" &
fi
as "$suid" "$sgid" /bin/sh -c "$SERVICE" &
service=$!
trap 'signal TERM "$service"' TERM INT
rc=0
wait_for "$service" || rc=$?
signal TERM "$daemon"
wait_for "$daemon" 2>/dev/null || true
exit "$rc"
