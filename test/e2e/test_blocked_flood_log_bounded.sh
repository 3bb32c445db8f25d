#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A flood of 10,000 blocked connects (to 10,000 different never-answered
# addresses, so deduplication does not help) produces a bounded number of
# attribution lines: the NFLOG rules are rate-limited (10/s, burst 20)
# and the daemon logs at most 20 lines per 10 s plus one summary line.
# The flood finishes within 60 s, the daemon keeps answering, and the
# flows are still counted (blocked_never_answered in the SIGUSR1 stats).
# Positive control: the first blocked connect is attributed.
source "$(dirname "$0")/lib.sh"

U=12345
N=10000
df_setup
df_start_dnsfence allow='["www.allowed.test"]'

if df_connect_as "$U" 198.19.255.254 80; then fail "198.19.255.254:80 was reachable"; fi
df_poll 30 grep -q "198.19.255.254:80 from uid $U: address was never answered" "$DF_DNSFENCE_LOG" ||
	fail "control: the first blocked connect was not attributed"
ok "control: a blocked connect is attributed"

start=$(date +%s)
df_wl_as "$U" timeout 60 "$DF_PY" - "$N" <<'PYEOF' || fail "the flood did not finish within 60 s"
import socket, sys
n = int(sys.argv[1])
refused = 0
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(("198.19.%d.%d" % (i // 250, i % 250 + 1), 80))
    except ConnectionRefusedError:
        refused += 1
    except OSError:
        pass
    finally:
        s.close()
if refused < n * 9 // 10:
    sys.exit("only %d of %d connects were refused" % (refused, n))
PYEOF
elapsed=$(($(date +%s) - start))
ok "$N blocked connects in ${elapsed}s"
sleep 1
n_lines="$(df_count -E "blocked tcp .* -> 198\.19\." "$DF_DNSFENCE_LOG")"
# Budget: 20 lines per 10 s window, over at most elapsed+1 s of windows.
bound=$(( (elapsed / 10 + 2) * 20 + 1 ))
[ "$n_lines" -le "$bound" ] || fail "$n_lines attribution lines for $N blocked connects (bound $bound)"
ok "$n_lines attribution lines for $N blocked connects (bound $bound)"

df_dig www.allowed.test A
expect_rcode NOERROR
kill -USR1 "$DF_DNSFENCE_PID"
df_poll 20 grep -q "blocked_never_answered=" "$DF_DNSFENCE_LOG" || fail "no stats line"
counted="$(grep -o "blocked_never_answered=[0-9]*" "$DF_DNSFENCE_LOG" | tail -n 1 | cut -d= -f2)"
[ "$counted" -ge 20 ] || fail "only $counted blocked flows counted"
ok "the daemon answers after the flood; $counted sampled flows counted"
expect_dnsfence_running
