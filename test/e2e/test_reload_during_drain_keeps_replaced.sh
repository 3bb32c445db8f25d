#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload that replaces the upstreams keeps the old one fenced as an
# upstream (rule 2: the daemon's mark required) while the daemon's
# questions to it drain, then drops it (IPC_RULES_DRAINED: its flows
# deleted, its rules gone). A second reload that comes during the drain
# and changes something else (ttl.min) must carry that on: before, the
# DNS process's new config forgot the replaced upstream, so the second
# reload's rules differed from the running ones (it waited for the
# parent to rewrite them) and the drain never came: the old upstream's
# rules stayed for good and `dnsfence check` reported them as extra.
# Deterministic: the second reload's read is held on a FIFO, which keeps
# the reload busy and so the drain from running before it. Positive
# controls: reload 1 re-applies the rules; at the end `check` is 0 and a
# fresh name resolves through the new upstream.
source "$(dirname "$0")/lib.sh"
df_setup
allow='["www.allowed.test", "*.b.allowed.test"]'
control='{"socket": "'"$DF_TMP"'/control.sock", "watch": false}'
df_start_dnsfence allow="$allow" control="$control"
chmod 755 "$DF_TMP" # the daemon reads the config again after the privilege drop
conf=$DF_DNSFENCE_CONF

# The second reload's file, and the FIFO both processes will read it from.
df_config allow="$allow" control="$control" upstreams='["[2001:db8::1]"]' ttl='{"min": 61}'
cp "$conf" "$DF_TMP/ttl.json"
chmod 644 "$DF_TMP/ttl.json"
mkfifo -m 644 "$DF_TMP/hold.fifo"

# Reload 1: the upstream becomes [2001:db8::1] (the same unbound).
df_config allow="$allow" control="$control" upstreams='["[2001:db8::1]"]'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
grep -q 'rules re-applied' <<<"$DF_CMD_OUT" || fail "the upstream change did not re-apply the rules: $DF_CMD_OUT"
ok "reload 1: the upstream is now [2001:db8::1]"

# Reload 2, at once (the drain runs only between reloads). The command
# reads its -c file for the control socket: given the regular copy.
ln -f "$DF_TMP/hold.fifo" "$conf"
DF_DNSFENCE_CONF=$DF_TMP/ttl.json df_dnsfence reload &
rl2=$!
timeout 20 cp "$DF_TMP/ttl.json" "$DF_TMP/hold.fifo" || fail "the DNS process did not read the FIFO"
# The parent's own read of the same file.
timeout 20 cp "$DF_TMP/ttl.json" "$DF_TMP/hold.fifo" || fail "the parent did not read the FIFO"
wait "$rl2"
df_wait_log 20 "reload: control: read $conf: +0/-0 names, rules unchanged" ||
	fail "reload 2 changed the rules or did not finish: $(grep 'reload: control' "$DF_DNSFENCE_LOG" | tail -1)"
ok "reload 2 (ttl.min, during the drain): rules unchanged, the replaced upstream still in them"

df_wait_log 100 "conntrack entries to replaced upstream(s) 198.18.0.1 deleted" ||
	fail "the old upstream's questions never drained: its rules stay"
df_poll 50 wl "$DNSFENCE_BIN" -c "$DF_TMP/ttl.json" check ||
	fail "check against the running config is not 0 after the drain"
ok "the drain came after reload 2: the old upstream's flows and rules are gone, check is 0"
df_dig deep.a.b.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.12
expect_dnsfence_running
ok "a fresh name resolves through the new upstream"
