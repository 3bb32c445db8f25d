#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 2 across a set emptied behind the daemon's back: an address the
# daemon added once, then lost from the kernel set (the set destroyed and
# created again with no query in between, or flushed, or the entry
# deleted), is in the set again before the next answer hands it out, once
# SETS_FRESH_SECONDS (1 s) have passed since the kernel last confirmed it:
# the daemon trusts its memory of what it added for that long only.
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test", "a.b.allowed.test", "deep.a.b.allowed.test"]' guard_interval=3600

# 1. destroy + create, nothing asked in between
df_dig www.allowed.test AAAA
expect_rcode NOERROR
expect_in_set dnsfence6 2001:db8:1::10
# The rules hold the sets: open the fence to be able to destroy one.
df_open_fence
wl ipset destroy dnsfence6
wl ipset create dnsfence6 hash:ip family inet6 timeout 60
sleep 1.1 # SETS_FRESH_SECONDS
df_dig www.allowed.test AAAA
expect_rcode NOERROR
expect_answer_contains 2001:db8:1::10
expect_in_set dnsfence6 2001:db8:1::10
ok "dnsfence6 destroyed and recreated: the next answer's 2001:db8:1::10 is in the set again"

# 2. ipset flush
df_dig a.b.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.1.11
wl ipset flush dnsfence4
sleep 1.1 # SETS_FRESH_SECONDS
df_dig a.b.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.11
expect_in_set dnsfence4 198.18.1.11
ok "dnsfence4 flushed: the next answer's 198.18.1.11 is in the set again"

# 3. one entry deleted
df_dig deep.a.b.allowed.test A
expect_rcode NOERROR
wl ipset del dnsfence4 198.18.1.12
sleep 1.1 # SETS_FRESH_SECONDS
df_dig deep.a.b.allowed.test A
expect_rcode NOERROR
expect_answer_contains 198.18.1.12
expect_in_set dnsfence4 198.18.1.12
ok "entry deleted: the next answer's 198.18.1.12 is in the set again"
