#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what dnsfence needs to build, test and demo on Debian 12.
# --package: also what building and checking the Debian package needs
# (debhelper, lintian, fakeroot; used by .ci/run's package step).
# --real-paths: --package, plus what test/deploy/real_paths.sh runs the
# deployment paths with (podman, runc, docker-compose, mmdebstrap,
# systemd-nspawn; .ci/run's last step). Never needed for the test suite.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: run as root (it uses apt-get)" >&2
	exit 2
fi
pkgs=(
	# build
	build-essential cmake pkg-config clang clang-format
	libevent-dev libc-ares-dev libmnl-dev libipset-dev libcjson-dev
	libcmocka-dev libpsl-dev publicsuffix libidn2-dev libseccomp-dev
	# the name check's QUIC Initial keys (HKDF, AES-128-GCM: libcrypto)
	libssl-dev
	# kernel tools the daemon's setup and the tests use
	iproute2 ipset iptables conntrack
	# real upstream servers and clients for the end-to-end tests
	nsd unbound dnsutils knot-dnsutils curl python3 procps socat tcpdump
	# the name check's shared front end (test_name_check_*: nginx by SNI
	# and by Host, openssl s_client)
	nginx-light openssl
	# raw-socket attackers of the forward-scope tests
	python3-scapy
	# the metrics test parses the exposition format with it
	python3-prometheus-client
	# the query-type and wildcard-budget tests craft and read DNS with it
	python3-dnspython
	# the QUIC name-check test protects its client Initials with it
	python3-cryptography
	# deployment checks: manifests (YAML), the systemd unit, man pages;
	# util-linux also for setpriv (the e2e tests run the workload with it)
	python3-yaml systemd groff-base util-linux
	# benchmarks (test/bench/reload.sh, dnsperf.sh; dnsmasq is the reference)
	dnsperf dnsmasq-base
)
case "${1:-}" in
--package) pkgs+=(debhelper lintian fakeroot dpkg-dev) ;;
--real-paths)
	pkgs+=(debhelper lintian fakeroot dpkg-dev
		podman runc conmon docker-compose mmdebstrap systemd-container)
	;;
esac
missing=()
for p in "${pkgs[@]}"; do
	case "$p" in \#*) continue ;; esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "ok installed" >/dev/null ||
		missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# Debian's postinst scripts must not start nsd/unbound on the host.
	policy=/usr/sbin/policy-rc.d
	created=""
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		created=1
	fi
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	[ -z "$created" ] || rm -f "$policy"
fi
