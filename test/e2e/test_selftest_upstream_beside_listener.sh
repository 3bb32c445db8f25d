#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The self-test probes "a resolver on ADDR:53" for each upstream ADDR
# whose port is not 53. With the upstream on a loopback address beside
# the listener (a local resolver on 127.0.0.1:5300, dnsfence on
# 127.0.0.1:53: a sidecar's own cache, or the benchmark's nsd), that
# resolver is dnsfence itself: it answered the probe, and on the code
# before this test serve refused readiness ("OPEN: DNS over UDP to a
# resolver on 127.0.0.1:53 ... the fence is open there") and exited,
# telling the operator the fence was open when it was not.
#
# Controls: the same daemon serves, its allowed name resolves through
# the local upstream, and the probes that matter still run and hold (the
# upstream's own port straight, without the mark); with an upstream that
# is not on the listener's address the ":53" probes still run.
source "$(dirname "$0")/lib.sh"
df_setup

# nsd in the workload namespace on 127.0.0.1:5300, the test zones.
df_start_local_nsd

# local_upstream_user: the local nsd runs as root (a loopback upstream
# needs its resolver's user, test_local_upstream_squatter_refused.sh).
df_start_dnsfence allow='["www.allowed.test"]' upstreams='["127.0.0.1:5300"]' listen='["127.0.0.1:53"]' \
	local_upstream_user='"root"'
wl dig +time=2 +tries=1 @127.0.0.1 www.allowed.test A +short | grep -x 198.18.1.10 >/dev/null ||
	fail "www.allowed.test did not resolve through the local upstream"
expect_log_contains "DNS over UDP to the upstream 127.0.0.1:5300 directly"
! grep -q "a resolver on 127.0.0.1:53" "$DF_DNSFENCE_LOG" ||
	fail "the self-test probed dnsfence's own listener as a resolver: $(grep "a resolver on 127.0.0.1:53" "$DF_DNSFENCE_LOG")"
ok "with the upstream on 127.0.0.1:5300 beside the listener, serve is ready, the upstream's port is probed and held, and its own listener is not probed as a resolver"

# Control: an upstream elsewhere still gets its ":53" probes.
df_stop_dnsfence
df_start_dnsfence allow='["www.allowed.test"]' upstreams='["198.18.0.1:5300"]'
expect_log_contains "a resolver on 198.18.0.1:53"
ok "control: an upstream on another address still gets the resolver-on-53 probes"
