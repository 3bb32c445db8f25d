#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/systemd/dnsfence.service passes `systemd-analyze verify` (with its
# /usr/sbin/dnsfence paths pointed at the built binary), and has the shape
# docs/deployment.md promises: Type=notify, setup as ExecStartPre=+, serve
# as User=dnsfence with the capabilities serve needs and no more, the
# sandboxing options, and no teardown when it stops.
set -euo pipefail
SRC="${DNSFENCE_SRC:?}"
BIN="${DNSFENCE_BIN:?}"
UNIT="$SRC/contrib/systemd/dnsfence.service"
fail() { echo "FAIL test_systemd_unit_verifies: $*" >&2; exit 1; }

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "SKIP: systemd-analyze is not installed (package systemd)" >&2
	exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
sed "s|/usr/sbin/dnsfence|$BIN|g" "$UNIT" >"$tmp/dnsfence.service"
out="$(systemd-analyze verify --man=no "$tmp/dnsfence.service" 2>&1)" ||
	fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify printed: $out"
echo "ok   systemd-analyze verify passes"

# The unit's [Service] settings, as "Key=value" lines (comments dropped).
svc="$(awk '/^\[/ { s = $0; next } s == "[Service]" && /^[A-Za-z]/ { print }' "$UNIT")"
want() {
	grep -qxF -- "$1" <<<"$svc" || fail "expected '$1' in [Service]"
}
want "Type=notify"
dups="$(cut -d= -f1 <<<"$svc" | sort | uniq -d)"
[ -z "$dups" ] || fail "[Service] sets these keys more than once: $dups"
want "ExecStartPre=+/usr/sbin/dnsfence setup"
want "ExecStart=/usr/sbin/dnsfence serve"
want "ExecReload=/usr/sbin/dnsfence reload"
want "RuntimeDirectory=dnsfence"
want "User=dnsfence"
want "NoNewPrivileges=yes"
want "ProtectSystem=strict"
want "ProtectHome=yes"
want "PrivateTmp=yes"
want "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK"
want "SystemCallArchitectures=native"
want "Restart=on-failure"
amb="$(sed -n 's/^AmbientCapabilities=//p' <<<"$svc")"
bnd="$(sed -n 's/^CapabilityBoundingSet=//p' <<<"$svc")"
[ "$amb" = "$bnd" ] || fail "AmbientCapabilities ($amb) differs from CapabilityBoundingSet ($bnd)"
for c in CAP_NET_ADMIN CAP_NET_BIND_SERVICE; do
	[[ " $amb " == *" $c "* ]] || fail "$c missing from AmbientCapabilities"
done
for c in $amb; do
	case "$c" in
	CAP_NET_ADMIN | CAP_NET_BIND_SERVICE | CAP_NET_RAW) ;;
	*) fail "unexpected capability $c" ;;
	esac
done
! grep -q "^PrivateUsers=" <<<"$svc" || fail "PrivateUsers= would take CAP_NET_ADMIN away from the host namespace"
! grep -qi "teardown" <<<"$svc" || fail "the unit must not tear the fence down on stop"
echo "ok   unit shape: notify, setup as root, serve as dnsfence with $amb, sandboxed, no teardown on stop"

# The resolver drop-in parses as a resolved.conf fragment.
dropin="$SRC/contrib/systemd/resolved.conf.d/dnsfence.conf"
grep -qx "DNS=127.0.0.1" "$dropin" || fail "$dropin does not set DNS=127.0.0.1"
echo "ok   resolved drop-in sets DNS=127.0.0.1"
