#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dnsperf against dnsfence and against dnsmasq (--server=/zone/upstream
# --address=/#/ --ipset=/zone/set4,set6) on the same nsd upstream, in one
# run, in a fresh network namespace on loopback. Three workloads: unique
# names (forward + set insert), cached names (1,000 names, TTL 86400),
# denied names; then nsd asked straight with the cached and denied
# questions, the ceiling of this namespace and its rules. The unique
# names are all below one wildcard and come from one client address
# (dnsperf's sockets on 127.0.0.1), which the default wildcard_budget
# (600 at once, 120 a minute) would refuse after 600: the config raises
# it to 10,000,000 at once and 600,000,000 a minute, beyond anything
# dnsperf sends, so the budget is on (every new question takes its
# tokens) and nothing is refused. Prints qps for each daemon, the ratios
# dnsfence/dnsmasq, each daemon's share of the ceiling, dnsfence's peak
# RSS (VmHWM) and its live set entries. Root only. Not a
# test: nothing here asserts a timing. See test/bench/README.md.
#
#   test/bench/dnsperf.sh [--duration S] [--names N] [--outstanding Q]
#                         [--clients C] [--out FILE] [--profile DIR]
#                         [--latency QPS]
#
#   DNSFENCE_BIN   the daemon (default: build/dnsfence; built if missing)
#   DNSMASQ_EXTRA  extra dnsmasq flags (e.g. --dns-forward-max=1000)
#   BENCH_KEEP=1   keep the temp dir (zones, configs, logs, dnsperf output)
#   BENCH_SMAPS=DIR  copy both processes' /proc/PID/smaps into DIR after
#                  the unique workload and at the end (where memory goes)
#
# --profile DIR: run only dnsfence, each workload (unique, cached,
# denied) under its own `perf record -g` (or only unique under callgrind
# if perf cannot count), and write the reports into DIR. Its qps is
# perturbed by the profiler: not a result.
#
# --latency QPS: instead of the three workloads at full speed, one mixed
# load (unique, cached and denied questions in turn) sent at QPS queries
# a second to each daemon; prints each one's latency percentiles (p50,
# p99, p99.9) and lost queries, which count as the 2 s timeout. Up to
# 20,000 queries in flight (--outstanding), so both get the same rate.
# Then dnsfence's own histograms for the same run (its metrics endpoint,
# scraped before and after; needs curl): each path's and each stage's
# percentiles, where the time went (docs/metrics.md).
set -euo pipefail

DURATION=10
NAMES=130000         # unique names; 198.18.0.0/15 holds 131072 addresses
CACHED=1000
DENIED=100000
OUTSTANDING=""
CLIENTS=8
OUT=""
PROFILE=""
LATENCY_QPS=""

usage() { sed -n '2,38s/^# \{0,1\}//p' "$0"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--duration) DURATION=$2; shift 2 ;;
	--names) NAMES=$2; shift 2 ;;
	--outstanding) OUTSTANDING=$2; shift 2 ;;
	--clients) CLIENTS=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--profile) PROFILE=$2; shift 2 ;;
	--latency) LATENCY_QPS=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
done
# At a fixed rate, queries in flight must never hold the sender back
# (a lost one holds its slot for the 2 s timeout): then both daemons get
# the same load.
OUTSTANDING=${OUTSTANDING:-$([ -n "$LATENCY_QPS" ] && echo 20000 || echo 500)}
[ "$NAMES" -ge 1000 ] && [ "$NAMES" -le 131000 ] ||
	{ echo "--names must be 1000..131000 (one IPv4 of 198.18.0.0/15 each)" >&2; exit 2; }

[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces, ipsets)" >&2; exit 77; }
for t in ip ipset nsd dnsperf dnsmasq dig awk ${LATENCY_QPS:+curl}; do
	command -v "$t" >/dev/null 2>&1 || { echo "'$t' is not installed" >&2; exit 2; }
done

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
DNSFENCE_BIN=${DNSFENCE_BIN:-$src/build/dnsfence}
if [ ! -x "$DNSFENCE_BIN" ]; then
	echo "building $DNSFENCE_BIN (Release)" >&2
	cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$src/build" --target dnsfence -j"$(nproc)" >/dev/null
	DNSFENCE_BIN=$src/build/dnsfence
fi

BENCH_NAME=dfbench
# shellcheck source=lib.sh
. "$here/lib.sh"

# --- zones and query files --------------------------------------------------

say "generating zones ($NAMES unique, $CACHED cached names) and query files"
mkdir -p "$tmp/zones"
soa() {
	printf '$ORIGIN %s.\n$TTL %s\n' "$1" "$2"
	printf '@ IN SOA ns.%s. hostmaster.%s. 1 3600 600 86400 1\n' "$1" "$1"
	printf '@ IN NS ns.%s.\nns IN A 127.0.0.1\n' "$1"
}
# n<i>.uniq.bench.test: A 198.18.0.0 + i, AAAA 2001:db8::<i>, TTL 1.
{
	soa uniq.bench.test 1
	awk -v n="$NAMES" 'BEGIN { for (i = 1; i <= n; i++)
		printf "n%d IN A 198.%d.%d.%d\nn%d IN AAAA 2001:db8::%x:%x\n", i,
			18 + int(i / 65536), int(i / 256) % 256, i % 256, i, int(i / 65536), i % 65536 }'
} >"$tmp/zones/uniq.bench.test.zone"
# c<i>.cached.bench.test: A 198.19.252.0 + i, AAAA 2001:db8:1::<i>, TTL 86400
# (above every unique address: the sets see distinct entries).
{
	soa cached.bench.test 86400
	awk -v n="$CACHED" 'BEGIN { for (i = 0; i < n; i++)
		printf "c%d IN A 198.19.%d.%d\nc%d IN AAAA 2001:db8:1::%x\n", i,
			252 + int(i / 256), i % 256, i, i }'
} >"$tmp/zones/cached.bench.test.zone"

# Unique: every name once, A then AAAA; dnsperf runs through it at most
# once (-n 1), so no (name, type) is ever asked twice.
awk -v n="$NAMES" 'BEGIN { for (i = 1; i <= n; i++)
	printf "n%d.uniq.bench.test A\nn%d.uniq.bench.test AAAA\n", i, i }' >"$tmp/q-unique"
awk -v n="$CACHED" 'BEGIN { for (i = 0; i < n; i++)
	printf "c%d.cached.bench.test A\nc%d.cached.bench.test AAAA\n", i, i }' >"$tmp/q-cached"
awk -v n="$DENIED" 'BEGIN { for (i = 0; i < n; i++)
	printf "d%d.denied.bench.test A\n", i }' >"$tmp/q-denied"

cat >"$tmp/nsd.conf" <<EOF
server:
  ip-address: 127.0.0.1@5300
  ip-address: 127.0.0.2@5300
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
  verbosity: 1
  hide-version: yes
  # No response rate limiting: the cached workload asks the same 2,000
  # questions over and over, and RRL would truncate (slip) them.
  rrl-ratelimit: 0
  rrl-whitelist-ratelimit: 0
  # A burst of hundreds of upstream queries must not overflow nsd's
  # socket (a drop costs a c-ares retry, 1.7 s with dnsfence's defaults).
  receive-buffer-size: 8388608
  send-buffer-size: 8388608
remote-control:
  control-enable: no
zone:
  name: uniq.bench.test
  zonefile: uniq.bench.test.zone
zone:
  name: cached.bench.test
  zonefile: cached.bench.test.zone
EOF

# poll TENTHS CMD...: run CMD every 0.1 s until it succeeds.
poll() {
	local n=$1
	shift
	until "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

say "starting nsd on 127.0.0.1:5300 and 127.0.0.2:5300"
ip netns exec "$ns" nsd -d -c "$tmp/nsd.conf" >>"$tmp/nsd.stderr" 2>&1 &
pids+=("$!")
poll 300 in_ns dig +time=1 +tries=1 +norec -p 5300 @127.0.0.1 "n$NAMES.uniq.bench.test" A +short ||
	{ echo "nsd did not answer within 30 s" >&2; cat "$tmp/nsd.stderr" "$tmp/nsd.log" >&2; exit 1; }

# --- the two daemons --------------------------------------------------------

daemon_pid=""
fresh_sets() { # SET4 SET6
	in_ns ipset destroy "$1" 2>/dev/null || true
	in_ns ipset destroy "$2" 2>/dev/null || true
	in_ns ipset create "$1" hash:ip family inet timeout 60 maxelem 1048576
	in_ns ipset create "$2" hash:ip family inet6 timeout 60 maxelem 1048576
}
answers() {
	kill -0 "$daemon_pid" 2>/dev/null || return 2
	in_ns dig +time=1 +tries=1 @127.0.0.1 c0.cached.bench.test A +short | grep . >/dev/null
}
wait_ready() { # NAME LOG
	local n=100 rc
	while :; do
		rc=0
		answers || rc=$?
		[ "$rc" -eq 0 ] && return 0
		if [ "$rc" -eq 2 ] || [ "$n" -le 0 ]; then
			echo "$1 did not start serving; its log:" >&2
			tail -n 30 "$2" >&2
			exit 1
		fi
		n=$((n - 1))
		sleep 0.1
	done
}
stop_daemon() {
	[ -n "$daemon_pid" ] || return 0
	kill -TERM "$daemon_pid" 2>/dev/null || true
	local n=50
	while kill -0 "$daemon_pid" 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	kill -KILL "$daemon_pid" 2>/dev/null || true
	wait "$daemon_pid" 2>/dev/null || true
	daemon_pid=""
}

start_dnsfence() {
	local metrics=""
	# --latency: the metrics endpoint, whose histograms stage_table reads.
	[ -z "$LATENCY_QPS" ] || metrics=',
  "metrics": "127.0.0.1:9253"'
	cat >"$tmp/dnsfence.json" <<EOF
{
  "listen": ["127.0.0.1:53"],
  "upstreams": ["127.0.0.2:5300"],
  "local_upstream_user": "root",
  "allow": ["*.uniq.bench.test", "*.cached.bench.test"],
  "sets": {"ipv4": "dnsfence4", "ipv6": "dnsfence6", "maxelem": 1048576},
  "state_dir": "$tmp/state",
  "wildcard_budget": {"burst": 10000000, "per_minute": 600000000},
  "log": {"level": "warning"}$metrics
}
EOF
	fresh_sets dnsfence4 dnsfence6
	# serve refuses an unfenced namespace: install the fence first. Its
	# rules stay for the dnsmasq run too, so both pay the same
	# conntrack and filter cost per packet. dnsfence asks nsd on
	# 127.0.0.2: the fence lets only the daemon's socket mark reach an
	# upstream address, so dnsmasq (no mark) asks the same nsd on
	# 127.0.0.1, which the fence treats as any loopback service.
	ip netns exec "$ns" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		"$DNSFENCE_BIN" -c "$tmp/dnsfence.json" setup >>"$tmp/dnsfence.log" 2>&1 || {
		echo "dnsfence setup failed; its log:" >&2
		tail -n 30 "$tmp/dnsfence.log" >&2
		exit 1
	}
	ip netns exec "$ns" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		"$DNSFENCE_BIN" -c "$tmp/dnsfence.json" serve >>"$tmp/dnsfence.log" 2>&1 &
	daemon_pid=$!
	pids+=("$daemon_pid")
	wait_ready dnsfence "$tmp/dnsfence.log"
}

start_dnsmasq() {
	fresh_sets dnsmasq4 dnsmasq6
	# shellcheck disable=SC2086
	ip netns exec "$ns" dnsmasq -k --conf-file=/dev/null --pid-file= \
		--log-facility="$tmp/dnsmasq.log" \
		--no-resolv --no-hosts --listen-address=127.0.0.1 --port=53 --bind-interfaces \
		--server=/uniq.bench.test/127.0.0.1#5300 --server=/cached.bench.test/127.0.0.1#5300 \
		--address=/#/ --ipset=/uniq.bench.test/cached.bench.test/dnsmasq4,dnsmasq6 \
		--cache-size=10000 -u root ${DNSMASQ_EXTRA:-} >>"$tmp/dnsmasq.stderr" 2>&1 &
	daemon_pid=$!
	pids+=("$daemon_pid")
	wait_ready dnsmasq "$tmp/dnsmasq.stderr"
}

# UDP datagrams dropped on a full receive buffer in the namespace (any socket).
udp_rcvbuf_errors() {
	in_ns awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { print $6 }' /proc/net/snmp
}

# cpu_ticks: the CPU time (user + system, in clock ticks) the daemon
# under test has used so far, as "PARENT CHILD": the daemon, and its DNS
# process (none for dnsmasq); "0 0" when none runs (nsd asked straight,
# after stop_daemon).
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
cpu_ticks() {
	local p c=0
	[ -n "$daemon_pid" ] || { echo 0 0; return; }
	for p in $(dns_child); do c=$((c + $(proc_ticks "$p"))); done
	echo "$(proc_ticks "$daemon_pid") $c"
}

# perf_run TAG FILE [dnsperf args...]: one dnsperf run; prints its qps.
# The daemon's CPU time per answered query goes to $tmp/cpu-TAG, in µs.
perf_run() {
	local tag=$1 file=$2 drops0 drops ticks0
	shift 2
	drops0=$(udp_rcvbuf_errors)
	ticks0=$(cpu_ticks)
	in_ns dnsperf -s 127.0.0.1 -p "${PERF_PORT:-53}" -d "$file" -c "$CLIENTS" -T 1 \
		-q "$OUTSTANDING" -t 2 "$@" >"$tmp/dnsperf-$tag.txt" 2>&1 || {
		echo "dnsperf failed ($tag):" >&2
		cat "$tmp/dnsperf-$tag.txt" >&2
		exit 1
	}
	local qps sent lost codes
	qps=$(awk '/Queries per second:/ { printf "%.0f", $4 }' "$tmp/dnsperf-$tag.txt")
	sent=$(awk '/Queries sent:/ { print $3 }' "$tmp/dnsperf-$tag.txt")
	lost=$(awk '/Queries lost:/ { print $3, $4 }' "$tmp/dnsperf-$tag.txt")
	codes=$(sed -n 's/^ *Response codes: *//p' "$tmp/dnsperf-$tag.txt")
	drops=$(($(udp_rcvbuf_errors) - drops0))
	local us split
	read -r us split < <(awk -v t0="$ticks0" -v t1="$(cpu_ticks)" -v hz="$(getconf CLK_TCK)" \
		-v s="$sent" -v l="${lost%% *}" 'BEGIN { split(t0, a, " "); split(t1, b, " ")
		k = (s - l > 0 ? 1e6 / hz / (s - l) : 0); p = (b[1] - a[1]) * k; c = (b[2] - a[2]) * k
		printf "%.1f %s\n", p + c, (c > 0 ? sprintf("(the parent %.1f, the DNS process %.1f)", p, c) : "") }')
	echo "$us" >"$tmp/cpu-$tag"
	say "$tag: $qps qps ($sent sent, lost $lost; $codes; $drops UDP receive-buffer drops; $us µs of daemon CPU a query${split:+ $split})"
	echo "$qps"
}

declare -A QPS
RSS_KB="" HWM_UNIQ_KB="" START_KB="" ENTRIES4="" ENTRIES6=""
RSS_P="" RSS_C="" HWM_UNIQ_P="" HWM_UNIQ_C="" START_P="" START_C=""

set_entries() { in_ns ipset list -t "$1" | sed -n 's/^Number of entries: //p'; }

dns_child() { bench_dns_child "$daemon_pid"; }

# proc_kb FIELD: FIELD (VmRSS, VmHWM) of the daemon and of its DNS
# process (its child since the split), in kB, as "SUM PARENT CHILD". The
# sum of the two peaks is an upper bound of the daemon's peak (they may
# come at different times, and each counts the libraries it maps).
proc_kb() {
	local parent child=0 c
	parent=$(awk -v f="$1:" '$1 == f { print $2 }' "/proc/$daemon_pid/status")
	for c in $(dns_child); do
		child=$((child + $(awk -v f="$1:" '$1 == f { print $2 }' "/proc/$c/status")))
	done
	echo "$((parent + child)) $parent $child"
}

# The daemon's memory as the two processes share it: every 0.2 s, the
# sum of both processes' Pss (each page shared between them, or with
# any other process, counted in its share: the libraries, the heap
# pages the DNS process inherited at the fork) and of their Pss_Anon
# (heap, stacks, buffers: what no other program shares). The peak of
# each sum goes to $tmp/pss-peak as "PSS_KB ANON_KB". VmHWM above adds
# each process's own peak, with every shared page counted in both.
pss_sampler() { # PID
	local top=$1 best=0 best_anon=0 p pss anon sum sum_anon
	while kill -0 "$top" 2>/dev/null; do
		sum=0 sum_anon=0
		for p in "$top" $(dns_child); do
			read -r pss anon < <(awk '$1 == "Pss:" { p = $2 } $1 == "Pss_Anon:" { a = $2 }
				END { print p + 0, a + 0 }' "/proc/$p/smaps_rollup" 2>/dev/null) || continue
			sum=$((sum + pss)) sum_anon=$((sum_anon + anon))
		done
		[ "$sum" -gt "$best" ] && best=$sum
		[ "$sum_anon" -gt "$best_anon" ] && best_anon=$sum_anon
		echo "$best $best_anon" >"$tmp/pss-peak.new" && mv "$tmp/pss-peak.new" "$tmp/pss-peak"
		sleep 0.2
	done
}
PSS_PEAK_KB="" PSS_ANON_KB=""
pss_start() {
	rm -f "$tmp/pss-peak"
	pss_sampler "$daemon_pid" &
	pss_pid=$!
	pids+=("$pss_pid")
}
pss_stop() {
	kill "$pss_pid" 2>/dev/null || true
	wait "$pss_pid" 2>/dev/null || true
	read -r PSS_PEAK_KB PSS_ANON_KB <"$tmp/pss-peak" || PSS_PEAK_KB="" PSS_ANON_KB=""
}

# With BENCH_SMAPS, DIR/parent-WHEN.smaps and DIR/dns-WHEN.smaps.
save_smaps() { # WHEN
	[ -n "${BENCH_SMAPS:-}" ] || return 0
	local c
	mkdir -p "$BENCH_SMAPS"
	cat "/proc/$daemon_pid/smaps" >"$BENCH_SMAPS/parent-$1.smaps"
	for c in $(dns_child); do cat "/proc/$c/smaps" >"$BENCH_SMAPS/dns-$1.smaps"; done
}

run_workloads() { # NAME
	local d=$1
	if [ "$d" = dnsfence ]; then
		read -r START_KB START_P START_C <<<"$(proc_kb VmRSS)"
		pss_start
	fi
	QPS[$d,unique]=$(perf_run "$d-unique" "$tmp/q-unique" -n 1 -l "$DURATION")
	if [ "$d" = dnsfence ]; then
		read -r HWM_UNIQ_KB HWM_UNIQ_P HWM_UNIQ_C <<<"$(proc_kb VmHWM)"
		save_smaps unique
		ENTRIES4=$(set_entries dnsfence4)
		ENTRIES6=$(set_entries dnsfence6)
	else
		say "dnsmasq sets: $(set_entries dnsmasq4) + $(set_entries dnsmasq6) entries"
	fi
	perf_run "$d-warm" "$tmp/q-cached" -n 1 >/dev/null
	QPS[$d,cached]=$(perf_run "$d-cached" "$tmp/q-cached" -l "$DURATION")
	QPS[$d,denied]=$(perf_run "$d-denied" "$tmp/q-denied" -l "$DURATION")
	if [ "$d" = dnsfence ]; then
		read -r RSS_KB RSS_P RSS_C <<<"$(proc_kb VmHWM)"
		save_smaps end
		pss_stop
	fi
}

# --- profile mode -------------------------------------------------------------

if [ -n "$PROFILE" ]; then
	mkdir -p "$PROFILE"
	PROFILE=$(cd "$PROFILE" && pwd)
	start_dnsfence
	if perf stat -e instructions true >/dev/null 2>&1; then
		# profile TAG QFILE [dnsperf args]: one workload under perf
		# record -g; its reports in DIR/TAG-report-*.txt.
		profile() {
			local tag=$1 file=$2 data=$PROFILE/$1.perf.data
			shift 2
			# Both processes: since the split the resolver runs in the
			# DNS process, the daemon's child.
			local procs
			procs=$(dns_child | paste -sd, -)
			procs=$daemon_pid${procs:+,$procs}
			say "perf record -g on dnsfence (pids $procs) during the $tag workload"
			perf record -g -o "$data" -p "$procs" >"$PROFILE/$tag-perf-record.log" 2>&1 &
			perf_pid=$!
			sleep 0.5
			perf_run "profile-$tag" "$file" "$@" >/dev/null
			kill -INT "$perf_pid"
			wait "$perf_pid" || true
			perf report -i "$data" --no-children --percent-limit 0.5 --stdio \
				--sort dso,symbol -g none >"$PROFILE/$tag-report-self.txt" 2>/dev/null
			perf report -i "$data" --children --percent-limit 2 --stdio \
				--sort symbol -g none >"$PROFILE/$tag-report-children.txt" 2>/dev/null
			perf report -i "$data" --no-children --percent-limit 2 --stdio \
				--sort dso -g none >"$PROFILE/$tag-report-dso.txt" 2>/dev/null
			cp "$tmp/dnsperf-profile-$tag.txt" "$PROFILE/"
		}
		profile unique "$tmp/q-unique" -n 1 -l "$DURATION"
		perf_run dnsfence-warm "$tmp/q-cached" -n 1 >/dev/null
		profile cached "$tmp/q-cached" -l "$DURATION"
		profile denied "$tmp/q-denied" -l "$DURATION"
		echo "reports in $PROFILE (WORKLOAD-report-self.txt, -children.txt, -dso.txt)"
	else
		stop_daemon
		say "perf cannot count here; callgrind on a shorter run"
		fresh_sets dnsfence4 dnsfence6
		ip netns exec "$ns" valgrind --tool=callgrind --callgrind-out-file="$PROFILE/callgrind.out" \
			"$DNSFENCE_BIN" -c "$tmp/dnsfence.json" serve >>"$tmp/dnsfence.log" 2>&1 &
		daemon_pid=$!
		pids+=("$daemon_pid")
		sleep 3
		wait_ready dnsfence "$tmp/dnsfence.log"
		head -n 40000 "$tmp/q-unique" >"$tmp/q-unique-short"
		perf_run profile-unique "$tmp/q-unique-short" -n 1 -l 60 >/dev/null
		stop_daemon
		callgrind_annotate "$PROFILE/callgrind.out" >"$PROFILE/callgrind-report.txt" 2>/dev/null
		echo "report in $PROFILE/callgrind-report.txt"
		cp "$tmp/dnsperf-profile-unique.txt" "$PROFILE/"
	fi
	exit 0
fi

# --- latency mode ---------------------------------------------------------------

# latency_run NAME: the mixed file at LATENCY_QPS to the daemon serving
# now, every answer's latency written out (-v); prints "p50 p99 p999 lost
# sent" in milliseconds. A lost query counts as dnsperf's 2 s timeout:
# it is worse than any answer.
latency_run() {
	local tag=$1 out=$tmp/latency-$1.txt
	perf_run "$tag-warm" "$tmp/q-cached" -n 1 >/dev/null
	[ "$tag" != dnsfence ] || scrape "$tmp/metrics-before.txt"
	in_ns dnsperf -s 127.0.0.1 -p 53 -d "$tmp/q-mixed" -c "$CLIENTS" -T 1 \
		-q "$OUTSTANDING" -t 2 -Q "$LATENCY_QPS" -n 1 -l "$DURATION" -v >"$out" 2>&1 || {
		echo "dnsperf failed ($tag):" >&2
		tail -n 20 "$out" >&2
		exit 1
	}
	awk '$1 == ">" { if ($2 == "T") print 2.0; else print $NF }' "$out" | sort -g |
		awk -v sent="$(awk '/Queries sent:/ { print $3 }' "$out")" \
			-v lost="$(awk '/Queries lost:/ { print $3 }' "$out")" '
		{ v[NR] = $1 }
		function at(q,  i) { i = int(q * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; return v[i] * 1000 }
		END { printf "%.3f %.3f %.3f %d %d\n", at(0.50), at(0.99), at(0.999), lost, sent }'
	[ "$tag" != dnsfence ] || scrape "$tmp/metrics-after.txt"
}

# scrape FILE: dnsfence's metrics now.
scrape() {
	in_ns curl -sf --max-time 10 http://127.0.0.1:9253/metrics >"$1" ||
		{ echo "could not scrape dnsfence's metrics" >&2; exit 1; }
}

# stage_table: each histogram series of the latency families, counted
# between the two scrapes: its count and p50/p99/p99.9 in ms, linearly
# interpolated within a bucket as Prometheus' histogram_quantile does
# (a quantile in the +Inf bucket prints as "> the last bound").
stage_table() {
	printf '| dnsfence histogram | count | p50 ms | p99 ms | p99.9 ms |\n|---|---|---|---|---|\n'
	awk '
	function key(line,  s) { s = line; sub(/_bucket\{/, "{", s); sub(/,?le="[^"]*"/, "", s); sub(/\{\}/, "", s); sub(/ [0-9.e+-]+$/, "", s); return s }
	function le(line,  s) { s = line; sub(/.*le="/, "", s); sub(/".*/, "", s); return s }
	/^dnsfence_(query_duration|set_add_duration|query_stage_duration)_seconds_bucket/ {
		k = key($0); b = le($0); v = $NF
		if (FILENAME == ARGV[1]) { before[k, b] = v; next }
		if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		nb[k]++; bound[k, nb[k]] = b; cum[k, nb[k]] = v - before[k, b]
	}
	function q(k, p,  total, want, i, lo, prev) {
		total = cum[k, nb[k]]; want = p * total; prev = 0; lo = 0
		for (i = 1; i <= nb[k]; i++) {
			if (cum[k, i] >= want) {
				if (bound[k, i] == "+Inf") return sprintf("> %g", lo * 1000)
				return sprintf("%.3f", (lo + (bound[k, i] - lo) * (cum[k, i] > prev ? (want - prev) / (cum[k, i] - prev) : 1)) * 1000)
			}
			prev = cum[k, i]; lo = bound[k, i]
		}
	}
	END {
		for (j = 1; j <= n; j++) {
			k = order[j]; t = cum[k, nb[k]]
			if (t == 0) continue
			name = k; sub(/^dnsfence_/, "", name); sub(/_seconds/, "", name)
			printf "| %s | %d | %s | %s | %s |\n", name, t, q(k, 0.5), q(k, 0.99), q(k, 0.999)
		}
	}' "$tmp/metrics-before.txt" "$tmp/metrics-after.txt"
	# dnsfence_shed_total by stage over the run: the queries dnsfence shed
	# at a bound rather than queued (dnsmasq keeps no such count: its
	# drops are among the lost above).
	awk '/^dnsfence_shed_total\{/ { k = $1; sub(/.*stage="/, "", k); sub(/".*/, "", k)
			if (FILENAME == ARGV[1]) { b[k] = $2; next }
			if (!(k in b)) b[k] = 0
			out = out sprintf("%s%s %d", out == "" ? "" : ", ", k, $2 - b[k]) }
		END { printf "\ndnsfence shed (dnsfence_shed_total over the run): %s\n", out }' \
		"$tmp/metrics-before.txt" "$tmp/metrics-after.txt"
}

if [ -n "$LATENCY_QPS" ]; then
	# Unique, cached and denied questions in turn: one third each, every
	# unique question once, the cached and denied ones repeating.
	awk 'FNR == NR { c[n++] = $0; next } FILENAME ~ /denied/ { d[m++] = $0; next }
		{ print; print c[FNR % n]; print d[FNR % m] }' \
		"$tmp/q-cached" "$tmp/q-denied" "$tmp/q-unique" >"$tmp/q-mixed"
	declare -A LAT
	say "dnsfence ($DNSFENCE_BIN): mixed load at $LATENCY_QPS qps"
	start_dnsfence
	LAT[dnsfence]=$(latency_run dnsfence)
	stop_daemon
	say "dnsmasq ($(dnsmasq --version | head -n 1)): mixed load at $LATENCY_QPS qps"
	start_dnsmasq
	LAT[dnsmasq]=$(latency_run dnsmasq)
	stop_daemon
	lat_table() {
		printf '| daemon | p50 ms | p99 ms | p99.9 ms | lost / sent |\n|---|---|---|---|---|\n'
		local d
		for d in dnsfence dnsmasq; do
			read -r p50 p99 p999 lost sent <<<"${LAT[$d]}"
			printf '| %s | %s | %s | %s | %s / %s |\n' "$d" "$p50" "$p99" "$p999" "$lost" "$sent"
		done
		printf '\n(mixed load: unique, cached, denied in turn at %s qps for %s s, %s names; dnsperf -c %s -T 1 -q %s; nproc %s)\n' \
			"$LATENCY_QPS" "$DURATION" "$NAMES" "$CLIENTS" "$OUTSTANDING" "$(nproc)"
	}
	lat_table
	printf '\n'
	stage_table
	if [ -n "$OUT" ]; then { lat_table; printf '\n'; stage_table; } >"$OUT"; fi
	exit 0
fi

# --- the comparison -----------------------------------------------------------

say "dnsfence ($DNSFENCE_BIN)"
start_dnsfence
run_workloads dnsfence
stop_daemon
# Let the port go and the sets of the previous daemon age out of the way.
say "dnsmasq ($(dnsmasq --version | head -n 1))"
start_dnsmasq
run_workloads dnsmasq
stop_daemon
# The ceiling: nsd itself, asked straight on 127.0.0.1:5300 in the same
# namespace behind the same rules, answers the cached questions from its
# zone and refuses the denied ones, doing nothing else. A daemon near it
# is bounded by dnsperf and the kernel's per-packet cost, not by its own
# code, and no ratio between two daemons near it can say much.
say "ceiling: nsd asked straight"
QPS[nsd,unique]=$(PERF_PORT=5300 perf_run nsd-unique "$tmp/q-unique" -n 1 -l "$DURATION")
QPS[nsd,cached]=$(PERF_PORT=5300 perf_run nsd-cached "$tmp/q-cached" -l "$DURATION")
QPS[nsd,denied]=$(PERF_PORT=5300 perf_run nsd-denied "$tmp/q-denied" -l "$DURATION")

table() {
	printf '| workload | dnsfence qps | dnsmasq qps | dnsfence/dnsmasq | CPU µs a query, dnsfence / dnsmasq |\n'
	printf '|---|---|---|---|---|\n'
	local w
	for w in unique cached denied; do
		awk -v w="$w" -v a="${QPS[dnsfence,$w]}" -v b="${QPS[dnsmasq,$w]}" \
			-v ca="$(cat "$tmp/cpu-dnsfence-$w")" -v cb="$(cat "$tmp/cpu-dnsmasq-$w")" \
			'BEGIN { printf "| %s | %d | %d | %.2f | %s / %s |\n", w, a, b, (b > 0 ? a / b : 0), ca, cb }'
	done
	printf '\n'
	awk -v c="${QPS[nsd,unique]}" -v a="${QPS[dnsfence,unique]}" -v b="${QPS[dnsmasq,unique]}" 'BEGIN {
		printf "ceiling (nsd asked straight, same namespace and rules), unique: %d qps, %.1f x dnsmasq'"'"'s unique rate, with no forwarder'"'"'s work in between; dnsfence at %.0f %%, dnsmasq at %.0f %% of it\n",
			c, (b > 0 ? c / b : 0), (c > 0 ? 100 * a / c : 0), (c > 0 ? 100 * b / c : 0) }'
	for w in cached denied; do
		awk -v w="$w" -v a="${QPS[dnsfence,$w]}" -v b="${QPS[dnsmasq,$w]}" -v c="${QPS[nsd,$w]}" \
			'BEGIN { printf "ceiling (nsd asked straight, same namespace and rules), %s: %d qps; dnsfence at %.0f %%, dnsmasq at %.0f %% of it\n",
				w, c, (c > 0 ? 100 * a / c : 0), (c > 0 ? 100 * b / c : 0) }'
	done
	awk -v k="$RSS_KB" -v u="$HWM_UNIQ_KB" -v kp="$RSS_P" -v kc="$RSS_C" 'BEGIN {
		printf "dnsfence peak RSS (VmHWM, both processes): %.1f MiB at the end (%.1f MiB after the unique workload); at the end the parent %.1f, the DNS process %.1f\n",
			k / 1024, u / 1024, kp / 1024, kc / 1024 }'
	[ -z "$PSS_PEAK_KB" ] ||
		awk -v p="$PSS_PEAK_KB" -v a="$PSS_ANON_KB" 'BEGIN {
		printf "dnsfence peak PSS (both processes, sampled every 0.2 s): %.1f MiB, of it anonymous %.1f MiB\n",
			p / 1024, a / 1024 }'
	printf 'dnsfence live set entries after the unique workload: %s (dnsfence4) + %s (dnsfence6)\n' \
		"$ENTRIES4" "$ENTRIES6"
	awk -v s="$START_KB" -v u="$HWM_UNIQ_KB" -v n="$((ENTRIES4 + ENTRIES6))" 'BEGIN {
		printf "dnsfence RSS when ready: %.1f MiB; peak growth per live entry: %.0f bytes\n",
			s / 1024, (n > 0 ? (u - s) * 1024 / n : 0) }'
	printf '(%s names, %s s per workload, dnsperf -c %s -T 1 -q %s; %s, nproc %s)\n' \
		"$NAMES" "$DURATION" "$CLIENTS" "$OUTSTANDING" \
		"$(dnsmasq --version | head -n 1 | awk '{ print $1, $2, $3 }')" "$(nproc)"
}
table
if [ -n "$OUT" ]; then table >"$OUT"; fi
