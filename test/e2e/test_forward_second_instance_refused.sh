#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two forward-scope fences in one host namespace: one host, two bridges,
# two configs, each with its own state_dir, control socket and sets (what
# docs/deployment.md used to say was enough). The rules of both would
# live in the same chain, DNSFENCE-FWD, and setup writes that chain whole
# for its own interfaces: the second setup took the first bridge's rules
# out, and its container reached an address nobody resolved.
#
# Now setup refuses (exit 4) when the fence in place matches sets other
# than its config's, naming them and the fix, and so does teardown (it
# removes the whole chain); the first bridge stays fenced. Controls: the path out works (the second bridge's container,
# not yet fenced, reaches the address; the first container's allowed
# name connects); the refusal is about the other fence, not the config
# (after the first fence's teardown the second setup succeeds and fences
# its own bridge). The same for two output-scope configs of one
# namespace (DNSFENCE-OUT).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/forward_lab.sh" # the host, its bridge, the container

BR2="df$$br2"
CT3="df$$-ct3"
GW2_4=198.18.66.1
GW2_6=2001:db8:66::1
CT3_4=198.18.66.2
CT3_6=2001:db8:66::2

lab_bridge "$BR2" "$GW2_4" "$GW2_6"
lab_container "$CT3" "df$$e" "df$$j" "$CT3_4" "$CT3_6" "$BR2" "$GW2_4" "$GW2_6"
up ip route add 198.18.66.0/24 via "$DF_WL4"
up ip -6 route add 2001:db8:66::/64 via "$DF_WL6"
df_start_listener 8080

# from NS ADDR: a connection from the namespace NS to ADDR port 8080:
# 0 connected, else not.
from() { ip netns exec "$1" timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/8080"' _ "$2" 2>/dev/null; }

# --- the first fence: BR --------------------------------------------------------
lab_fence nft
lab_allowed_works "the first fence"
from "$CT" "$V4" && fail "the first fence lets its container reach $V4, an address nobody resolved"
from "$CT3" "$V4" || fail "control: the unfenced second bridge's container does not reach $V4"
ok "the first fence holds on $BR; the second bridge's container, unfenced, reaches $V4"

# --- the second config: BR2, its own state, socket and sets ---------------------
CONF_A=$DF_DNSFENCE_CONF
CONF_B="$DF_TMP/b/dnsfence.json"
mkdir -p "$DF_TMP/b"
"$DF_PY" - "$CONF_A" "$CONF_B" "$DF_TMP/b" "$BR2" "$GW2_4" "$GW2_6" <<'EOF'
import json, sys
a, b, d, br, g4, g6 = sys.argv[1:]
c = json.load(open(a))
c.update({"interfaces": [br], "listen": ["%s:53" % g4, "[%s]:53" % g6],
          "state_dir": d + "/state", "control": {"socket": d + "/control.sock"},
          "sets": {"ipv4": "dfb4", "ipv6": "dfb6"}})
json.dump(c, open(b, "w"), indent=2)
EOF
df_check_own_state "$CONF_B"
sets_a="$(env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" -c "$CONF_A" validate |
	"$DF_PY" -c 'import json, sys; s = json.load(sys.stdin)["sets"]; print(s["ipv4"], s["ipv6"])')"
[ -n "$sets_a" ] && [ "$sets_a" != "dfb4 dfb6" ] || fail "the two configs must name different sets (first: '$sets_a')"

DF_DNSFENCE_CONF=$CONF_B
df_dnsfence setup
DF_DNSFENCE_CONF=$CONF_A
[ "$DF_CMD_RC" -eq 4 ] ||
	fail "setup of a second fence in the same host namespace exited $DF_CMD_RC, expected 4 (refused): $DF_CMD_ERR"
for want in "DNSFENCE-FWD" "${sets_a% *}" "dfb4" "teardown" "interfaces"; do
	grep -qF -- "$want" <<<"$DF_CMD_ERR" || fail "the refusal does not name '$want': $DF_CMD_ERR"
done
ok "the second setup is refused (exit 4): $(grep -m1 "another config" <<<"$DF_CMD_ERR")"

# teardown with the second config would remove the whole chain too
DF_DNSFENCE_CONF=$CONF_B
df_dnsfence teardown
DF_DNSFENCE_CONF=$CONF_A
[ "$DF_CMD_RC" -eq 4 ] ||
	fail "teardown with the second config exited $DF_CMD_RC, expected 4 (refused): $DF_CMD_ERR"
grep -qF "nothing was removed" <<<"$DF_CMD_ERR" || fail "the teardown refusal does not say nothing was removed: $DF_CMD_ERR"
ok "teardown with the second config is refused (exit 4)"

from "$CT" "$V4" && fail "after the second setup the first bridge's container reaches $V4: its fence was taken out"
host iptables-nft-save -t filter | grep -- "-A DNSFENCE-FWD -i $BR " >/dev/null ||
	fail "the first bridge's rules are gone from DNSFENCE-FWD"
lab_allowed_works "after the refused second setup"
ok "the first bridge stays fenced"

# --- control: the same second setup once the first fence is gone ----------------
lab_unfence nft
DF_DNSFENCE_CONF=$CONF_B
df_dnsfence setup
[ "$DF_CMD_RC" -eq 0 ] || fail "control: the second setup after the first fence's teardown exited $DF_CMD_RC: $DF_CMD_ERR"
from "$CT3" "$V4" && fail "control: the second fence does not fence its own bridge"
df_dnsfence teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "control: teardown of the second fence exited $DF_CMD_RC: $DF_CMD_ERR"
DF_DNSFENCE_CONF=$CONF_A
ok "control: with the first fence torn down, the second config installs and fences $BR2"

# --- the same in the output scope: two configs for one namespace ----------------
CONF_C="$DF_TMP/c/dnsfence.json"
CONF_D="$DF_TMP/d/dnsfence.json"
mkdir -p "$DF_TMP/c" "$DF_TMP/d"
for x in c d; do
	"$DF_PY" - "$CONF_A" "$DF_TMP/$x" "$x" <<'EOF'
import json, sys
a, d, x = sys.argv[1:]
c = json.load(open(a))
for k in ("scope", "interfaces", "listen"):
    c.pop(k, None)
c.update({"state_dir": d + "/state", "control": {"socket": d + "/control.sock"}})
if x == "d":
    c["sets"] = {"ipv4": "dfd4", "ipv6": "dfd6"}
json.dump(c, open(d + "/dnsfence.json", "w"), indent=2)
EOF
done
in_conf() { # CONF CMD: dnsfence -c CONF CMD in the host namespace
	local keep=$DF_DNSFENCE_CONF
	DF_DNSFENCE_CONF=$1
	df_dnsfence "$2"
	DF_DNSFENCE_CONF=$keep
}
in_conf "$CONF_C" setup
[ "$DF_CMD_RC" -eq 0 ] || fail "output scope: the first config's setup exited $DF_CMD_RC: $DF_CMD_ERR"
in_conf "$CONF_D" setup
[ "$DF_CMD_RC" -eq 4 ] && grep -qF "DNSFENCE-OUT" <<<"$DF_CMD_ERR" ||
	fail "output scope: a second config's setup exited $DF_CMD_RC, expected 4 naming DNSFENCE-OUT: $DF_CMD_ERR"
in_conf "$CONF_D" teardown
[ "$DF_CMD_RC" -eq 4 ] || fail "output scope: a second config's teardown exited $DF_CMD_RC, expected 4: $DF_CMD_ERR"
host iptables-nft-save -t filter | grep -- "-A DNSFENCE-OUT .*--match-set dnsfence4 " >/dev/null ||
	fail "output scope: the first config's rules are gone"
in_conf "$CONF_C" teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "output scope: the first config's teardown exited $DF_CMD_RC: $DF_CMD_ERR"
in_conf "$CONF_D" setup
[ "$DF_CMD_RC" -eq 0 ] || fail "output scope control: the second setup after the first teardown exited $DF_CMD_RC: $DF_CMD_ERR"
in_conf "$CONF_D" teardown
[ "$DF_CMD_RC" -eq 0 ] || fail "output scope control: the second teardown exited $DF_CMD_RC: $DF_CMD_ERR"
ok "output scope: a second config's setup and teardown are refused while the first fence is in place, and work once it is gone"
