#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the Debian package: packaging/build-deb.sh [OUTDIR]
#
# dpkg-buildpackage wants debian/ at the top of the tree and writes its
# results to the parent directory, so this copies the source tree (without
# build directories) into a temporary directory, links debian ->
# packaging/debian there, runs
#
#   dpkg-buildpackage -us -uc -b
#
# and copies dnsfence_VERSION_ARCH.deb (and the .buildinfo/.changes) to
# OUTDIR (default: build-deb/). Needs the Build-Depends of
# packaging/debian/control (contrib/deps.sh --package installs them).
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$src/build-deb}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d /tmp/dnsfence-deb.XXXXXX)"
trap 'rm -rf "$work"' EXIT

mkdir "$work/dnsfence"
tar -C "$src" --exclude=./.git --exclude='./build' --exclude='./build-*' \
	--exclude=./debian -cf - . | tar -C "$work/dnsfence" -xf -
ln -s packaging/debian "$work/dnsfence/debian"
(cd "$work/dnsfence" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
	tail -n 60 "$work/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log above)" >&2
	exit 1
}
cp "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out"/
ls "$out"/*.deb
