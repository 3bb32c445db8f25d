#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The config watch sees a Kubernetes ConfigMap update: the file is a
# symlink through "..data" to a timestamped directory, and an update
# renames a new "..data" symlink over the old one. No signal, no command:
# the added name resolves within 3 s, a removed one is denied and its
# address leaves the set. Then `dnsfence status` (text) and `status
# --json` (parsed with python3) show that reload with real values: trigger
# "watch", result ok, the new allow count, a new policy fingerprint, one
# address evicted, one set entry (the new name's) where there was one
# (the removed name's).
source "$(dirname "$0")/lib.sh"
df_setup
df_start_dnsfence allow='["www.allowed.test"]'
chmod 755 "$DF_TMP"
cd "$DF_TMP"

# Turn the config into the ConfigMap volume layout (a no-change reload).
mkdir ..2026_01_01_v1
mv dnsfence.json ..2026_01_01_v1/
ln -s ..2026_01_01_v1 ..data
ln -s ..data/dnsfence.json dnsfence.json
sleep 0.5
df_dig www.allowed.test A
expect_rcode NOERROR
expect_in_set dnsfence4 198.18.1.10
# set_entries is the kernel's count, which the parent takes once a
# second: wait for it to show the add.
one_entry() {
	df_dnsfence status --json
	[ "$DF_CMD_RC" -eq 0 ] && "$DF_PY" -c 'import json, sys
sys.exit(0 if json.loads(sys.argv[1])["set_entries"] == {"ipv4": 1, "ipv6": 0} else 1)' "$DF_CMD_OUT"
}
df_poll 30 one_entry || fail "status never counted the one set entry: $DF_CMD_OUT $DF_CMD_ERR"
before="$DF_CMD_OUT"
df_dig a.b.allowed.test A
expect_rcode NXDOMAIN

# The kubelet's update: new directory, new ..data, old directory gone.
mkdir ..2026_01_01_v2
"$DF_PY" - ..2026_01_01_v1/dnsfence.json ..2026_01_01_v2/dnsfence.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["allow"] = ["a.b.allowed.test", "deep.a.b.allowed.test"]
json.dump(c, open(sys.argv[2], "w"))
PY
ln -s ..2026_01_01_v2 ..data_tmp
mv -T ..data_tmp ..data
rm -rf ..2026_01_01_v1
cd /

resolves() { df_dig a.b.allowed.test A && [ "$(df_status)" = NOERROR ]; }
df_poll 30 resolves || fail "the ConfigMap update was not picked up within 3 s"
df_dig www.allowed.test A
expect_rcode NXDOMAIN
expect_log_contains "reload: watch"
expect_not_in_set dnsfence4 198.18.1.10
expect_in_set dnsfence4 198.18.1.11
ok "ConfigMap swap picked up by the watch: a.b allowed, www denied, www's 198.18.1.10 evicted"

# The new policy answers before the reload's last step (the rules, through
# the guard) has recorded it: wait for that record (not the no-change one
# of the layout change before it, also a watch reload), then read it whole.
reload_recorded() {
	df_dnsfence status --json
	[ "$DF_CMD_RC" -eq 0 ] && "$DF_PY" -c 'import json, sys
r = json.loads(sys.argv[1]).get("last_reload") or {}
sys.exit(0 if r.get("trigger") == "watch" and r.get("result") == "ok" and "+2/-1 names" in r.get("text", "") else 1)' "$DF_CMD_OUT" &&
		one_entry
}
df_poll 50 reload_recorded || fail "status never recorded the watch's reload: $DF_CMD_OUT $DF_CMD_ERR"
"$DF_PY" - "$before" "$DF_CMD_OUT" <<'PY' || fail "status --json does not show the reload: $DF_CMD_OUT"
import json, sys
b, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
last = a["last_reload"]
assert last["trigger"] == "watch" and last["result"] == "ok", last
assert "+2/-1 names" in last["text"], last
assert a["allow_entries"] == 2 and b["allow_entries"] == 1, (a, b)
assert a["reload_requests"] > b["reload_requests"], (a["reload_requests"], b["reload_requests"])
assert a["policy_fingerprint"] != b["policy_fingerprint"]
assert a["mode"] == "enforce" and a["counters"]["reloads"] >= 1
assert "1 addresses evicted" in last["text"], last
assert b["set_entries"] == {"ipv4": 1, "ipv6": 0}, b["set_entries"]
assert a["set_entries"] == {"ipv4": 1, "ipv6": 0}, a["set_entries"]
assert a["counters"]["addr_evicted"] == b["counters"]["addr_evicted"] + 1, (a["counters"], b["counters"])
assert b["provenance"]["addresses"] == 1 and a["provenance"]["addresses"] == 1, (a["provenance"], b["provenance"])
assert a["queries_in_flight"] == 0, a["queries_in_flight"]
PY
ok "status --json: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["last_reload"])' "$DF_CMD_OUT")"
df_dnsfence status
[ "$DF_CMD_RC" -eq 0 ] || fail "status exited $DF_CMD_RC: $DF_CMD_ERR"
for line in 'last_reload.trigger: watch' 'last_reload.result: ok' 'allow_entries: 2' 'mode: enforce' \
	'set_entries.ipv4: 1' 'set_entries.ipv6: 0'; do
	grep -qxF "$line" <<<"$DF_CMD_OUT" || fail "status text lacks '$line': $DF_CMD_OUT"
done
ok "status text shows the reload"
