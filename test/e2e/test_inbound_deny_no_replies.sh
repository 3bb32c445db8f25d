#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The ESTABLISHED accept and inbound connections. A program in the
# workload listens on 198.18.0.2:8081; a peer in the upstream namespace
# connects in. With the default `inbound: "allow"` the peer gets its
# replies (the documented default: the fence is for egress). With
# `inbound: "deny"` the accept holds only for connections the namespace
# opened (--ctdir ORIGINAL): the SYN-ACK never leaves, so nothing the
# workload writes reaches a peer that connected in. Control: with deny,
# the workload's own connections (DNS, an allowed name on 443) still work,
# and `check` is clean.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 443
WL_UID=4242
df_wl_as "$WL_UID" "$DF_PY" -m http.server --bind 198.18.0.2 8081 >"$DF_TMP/wl-http.log" 2>&1 &
DF_PIDS+=("$!")
df_poll 50 df_tcp_listening "$DF_WL" 8081 || fail "the workload's listener did not start"
peer_connects() { up timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.0.2/8081' 2>/dev/null; }

df_start_dnsfence allow='["www.allowed.test"]'
peer_connects || fail "inbound allow: the peer could not connect in"
ok "inbound allow (default): a peer that connects in gets replies"

df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]' inbound='"deny"'
if peer_connects; then
	fail "inbound deny: the peer connected in and got replies"
fi
ok "inbound deny: a peer that connects in gets no reply"

df_ask_connect www.allowed.test A 443
[ "$(df_asked_rcode)" = NOERROR ] || fail "www.allowed.test A: $(df_asked_rcode)"
expect_connected 198.18.1.10
df_dnsfence check
[ "$DF_CMD_RC" -eq 0 ] || fail "check with inbound deny exited $DF_CMD_RC: $DF_CMD_OUT"
ok "control: with inbound deny the workload's own DNS and connections work, check is clean"
expect_dnsfence_running
