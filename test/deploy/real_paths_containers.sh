# SPDX-License-Identifier: GPL-2.0-or-later
# real_paths.sh, the container parts: the image, the sidecar with an app
# container, the Compose file, the Kubernetes pod's order. Sourced by
# real_paths.sh (its helpers, lib.sh's namespaces, podman's confined
# configuration); not a test of its own.

RP_IMAGE=localhost/dnsfence:0.1.0
RP_BASE=localhost/debian:bookworm-slim
# The image's default state_dir, as the entrypoint keeps it: inside each
# container, on that container's own /run, never the host's. The sidecar
# is tested with the image's defaults, so it keeps this one.
RP_CT_STATE=/run/dnsfence

# The app (mounted as /app.sh): who it is, its resolver, the allowed and
# the denied name.
rp_app_script() {
	cat >"$DF_TMP/app.sh" <<'APP'
echo "uid $(id -u) gid $(id -g)"
awk '/^(CapEff|CapPrm|CapBnd|NoNewPrivs):/ { print $1, $2 }' /proc/self/status
grep '^nameserver' /etc/resolv.conf | sed 's/^/resolv /'
if a=$(getent ahosts www.allowed.test); then
	echo "allowed-resolves $(echo "$a" | awk '{ print $1 }' | sort -u | tr '\n' ' ')"
fi
if timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.10/80' 2>/dev/null; then echo allowed-connects; fi
if getent hosts www.evil.test >/dev/null; then echo denied-resolves; fi
if timeout 2 bash -c 'exec 3<>/dev/tcp/198.18.3.1/80' 2>/dev/null; then echo denied-connects; fi
echo app-done
APP
	chmod 644 "$DF_TMP/app.sh"
	chmod 711 "$DF_TMP"
}

# rp_check_app WHAT OUTPUT: the app ran unprivileged, asked 127.0.0.1, the
# allowed name resolved and connected, the denied one did neither; and
# dnsfence answers the denied name NXDOMAIN.
rp_check_app() {
	local what=$1 out=$2
	grep -qx app-done <<<"$out" || fail "$what: the app did not run: $out"
	grep -qx "uid 1000 gid 1000" <<<"$out" || fail "$what: app identity: $out"
	grep -qx "CapEff: 0000000000000000" <<<"$out" || fail "$what: the app holds capabilities: $out"
	grep -qx "CapPrm: 0000000000000000" <<<"$out" || fail "$what: the app holds capabilities: $out"
	grep -qx "NoNewPrivs: 1" <<<"$out" || fail "$what: the app has no no_new_privs: $out"
	[ "$(grep '^resolv ' <<<"$out")" = "resolv nameserver 127.0.0.1" ] ||
		fail "$what: the app's resolv.conf does not name only 127.0.0.1: $out"
	grep -q "^allowed-resolves .*198\.18\.1\.10 " <<<"$out" || fail "$what: the allowed name did not resolve: $out"
	grep -qx allowed-connects <<<"$out" || fail "$what: the allowed name did not connect: $out"
	! grep -qx denied-resolves <<<"$out" || fail "$what: the denied name resolved: $out"
	! grep -qx denied-connects <<<"$out" || fail "$what: the app reached an address nobody resolved: $out"
	local st
	st=$(wl dig +time=2 +tries=1 @127.0.0.1 www.evil.test A | sed -n 's/.*status: \([A-Z]*\).*/\1/p')
	[ "$st" = NXDOMAIN ] || fail "$what: the denied name: status '$st', expected NXDOMAIN"
	ok "$what: app uid 1000, no capabilities, resolver 127.0.0.1; allowed name resolves and connects, denied one NXDOMAIN and unreachable"
}

# rp_daemon_status: the dnsfence process in the namespace: uid and CapEff.
rp_daemon_status() {
	local p
	for p in $(ip netns pids "$DF_WL"); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dnsfence ]; then
			echo "uid $(awk '/^Uid:/ { print $2 }' "/proc/$p/status") CapEff $(df_proc_field "$p" CapEff)"
			return 0
		fi
	done
	return 1
}

# rp_healthy NAME TENTHS: poll the image's HEALTHCHECK until it passes.
rp_healthy() {
	df_poll "$2" podman healthcheck run "$1" >/dev/null 2>&1
}

# rp_why NAME: why a container is not healthy, for a failure message: its
# state, what its healthcheck says now, and its log without the guard's
# repeating line (which would hide the start-up).
rp_why() {
	echo "state: $(podman inspect --format '{{.State.Status}} (exit {{.State.ExitCode}})' "$1" 2>&1)"
	echo "healthcheck: $(podman exec "$1" /usr/local/bin/dnsfence-healthcheck 2>&1)"
	echo "--- its log (guard lines left out):"
	podman logs "$1" 2>&1 | grep -v 'guard: rules and sets in place' | tail -n 40
}

rp_container_image() {
	rp_app_script
	# Straight from mmdebstrap into podman's storage (no tarball of ours),
	# unless DNSFENCE_REAL_CACHE keeps one.
	if [ -n "${DNSFENCE_REAL_CACHE:-}" ]; then
		if [ ! -s "$RP_CACHE/base.tar" ]; then
			rp_base "$RP_CACHE/base.tar.new" >/dev/null ||
				{ tail -n 20 "$RP_WORK/mmdebstrap-base.log" >&2; fail "mmdebstrap of the container base failed"; }
			mv "$RP_CACHE/base.tar.new" "$RP_CACHE/base.tar"
		fi
		podman import --quiet "$RP_CACHE/base.tar" "$RP_BASE" >/dev/null ||
			fail "podman import of the base tarball failed"
	else
		# Compressed: podman keeps a copy of the stream while it builds
		# the layer (about 0.9 GB at the peak instead of 1.4).
		rp_base - | gzip -1 | podman import --quiet - "$RP_BASE" >/dev/null ||
			{ tail -n 20 "$RP_WORK/mmdebstrap-base.log" >&2; fail "mmdebstrap | podman import of the container base failed"; }
	fi
	ok "container base from $RP_MIRROR: $(podman image inspect --format '{{.Size}}' "$RP_BASE" | awk '{ printf "%d", $1 / 1048576 }') MB"
	# The Dockerfile's FROM, as "docker build" would find it.
	podman tag "$RP_BASE" docker.io/library/debian:bookworm-slim
	local t0=$SECONDS
	podman build --pull=never --network=none --format docker "${RP_ULIMITS[@]}" \
		-f "$DNSFENCE_SRC/contrib/docker/Dockerfile" -t "$RP_IMAGE" "$DNSFENCE_SRC" \
		>"$RP_WORK/build.log" 2>&1 || { tail -n 30 "$RP_WORK/build.log" >&2; fail "podman build of contrib/docker/Dockerfile failed"; }
	podman image inspect --format '{{json .Config.Healthcheck}}' "$RP_IMAGE" | grep dnsfence-healthcheck >/dev/null ||
		fail "the built image has no dnsfence-healthcheck HEALTHCHECK"
	ok "contrib/docker/Dockerfile built unchanged, offline (--pull=never --network=none) in $((SECONDS - t0)) s"
}

# The sidecar pattern with plain podman, then --read-only.
rp_container_sidecar() {
	local caps=() c out
	# Exactly the capabilities compose.yaml and docs/deployment.md give.
	for c in $(/usr/bin/python3 -c 'import sys, yaml
s = yaml.safe_load(open(sys.argv[1]))["services"]["dnsfence"]
assert s["cap_drop"] == ["ALL"]
print(" ".join(s["cap_add"]))' "$DNSFENCE_SRC/contrib/docker/compose.yaml"); do
		caps+=(--cap-add "$c")
	done
	# No "upstreams": the image's pattern, from resolv.conf (issue 14, bug 2).
	printf '{"allow": ["www.allowed.test"], "ports": ["tcp/80"], "log": {"level": "debug"}}\n' >"$DF_TMP/side.json"
	local run=(podman run "${RP_ULIMITS[@]}" --network "ns:$RP_NS" --dns "$DF_UP4" --cap-drop ALL "${caps[@]}"
		--security-opt no-new-privileges -v "$DF_TMP/side.json:/etc/dnsfence/dnsfence.json:ro")

	# Bug 3: the daemon answers but resolv.conf still names the upstream
	# (what the entrypoint's window looks like): probe passes, the
	# image's healthcheck must not.
	"${run[@]}" -d --name rp-early --entrypoint /usr/sbin/dnsfence "$RP_IMAGE" run >/dev/null 2>>"$RP_WORK/podman.log" ||
		fail "cannot start the daemon-only container"
	df_poll 100 podman exec rp-early /usr/sbin/dnsfence probe >/dev/null 2>&1 ||
		fail "the daemon-only container does not answer: $(podman logs rp-early 2>&1 | tail -n 5)"
	if podman healthcheck run rp-early >/dev/null 2>&1; then
		fail "the healthcheck passes while resolv.conf still names the upstream ($(podman exec rp-early cat /etc/resolv.conf | grep nameserver))"
	fi
	ok "healthcheck unhealthy while the daemon answers but resolv.conf is not switched (probe alone passes)"
	podman rm -f -t 0 rp-early >/dev/null 2>&1
	rp_open_ns

	# The sidecar as documented: the entrypoint, no command.
	"${run[@]}" -d --name rp-side "$RP_IMAGE" >/dev/null 2>>"$RP_WORK/podman.log" || fail "cannot start the sidecar"
	# 60 s: the entrypoint waits up to 30 s for the daemon, then switches
	# resolv.conf; a loaded machine takes a while to get there.
	rp_healthy rp-side 600 || fail "the sidecar did not become healthy within 60 s: $(rp_why rp-side)"
	out=$(podman exec rp-side cat /etc/resolv.conf)
	grep -qx "nameserver 127.0.0.1" <<<"$out" || fail "healthy, but resolv.conf is: $out"
	out=$(podman exec rp-side cat "$RP_CT_STATE/resolv.conf.orig")
	grep -qx "nameserver $DF_UP4" <<<"$out" || fail "the original resolv.conf was not saved: $out"
	ok "sidecar healthy once resolv.conf names 127.0.0.1 (the original saved in the container's $RP_CT_STATE)"
	local rc=0
	out=$(podman exec rp-side /usr/sbin/dnsfence check 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || fail "dnsfence check inside the sidecar: exit $rc: $out"
	out=$(rp_daemon_status) || fail "no dnsfence process in the namespace"
	[ "$out" = "uid $(podman exec rp-side id -u dnsfence) CapEff 0000000000001000" ] ||
		fail "the daemon runs as $out, expected the dnsfence user with cap_net_admin only"
	ok "dnsfence check inside: exit 0 (no upstreams in the config); the daemon runs as $out"

	out=$(podman run --rm "${RP_ULIMITS[@]}" --network container:rp-side --user 1000:1000 --cap-drop ALL \
		--security-opt no-new-privileges --read-only -v "$DF_TMP/app.sh:/app.sh:ro" "$RP_BASE" bash /app.sh 2>&1) || true
	rp_check_app "sidecar + app (--network container:)" "$out"
	podman rm -f -t 0 rp-side >/dev/null 2>&1
	rp_open_ns

	# Bug 1: a read-only container gets a read-only resolv.conf.
	rc=0
	"${run[@]}" --name rp-ro --read-only "$RP_IMAGE" >"$DF_TMP/ro.log" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "--read-only: the sidecar started although it cannot switch resolv.conf"
	grep -q "is not writable" "$DF_TMP/ro.log" || fail "--read-only: no clear message: $(cat "$DF_TMP/ro.log")"
	! rp_fenced || fail "--read-only: the entrypoint put the fence up before refusing"
	podman rm -f -t 0 rp-ro >/dev/null 2>&1
	ok "--read-only: refused at once (exit $rc): $(grep -o '/etc/resolv.conf is not writable[^;]*' "$DF_TMP/ro.log")"
}

# contrib/kubernetes/dnsfence.yaml's pod in a podman pod: an infra
# container holds the pod's network namespace (the test's), the others
# join it; the image runs "dnsfence setup" as the init container and
# "dnsfence serve" as the sidecar with the manifest's capability sets,
# its startupProbe command gates the app.
rp_pod() {
	/usr/bin/python3 - "$DNSFENCE_SRC/contrib/kubernetes/dnsfence.yaml" "$DF_TMP" <<'PYEOF'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = {d["kind"]: d for d in docs}
conf = json.loads(kinds["ConfigMap"]["data"]["dnsfence.json"])
conf["upstreams"] = ["198.18.0.1"]
conf["allow"] = conf.get("allow", []) + ["www.allowed.test"]
conf["allow_cidrs"] = []
conf["ports"] = ["tcp/80"]
json.dump(conf, open(sys.argv[2] + "/pod.json", "w"), indent=2)
spec = kinds["Deployment"]["spec"]["template"]["spec"]
inits = spec["initContainers"]
for c, name in zip(inits, ("setup", "sidecar")):
    sc = c["securityContext"]
    assert sc["capabilities"]["drop"] == ["ALL"] and sc["runAsUser"] == 0, sc
    with open("%s/pod.%s" % (sys.argv[2], name), "w") as f:
        f.write(" ".join(c["command"] + c.get("args", [])) + "\n")
        f.write(" ".join(sc["capabilities"]["add"]) + "\n")
with open(sys.argv[2] + "/pod.probe", "w") as f:
    f.write(" ".join(inits[1]["startupProbe"]["exec"]["command"]) + "\n")
with open(sys.argv[2] + "/pod.dns", "w") as f:
    f.write(" ".join(spec["dnsConfig"]["nameservers"]) + "\n")
PYEOF
	local setup_cmd side_cmd probe c out rc=0
	local setup_caps=() side_caps=()
	read -r -a setup_cmd <"$DF_TMP/pod.setup"
	read -r -a side_cmd < <(head -1 "$DF_TMP/pod.sidecar")
	for c in $(sed -n 2p "$DF_TMP/pod.setup"); do setup_caps+=(--cap-add "$c"); done
	for c in $(sed -n 2p "$DF_TMP/pod.sidecar"); do side_caps+=(--cap-add "$c"); done
	read -r -a probe <"$DF_TMP/pod.probe"
	local vol=(-v "$DF_TMP/pod.json:/etc/dnsfence/dnsfence.json:ro")
	local common=("${RP_ULIMITS[@]}" --pod rp-pod --network container:rp-pod-infra)

	podman pod create --infra=false --name rp-pod >/dev/null
	# The pause container: the pod's namespace, dnsPolicy None's resolver.
	podman run -d "${RP_ULIMITS[@]}" --pod rp-pod --name rp-pod-infra --network "ns:$RP_NS" \
		--dns "$(cat "$DF_TMP/pod.dns")" --entrypoint sleep "$RP_BASE" infinity >/dev/null
	podman run --rm "${common[@]}" --user 0 --cap-drop ALL "${setup_caps[@]}" --security-opt no-new-privileges \
		"${vol[@]}" --entrypoint "${setup_cmd[0]}" "$RP_IMAGE" "${setup_cmd[@]:1}" >"$DF_TMP/pod-setup.log" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || fail "pod: the init container (${setup_cmd[*]}) exited $rc: $(tail -n 5 "$DF_TMP/pod-setup.log")"
	rp_fenced || fail "pod: the init container exited 0 but the fence is not up"
	ok "pod: init container '${setup_cmd[*]}' with ${setup_caps[*]}: exit 0, fence up"
	podman run -d "${common[@]}" --no-healthcheck --name rp-pod-side --user 0 --cap-drop ALL "${side_caps[@]}" \
		--security-opt no-new-privileges "${vol[@]}" --entrypoint "${side_cmd[0]}" "$RP_IMAGE" "${side_cmd[@]:1}" >/dev/null
	df_poll 100 podman exec rp-pod-side "${probe[@]}" >/dev/null 2>&1 ||
		fail "pod: the startupProbe (${probe[*]}) did not pass within 10 s: $(podman logs rp-pod-side 2>&1 | tail -n 5)"
	out=$(rp_daemon_status) || fail "pod: no dnsfence process"
	[ "$out" = "uid $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["user"])' "$DF_TMP/pod.json") CapEff 0000000000001000" ] ||
		fail "pod: the sidecar runs as $out, expected the ConfigMap's uid with cap_net_admin only"
	ok "pod: sidecar '${side_cmd[*]}' passes its startupProbe, runs as $out"
	out=$(podman run --rm "${common[@]}" --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges \
		--read-only -v "$DF_TMP/app.sh:/app.sh:ro" "$RP_BASE" bash /app.sh 2>&1) || true
	rp_check_app "pod: app" "$out"
	podman pod rm -f -t 0 rp-pod >/dev/null 2>&1
}

# contrib/docker/compose.yaml, unchanged, with docker-compose against
# "podman system service". An override file only moves it onto the test
# network: the sidecar joins the test's namespace instead of a Compose
# network (podman's bridge would touch the host's firewall), its
# resolv.conf names the test's upstream (as Docker's names 127.0.0.11),
# the config allows the test's name, and the app runs the test's checks.
# Podman runs healthchecks from systemd timers, and there is no systemd
# here: the test runs the sidecar's healthcheck itself while Compose waits
# for service_healthy, as Docker's engine would.
rp_compose() {
	local sock="$RP_PM/api.sock" proj=rpc out side app rc
	podman system service --time=0 "unix://$sock" >>"$RP_WORK/api.log" 2>&1 &
	RP_API_PID=$!
	df_poll 100 test -S "$sock" || fail "compose: podman system service did not start: $(cat "$RP_WORK/api.log")"
	printf '{"allow": ["www.allowed.test"], "ports": ["tcp/80"], "log": {"level": "debug"}}\n' >"$DF_TMP/compose.json"
	cat >"$DF_TMP/compose.override.yaml" <<EOF
services:
  dnsfence:
    network_mode: "ns:$RP_NS"
    dns: ["$DF_UP4"]
    volumes:
      - $DF_TMP/compose.json:/etc/dnsfence/dnsfence.json:ro
  app:
    volumes:
      - $DF_TMP/app.sh:/app.sh:ro
    command: ["sh", "-c", "bash /app.sh; sleep infinity"]
EOF
	local compose=(env DOCKER_HOST="unix://$sock" COMPOSE_INTERACTIVE_NO_CLI=1 docker-compose
		--project-directory "$DNSFENCE_SRC/contrib/docker" -p "$proj"
		-f "$DNSFENCE_SRC/contrib/docker/compose.yaml" -f "$DF_TMP/compose.override.yaml")
	"${compose[@]}" up -d >"$RP_WORK/compose.log" 2>&1 &
	local up=$! n=600 early=""
	# The engine's part: run the healthcheck while Compose waits. The
	# first time it passes, resolv.conf must already name 127.0.0.1.
	side=""
	while kill -0 "$up" 2>/dev/null && [ "$n" -gt 0 ]; do
		[ -n "$side" ] || side=$(podman ps -q --filter "label=com.docker.compose.service=dnsfence" | head -1)
		if [ -n "$side" ] && [ -z "$early" ] && podman healthcheck run "$side" >/dev/null 2>&1; then
			early=$(podman exec "$side" grep -c '^nameserver 127.0.0.1$' /etc/resolv.conf || true)
		fi
		sleep 0.2
		n=$((n - 1))
	done
	rc=0
	wait "$up" || rc=$?
	[ "$rc" -eq 0 ] || fail "compose: docker-compose up exited $rc: $(tail -n 20 "$RP_WORK/compose.log")
--- the sidecar's log:
$( [ -n "$side" ] && rp_why "$side")"
	[ "$early" = 1 ] || fail "compose: the sidecar was reported healthy with resolv.conf not pointing at dnsfence"
	! podman network ls --format '{{.Name}}' | grep -vxE 'podman|none' | grep . >/dev/null ||
		fail "compose: a network was created: $(podman network ls --format '{{.Name}}')"
	app=$(podman ps -q --filter "label=com.docker.compose.service=app" | head -1)
	[ -n "$app" ] || fail "compose: the app container is not running: $(tail -n 20 "$RP_WORK/compose.log")"
	df_poll 100 sh -c "podman logs '$app' 2>&1 | grep -qx app-done" || fail "compose: the app did not finish its checks"
	out=$(podman logs "$app" 2>&1)
	rp_check_app "compose (service_healthy, network_mode service:dnsfence)" "$out"
	rc=0
	out=$(podman exec "$side" /usr/sbin/dnsfence check 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || fail "compose: dnsfence check in the sidecar: exit $rc: $out"
	[ "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$app")" = true ] || fail "compose: the app is not read-only"
	ok "compose: docker-compose up; the app started once the sidecar was healthy (resolv.conf switched); check 0; no network created"
	"${compose[@]}" down -t 0 >>"$RP_WORK/compose.log" 2>&1 || true
	kill -TERM "$RP_API_PID" 2>/dev/null || true
	df_wait_gone "$RP_API_PID" 50 || kill -KILL "$RP_API_PID" 2>/dev/null || true
	RP_API_PID=""
}

# The subject form in one container (contrib/docker/entrypoint-subjects.sh
# as the image installs it): the service as uid 1000 unfenced, the agent
# as uid 1001 fenced by "subjects"; the same probe in both; the container
# exits with the service's status.
rp_container_subjects() {
	local io="$RP_WORK/subjects-io" out rc a s
	mkdir -m 0777 "$io"
	cp "$DNSFENCE_SRC/test/e2e/reach_probe.sh" "$io/probe.sh"
	chmod 0755 "$io/probe.sh"
	printf '{"allow": ["www.allowed.test"], "ports": ["tcp/80"], "subjects": {"users": ["1001"]}}\n' >"$DF_TMP/subjects.json"
	rc=0
	timeout 120 podman run --rm "${RP_ULIMITS[@]}" --network "ns:$RP_NS" --dns "$DF_UP4" \
		--cap-add NET_ADMIN --cap-add NET_RAW --security-opt no-new-privileges \
		-v "$DF_TMP/subjects.json:/etc/dnsfence/dnsfence.json:ro" -v "$io:/io" \
		-e DNSFENCE_SERVICE="bash /io/probe.sh service service-$$.evil.test; while [ ! -e /io/agent ]; do sleep 0.2; done; exit 7" \
		-e DNSFENCE_SERVICE_USER=1000:1000 -e DNSFENCE_AGENT_USER=1001:1001 \
		--entrypoint /usr/local/bin/dnsfence-entrypoint-subjects "$RP_IMAGE" \
		bash /io/probe.sh agent "agent-$$.evil.test" >"$RP_WORK/subjects.log" 2>&1 || rc=$?
	[ "$rc" -eq 7 ] || fail "subjects: the container exited $rc, not the service's 7: $(tail -n 10 "$RP_WORK/subjects.log")"
	a=$(cat "$io/agent" 2>/dev/null) s=$(cat "$io/service" 2>/dev/null)
	grep -qx done <<<"$a" && grep -qx done <<<"$s" || fail "subjects: a probe did not finish: $a / $s"
	grep -qx "uid 1001 gid 1001 groups 1001" <<<"$a" && grep -qx "uid 1000 gid 1000 groups 1000" <<<"$s" || fail "subjects: identities: $a / $s"
	grep -qx allowed-resolves <<<"$a" && grep -qx allowed-connects <<<"$a" ||
		fail "subjects: the agent cannot resolve or reach the allowed name: $a"
	! grep -qx denied-resolves <<<"$a" && ! grep -qx unresolved-connects <<<"$a" ||
		fail "subjects: the agent reached its denied name or an unresolved address: $a"
	! df_unbound_saw "agent-$$.evil.test" || fail "subjects: the agent's denied name reached unbound"
	grep -qx denied-resolves <<<"$s" && grep -qx unresolved-connects <<<"$s" ||
		fail "subjects: the service (unfenced) does not reach the denied name and address: $s"
	ok "subjects: one container, the agent (uid 1001) fenced: allowed name connects, denied name and unresolved address fail; the service (uid 1000) reaches both; exit status the service's (7)"
}
