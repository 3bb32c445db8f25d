#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Forward scope, enforce mode: a container's blocked connection and its
# DNS around the resolver are explained in the daemon's log, naming the
# container's source address and the interface (and bridge port, when
# br_netfilter saw the frame) it came in on, as the output scope names
# the uid. The container connects to 198.18.2.5 port 8080 (never
# answered) and asks 198.18.2.5 on port 53 directly, v4 and v6: each is
# refused and logged. Positive control: the allowed name resolves and
# connects, and its address earns no "blocked" line. Both iptables
# backends. The JSON line's fields name the same (event flow_blocked,
# src, dst, dport, interface), and /metrics counts them by interface
# (dnsfence_blocked_flows_by_interface_total).
#
# The name check does not run in the forward scope (issue 42): the start
# says the flows are checked by address only, and a config that asks for
# the check there is refused by name, never run without it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh"
df_start_listener 8080
# JSON lines: the text is msg, and the flow_blocked fields ride beside it.
LAB_EXTRA=(log='{"format": "json"}' metrics='"127.0.0.1:9253"')

# logged ERE: a line of the daemon's log matches (waits up to 5 s).
logged() { df_poll 50 grep -qaE -- "$1" "$DF_DNSFENCE_LOG"; }
esc() { sed 's/[.[\]]/\\&/g' <<<"$1"; }

for be in nft legacy; do
	lab_fence "$be"
	lab_allowed_works "$be"
	who="from interface $BR( port $HOST_PORT_IF)?"
	for pair in "$CT4 $V4" "$CT6 $V6"; do
		src=${pair% *} dst=${pair#* }
		rc=0
		ct timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$dst" 2>/dev/null || rc=$?
		[ "$rc" -ne 0 ] || fail "$be: the container connected to $dst port 8080, which nobody answered"
		if [ "${src#*:}" != "$src" ]; then s="\\[$(esc "$src")\\]" d="\\[$(esc "$dst")\\]"; else s=$(esc "$src") d=$(esc "$dst"); fi
		logged "blocked tcp $s:[0-9]+ -> $d:8080 $who: address was never answered by dnsfence" ||
			fail "$be: no log line names the container's source $src and $BR for its blocked connection to $dst:8080"
		ct dig +time=1 +tries=1 @"$dst" www.allowed.test A >/dev/null 2>&1 || true
		logged "blocked udp $s:[0-9]+ -> $d:53 $who: DNS to $(esc "$dst") bypassing dnsfence" ||
			fail "$be: no log line names the container's source $src and $BR for its DNS to $dst"
	done
	! grep -aE "blocked .* -> (198\.18\.1\.10|\[2001:db8:1::10\]):8080" "$DF_DNSFENCE_LOG" >/dev/null ||
		fail "$be: the allowed address was logged as blocked"
	grep -aE "blocked tcp .*$V4:8080" "$DF_DNSFENCE_LOG" | head -1
	"$DF_PY" - "$DF_DNSFENCE_LOG" "$V4" "$CT4" "$BR" <<'PYEOF' ||
import json, sys
log, dst, src, br = sys.argv[1:]
for line in open(log, errors="replace"):
    e = json.loads(line)
    if (e.get("event"), e.get("dst"), e.get("dport"), e.get("src"), e.get("interface")) == \
            ("flow_blocked", dst, 8080, src, br) and e.get("reason") == "never_answered" and "uid" not in e:
        sys.exit(0)
sys.exit(1)
PYEOF
		fail "$be: no flow_blocked JSON line with dst $V4, dport 8080, src $CT4, interface $BR"
	ok "$be: the container's blocked connection and DNS bypass are logged with its source address and $BR (v4, v6)"
	# The metrics count them by the interface they came in on.
	wl curl -sf --max-time 5 http://127.0.0.1:9253/metrics >"$DF_TMP/metrics-$be.txt" ||
		fail "$be: GET /metrics failed"
	for reason in never_answered dns; do
		n=$(sed -n "s/^dnsfence_blocked_flows_by_interface_total{interface=\"$BR\",reason=\"$reason\"} //p" "$DF_TMP/metrics-$be.txt")
		[ "${n:-0}" -ge 2 ] ||
			fail "$be: dnsfence_blocked_flows_by_interface_total for $BR, $reason: '${n:-none}', expected 2 or more (v4, v6): $(grep by_interface "$DF_TMP/metrics-$be.txt")"
	done
	! grep -q 'by_interface_total{interface="lo"' "$DF_TMP/metrics-$be.txt" || fail "$be: flows counted on lo"
	grep -q '^| `dnsfence_blocked_flows_by_interface_total` | counter |' "$DNSFENCE_SRC/docs/metrics.md" ||
		fail "dnsfence_blocked_flows_by_interface_total is not documented in docs/metrics.md"
	ok "$be: /metrics counts them on $BR: $(grep -c "^dnsfence_blocked_flows_by_interface_total{interface=\"$BR\"" "$DF_TMP/metrics-$be.txt") series"
	grep -qa "off in the forward scope: the fenced interfaces' flows are checked by address only" "$DF_DNSFENCE_LOG" ||
		fail "$be: the start does not say the name check is off in the forward scope"
	lab_unfence "$be"
done
ok "the start says the name check is off in the forward scope (address only)"

for m in enforce audit; do
	"$DF_PY" - "$DF_DNSFENCE_CONF" "$DF_TMP/nc-$m.json" "$m" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["name_check"] = {"mode": sys.argv[3]}
json.dump(c, open(sys.argv[2], "w"))
PYEOF
	rc=0
	out=$(env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" -c "$DF_TMP/nc-$m.json" validate 2>&1) || rc=$?
	[ "$rc" -ne 0 ] || fail "name_check mode $m in the forward scope validates (rc 0): it would not run"
	grep -q "name_check.mode: \"$m\" runs in the output scope only" <<<"$out" ||
		fail "name_check mode $m in the forward scope: the refusal does not name the key: $out"
done
rc=0
out=$(env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" validate 2>&1) || rc=$?
[ "$rc" -eq 0 ] || fail "control: the same config without name_check does not validate: $out"
"$DF_PY" -c 'import json, sys; assert json.load(sys.stdin)["name_check"]["mode"] == "off"' <<<"$out" ||
	fail "validate does not show the name check off in the forward scope: $out"
ok "name_check enforce or audit in the forward scope is refused by name (exit $rc without it; validate shows it off)"
