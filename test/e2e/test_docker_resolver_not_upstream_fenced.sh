#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 1 in a container on a Docker network whose operator named
# another upstream than Docker's embedded resolver (here 198.18.0.1, as
# `"upstreams": ["1.1.1.1"]` would be in production): 127.0.0.11 is still
# there. A forwarder listens on 127.0.0.11 at a random high port inside
# the workload namespace and relays from OUTSIDE it (its upstream socket
# lives in the upstream namespace, as dockerd's lives in the host's), and
# the nat table DNATs 127.0.0.11:53 to that port, as Docker installs it.
# Rule 2 names only the configured upstreams and rule 5 only port 53, so
# the workload's query for a denied name straight to 127.0.0.11:PORT (the
# port is in /proc/net/udp for anyone to read) must still not be
# answered, nor reach unbound.
# Controls: before the fence, the same query through the forwarder is
# answered and reaches unbound (the forwarder works); with the fence, the
# daemon resolves an allowed name through its own upstream, and the query
# to 127.0.0.11:53 is rejected (rule 5).
source "$(dirname "$0")/lib.sh"
df_setup
WL_UID=4242
PORT=$((40000 + RANDOM % 20000))

df_docker_forwarder "$PORT"
ok "forwarder on 127.0.0.11:$PORT (relaying from the upstream namespace), 127.0.0.11:53 DNATed to it"

ask() { # ask PORT NAME: uid WL_UID's query straight at 127.0.0.11:PORT; 0 if answered
	df_wl_as "$WL_UID" dig +time=1 +tries=1 -p "$1" @127.0.0.11 "$2" A >/dev/null 2>&1
}
name="before-fence-$$.evil.test"
ask "$PORT" "$name" || fail "control: without the fence, 127.0.0.11:$PORT did not answer $name"
df_poll 30 df_unbound_saw "$name" || fail "control: $name did not reach unbound through the forwarder"
ok "control: without the fence, uid $WL_UID's query through 127.0.0.11:$PORT reaches the upstream"

df_start_dnsfence allow='["www.allowed.test"]' upstreams='["198.18.0.1"]'
df_dig www.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.10
ok "control: the daemon resolves www.allowed.test through its own upstream"

for port in 53 "$PORT"; do
	name="docker-$port-$$.evil.test"
	rc=0
	ask "$port" "$name" || rc=$?
	sleep 0.3
	if [ "$rc" -eq 0 ] || df_unbound_saw "$name"; then
		fail "uid $WL_UID's query for $name (denied) to Docker's resolver 127.0.0.11:$port was answered (dig exit $rc) or reached unbound: DNS around dnsfence"
	fi
	ok "uid $WL_UID querying 127.0.0.11:$port directly: no answer, nothing reaches the upstream"
done
expect_dnsfence_running
