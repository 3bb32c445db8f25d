#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dnsfence container healthcheck (the image's HEALTHCHECK, the Compose
# sidecar's healthcheck): healthy only when the fence is the container's
# resolver, i.e.
#
#   1. /etc/resolv.conf names only 127.0.0.1 / ::1: the entrypoint has
#      switched it (it does so only after the daemon answered), so Compose's
#      service_healthy never starts the app while it would still ask the
#      original resolver;
#   2. "dnsfence probe" gets a DNS reply. With no "upstreams" in the config,
#      dnsfence reads them from the original resolv.conf the entrypoint
#      saved in $DNSFENCE_STATE_DIR (/run/dnsfence/resolv.conf.orig).
#
# Exit 0 healthy, 1 unhealthy (Docker reserves 2), with one line saying why.
# Environment: DNSFENCE_BIN, DNSFENCE_RESOLV_CONF as for the entrypoint.
set -u
BIN=${DNSFENCE_BIN:-/usr/sbin/dnsfence}
RESOLV=${DNSFENCE_RESOLV_CONF:-/etc/resolv.conf}

if ! awk '$1 == "nameserver" { n++; if ($2 != "127.0.0.1" && $2 != "::1") other = 1 }
	END { exit !(n > 0 && !other) }' "$RESOLV" 2>/dev/null; then
	echo "unhealthy: $RESOLV does not point at dnsfence yet (the entrypoint switches it once dnsfence answers)"
	exit 1
fi
if ! "$BIN" probe; then
	echo "unhealthy: dnsfence does not answer on its listen address"
	exit 1
fi
echo "healthy: $RESOLV names dnsfence, and it answers"
