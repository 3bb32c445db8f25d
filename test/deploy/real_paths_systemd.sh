# SPDX-License-Identifier: GPL-2.0-or-later
# real_paths.sh, the Debian package under systemd: a bookworm rootfs with
# systemd booted by systemd-nspawn in the test's workload namespace, the
# .deb from packaging/build-deb.sh installed, the unit started and checked
# from inside (nsenter into the container's PID 1) and from the namespace.
# Sourced by real_paths.sh; not a test of its own.

RP_LEADER=""

# rp_in CMD...: run CMD inside the booted container, as its root.
rp_in() {
	nsenter -t "$RP_LEADER" -m -u -i -n -p -r -w \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C "$@"
}

# The container's PID 1: in our namespace, "systemd", PID 1 in its own.
rp_find_leader() {
	local p
	for p in $(ip netns pids "$DF_WL"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] || continue
		[ "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status")" = 1 ] || continue
		RP_LEADER=$p
		return 0
	done
	return 1
}

rp_booted() {
	local s
	s=$(rp_in systemctl is-system-running 2>/dev/null) || true
	[ "$s" = running ] || [ "$s" = degraded ]
}

rp_boot() {
	local root=$1
	systemd-nspawn --quiet -b -D "$root" --register=no --keep-unit \
		--network-namespace-path="$RP_NS" --capability=CAP_NET_ADMIN \
		--resolv-conf=off --timezone=off --link-journal=no --console=read-only \
		>"$RP_WORK/nspawn.log" 2>&1 &
	RP_NSPAWN_PID=$!
	df_poll 300 rp_find_leader || fail "systemd-nspawn did not start a container: $(tail -n 20 "$RP_WORK/nspawn.log")"
	df_poll 600 rp_booted ||
		fail "the container did not finish booting within 60 s: $(rp_in systemctl --failed --no-legend 2>&1 | head -n 5)"
}

rp_poweroff() {
	rp_in systemctl poweroff >/dev/null 2>&1 || true
	df_wait_gone "$RP_NSPAWN_PID" 300 || { kill -KILL "$RP_NSPAWN_PID" 2>/dev/null || true; }
	RP_NSPAWN_PID=""
	RP_LEADER=""
}

# The daemon's /proc status field, read inside the container.
rp_unit_field() { rp_in awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# The per-unit fence (contrib/systemd/dnsfence-subject@.service and its
# drop-in) for fenced.service, with other.service beside it unfenced.
# Both run the same probe once (Type=oneshot) as nobody; the probe says
# which cgroup the unit's processes see, what resolves and what connects.
rp_subject_unit() {
	local root=$1 f o
	# The template and the drop-in as the package installs them.
	[ -f "$root/lib/systemd/system/dnsfence-subject@.service" ] ||
		fail "systemd (nft): the package does not install dnsfence-subject@.service"
	mkdir -p "$root/etc/systemd/system/fenced.service.d"
	cp "$root/usr/share/doc/dnsfence/examples/dnsfence-subject.conf" "$root/etc/systemd/system/fenced.service.d/" ||
		fail "systemd (nft): the package has no examples/dnsfence-subject.conf"
	cat >"$root/usr/local/bin/rp-probe" <<'SH'
#!/bin/bash
echo "cgroup $(sed -n 's/^0:://p' /proc/self/cgroup)"
echo "uid $(id -u) nnp $(awk '$1 == "NoNewPrivs:" { print $2 }' /proc/self/status)"
getent ahosts www.allowed.test >/dev/null 2>&1 && echo allowed-resolves
timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.1.10/80' 2>/dev/null && echo allowed-connects
getent ahosts "$1" >/dev/null 2>&1 && echo denied-resolves
timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.3.1/80' 2>/dev/null && echo unresolved-connects
echo done
SH
	chmod 0755 "$root/usr/local/bin/rp-probe"
	for u in fenced other; do
		cat >"$root/etc/systemd/system/$u.service" <<EOF
[Service]
Type=oneshot
User=nobody
ExecStart=/usr/local/bin/rp-probe $u-$$.evil.test
StandardOutput=file:/run/rp-probe-$u.out
EOF
	done
	cat >"$root/etc/dnsfence/fenced.json" <<EOF
{
  "upstreams": ["$DF_UP4"],
  "allow": ["www.allowed.test"],
  "ports": ["tcp/80"],
  "subjects": {"cgroups": ["/system.slice/fenced.service"]},
  "listen": ["127.0.0.1:53"],
  "state_dir": "/run/dnsfence-fenced",
  "control": {"socket": "/run/dnsfence-fenced/control.sock"}
}
EOF
	rp_in systemctl daemon-reload
	rp_in systemctl start fenced.service >"$RP_WORK/fenced.log" 2>&1 ||
		fail "systemd (nft): fenced.service did not run: $(cat "$RP_WORK/fenced.log"; rp_in journalctl -u fenced -u dnsfence-subject@fenced --no-pager -n 30)"
	rp_in systemctl start other.service || fail "systemd (nft): other.service did not run"
	[ "$(rp_in systemctl show -P ActiveState dnsfence-subject@fenced)" = active ] ||
		fail "systemd (nft): dnsfence-subject@fenced is not active: $(rp_in journalctl -u dnsfence-subject@fenced --no-pager -n 20)"
	f=$(rp_in cat /run/rp-probe-fenced.out) o=$(rp_in cat /run/rp-probe-other.out)
	grep -qx done <<<"$f" && grep -qx done <<<"$o" || fail "systemd (nft): a probe did not finish: $f / $o"
	# Inside the container the unit's processes see the container's cgroup
	# namespace; the rule names the same path (setup ran in that namespace).
	grep -qx "cgroup /system.slice/fenced.service" <<<"$f" || fail "systemd (nft): fenced.service's cgroup: $(head -1 <<<"$f")"
	grep -qF -- '-m cgroup --path "/system.slice/fenced.service" -j DNSFENCE-OUT' <<<"$(wl iptables-nft-save -t filter)" ||
		fail "systemd (nft): no cgroup jump for /system.slice/fenced.service: $(wl iptables-nft-save -t filter | grep cgroup)"
	grep -qx "uid 65534 nnp 1" <<<"$f" || fail "systemd (nft): fenced.service runs without NoNewPrivileges: $(sed -n 2p <<<"$f")"
	grep -qx allowed-resolves <<<"$f" && grep -qx allowed-connects <<<"$f" ||
		fail "systemd (nft): fenced.service cannot resolve or reach the allowed name: $f"
	! grep -qx denied-resolves <<<"$f" || fail "systemd (nft): fenced.service resolved its denied name"
	! grep -qx unresolved-connects <<<"$f" || fail "systemd (nft): fenced.service reached 198.18.3.1:80, which nobody resolved for it"
	! df_unbound_saw "fenced-$$.evil.test" || fail "systemd (nft): fenced.service's denied name reached unbound"
	grep -qx denied-resolves <<<"$o" && grep -qx unresolved-connects <<<"$o" ||
		fail "systemd (nft): other.service (unfenced) does not reach the denied name and address: $o"
	df_unbound_saw "other-$$.evil.test" || fail "systemd (nft): other.service's query did not go to unbound"
	rp_in dnsfence -c /etc/dnsfence/fenced.json check >"$RP_WORK/fcheck.log" 2>&1 ||
		fail "systemd (nft): check of the per-unit fence: $(cat "$RP_WORK/fcheck.log")"
	ok "systemd (nft): per-unit fence (drop-in, dnsfence-subject@fenced): fenced.service (cgroup /system.slice/fenced.service) resolves and reaches the allowed name, its denied name and an unresolved address fail; other.service reaches both; check 0"
	# The instance keeps running: the purge below must stop it and take
	# its fence down. Its files go now (they are not the package's).
	rm -rf "$root/etc/dnsfence/fenced.json" "$root/etc/systemd/system/fenced.service.d" \
		"$root/etc/systemd/system/fenced.service" "$root/etc/systemd/system/other.service" "$root/usr/local/bin/rp-probe"
	rp_in systemctl daemon-reload
}

rp_systemd() {
	local backend=$1 root="$RP_WORK/rootfs" out rc st pid uid
	# DNSFENCE_REAL_DEB: another package (e.g. an older one, to see a
	# check fail); by default the tree's, built here once.
	RP_DEB=${RP_DEB:-${DNSFENCE_REAL_DEB:-}}
	if [ -z "$RP_DEB" ]; then
		"$DNSFENCE_SRC/packaging/build-deb.sh" "$RP_WORK/deb" >/dev/null || fail "packaging/build-deb.sh failed"
		RP_DEB=$(ls "$RP_WORK"/deb/dnsfence_*_*.deb)
	fi
	rm -rf "$root"
	mkdir -p "$root"
	tar -C "$root" -xf "$RP_CACHE/systemd.tar"
	cp "$RP_DEB" "$root/root/"
	rm -f "$root/etc/resolv.conf"
	printf 'nameserver %s\n' "$DF_UP4" >"$root/etc/resolv.conf"
	echo rp-systemd >"$root/etc/hostname"
	if [ "$backend" = legacy ]; then
		chroot "$root" update-alternatives --quiet --set iptables /usr/sbin/iptables-legacy
		chroot "$root" update-alternatives --quiet --set ip6tables /usr/sbin/ip6tables-legacy
	fi
	rp_boot "$root"
	ok "systemd ($backend): booted $(rp_in systemctl --version | head -1 | cut -d' ' -f1-2) with systemd-nspawn in the test's namespace"

	# Install: the user, nothing started, nothing fenced.
	rp_in dpkg -i "/root/$(basename "$RP_DEB")" >"$RP_WORK/install.log" 2>&1 ||
		{ cat "$RP_WORK/install.log" >&2; fail "systemd ($backend): dpkg -i failed"; }
	uid=$(rp_in id -u dnsfence) || fail "systemd ($backend): no dnsfence user after install"
	! rp_in systemctl is-active --quiet dnsfence || fail "systemd ($backend): the unit was started on install"
	! rp_fenced || fail "systemd ($backend): installing put a fence up"
	cat >"$root/etc/dnsfence/dnsfence.json" <<EOF
{
  "upstreams": ["$DF_UP4"],
  "allow": ["www.allowed.test"],
  "ports": ["tcp/80"],
  "guard_interval": 1
}
EOF

	# Type=notify: "start" returns once READY=1 came, and at that moment
	# the daemon answers (no polling here).
	rc=0
	rp_in systemctl start dnsfence >"$RP_WORK/start.log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		rp_in journalctl -u dnsfence --no-pager -n 30 >&2 || true
		fail "systemd ($backend): systemctl start dnsfence exited $rc"
	fi
	st=$(wl dig +time=2 +tries=1 @127.0.0.1 www.allowed.test A | sed -n 's/.*status: \([A-Z]*\).*/\1/p')
	[ "$st" = NOERROR ] || fail "systemd ($backend): active, but dig @127.0.0.1 got status '$st'"
	[ "$(rp_in systemctl show -P ActiveState dnsfence)" = active ] || fail "systemd ($backend): not active after start"
	[ "$(rp_in systemctl show -P Type dnsfence)" = notify ] || fail "systemd ($backend): the unit is not Type=notify"
	ok "systemd ($backend): systemctl start returned with the unit active and the daemon answering"

	# The sandbox, read from the daemon's /proc inside the container.
	pid=$(rp_in systemctl show -P MainPID dnsfence)
	[ "$(rp_unit_field "$pid" Uid)" = "$uid" ] || fail "systemd ($backend): the daemon's uid is $(rp_unit_field "$pid" Uid), not dnsfence's $uid"
	[ "$(rp_unit_field "$pid" NoNewPrivs)" = 1 ] || fail "systemd ($backend): NoNewPrivs is not set"
	[ "$(rp_unit_field "$pid" CapEff)" = 0000000000001000 ] || fail "systemd ($backend): CapEff $(rp_unit_field "$pid" CapEff)"
	[ "$(rp_unit_field "$pid" CapBnd)" = 0000000000003400 ] ||
		fail "systemd ($backend): CapBnd $(rp_unit_field "$pid" CapBnd), expected net_admin, net_bind_service, net_raw"
	out=$(rp_in awk '$5 == "/" { print $6 }' "/proc/$pid/mountinfo")
	case ",$out," in *,ro,*) ;; *) fail "systemd ($backend): / is not read-only for the daemon: $out" ;; esac
	ok "systemd ($backend): daemon uid $uid (dnsfence), NoNewPrivs 1, CapEff cap_net_admin, CapBnd the unit's three, / read-only"

	# The fence, in the backend the rootfs chose.
	if [ "$backend" = legacy ]; then
		grep -q '^:DNSFENCE-OUT' <<<"$(wl iptables-legacy-save -t filter)" || fail "systemd (legacy): the fence is not in iptables-legacy"
		! grep -q DNSFENCE <<<"$(wl iptables-nft-save 2>/dev/null)" || fail "systemd (legacy): rules in nft too"
	else
		grep -q '^:DNSFENCE-OUT' <<<"$(wl iptables-nft-save -t filter)" || fail "systemd (nft): the fence is not in iptables-nft"
	fi
	df_ask_connect www.allowed.test A 80
	[ "$(df_asked_rcode)" = NOERROR ] && [ "$DF_DIG_RC" -eq 0 ] || fail "systemd ($backend): allowed name: $DF_OUT"
	df_ask_connect www.evil.test A 80
	[ "$(df_asked_rcode)" = NXDOMAIN ] || fail "systemd ($backend): denied name: $DF_OUT"
	! df_connect_as 1000 198.18.3.1 80 2 || fail "systemd ($backend): an address nobody resolved is reachable"
	rc=0
	out=$(rp_in dnsfence check 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || fail "systemd ($backend): dnsfence check: exit $rc: $out"
	# The guard (every second here) finds everything in place, and the
	# unit never restarted (the legacy restart loop of issue 14).
	sleep 3
	[ "$(rp_in systemctl show -P NRestarts dnsfence)" = 0 ] &&
		[ "$(rp_in systemctl show -P ActiveState dnsfence)" = active ] ||
		fail "systemd ($backend): the unit restarted or stopped: $(rp_in journalctl -u dnsfence --no-pager -n 10)"
	rp_in journalctl -u dnsfence --no-pager | grep "rules and sets in place\|checking the rules and sets every" >/dev/null ||
		fail "systemd ($backend): no guard in the journal"
	ok "systemd ($backend): fence in iptables-$backend, allowed name connects, denied NXDOMAIN, check 0, guard passes, no restart"

	if [ "$backend" = nft ]; then
		# Stop: the resolver goes, the fence stays closed.
		rp_in systemctl stop dnsfence
		rp_fenced || fail "systemd (nft): stopping the unit opened the fence"
		! df_connect_as 1000 198.18.1.10 443 2 || fail "systemd (nft): after stop, an address not in the set is reachable"
		! wl dig +time=1 +tries=1 @127.0.0.1 www.allowed.test >/dev/null 2>&1 || fail "systemd (nft): something still answers after stop"
		ok "systemd (nft): stop leaves the fence closed (OUTPUT DROP, nothing answers)"
		# The per-unit fence needs the chain the whole-host one used.
		rp_in dnsfence teardown >/dev/null 2>&1 || fail "systemd (nft): teardown of the stopped unit's fence failed"
		! rp_fenced || fail "systemd (nft): teardown left OUTPUT closed"
		rp_subject_unit "$root"
	fi

	# Purge (legacy: with the unit still running): prerm stops the unit
	# and takes the fence down, saying so; nothing of ours is left.
	rp_in dpkg --purge dnsfence >"$RP_WORK/purge.log" 2>&1 ||
		{ cat "$RP_WORK/purge.log" >&2; fail "systemd ($backend): dpkg --purge failed"; }
	grep -q "the fence is removed" "$RP_WORK/purge.log" ||
		fail "systemd ($backend): purge said nothing about the fence: $(cat "$RP_WORK/purge.log")"
	! rp_fenced || fail "systemd ($backend): the fence is still up after purge"
	! grep -q DNSFENCE <<<"$(wl iptables-nft-save 2>/dev/null)" || fail "systemd ($backend): nft rules left after purge"
	! grep -q DNSFENCE <<<"$(wl iptables-legacy-save 2>/dev/null)" || fail "systemd ($backend): legacy rules left after purge"
	! grep -qx 'dnsfence[46]' <<<"$(wl ipset list -n)" || fail "systemd ($backend): sets left after purge"
	! rp_in systemctl is-active --quiet dnsfence || fail "systemd ($backend): the unit still runs after purge"
	! rp_in systemctl is-active --quiet dnsfence-subject@fenced || fail "systemd ($backend): the per-unit fence still runs after purge"
	[ ! -e "$root/usr/sbin/dnsfence" ] && [ ! -e "$root/etc/dnsfence" ] || fail "systemd ($backend): files left after purge"
	wl timeout 3 bash -c 'exec 3<>/dev/tcp/198.18.3.1/80' || fail "systemd ($backend): the namespace is not open after purge"
	ok "systemd ($backend): purge$([ "$backend" = legacy ] && echo " of the running unit")$([ "$backend" = nft ] && echo " with dnsfence-subject@fenced running") stopped it and removed the fence: $(grep -o 'the fence is removed[^:]*' "$RP_WORK/purge.log")"

	rp_disk
	rp_poweroff
	rp_umount_under "$root"
	rm -rf "$root"
}
