#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package: builds (packaging/build-deb.sh), holds the binary,
# the unit, the conffile, the sysusers file and the man pages; lintian
# finds no errors (warnings are listed); it installs, creating the dnsfence
# user and starting nothing (no unit start, no rules in this namespace),
# its conffile validates, and it purges leaving none of its files.
#
#   test/deploy/package_deb.sh [DEB]     (as root; run by .ci/run)
#
# Installs the package on this machine: meant for a throwaway CI machine.
# Without systemd as PID 1 (as in CI) the postinst cannot start anything,
# and the unit is built --no-enable --no-start in any case.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL package_deb: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP package_deb: needs root (dpkg -i)" >&2; exit 77; }

tmp="$(mktemp -d /tmp/dnsfence-pkgtest.XXXXXX)"
installed=0
had_user=1
# Also on failure: leave the machine as found (no package, no new user).
cleanup() {
	if [ "$installed" = 1 ]; then
		DEBIAN_FRONTEND=noninteractive dpkg --purge dnsfence >/dev/null 2>&1 || true
	fi
	if [ "$had_user" = 0 ]; then
		userdel dnsfence 2>/dev/null || true
		groupdel dnsfence 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
deb="${1:-}"
if [ -z "$deb" ]; then
	"$SRC/packaging/build-deb.sh" "$tmp/out" >/dev/null
	deb="$(ls "$tmp"/out/dnsfence_*_*.deb)"
fi
[ -f "$deb" ] || fail "no package at '$deb'"
case "$(basename "$deb")" in
dnsfence_*_"$(dpkg --print-architecture)".deb) ;;
*) fail "unexpected file name $(basename "$deb")" ;;
esac
ok "built $(basename "$deb")"

# Contents.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/files"
for f in /usr/sbin/dnsfence /lib/systemd/system/dnsfence.service \
	/lib/systemd/system/dnsfence-subject@.service /usr/share/doc/dnsfence/examples/dnsfence-subject.conf \
	/usr/share/doc/dnsfence/examples/docker/entrypoint-subjects.sh \
	/etc/dnsfence/dnsfence.json /usr/lib/sysusers.d/dnsfence.conf \
	/usr/share/man/man8/dnsfence.8.gz /usr/share/man/man5/dnsfence.json.5.gz \
	/usr/share/doc/dnsfence/copyright /usr/share/bash-completion/completions/dnsfence; do
	grep -qxF "$f" "$tmp/files" || fail "$f is not in the package"
done
dpkg-deb -e "$deb" "$tmp/control"
grep -qxF /etc/dnsfence/dnsfence.json "$tmp/control/conffiles" || fail "/etc/dnsfence/dnsfence.json is not a conffile"
grep -q "systemd-sysusers.*dnsfence.conf" "$tmp/control/postinst" || fail "postinst does not create the user"
# dh's snippet re-enables the unit only if it "was-enabled" before (an
# upgrade); it must never start it or enable it on a first install.
! grep -qE "deb-systemd-invoke.*(start|restart)|systemctl .*start" "$tmp/control/postinst" ||
	fail "postinst would start the unit (the default config is deny-all)"
grep -B2 "deb-systemd-helper enable" "$tmp/control/postinst" | grep "was-enabled" >/dev/null ||
	fail "postinst would enable the unit on a first install"
# Removal takes the fence down while the binary is there (issue 14).
grep -q "deb-systemd-invoke stop dnsfence.service" "$tmp/control/prerm" && grep -q "dnsfence.* teardown" "$tmp/control/prerm" ||
	fail "prerm does not stop the unit and tear the fence down"
cmp -s <(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/sbin/dnsfence | head -c 4) <(printf '\177ELF') ||
	fail "/usr/sbin/dnsfence is not an ELF binary"
ok "contents: binary, unit, conffile, sysusers, man pages, bash completion; postinst creates the user and starts nothing; prerm stops and tears down"

# lintian: errors fail, warnings are listed.
if command -v lintian >/dev/null 2>&1; then
	lintian --tag-display-limit 0 -I "$deb" >"$tmp/lintian" 2>/dev/null || true
	if [ -s "$tmp/lintian" ]; then
		echo "lintian says:"
		sed 's/^/    /' "$tmp/lintian"
	fi
	! grep -q "^E:" "$tmp/lintian" || fail "lintian errors (above)"
	ok "lintian: $(grep -c '^E:' "$tmp/lintian") errors, $(grep -c '^W:' "$tmp/lintian") warnings, $(grep -c '^I:' "$tmp/lintian") info"
else
	echo "lintian is not installed: skipped (contrib/deps.sh --package)"
fi

# Install: nothing may start, nothing may touch this namespace's firewall.
if dpkg-query -W -f='${Status}' dnsfence 2>/dev/null | grep "ok installed" >/dev/null; then
	fail "dnsfence is already installed here; this test installs and purges it"
fi
had_user=0
getent passwd dnsfence >/dev/null && had_user=1
chains_before="$(iptables-save -t filter 2>/dev/null | awk '/DNSFENCE/ { n++ } END { print n + 0 }')"
installed=1
DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log" >&2; fail "dpkg -i failed"; }
getent passwd dnsfence >/dev/null || fail "the dnsfence user was not created"
shell="$(getent passwd dnsfence | cut -d: -f7)"
[ "$(getent passwd dnsfence | cut -d: -f3)" -lt 1000 ] || fail "dnsfence is not a system user"
/usr/sbin/dnsfence -c /etc/dnsfence/dnsfence.json validate >"$tmp/valid.json" 2>"$tmp/valid.err" ||
	fail "the shipped conffile does not validate: $(cat "$tmp/valid.err")"
grep -q '"allow": \[\]' "$tmp/valid.json" || fail "the shipped conffile is not deny-all: $(cat "$tmp/valid.json")"
man -w dnsfence >/dev/null 2>&1 || ! command -v man >/dev/null || fail "man dnsfence not found after install"
chains_after="$(iptables-save -t filter 2>/dev/null | awk '/DNSFENCE/ { n++ } END { print n + 0 }')"
[ "$chains_before" = "$chains_after" ] || fail "installing changed this namespace's firewall"
if [ -d /run/systemd/system ]; then
	! systemctl is-active --quiet dnsfence || fail "the unit was started on install"
	! systemctl is-enabled --quiet dnsfence || fail "the unit was enabled on install"
fi
ok "installed: user dnsfence (shell $shell), conffile validates as deny-all, unit neither enabled nor started, firewall untouched"

# Purge.
DEBIAN_FRONTEND=noninteractive dpkg --purge dnsfence >"$tmp/purge.log" 2>&1 ||
	{ cat "$tmp/purge.log" >&2; fail "dpkg --purge failed"; }
installed=0
while read -r f; do
	case "$f" in */) continue ;; esac
	[ ! -e "$f" ] || fail "$f is left after purge"
done <"$tmp/files"
[ ! -e /etc/dnsfence ] || fail "/etc/dnsfence is left after purge"
dpkg-query -W -f='${Status}' dnsfence 2>/dev/null | grep "not-installed\|^$" >/dev/null ||
	! dpkg-query -W dnsfence >/dev/null 2>&1 || fail "dpkg still knows dnsfence: $(dpkg-query -W -f='${Status}' dnsfence)"
# Debian leaves system users after a purge; cleanup removes the one this
# test created, since the e2e tests expect no dnsfence user (they check
# the fallback to nobody).
ok "purged: no file left (the dnsfence user, which Debian keeps, is removed by this test if it created it)"
