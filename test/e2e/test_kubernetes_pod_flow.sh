#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/kubernetes/dnsfence.yaml's pod, replayed on one machine: one
# network namespace (the pod's), the ConfigMap's config (upstream and
# allow list pointed at the test network), "dnsfence setup" as uid 0 with
# exactly the init container's capabilities, then "dnsfence serve" as uid 0
# with exactly the sidecar's (drop ALL + the manifest's add list, no new
# privileges), both read from the manifest. Asserted: the startupProbe
# command fails before the sidecar serves and passes after; the sidecar
# dropped itself to the ConfigMap's uid with CapEff cap_net_admin only; a
# workload uid with no capabilities resolves and connects to the allowed
# name, and a denied name neither resolves nor connects.
source "$(dirname "$0")/lib.sh"
df_init
MANIFEST="$DNSFENCE_SRC/contrib/kubernetes/dnsfence.yaml"
[ -f "$MANIFEST" ] || fail "no $MANIFEST"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml is not installed (contrib/deps.sh)"
df_setup

# From the manifest: the config, and the caps of setup and the sidecar.
/usr/bin/python3 - "$MANIFEST" "$DF_TMP" <<'PYEOF'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = {d["kind"]: d for d in docs}
conf = json.loads(kinds["ConfigMap"]["data"]["dnsfence.json"])
# The test network instead of the cluster's: unbound is the "cluster DNS".
conf["upstreams"] = ["198.18.0.1"]
conf["allow"] = conf.get("allow", []) + ["www.allowed.test"]
conf["allow_cidrs"] = []
conf["log"] = {"level": "debug"}
# The pod's emptyDir at /run holds the control socket; here, the temp dir.
conf["control"] = {"socket": sys.argv[2] + "/control.sock", "watch": False}
conf["state_dir"] = sys.argv[2] + "/state"
json.dump(conf, open(sys.argv[2] + "/dnsfence.json", "w"), indent=2)
inits = kinds["Deployment"]["spec"]["template"]["spec"]["initContainers"]
for c, name in zip(inits, ("setup", "sidecar")):
    caps = c["securityContext"]["capabilities"]
    assert caps["drop"] == ["ALL"], caps
    with open("%s/caps.%s" % (sys.argv[2], name), "w") as f:
        f.write(",".join("+" + a.lower() for a in caps["add"]) + "\n")
    with open("%s/uid.%s" % (sys.argv[2], name), "w") as f:
        f.write("%d\n" % c["securityContext"]["runAsUser"])
with open(sys.argv[2] + "/probe.cmd", "w") as f:
    f.write("\n".join(inits[1]["startupProbe"]["exec"]["command"]) + "\n")
PYEOF
DF_DNSFENCE_CONF="$DF_TMP/dnsfence.json"
df_check_own_state
setup_caps="$(cat "$DF_TMP/caps.setup")"
side_caps="$(cat "$DF_TMP/caps.sidecar")"
pod_uid="$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["user"])' "$DF_DNSFENCE_CONF")"
[ "$(cat "$DF_TMP/uid.setup")" = 0 ] && [ "$(cat "$DF_TMP/uid.sidecar")" = 0 ] ||
	fail "the manifest's setup and sidecar are expected to run as uid 0"

# as_container CAPS CMD...: in the pod's namespace, uid 0 whose bounding
# set (so permitted and effective after exec) is exactly CAPS, nothing
# inheritable or ambient, no_new_privs: what a container runtime gives a
# container with runAsUser 0, drop ALL, add CAPS and
# allowPrivilegeEscalation false.
as_container() {
	local caps=$1
	shift
	ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		setpriv --reuid 0 --regid 0 --clear-groups --inh-caps=-all \
		--bounding-set="-all,$caps" --no-new-privs "$@"
}
# The startupProbe's command, with the binary and config under test.
probe_cmd() {
	as_container "$side_caps" "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" probe
}
grep -qx probe "$DF_TMP/probe.cmd" || fail "the manifest's startupProbe does not run 'dnsfence probe'"

# 1. The init container.
out="$(as_container "$setup_caps" "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" setup 2>&1)" ||
	fail "setup with the init container's capabilities ($setup_caps) failed: $out"
ok "init container: setup as uid 0 with only $setup_caps"

# 2. The startupProbe fails while nothing serves.
rc=0
perr="$(probe_cmd 2>&1)" || rc=$?
[ "$rc" -eq 1 ] || fail "probe before serve: expected exit 1, saw $rc: $perr"
ok "startupProbe before the sidecar serves: exit 1 ($perr)"

# 3. The sidecar.
DF_DNSFENCE_LOG="$DF_TMP/dnsfence.log"
ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
	setpriv --reuid 0 --regid 0 --clear-groups --inh-caps=-all \
	--bounding-set="-all,$side_caps" --no-new-privs \
	"$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" serve >>"$DF_DNSFENCE_LOG" 2>&1 &
DF_DNSFENCE_PID=$!
DF_PIDS+=("$DF_DNSFENCE_PID")
n=50
until probe_cmd 2>/dev/null; do
	kill -0 "$DF_DNSFENCE_PID" 2>/dev/null || fail "the sidecar exited instead of serving"
	n=$((n - 1))
	[ "$n" -gt 0 ] || fail "the startupProbe did not pass within 5 s"
	sleep 0.1
done
ok "startupProbe passes once the sidecar answers"

read -r ruid euid suid fsuid <<<"$(df_proc_field "$DF_DNSFENCE_PID" Uid)"
[ "$ruid" = "$pod_uid" ] && [ "$euid" = "$pod_uid" ] && [ "$suid" = "$pod_uid" ] ||
	fail "the sidecar runs as uid $ruid/$euid/$suid, expected $pod_uid (the ConfigMap's user)"
eff="$(df_proc_field "$DF_DNSFENCE_PID" CapEff)"
[ "$eff" = 0000000000001000 ] || fail "sidecar CapEff $eff, expected 0000000000001000 (cap_net_admin only)"
prm="$(df_proc_field "$DF_DNSFENCE_PID" CapPrm)"
(((16#$prm & ~16#3000) == 0)) || fail "sidecar CapPrm $prm holds more than cap_net_admin and cap_net_raw"
[ "$(df_proc_field "$DF_DNSFENCE_PID" NoNewPrivs)" = 1 ] || fail "sidecar without no_new_privs"
ok "sidecar dropped itself: Uid $ruid, CapEff $eff, CapPrm $prm"

# 4. The app container: uid 1000, no capabilities.
df_start_listener 80
out="$(df_wl_as 1000 getent ahosts www.allowed.test 2>&1)" || fail "workload cannot resolve www.allowed.test: $out"
grep -q 198.18.1.10 <<<"$out" || fail "workload resolved www.allowed.test without 198.18.1.10: $out"
df_connect_as 1000 198.18.1.10 80 || fail "workload cannot connect to www.allowed.test (198.18.1.10:80)"
ok "workload (uid 1000, no caps) resolves and connects to www.allowed.test"
rc=0
out="$(df_wl_as 1000 getent ahosts www.evil.test 2>&1)" || rc=$?
[ "$rc" -ne 0 ] || fail "workload resolved the denied www.evil.test: $out"
! df_connect_as 1000 198.18.3.1 80 2 || fail "workload connected to www.evil.test's address 198.18.3.1"
! df_unbound_saw www.evil.test || fail "www.evil.test reached the upstream"
ok "denied www.evil.test: no answer, no connection, never upstream"

# The guard, running with the sidecar's NET_RAW passed on, can read the
# rules back: no complaint in the log after one interval.
! grep -q "cannot read back\|no cap_net_raw" "$DF_DNSFENCE_LOG" || fail "the guard lacks cap_net_raw: $(grep -m1 'net_raw' "$DF_DNSFENCE_LOG")"
expect_dnsfence_running

# 5. A ConfigMap edit reaches the running sidecar: what `kubectl exec -c
# dnsfence POD -- dnsfence reload` does (the sidecar's uid 0 and caps).
chmod 755 "$DF_TMP" # the ConfigMap volume is world-readable (0644)
/usr/bin/python3 - "$DF_DNSFENCE_CONF" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["allow"].append("a.b.allowed.test")
json.dump(c, open(sys.argv[1], "w"), indent=2)
PYEOF
out="$(as_container "$side_caps" "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" reload 2>&1)" ||
	fail "reload in the sidecar container failed: $out"
out="$(df_wl_as 1000 getent ahosts a.b.allowed.test 2>&1)" || fail "workload cannot resolve the name added by reload: $out"
grep -q 198.18.1.11 <<<"$out" || fail "a.b.allowed.test resolved without 198.18.1.11: $out"
expect_dnsfence_running
ok "ConfigMap edit + reload in the sidecar: a.b.allowed.test resolves, no restart"
