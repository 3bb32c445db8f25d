#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Nothing on disk that root or the daemon's user did not write is trusted
# (docs/configuration.md, `state_dir`).
#  1. the attack: state_dir below a world-writable folder (1777, as /tmp),
#     made first by another user (uid 4242, mode 0777), who planted prov.state.tmp
#     (0666) there and kept a link to it. setup refuses the directory
#     (exit 2, naming `state_dir`, the path, the owner found and the fix),
#     and nothing is written into the planted file. (Before: the daemon wrote its state through the planted
#     file and renamed it into place; the user relinked 198.18.1.20 to an
#     allowed name, and the narrower restart kept it open.)
#  2. a state file the daemon did not write, in a correct directory:
#     prov.state owned by uid 4242, mode 0666, relinking 198.18.1.20 to
#     www.allowed.test, is refused on load: the narrower restart flushes,
#     198.18.1.20 stays closed.
#  3. a planted temporary file in a correct directory (prov.state.tmp of
#     uid 4242, 0666, linked elsewhere): the daemon's exit writes a fresh
#     prov.state, nothing goes through the planted file.
#  4. control: the correct directory keeps the entries across a restart
#     with another policy (the allowed name's entry kept, by prov.state).
#  5. `dnsfence suggest` reads the daemon's own suggest.json (control),
#     and refuses one handed to uid 4242 (0666): the names it suggests
#     must not be another user's.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 443
chmod 711 "$DF_TMP" # uid 4242 makes its folder below it
pub="$DF_TMP/pub"
mkdir "$pub"
chmod 1777 "$pub"

as_other() { setpriv --reuid 4242 --regid 4242 --clear-groups "$@"; }

# relink FILE: every link of FILE to 198.18.1.20 now names www.allowed.test.
relink() {
	"$DF_PY" - "$1" <<'EOF'
import sys
wire = "".join("%02x%s" % (len(l), l.encode().hex()) for l in "www.allowed.test".split(".")) + "00"
lines = open(sys.argv[1]).read().splitlines()
out = []
for line in lines:
    f = line.split(" ")
    if f[0] == "L" and f[1] == "198.18.1.20":
        f[3] = wire
    out.append(" ".join(f))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
}

# --- 1. the directory made by another user
as_other mkdir -m 0777 "$pub/state" # so that any daemon user may write
as_other sh -c "umask 0; printf 'planted\n' >'$pub/state/prov.state.tmp'; ln '$pub/state/prov.state.tmp' '$pub/keep'"
df_config allow='["*.allowed.test", "target.cdn.test"]' state_dir="\"$pub/state\""
df_dnsfence setup
if [ "$DF_CMD_RC" -eq 0 ]; then
	# What got out before the directory was judged: the attack to its end.
	df_start_dnsfence allow='["*.allowed.test", "target.cdn.test"]' state_dir="\"$pub/state\""
	df_ask_connect target.cdn.test A 443
	df_stop_dnsfence
	[ "$(cat "$pub/keep")" = planted ] ||
		df_log "the daemon wrote its state into the planted file: $(head -c 300 "$pub/keep")"
	relink "$pub/state/prov.state" # its owner, uid 4242, may
	df_start_dnsfence allow='["*.allowed.test"]' state_dir="\"$pub/state\""
	wl ipset test dnsfence4 198.18.1.20 2>/dev/null &&
		fail "a state_dir made by uid 4242 was used; its planted prov.state kept 198.18.1.20 open after the narrower restart"
	fail "setup used a state_dir made by uid 4242 (exit 0): $DF_CMD_ERR"
fi
[ "$DF_CMD_RC" -eq 2 ] || fail "setup with a state_dir made by uid 4242 exited $DF_CMD_RC, not 2: $DF_CMD_ERR"
grep -q "state_dir $pub/state is owned by uid 4242 with mode 0777: refusing" <<<"$DF_CMD_ERR" ||
	fail "the refusal does not name state_dir, the path and the owner: $DF_CMD_ERR"
grep -q "chown root" <<<"$DF_CMD_ERR" || fail "the refusal does not say the fix: $DF_CMD_ERR"
df_dnsfence run
[ "$DF_CMD_RC" -eq 2 ] || fail "run with a state_dir made by uid 4242 exited $DF_CMD_RC, not 2: $DF_CMD_ERR"
[ "$(cat "$pub/keep")" = planted ] || fail "something was written into the planted file: $(cat "$pub/keep")"
[ ! -e "$pub/state/prov.state" ] || fail "a prov.state appeared in the refused state_dir"
ok "a state_dir made by another user is refused (exit 2, the owner and the fix named); the planted file untouched"

# --- 2. a state file the daemon did not write
state="$DF_TMP/state"
df_start_dnsfence allow='["*.allowed.test", "target.cdn.test"]'
df_ask_connect www.allowed.test A 443
expect_connected 198.18.1.10
df_ask_connect target.cdn.test A 443
expect_connected 198.18.1.20
df_stop_dnsfence
[ -f "$state/prov.state" ] || fail "the daemon left no prov.state in $state"
relink "$state/prov.state"
chown 4242:4242 "$state/prov.state"
chmod 0666 "$state/prov.state"
df_start_dnsfence allow='["*.allowed.test"]'
expect_not_in_set dnsfence4 198.18.1.20
expect_fenced 198.18.1.20 443
grep -q "prov.state is a file owned by uid 4242 with mode 0666: refused" <<<"$DF_CMD_ERR" ||
	fail "setup did not say it refused the planted prov.state: $DF_CMD_ERR"
ok "a prov.state of uid 4242 (0666) is refused on load: the narrower restart flushes, 198.18.1.20 stays closed"

# --- 3. a planted temporary file in the correct directory
df_ask_connect www.allowed.test A 443
expect_connected 198.18.1.10
printf 'planted\n' >"$state/prov.state.tmp"
chown 4242:4242 "$state/prov.state.tmp"
chmod 0666 "$state/prov.state.tmp"
ln "$state/prov.state.tmp" "$DF_TMP/keep2"
df_stop_dnsfence
[ "$(cat "$DF_TMP/keep2")" = planted ] || fail "the daemon wrote through the planted prov.state.tmp: $(head -c 300 "$DF_TMP/keep2")"
[ "$(stat -c %i "$state/prov.state")" != "$(stat -c %i "$DF_TMP/keep2")" ] ||
	fail "the planted file was renamed into place"
[ "$(stat -c %a "$state/prov.state")" = 640 ] || fail "prov.state has mode $(stat -c %a "$state/prov.state"), not 640"
ok "a planted prov.state.tmp is replaced, never written through"

# --- 4. control: the correct directory keeps the entries across a restart
df_start_dnsfence allow='["www.allowed.test"]'
grep -q "1 set entries kept" <<<"$DF_CMD_ERR" || fail "setup did not keep the entry by prov.state: $DF_CMD_ERR"
expect_in_set dnsfence4 198.18.1.10
df_tcp_connect 198.18.1.10 443 || fail "198.18.1.10:443 unreachable after the restart"
ok "control: a correct state_dir keeps www.allowed.test's entry across a restart with another policy"

# --- 5. `dnsfence suggest` reads no suggest.json another user wrote
df_stop_dnsfence
[ -f "$state/suggest.json" ] || fail "the daemon left no suggest.json in $state"
df_dnsfence suggest
[ "$DF_CMD_RC" -eq 0 ] || fail "control: suggest of the daemon's own suggest.json exited $DF_CMD_RC: $DF_CMD_ERR"
chown 4242:4242 "$state/suggest.json"
chmod 0666 "$state/suggest.json"
df_dnsfence suggest
[ "$DF_CMD_RC" -ne 0 ] || fail "suggest used a suggest.json of uid 4242 (0666): $DF_CMD_OUT"
grep -q "suggest.json is a file owned by uid 4242 with mode 0666: refused" <<<"$DF_CMD_ERR" ||
	fail "suggest did not say why it refused the file: $DF_CMD_ERR"
ok "suggest reads the daemon's own suggest.json, and refuses one of uid 4242 (0666)"
