#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 5 against a hostile workload: traffic to the upstream leaves
# only from the daemon's own (marked) sockets, on every packet.
#
# (a) The conntrack ride: c-ares closes its UDP socket after the answer,
#     but the conntrack entry 198.18.0.2:PORT <-> 198.18.0.1:53 lives on.
#     An unprivileged workload binds that port (here it sweeps a narrowed
#     ephemeral range, as an attacker sweeps the whole one) and queries a
#     denied name straight at the upstream: the query never reaches
#     unbound's query log. Control: the allowed query that opened the
#     entry did reach it, and the same sweep with a port the daemon never
#     used is rejected too (so the sweep itself is what is tested).
# (b) The same uid: a process running as the daemon's uid queries the
#     upstream directly (UDP and TCP): blocked; the daemon still forwards.
source "$(dirname "$0")/lib.sh"
df_setup
# The daemon's upstream socket gets a port from this range; the attacker
# sweeps it (the whole default range takes well under a second too).
wl sysctl -qw net.ipv4.ip_local_port_range="40000 40007"
df_start_dnsfence allow='["www.allowed.test"]'
WL_UID=4242

# --- (a) the conntrack ride
df_dig www.allowed.test A
expect_rcode NOERROR
df_poll 30 df_unbound_saw www.allowed.test || fail "the allowed query never reached unbound (control)"
ok "control: the daemon's query for www.allowed.test reached the upstream"
expect_no_ride "$WL_UID" ride "conntrack ride"

# --- (b) the daemon's own uid
duid="$(df_proc_field "$DF_DNSFENCE_PID" Uid | awk '{ print $2 }')"
[ "$duid" != 0 ] || fail "the daemon runs as uid 0"
same="sameuid-$$.evil.test"
for tcp in +notcp +tcp; do
	rc=0
	out="$(df_wl_as "$duid" dig +time=3 +tries=1 "$tcp" @198.18.0.1 "$same" A 2>&1)" || rc=$?
	[ "$rc" -ne 0 ] || fail "uid $duid (the daemon's) got an answer from the upstream ($tcp)"
	# Refused at once (reset / ICMP error), not left to time out: the
	# reject's own answer must get back to the sender.
	if grep -q "timed out" <<<"$out"; then
		fail "the refusal of $tcp DNS to the upstream timed out instead of being refused: $out"
	fi
done
sleep 0.5
if df_unbound_saw "$same"; then
	fail "a process with the daemon's uid $duid reached the upstream"
fi
ok "a process with the daemon's uid $duid cannot query the upstream (UDP, TCP)"

# The daemon itself still forwards, over UDP and TCP.
df_dig +tcp www.allowed.test AAAA
expect_rcode NOERROR
df_dig www.allowed.test AAAA
expect_rcode NOERROR
ok "control: the daemon still forwards (UDP and TCP)"
expect_dnsfence_running
