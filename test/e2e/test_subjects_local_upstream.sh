#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# With `subjects` only the subjects' packets enter the fence, so a
# resolver of the namespace that is no subject (systemd-resolved on
# 127.0.0.53 for `dnsfence exec`, a local unbound) answers the daemon
# unchecked, and needs no local_upstream_user. Before this test such a
# config was refused ("is a loopback address ... local_upstream_user"):
# `dnsfence exec` without -c, on a host whose resolv.conf names
# 127.0.0.53, could not start at all.
#
# Asserted:
# 1. subjects uid 4242, upstream nsd on 127.0.0.1:5300 (root, no
#    subject), no local_upstream_user: validate accepts it, and the
#    subject resolves and reaches the allowed name through it (the
#    positive control: the local resolver's answers pass).
# 2. nsd stops and the subject binds its port and answers the daemon's
#    question: its send fails (rule 2 drops every subject's answer to an
#    upstream question), its address is in no answer and no set, the
#    subject cannot reach it, and the log names uid 4242.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_listener 80
df_start_local_nsd

# 1. Accepted without the key; the local resolver answers.
df_config allow='["*.allowed.test"]' upstreams='["127.0.0.1:5300"]' subjects='{"users": ["4242"]}'
df_dnsfence validate
[ "$DF_CMD_RC" -eq 0 ] || fail "subjects with a loopback upstream and no local_upstream_user: validate exited $DF_CMD_RC: $DF_CMD_ERR"
df_start_dnsfence allow='["*.allowed.test"]' upstreams='["127.0.0.1:5300"]' subjects='{"users": ["4242"]}'
out="$(df_wl_as 4242 dig +time=3 +tries=1 @127.0.0.1 www.allowed.test A +short)" ||
	fail "the subject's question got no answer"
grep -qx 198.18.1.10 <<<"$out" || fail "the subject's answer for www.allowed.test: '$out'"
df_connect_as 4242 198.18.1.10 80 || fail "the subject cannot reach www.allowed.test:80"
! df_connect_as 4242 198.18.2.50 80 || fail "the subject reached 198.18.2.50, which nothing answered"
ok "subjects: the loopback upstream (nsd as root, no subject) answers without local_upstream_user; the subject reaches www, not 198.18.2.50"

# 2. The subject takes the resolver's port.
df_stop_local_nsd
df_squat 4242 127.0.0.1 "$DF_TMP/squat.log"
df_wl_as 4242 dig +time=5 +tries=1 @127.0.0.1 evil.allowed.test A >"$DF_TMP/evil.out" 2>&1 || true
grep -q asked "$DF_TMP/squat.log" ||
	fail "the squatting subject was never asked: the test proves nothing ($(cat "$DF_TMP/squat.log"))"
grep -q "send failed" "$DF_TMP/squat.log" ||
	fail "the squatting subject's answer was sent: $(cat "$DF_TMP/squat.log")"
! grep -q 198.18.2.50 "$DF_TMP/evil.out" || fail "the squatter's address is in the answer: $(cat "$DF_TMP/evil.out")"
expect_not_in_set dnsfence4 198.18.2.50
! df_connect_as 4242 198.18.2.50 80 || fail "the subject reached its own answer 198.18.2.50"
expect_log_contains "from uid 4242: an answer to dnsfence's question to the upstream 127.0.0.1"
ok "the subject on the upstream's port was asked; its answer never left (EPERM), is in no set, and the log names uid 4242"
