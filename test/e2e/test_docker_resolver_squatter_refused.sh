#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack: squat Docker's embedded resolver's port while its socket is gone.
#
# Upstream 127.0.0.11 (Docker's resolver) is the one loopback upstream the
# config admits without local_upstream_user, and it got no answerer rule
# (fwrules.c render_answerer): rule 2's REPLY accept took every reply to
# the daemon's questions. Now its answerer drop spares only dockerd's uid
# (root; the test's forwarder, standing in for dockerd, runs as root). Docker DNATs 127.0.0.11:53 to a high port a
# socket of dockerd holds inside the container's namespace; while that
# socket is gone (dockerd restarting, the DNAT rules stay), any process
# of the namespace can bind 127.0.0.11:PORT (the port is in the nat table's
# rules and was in /proc/net/udp) and answer the daemon's questions.
#
# Asserted:
# 1. control: the daemon resolves www.allowed.test through the forwarder;
#    198.18.1.30 is fenced.
# 2. the forwarder stops; uid 4242 binds 127.0.0.11:PORT, is asked, and
#    answers 198.18.1.30 (no A record of the test zones; only a hint of
#    h3.allowed.test's HTTPS record, never asked here): not in the reply,
#    not in dnsfence4, not reachable.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
PORT=$((40000 + RANDOM % 20000))
df_docker_forwarder "$PORT"
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["127.0.0.11"]'
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
expect_fenced 198.18.1.30 80
ok "control: www.allowed.test resolves through 127.0.0.11 (DNATed to :$PORT); 198.18.1.30 fenced"

fwd=$(wl ss -Hulnp "sport = :$PORT" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
[ -n "$fwd" ] || fail "no process holds 127.0.0.11:$PORT"
kill "$fwd"
df_poll 50 bash -c "! ip netns exec $DF_WL ss -Hlun sport = :$PORT | grep -q ." ||
	fail "the forwarder still holds 127.0.0.11:$PORT"

df_squat 4242 127.0.0.11 "$DF_TMP/squat.log" "$PORT" 198.18.1.30
df_dig evil.allowed.test A +time=5 +tries=1
expect_squat_held "$DF_TMP/squat.log" 127.0.0.11 198.18.1.30
ok "uid 4242 on Docker's resolver port was asked, but 198.18.1.30 is not in the reply, not in dnsfence4, not reachable"
