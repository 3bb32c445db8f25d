#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The deployment paths run for real, offline, on one machine (issue 14):
#
#   image     a Debian bookworm base from mmdebstrap (the Debian mirror apt
#             is configured with), imported under the Dockerfile's FROM
#             name; contrib/docker/Dockerfile built unchanged with
#             podman build --pull=never --network=none
#   sidecar   the image with exactly the documented capabilities, an app
#             container in its network namespace (--network container:)
#             as uid 1000 with no capabilities: the allowed name resolves
#             and connects, a denied one gets NXDOMAIN, the healthcheck is
#             unhealthy while resolv.conf is not switched and healthy
#             after, "dnsfence check" passes inside; --read-only refused
#   subjects  the image with contrib/docker/entrypoint-subjects.sh: the
#             service as uid 1000 unfenced, the agent as uid 1001 fenced by
#             "subjects"; the agent's denied name and an unresolved address
#             fail, the service reaches both; the service's exit status
#   compose   contrib/docker/compose.yaml with docker-compose against
#             "podman system service" (see below)
#   pod       the Kubernetes pod's order in a podman pod: the image as init
#             container ("dnsfence setup"), then as sidecar ("serve"),
#             then the app
#   systemd   a bookworm rootfs with systemd, booted with systemd-nspawn;
#             the .deb from packaging/build-deb.sh installed, the unit
#             started: active only when serving, the sandbox holds, dig
#             works, stop leaves the fence closed, purge takes it down.
#             With nft, after teardown: the per-unit fence (the packaged
#             dnsfence-subject@.service and drop-in) on one unit, a second
#             unit unfenced beside it; purge stops that instance too.
#             Once with iptables-nft, once with iptables-legacy.
#
# Isolation: podman's configuration and storage live in this run's work
# directory (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF); netns = "none", and
# every container joins a namespace this test created (--network
# ns:/run/netns/NAME), never podman's bridge: nothing is added to the
# host's firewall, namespace or routes. runc is the runtime (crun refuses
# the cgroup layout of CI machines), ulimits are explicit (no
# CAP_SYS_RESOURCE there). The namespaces, nsd and unbound are
# test/e2e/lib.sh's; the upstream names are its test zones.
#
# Everything is removed on exit, also on failure: containers, pods,
# images, podman's storage, the booted rootfs, mounts, namespaces.
# mmdebstrap runs twice per run: the container base goes straight into
# podman's storage, the systemd rootfs tarball is extracted once per
# backend. DNSFENCE_REAL_CACHE=DIR keeps both tarballs across runs (while
# developing); DNSFENCE_REAL_PARTS="sidecar subjects compose pod nft legacy" (the
# default) picks parts.
#
#   test/deploy/real_paths.sh        (as root; run by .ci/run; needs
#                                     contrib/deps.sh --real-paths)
# Podman keeps some state at fixed paths whatever its configuration says
# (/var/lib/containers/cache, /run/containers, /run/libpod): the whole test
# runs in a private mount namespace where those are this run's directories.
if [ -z "${RP_IN_MOUNT_NS:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP real_paths: needs root" >&2; exit 77; }
	exec unshare --mount --propagation private env RP_IN_MOUNT_NS=1 bash "$0" "$@"
fi
source "$(dirname "$0")/../e2e/lib.sh"
df_init
for t in podman runc mmdebstrap systemd-nspawn nsenter docker-compose dpkg-buildpackage; do
	command -v "$t" >/dev/null 2>&1 || fail "'$t' is not installed (contrib/deps.sh --real-paths)"
done

RP_WORK="$(mktemp -d /var/tmp/dnsfence-real.XXXXXX)"
RP_CACHE="${DNSFENCE_REAL_CACHE:-$RP_WORK/cache}"
RP_PM="$RP_WORK/podman"
RP_NSPAWN_PID=""
RP_API_PID=""
RP_T0=$(date +%s)
mkdir -p "$RP_CACHE" "$RP_PM"/{root,run,tmp,net}
RP_MADE_DIRS=()
for d in /var/lib/containers /run/containers /run/libpod /etc/cni/net.d /var/lib/cni; do
	if [ ! -d "$d" ]; then
		mkdir -p "$d"
		RP_MADE_DIRS+=("$d")
	fi
	mkdir -p "$RP_WORK/shadow$d"
	mount --bind "$RP_WORK/shadow$d" "$d"
done

# --- clean-up -----------------------------------------------------------------

rp_umount_under() {
	local m
	for m in $(findmnt -rn -o TARGET | grep -F "$1" | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
}

rp_cleanup() {
	local rc=$?
	set +e
	[ -z "${RP_DISK_PID:-}" ] || kill -TERM "$RP_DISK_PID" 2>/dev/null
	if [ -n "$RP_NSPAWN_PID" ] && kill -0 "$RP_NSPAWN_PID" 2>/dev/null; then
		kill -TERM "$RP_NSPAWN_PID"
		df_wait_gone "$RP_NSPAWN_PID" 150 || kill -KILL "$RP_NSPAWN_PID"
	fi
	if [ -n "$RP_API_PID" ]; then
		kill -TERM "$RP_API_PID" 2>/dev/null
		df_wait_gone "$RP_API_PID" 50 || kill -KILL "$RP_API_PID" 2>/dev/null
	fi
	if [ -f "$RP_PM/containers.conf" ]; then
		podman pod rm -af -t 0 >/dev/null 2>&1
		podman rm -af -t 0 >/dev/null 2>&1
		podman rmi -af >/dev/null 2>&1
		podman system reset -f >/dev/null 2>&1
	fi
	rp_umount_under "$RP_WORK"
	for d in /var/lib/containers /run/containers /run/libpod /etc/cni/net.d /var/lib/cni; do
		umount -l "$d" 2>/dev/null
	done
	for d in "${RP_MADE_DIRS[@]}"; do
		rmdir "$d" 2>/dev/null
	done
	if [ "$rc" -eq 0 ]; then
		echo "real_paths: $(($(date +%s) - RP_T0)) s, peak disk $(cat "$RP_WORK/peak" 2>/dev/null || echo ?) MB"
	fi
	rm -rf "$RP_WORK"
	(exit "$rc")
	df_cleanup
}
trap rp_cleanup EXIT

# The largest the work directory got, for the report.
rp_disk() {
	local mb
	mb=$(du -sxm "$RP_WORK" 2>/dev/null | awk '{ print $1 }')
	[ "${mb:-0}" -le "$(cat "$RP_WORK/peak" 2>/dev/null || echo 0)" ] || echo "$mb" >"$RP_WORK/peak"
}

# Sampled every second while the test runs.
( while sleep 1; do rp_disk; done ) >/dev/null 2>&1 &
RP_DISK_PID=$!

# --- the network: lib.sh's upstream (nsd, unbound) and workload namespaces ---

df_setup
df_start_listener 80
RP_NS="/run/netns/$DF_WL"
# A config for the host-built binary, to open the namespace between parts.
printf '{"upstreams": ["%s"]}\n' "$DF_UP4" >"$DF_TMP/open.json"
rp_open_ns() {
	wl "$DNSFENCE_BIN" -c "$DF_TMP/open.json" teardown >/dev/null 2>&1 || true
	local pid
	for pid in $(ip netns pids "$DF_WL"); do
		case " ${DF_PIDS[*]} " in *" $pid "*) ;; *) kill -KILL "$pid" 2>/dev/null ;; esac
	done
}
# Is the namespace's OUTPUT closed, in either backend? (No "-t": listing
# the existing tables never creates one.)
# (grep reads a here-string: a grep -q that stops at the first lines
# would fail the pipe with SIGPIPE under pipefail.)
rp_fenced() {
	grep -q '^:OUTPUT DROP' <<<"$(wl iptables-nft-save 2>/dev/null)" ||
		grep -q '^:OUTPUT DROP' <<<"$(wl iptables-legacy-save 2>/dev/null)"
}

# --- podman, confined to this run ---------------------------------------------

nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
[ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
[ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ] && nofile=65536
cat >"$RP_PM/containers.conf" <<EOF
[containers]
netns = "none"
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
log_driver = "k8s-file"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$RP_PM/tmp/events.log"
tmp_dir = "$RP_PM/tmp"
image_copy_tmp_dir = "$RP_PM/tmp"
volume_path = "$RP_PM/root/volumes"
[network]
default_network = "none"
network_config_dir = "$RP_PM/net"
EOF
cat >"$RP_PM/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$RP_PM/root"
runroot = "$RP_PM/run"
EOF
printf 'unqualified-search-registries = []\n' >"$RP_PM/registries.conf"
export CONTAINERS_CONF="$RP_PM/containers.conf" CONTAINERS_STORAGE_CONF="$RP_PM/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$RP_PM/registries.conf"
RP_ULIMITS=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

# --- the base images (mmdebstrap, once per run) -------------------------------

# The Debian mirror apt uses here (CI machines reach only that one).
rp_mirror() {
	local m
	m=$(apt-get indextargets --format '$(REPO_URI)' 'Origin: Debian' 2>/dev/null | grep -v security | head -1)
	[ -n "$m" ] || m=$(grep -rhoE 'https?://[^ ]+/debian/?' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
		grep -v security | head -1)
	echo "${m:-http://deb.debian.org/debian/}"
}
RP_MIRROR="$(rp_mirror)"

# The container base. The Dockerfile's apt-get steps run with
# --network=none: the base holds every package they install already, and
# no apt source, so "apt-get update" has nothing to fetch and "install"
# finds them installed. rp_base OUT: a tarball ("-": standard output).
DF_PKGS_BUILD="build-essential,cmake,pkg-config,libevent-dev,libc-ares-dev,libmnl-dev,libipset-dev,libcjson-dev,libpsl-dev,libidn2-dev,libssl-dev,libseccomp-dev"
DF_PKGS_RUN="libevent-2.1-7,libc-ares2,libmnl0,libipset13,libcjson1,libpsl5,libidn2-0,libssl3,libseccomp2,publicsuffix,iptables"
rp_base() {
	TMPDIR="$RP_WORK" mmdebstrap --quiet --format=tar --variant=apt --include="$DF_PKGS_BUILD,$DF_PKGS_RUN" \
		--customize-hook='rm -rf "$1"/etc/apt/sources.list "$1"/etc/apt/sources.list.d/* "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/usr/share/doc/* "$1"/usr/share/man/*' \
		bookworm "$1" "$RP_MIRROR" 2>"$RP_WORK/mmdebstrap-base.log"
}

# The systemd rootfs tarball, built once for both backends.
rp_systemd_tar() {
	[ ! -s "$RP_CACHE/systemd.tar" ] || return 0
	TMPDIR="$RP_WORK" mmdebstrap --quiet --format=tar --variant=minbase \
		--include="systemd,systemd-sysv,dbus,iproute2,iptables,ipset,${DF_PKGS_RUN%,iptables}" \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* "$1"/usr/share/man/*' \
		bookworm "$RP_CACHE/systemd.tar.new" "$RP_MIRROR" >"$RP_WORK/mmdebstrap-systemd.log" 2>&1 ||
		{ tail -n 20 "$RP_WORK/mmdebstrap-systemd.log" >&2; fail "mmdebstrap of the systemd rootfs failed"; }
	mv "$RP_CACHE/systemd.tar.new" "$RP_CACHE/systemd.tar"
	ok "systemd rootfs from $RP_MIRROR: $(du -m "$RP_CACHE/systemd.tar" | cut -f1) MB"
}

source "$(dirname "$0")/real_paths_containers.sh"
source "$(dirname "$0")/real_paths_systemd.sh"

# DNSFENCE_REAL_PARTS picks parts while developing; CI runs them all.
RP_PARTS=" ${DNSFENCE_REAL_PARTS:-sidecar subjects compose pod nft legacy} "
rp_part() { case "$RP_PARTS" in *" $1 "*) return 0 ;; esac; return 1; }

if rp_part sidecar || rp_part subjects || rp_part compose || rp_part pod; then
	rp_container_image
	rp_disk
fi
if rp_part sidecar; then rp_container_sidecar; rp_open_ns; fi
if rp_part subjects; then rp_container_subjects; rp_open_ns; fi
if rp_part compose; then rp_compose; rp_open_ns; fi
if rp_part pod; then rp_pod; rp_open_ns; fi
rp_disk
# The container parts are done: their storage goes before the rootfs comes.
podman pod rm -af -t 0 >/dev/null 2>&1 || true
podman rm -af -t 0 >/dev/null 2>&1 || true
podman rmi -af >/dev/null 2>&1 || true
podman system reset -f >/dev/null 2>&1 || true
rp_umount_under "$RP_PM"
rm -rf "$RP_PM"
if rp_part nft || rp_part legacy; then rp_systemd_tar; fi
if rp_part nft; then rp_systemd nft; fi
if rp_part legacy; then rp_systemd legacy; fi
ok "real paths passed:$RP_PARTS"
