#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live reload, measured. Not a test: nothing here asserts a timing. Root
# only; a fresh network namespace on loopback, nsd as the upstream
# (a wildcard zone), dnsfence with the fence installed (setup) and a
# 100,000-entry allowlist. See test/bench/README.md.
#
#   1. Reload of the 100,000-entry allowlist: the time from SIGHUP to the
#      new policy in force (a name only the new list allows answered
#      NOERROR, polled with dig), the daemon's own figure (its reload log
#      line), and `dnsfence reload`'s wall time (it returns when the
#      policy, the deletes and the rules are in force); VmRSS before,
#      after one reload and after 100. During those 100, a probe asks a
#      new name every 20 ms, each with an address of its own (a set add
#      the privileged parent must answer): its latency, p50/p99/max.
#   2. 100 reloads during a dnsperf run at a steady rate: queries sent,
#      completed, lost, and the rcodes (no SERVFAIL expected).
#
#   test/bench/reload.sh [--entries N] [--rate QPS] [--reloads R]
#
#   DNSFENCE_BIN   the daemon (default: build/dnsfence)
#   BENCH_KEEP=1   keep the temp dir (configs, logs, dnsperf output)
set -euo pipefail

ENTRIES=100000
RATE=2000
RELOADS=100
while [ $# -gt 0 ]; do
	case "$1" in
	--entries) ENTRIES=$2; shift 2 ;;
	--rate) RATE=$2; shift 2 ;;
	--reloads) RELOADS=$2; shift 2 ;;
	-h | --help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "unknown argument: $1" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, ipsets)" >&2; exit 77; }
for t in ip ipset nsd dnsperf dig python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "'$t' is not installed" >&2; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
BIN=${DNSFENCE_BIN:-$src/build/dnsfence}
[ -x "$BIN" ] || { echo "no $BIN: build first" >&2; exit 2; }

BENCH_NAME=dfreload
# shellcheck source=lib.sh
. "$here/lib.sh"
chmod 755 "$tmp" # the daemon reads its config after the privilege drop
poll() {
	local n=$1
	shift
	until "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}
ms() { date +%s%3N; }
# rss: VmRSS of the daemon and of its DNS process (its child
# dnsfence-dns since the split, where the policy is parsed), in kB added.
# Prints "SUM (parent P, DNS process C)".
rss() {
	local p v sum=0 each=()
	for p in "$daemon" $(bench_dns_child "$daemon"); do
		v=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$p/status")
		sum=$((sum + v))
		each+=("$v")
	done
	echo "$sum (parent ${each[0]:-?}, DNS process ${each[1]:-?})"
}

mkdir -p "$tmp/zones"
cat >"$tmp/zones/bench.test.zone" <<'Z'
$ORIGIN bench.test.
$TTL 300
@ IN SOA ns hostmaster 1 3600 600 86400 1
@ IN NS ns
ns IN A 127.0.0.1
* IN A 198.18.0.1
Z
# The probe's names: each its own address, so each answer is an add.
for i in $(seq 1 20000); do
	echo "p$i.p IN A 198.19.$((i / 250)).$((i % 250 + 1))"
done >>"$tmp/zones/bench.test.zone"
cat >"$tmp/nsd.conf" <<EOF
server:
  ip-address: 127.0.0.1@5300
  port: 5300
  username: ""
  chroot: ""
  zonesdir: "$tmp/zones"
  database: ""
  pidfile: "$tmp/nsd.pid"
  logfile: "$tmp/nsd.log"
  xfrdfile: "$tmp/xfrd.state"
  xfrdir: "$tmp"
  zonelistfile: "$tmp/zone.list"
  cookie-secret-file: "$tmp/nsd_cookiesecrets.txt"
  server-count: 1
  rrl-ratelimit: 0
  receive-buffer-size: 8388608
  send-buffer-size: 8388608
remote-control:
  control-enable: no
zone:
  name: bench.test
  zonefile: bench.test.zone
EOF
in_ns nsd -d -c "$tmp/nsd.conf" >>"$tmp/nsd.stderr" 2>&1 &
pids+=("$!")
poll 300 in_ns dig +time=1 +tries=1 -p 5300 @127.0.0.1 x.bench.test A +short ||
	{ echo "nsd did not start" >&2; exit 1; }

# config EXTRA...: n1..nENTRIES, "*.q.bench.test" (the dnsperf names) and
# EXTRA; written to a temporary file and renamed over the config.
config() {
	python3 - "$tmp/dnsfence.json" "$ENTRIES" "$tmp" "$@" <<'PY'
import json, os, sys
path, n, tmp, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
allow = ["n%d.bench.test" % i for i in range(1, n + 1)] + ["*.q.bench.test", "*.p.bench.test"] + extra
conf = {"listen": ["127.0.0.1:53"], "upstreams": ["127.0.0.1:5300"], "local_upstream_user": "root", "allow": allow,
        "ports": ["tcp/443"], "sets": {"ipv4": "rl4", "ipv6": "rl6", "maxelem": 262144},
        "log": {"level": "info"}, "state_dir": tmp + "/state",
        # every dnsperf name is new below *.q.bench.test, from one
        # client: the default budget would refuse them (REFUSED)
        "wildcard_budget": {"burst": 10000000, "per_minute": 600000000},
        "control": {"socket": tmp + "/control.sock", "watch": False}}
with open(path + ".tmp", "w") as f:
    json.dump(conf, f)
os.chmod(path + ".tmp", 0o644)
os.rename(path + ".tmp", path)
PY
}
dnsfence() { in_ns "$BIN" -c "$tmp/dnsfence.json" "$@"; }

say "dnsfence with $ENTRIES allow entries: setup, serve"
config old.bench.test
dnsfence setup >>"$tmp/dnsfence.log" 2>&1
ip netns exec "$ns" "$BIN" -c "$tmp/dnsfence.json" serve >>"$tmp/dnsfence.log" 2>&1 &
daemon=$!
pids+=("$daemon")
poll 300 in_ns dig +time=1 +tries=1 @127.0.0.1 old.bench.test A +short ||
	{ echo "dnsfence did not answer" >&2; tail "$tmp/dnsfence.log" >&2; exit 1; }
# Some set entries and provenance to go with the list: 2,000 names.
for i in $(seq 1 2000); do echo "n$i.bench.test A"; done >"$tmp/q-warm"
in_ns dnsperf -s 127.0.0.1 -d "$tmp/q-warm" -n 1 -q 200 >"$tmp/warm.out" 2>&1
rss0=$(rss)

say "1. SIGHUP to a list with one name added: time until it answers NOERROR"
config new.bench.test
t0=$(ms)
kill -HUP "$daemon"
until in_ns dig +time=1 +tries=1 @127.0.0.1 new.bench.test A | grep 'status: NOERROR' >/dev/null; do :; done
t_sig=$(($(ms) - t0))
sleep 0.2
daemon_ms=$(grep 'reload: signal' "$tmp/dnsfence.log" | tail -n 1 | sed -n 's/.*, \([0-9]*\) ms$/\1/p')
rss1=$(rss)
config old.bench.test
t0=$(ms)
dnsfence reload >"$tmp/reload.out" 2>>"$tmp/dnsfence.log"
t_cmd=$(($(ms) - t0))
say "   $RELOADS reloads with 'dnsfence reload' (alternating lists), the probe asking"
in_ns python3 - "$tmp/probe.stop" >"$tmp/probe.out" 2>&1 <<'PY' &
import os, socket, struct, sys, time
stop, lat, rcodes, lost, i = sys.argv[1], [], {}, 0, 0
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("127.0.0.1", 53))
s.settimeout(3)
while not os.path.exists(stop) and i < 20000:
    i += 1
    q = struct.pack(">HHHHHH", i & 0xFFFF, 0x0100, 1, 0, 0, 0)
    for label in ("p%d" % i, "p", "bench", "test"):
        q += bytes([len(label)]) + label.encode()
    q += b"\0" + struct.pack(">HH", 1, 1)
    t = time.monotonic()
    s.send(q)
    try:
        while True:
            m = s.recv(4096)
            if struct.unpack(">H", m[:2])[0] == i & 0xFFFF:
                break
        lat.append((time.monotonic() - t) * 1000)
        rcodes[m[3] & 15] = rcodes.get(m[3] & 15, 0) + 1
    except socket.timeout:
        lost += 1
    time.sleep(0.02)
lat.sort()
pick = lambda f: lat[min(len(lat) - 1, int(len(lat) * f))] if lat else 0
print("%d asked, %d unanswered, rcodes %s; latency ms p50 %.1f, p99 %.1f, max %.1f; %d over 100 ms"
      % (i, lost, {({0: "NOERROR", 2: "SERVFAIL"}).get(k, k): v for k, v in rcodes.items()},
         pick(0.5), pick(0.99), lat[-1] if lat else 0, sum(x > 100 for x in lat)))
PY
probe=$!
pids+=("$probe")
t0=$(ms)
for i in $(seq 1 "$RELOADS"); do
	if [ $((i % 2)) -eq 1 ]; then config new.bench.test; else config old.bench.test; fi
	dnsfence reload >/dev/null 2>>"$tmp/dnsfence.log"
done
t_many=$(($(ms) - t0))
touch "$tmp/probe.stop"
wait "$probe" || true
rss100=$(rss)

say "2. $RELOADS reloads during a dnsperf run at $RATE qps"
dur=$((RELOADS * 3 / 5 + 10))
seq 1 $((RATE * dur + RATE)) | sed 's/.*/u&.q.bench.test A/' >"$tmp/q-flood"
in_ns dnsperf -s 127.0.0.1 -d "$tmp/q-flood" -n 1 -l "$dur" -Q "$RATE" -q 500 -t 5 \
	>"$tmp/dnsperf.out" 2>&1 &
perf=$!
udp0=$(in_ns awk '/^Udp:/ && $2 ~ /^[0-9]/ { print $6 }' /proc/net/snmp)
sleep 2
for i in $(seq 1 "$RELOADS"); do
	if [ $((i % 2)) -eq 1 ]; then config new.bench.test; else config old.bench.test; fi
	dnsfence reload >/dev/null 2>>"$tmp/dnsfence.log"
	sleep 0.3
done
# Per socket, who dropped what (skmem d<N>), while dnsperf still runs.
in_ns ss -uanmp >"$tmp/ss.out" 2>&1 || true
wait "$perf" || true

udp1=$(in_ns awk '/^Udp:/ && $2 ~ /^[0-9]/ { print $6 }' /proc/net/snmp)
fails=$(grep -c 'error reload' "$tmp/dnsfence.log" || true)

echo
echo "dnsfence reload benchmark ($(uname -r), $ENTRIES allow entries)"
echo "1. SIGHUP -> new name answered:     $t_sig ms (the daemon's own figure: ${daemon_ms:-?} ms)"
echo "   'dnsfence reload' wall time:     $t_cmd ms (returns with the policy, deletes and rules in force)"
echo "   $RELOADS reloads one after another: $t_many ms ($((t_many / RELOADS)) ms each)"
echo "   a new address every 20 ms meanwhile: $(cat "$tmp/probe.out")"
echo "   VmRSS in kB, both processes: before $rss0; after 1 reload $rss1; after $((RELOADS + 2)) reloads $rss100"
echo "2. dnsperf at $RATE qps for $dur s with $RELOADS reloads:"
grep -E 'Queries sent|Queries completed|Queries lost|Response codes' "$tmp/dnsperf.out" | sed 's/^ */   /'
echo "   UDP receive buffer overflows in the namespace (RcvbufErrors): $((udp1 - udp0))"
echo "   drops per socket (ss -m, at the last reload):" $(awk '/users:/ { match($0, /\(\("[^"]*"/); p = substr($0, RSTART + 3, RLENGTH - 4) }
	/skmem:/ && match($0, /d[0-9]+\)/) { d = substr($0, RSTART + 1, RLENGTH - 2); if (d > 0) { printf "%s:%s ", p, d; m++ } }
	END { if (!m) printf "none" }' "$tmp/ss.out")
echo "   failed reloads: $fails"
