#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 5 with a Docker-style embedded resolver as the upstream: a
# forwarder listens on 127.0.0.11 at a random high port inside the
# workload namespace and relays from OUTSIDE it (its upstream socket lives
# in the upstream namespace, as dockerd's lives in the host's), and the
# nat table DNATs 127.0.0.11:53 to that port, as Docker installs it. The
# config's upstream is 127.0.0.11.
# Control: the daemon's own queries go through the forwarder (answered,
# and seen in unbound's query log). Attack: an unprivileged workload sends
# a query for a denied name straight to 127.0.0.11:PORT (the port is in
# /proc/net/udp for anyone to read): rejected, never reaches unbound. So
# is the same query to 127.0.0.11:53 (through the DNAT).
source "$(dirname "$0")/lib.sh"
df_setup
WL_UID=4242
PORT=$((40000 + RANDOM % 20000))

df_docker_forwarder "$PORT"
ok "forwarder on 127.0.0.11:$PORT (relaying from the upstream namespace), 127.0.0.11:53 DNATed to it"

df_start_dnsfence allow='["www.allowed.test"]' upstreams='["127.0.0.11"]'

# Control: the daemon resolves through the forwarder.
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
df_poll 30 df_unbound_saw www.allowed.test || fail "the daemon's query did not reach unbound through the forwarder"
ok "control: the daemon's query went through 127.0.0.11 to the upstream"

# Attack: straight at the forwarder's real port, and at :53.
for port in "$PORT" 53; do
	name="docker-$port-$$.evil.test"
	rc=0
	df_wl_as "$WL_UID" dig +time=1 +tries=1 -p "$port" @127.0.0.11 "$name" A >/dev/null 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "uid $WL_UID got an answer from 127.0.0.11:$port"
	sleep 0.3
	! df_unbound_saw "$name" || fail "$name reached unbound through 127.0.0.11:$port"
done
ok "uid $WL_UID querying 127.0.0.11:$PORT and :53 directly: rejected, nothing reaches the upstream"

# The daemon still works after the attempts.
df_dig www.allowed.test AAAA
expect_rcode NOERROR
ok "control: the daemon still resolves through the forwarder"
expect_dnsfence_running
