#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload is read twice: by the DNS process, then by the privileged
# parent (on IPC_RULES), which reads the file itself. The parent's read
# runs beside its loop, so its set and socket writers answer the DNS
# process meanwhile: while the parent's read is held, a fresh name below
# an allowed wildcard (a new address, an add) is answered NOERROR and its
# address is in the set. Read in the parent's loop, the add and the
# upstream socket the DNS process asks for wait until the read ends: no
# answer (the DNS process blocks on the socket), or SERVFAIL at the add's
# deadline.
#
# The hold is deterministic: the config path becomes a FIFO ("watch":
# false, so nothing else reads it), written once for the DNS process's
# read; the parent's read then waits in open(2) for a writer (the test
# sees it in wait_for_partner) until the test writes the file again.
# Positive controls: a fresh name is answered and put in the set before
# the reload; once released, the reload completes (`dnsfence reload`
# returns with the rules re-applied, which waits for the parent) and the
# name the new config adds resolves and is in the set.
source "$(dirname "$0")/lib.sh"
df_zone_add allowed.test.zone <<'ZONE'
pre.w   IN A 198.18.9.1
fresh.w IN A 198.18.9.3
late    IN A 198.18.9.2
ZONE
df_setup
ctl='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
df_start_dnsfence allow='["*.w.allowed.test"]' control="$ctl"
chmod 755 "$DF_TMP" # the daemon reads the config again after the privilege drop
conf="$DF_DNSFENCE_CONF"

df_dig pre.w.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.9.1
ok "before the reload: a fresh name below the wildcard is answered, its address in the set"

# The new config, kept as a file: the CLI reads its -c for the control
# socket (and would read the FIFO otherwise), the FIFO is fed from it.
df_config allow='["*.w.allowed.test", "late.allowed.test"]' control="$ctl"
mv "$conf" "$DF_TMP/new.json"
DF_DNSFENCE_CONF="$DF_TMP/new.json"
mkfifo -m 0644 "$DF_TMP/fifo"
mv "$DF_TMP/fifo" "$conf"

# A reader still waiting in open(2) on the FIFO (a failed test) is let go
# before the daemon is stopped: an O_RDWR open never blocks and counts as
# the writer it waits for.
release() {
	[ -p "$conf" ] || return 0
	timeout 5 bash -c 'exec 3<>"$1"; exec 3>&-' _ "$conf"
}
trap 'rc=$?; set +e; release; (exit "$rc"); df_cleanup' EXIT

# feed: the new config into the FIFO once, to the one reader waiting.
feed() {
	timeout 20 bash -c 'cat "$1" >"$2"' _ "$DF_TMP/new.json" "$conf" ||
		fail "nobody read the config from the FIFO within 20 s ($1)"
}

# parent_in_open: a thread of the parent waits in open(2) for the FIFO's
# writer.
parent_in_open() {
	local t
	for t in /proc/"$DF_DNSFENCE_PID"/task/*; do
		[ "$(cat "$t/wchan" 2>/dev/null)" = wait_for_partner ] && return 0
		grep -q fifo_open "$t/stack" 2>/dev/null && return 0
	done
	return 1
}

ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
	timeout 60 "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" reload \
	>"$DF_TMP/reload.out" 2>"$DF_TMP/reload.err" &
reload_pid=$!
DF_PIDS+=("$reload_pid")
feed "the DNS process's read"
df_poll 100 parent_in_open || fail "the parent never opened the config for its own read"
ok "the DNS process read the new config; the parent's read waits for the FIFO"

# Long enough for a SERVFAIL at the add's deadline (SETS_DEADLINE_MS).
df_dig +time=10 fresh.w.allowed.test A
[ "$DF_DIG_RC" -eq 0 ] ||
	fail "no answer in 10 s while the parent reads the config (dig exited $DF_DIG_RC)"
expect_rcode NOERROR
expect_answer_contains 198.18.9.3
expect_in_set dnsfence4 198.18.9.3
parent_in_open || fail "the parent's read ended before the query: nothing was proved"
ok "while the parent reads the config: a fresh name is answered NOERROR, its address in the set"

feed "the parent's read"
rc=0
wait "$reload_pid" || rc=$?
out="$(cat "$DF_TMP/reload.out")"
[ "$rc" -eq 0 ] || fail "reload exited $rc: $out $(cat "$DF_TMP/reload.err")"
grep -q '+1/-0 names' <<<"$out" || fail "reload did not report +1/-0 names: $out"
grep -q 'rules re-applied' <<<"$out" || fail "reload did not re-apply the rules: $out"
! grep -q 'the parent cannot read the reloaded config' "$DF_DNSFENCE_LOG" ||
	fail "the parent refused the reloaded config"
ok "released: the reload completed ($out)"

df_dig late.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.9.2
expect_dnsfence_running
ok "the name the new config adds resolves and is in the set"
