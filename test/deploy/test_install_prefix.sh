#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `cmake --install BUILD --prefix P` writes below P only (the config too:
# it used to go to /usr/local/etc whatever P was), installs the binary,
# both units (their ExecStart naming the configured sbindir), the docs
# the units name, and a bash completion that the binary printed from its
# command table: completing "dnsfence " offers every command --help
# lists, and "dnsfence prune --" its own option. The binary's default
# config (what --help names) is the configured sysconfdir's
# dnsfence/dnsfence.json, where the install put the deny-all file and
# the unit's ConditionPathExists looks (it used to be /etc whatever the
# prefix); for the prefix /usr that is /etc/dnsfence, and a second install
# keeps an operator's config. Control: the completion offers nothing for
# a word no command starts with.
set -euo pipefail
SRC="${DNSFENCE_SRC:?}"
BIN="${DNSFENCE_BIN:?}"
BUILD="$(dirname "$BIN")"
fail() { echo "FAIL test_install_prefix: $*" >&2; exit 1; }
[ -f "$BUILD/CMakeCache.txt" ] || { echo "skip: $BUILD is not a CMake build directory"; exit 77; }
grep -q '^DNSFENCE_INSTALL_DATA:BOOL=ON' "$BUILD/CMakeCache.txt" ||
	{ echo "skip: DNSFENCE_INSTALL_DATA is off"; exit 77; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# DESTDIR too, so that a path outside the prefix lands in $tmp as well
# (and is caught below) instead of on this machine.
D="$tmp/dest"
P="$D$tmp/prefix"
DESTDIR="$D" cmake --install "$BUILD" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
	fail "cmake --install failed: $(cat "$tmp/install.log")"
n=0
while read -r _ what path; do
	case "$what" in Installing: | Up-to-date:) ;; *) continue ;; esac
	case "$path" in "$P"/*) n=$((n + 1)) ;; *) fail "installed outside the prefix: $path" ;; esac
done <"$tmp/install.log"
[ "$n" -ge 10 ] || fail "only $n files installed: $(cat "$tmp/install.log")"
echo "ok   $n files, every one below the prefix"

for f in sbin/dnsfence etc/dnsfence/dnsfence.json lib/systemd/system/dnsfence.service \
	'lib/systemd/system/dnsfence-subject@.service' share/bash-completion/completions/dnsfence; do
	[ -e "$P/$f" ] || fail "$f was not installed: $(cat "$tmp/install.log")"
done
configured="$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILD/CMakeCache.txt")"
for u in "$P"/lib/systemd/system/*.service; do
	grep -q "^ExecStart=$configured/sbin/dnsfence " "$u" ||
		fail "$(basename "$u"): ExecStart does not name $configured/sbin/dnsfence: $(grep ^ExecStart= "$u")"
	for doc in $(sed -n 's/^Documentation=.*file:\([^ ]*\).*/\1/p' "$u"); do
		[ -f "$P${doc#"$configured"}" ] || fail "$(basename "$u") names $doc, not installed"
	done
done
echo "ok   units name $configured/sbin/dnsfence; the docs they name are installed"

# The binary's default config is the one the install wrote: the
# configured sysconfdir (GNUInstallDirs: /etc for the prefix /usr,
# /etc/opt/... for /opt/..., else PREFIX/etc) + /dnsfence/dnsfence.json.
# It used to be /etc/dnsfence/dnsfence.json whatever the prefix.
rel="$(sed -n 's/^CMAKE_INSTALL_SYSCONFDIR:PATH=//p' "$BUILD/CMakeCache.txt")"
case "$rel" in
/*) sysconf="$rel" ;;
*) case "$configured" in /usr) sysconf="/$rel" ;; /opt/*) sysconf="/$rel$configured" ;; *) sysconf="$configured/$rel" ;; esac ;;
esac
want="$sysconf/dnsfence/dnsfence.json"
named="$(env -u DNSFENCE_CONFIG "$P/sbin/dnsfence" --help | sed -n 's/.*config file (default $DNSFENCE_CONFIG, else \(.*\))$/\1/p')"
[ "$named" = "$want" ] || fail "a build for the prefix $configured reads ${named:-?} by default, not $want"
case "$want" in
"$configured"/*)
	# Below the prefix: the deny-all file the install wrote there (a
	# build configured with -DCMAKE_INSTALL_PREFIX=P finds it once
	# installed to P), and it validates.
	[ -f "$P${want#"$configured"}" ] || fail "the default $want was not installed (${want#"$configured"} below the prefix)"
	"$P/sbin/dnsfence" -c "$P${want#"$configured"}" validate >/dev/null 2>"$tmp/validate.err" ||
		fail "the installed default config does not validate: $(cat "$tmp/validate.err")"
	;;
esac
grep -qxF "ConditionPathExists=$want" "$P/lib/systemd/system/dnsfence.service" ||
	fail "dnsfence.service does not wait for $want: $(grep ^ConditionPathExists= "$P/lib/systemd/system/dnsfence.service")"
echo "ok   the default config is $want, where the install puts the deny-all file and the unit looks"

# A second install over an operator's edited config keeps it (it used to
# put the deny-all file back over the policy); the control: a removed
# config is installed again.
conf="$P/etc/dnsfence/dnsfence.json"
printf '{"allow": ["operator.example"]}\n' >"$conf"
DESTDIR="$D" cmake --install "$BUILD" --prefix "$tmp/prefix" >"$tmp/install2.log" 2>&1 ||
	fail "the second cmake --install failed: $(cat "$tmp/install2.log")"
grep -q operator.example "$conf" || fail "a second install replaced the operator's $conf: $(cat "$conf")"
grep -q "Kept (the operator's policy): $conf" "$tmp/install2.log" ||
	fail "the second install does not say it kept $conf: $(grep dnsfence.json "$tmp/install2.log")"
rm "$conf"
DESTDIR="$D" cmake --install "$BUILD" --prefix "$tmp/prefix" >"$tmp/install3.log" 2>&1 ||
	fail "the third cmake --install failed: $(cat "$tmp/install3.log")"
cmp -s "$conf" "$SRC/contrib/dnsfence.json" || fail "a removed config was not installed again"
echo "ok   a second install keeps the operator's config (and says so); a missing one is installed"

# A build for the prefix /usr reads /etc/dnsfence/dnsfence.json, so its
# install writes the deny-all file there, not to /usr/etc (where it went
# before, and the unit's ConditionPathExists never found it). Configured
# only: the install script says where.
cmake -S "$SRC" -B "$tmp/usr-build" -DCMAKE_INSTALL_PREFIX=/usr -DDNSFENCE_TESTS=OFF >"$tmp/usr.log" 2>&1 ||
	fail "configuring a build for /usr failed: $(tail -n 5 "$tmp/usr.log")"
grep -q 'file(INSTALL "[^"]*/contrib/dnsfence.json" DESTINATION "/etc/dnsfence")' "$tmp/usr-build/cmake_install.cmake" ||
	fail "a build for /usr does not install its config to /etc/dnsfence: $(grep -n 'contrib/dnsfence.json' "$tmp/usr-build/cmake_install.cmake")"
grep -qxF "ConditionPathExists=/etc/dnsfence/dnsfence.json" "$tmp/usr-build/systemd/dnsfence.service" ||
	fail "a build for /usr: its unit does not wait for /etc/dnsfence/dnsfence.json"
echo "ok   a build for the prefix /usr installs its config to /etc/dnsfence, where its unit and binary look"

complete_words() { # WORDS...: what the completion offers for the last word
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _dnsfence; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$P/share/bash-completion/completions/dnsfence" "$@"
}
offered="$(complete_words dnsfence "")"
cmds="$("$BIN" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')"
[ "$(wc -l <<<"$cmds")" -ge 15 ] || fail "could not read the commands of --help"
for c in $cmds; do
	grep -qx "$c" <<<"$offered" || fail "completion does not offer the command $c: $offered"
done
grep -qx -- --unused-for <<<"$(complete_words dnsfence prune --)" || fail "completion does not offer prune's --unused-for"
[ -z "$(complete_words dnsfence zzz)" ] || fail "completion offers something for zzz"
echo "ok   the completion offers all $(wc -l <<<"$cmds") commands of --help and each command's options"
