# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end harness: sourced by each test/e2e/test_*.sh (and contrib/demo.sh).
#
# It builds two network namespaces joined by a veth pair, only with
# addresses from 198.18.0.0/15 and 2001:db8::/32:
#
#   df<pid>-up  198.18.0.1/24  2001:db8::1/64   nsd (test zones, port 5300)
#                                               unbound (recursive, port 53,
#                                               stubs to nsd, logs queries)
#                                               target addresses on lo:
#                                               198.18.1.x, 198.18.2.1-60,
#                                               198.18.3.1, 2001:db8:1::x
#   df<pid>-wl  198.18.0.2/24  2001:db8::2/64   dnsfence on 127.0.0.1:53 and
#                                               [::1]:53; /etc/netns/<wl>/
#                                               resolv.conf points at it
#
# Everything is removed by an EXIT trap, also when a test fails; on failure
# the daemon's, unbound's and nsd's logs are printed. The host's own
# namespace, firewall and /etc/resolv.conf are never touched.
#
# Background processes are started with "ip netns exec" directly, never
# through a shell function, so that $! is the process itself (kill -STOP
# reaches it).
#
# Environment: DNSFENCE_BIN (the built daemon), DNSFENCE_SRC (source tree),
# DF_KEEP=1 keeps the temp dir for inspection, DF_VERBOSE=1 prints every dig.
#
# Exit codes of a test: 0 pass, 77 skip (not root), anything else fail.

set -euo pipefail

DF_E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DNSFENCE_SRC="${DNSFENCE_SRC:-$(cd "$DF_E2E_DIR/../.." && pwd)}"
DNSFENCE_BIN="${DNSFENCE_BIN:-$DNSFENCE_SRC/build/dnsfence}"
DF_TEST="$(basename "$0" .sh)"

DF_UP="df$$-up"
DF_WL="df$$-wl"
DF_VETH_UP="df$$u"
DF_VETH_WL="df$$w"
DF_UP4=198.18.0.1
DF_UP6=2001:db8::1
DF_WL4=198.18.0.2
DF_WL6=2001:db8::2

DF_TMP=""
DF_SHARE=""          # world-readable copies of files another uid runs
DF_CG=""             # the test's own cgroup (df_own_cgroup), and its parent
DF_CG_PARENT=""
DF_NETNS=()          # namespaces we created
DF_PIDS=()           # every background process we started
DF_NSD_PID=""
DF_UNBOUND_PID=""
DF_DNSFENCE_PID=""
DF_DNSFENCE_LOG=""
DF_DNSFENCE_CONF=""
DF_MADE_ETC_NETNS=0
DF_OUT=""            # output of the last df_dig
DF_DIG_RC=0          # exit code of the last df_dig
DF_DIG_CMD=""        # the last df_dig command line, for messages
DF_ASKED_AT=""       # when the last df_dig or df_ask_connect started ($EPOCHREALTIME)

# Prefer the system python: the test runs as root, often without a pyenv.
if [ -x /usr/bin/python3 ]; then DF_PY=/usr/bin/python3; else DF_PY=python3; fi

# --- messages ---------------------------------------------------------------

df_log() { printf '%s: %s\n' "$DF_TEST" "$*" >&2; }
ok() { printf 'ok   %s\n' "$*"; }

# fail MESSAGE: print what was expected and what was seen, then exit 1 (the
# EXIT trap prints the logs and cleans up).
fail() {
	printf 'FAIL %s: %s\n' "$DF_TEST" "$*" >&2
	if [ -n "$DF_DIG_CMD" ]; then
		printf -- '--- last query: %s (exit %s)\n%s\n---\n' \
			"$DF_DIG_CMD" "$DF_DIG_RC" "$DF_OUT" >&2
	fi
	exit 1
}

# --- set-up and clean-up ----------------------------------------------------

df_require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP $DF_TEST: needs root (network namespaces)" >&2
		exit 77
	fi
	local t
	for t in ip ss ipset nsd unbound dig getent timeout setpriv; do
		command -v "$t" >/dev/null 2>&1 ||
			{ echo "FAIL $DF_TEST: '$t' is not installed (see contrib/deps.sh)" >&2; exit 1; }
	done
}

df_require_bin() {
	[ -x "$DNSFENCE_BIN" ] ||
		{ echo "FAIL $DF_TEST: DNSFENCE_BIN=$DNSFENCE_BIN is not an executable" >&2; exit 1; }
}

df_dump_logs() {
	local f
	if [ -n "$DF_DNSFENCE_LOG" ] && [ -f "$DF_DNSFENCE_LOG" ]; then
		echo "--- dnsfence log ($DF_DNSFENCE_LOG, last 80 lines)" >&2
		tail -n 80 "$DF_DNSFENCE_LOG" >&2 || true
	fi
	if [ -n "$DF_DNSFENCE_CONF" ] && [ -f "$DF_DNSFENCE_CONF" ]; then
		echo "--- dnsfence config" >&2
		cat "$DF_DNSFENCE_CONF" >&2 || true
	fi
	for f in unbound.log nsd.log; do
		if [ -n "$DF_TMP" ] && [ -f "$DF_TMP/$f" ]; then
			echo "--- $f (last 40 lines)" >&2
			tail -n 40 "$DF_TMP/$f" >&2 || true
		fi
	done
	echo "---" >&2
}

df_cleanup() {
	local rc=$? pid ns
	set +e
	trap - EXIT INT TERM
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		df_dump_logs
	fi
	for pid in "${DF_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${DF_PIDS[@]}"; do
		df_wait_gone "$pid" 20 || kill -KILL "$pid" 2>/dev/null
	done
	# A sanitizer build reports into the daemon's log (also at exit, for
	# leaks): any report fails the test.
	if [ -n "${DF_DNSFENCE_LOG:-}" ] && [ -f "$DF_DNSFENCE_LOG" ] &&
		grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$DF_DNSFENCE_LOG"; then
		echo "$DF_TEST: sanitizer report in the dnsfence log:" >&2
		grep -A30 -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$DF_DNSFENCE_LOG" | head -60 >&2
		[ "$rc" -ne 0 ] || rc=1
	fi
	df_drop_own_cgroup
	for ns in "${DF_NETNS[@]}"; do
		# Anything still running inside our own namespaces was started here.
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
		rm -rf "/etc/netns/$ns"
	done
	if [ "$DF_MADE_ETC_NETNS" -eq 1 ]; then
		rmdir /etc/netns 2>/dev/null
	fi
	[ -z "$DF_SHARE" ] || rm -rf "$DF_SHARE"
	if [ -n "$DF_TMP" ]; then
		if [ "${DF_KEEP:-0}" = 1 ]; then
			echo "$DF_TEST: kept $DF_TMP" >&2
		else
			rm -rf "$DF_TMP"
		fi
	fi
	exit "$rc"
}

# df_share FILE: a copy of test/e2e/FILE that any uid can read, printed.
# The workload's uid runs helper scripts from there, never from the
# checkout: that may sit below a directory only root may enter (a clone in
# root's home or in a mktemp -d directory), and $DF_TMP is 0700 too.
df_share() {
	install -m 0644 "$DF_E2E_DIR/$1" "$DF_SHARE/$1"
	printf '%s\n' "$DF_SHARE/$1"
}

# df_make_tmp: the test's temp dir (0700) and DF_SHARE (0755, see df_share).
df_make_tmp() {
	DF_TMP="$(mktemp -d /tmp/df$$-e2e.XXXXXX)"
	DF_SHARE="$(mktemp -d /tmp/df$$-share.XXXXXX)"
	chmod 0755 "$DF_SHARE"
}

# df_wait_gone PID TENTHS: wait up to TENTHS/10 s for PID to exit.
df_wait_gone() {
	local pid=$1 n=$2
	while [ "$n" -gt 0 ]; do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# df_init_noroot: temp dir and the clean-up trap only (tests that run the
# binary without namespaces, e.g. config validation).
df_init_noroot() {
	[ -n "$DF_TMP" ] && return 0
	df_require_bin
	trap df_cleanup EXIT
	df_make_tmp
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# df_init: root check, temp dir and the clean-up trap. Every test calls it
# first (df_setup calls it too).
df_init() {
	[ -n "$DF_TMP" ] && return 0
	df_require_root
	df_require_bin
	trap df_cleanup EXIT
	df_make_tmp
	trap 'exit 130' INT
	trap 'exit 143' TERM
	df_drop_stale
}

# df_drop_stale: namespaces named for this shell's pid are a dead run's
# (killed before its EXIT trap ran, its pid now ours): no live test can
# hold them, and `ip netns add` would fail on the name.
df_drop_stale() {
	local ns p
	for ns in $(ip netns list | awk -v pre="df$$-" 'index($1, pre) == 1 {print $1}'); do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null || true
		done
		ip netns del "$ns" 2>/dev/null || true
		rm -rf "/etc/netns/$ns"
		echo "note: removed $ns, left by a dead run with this pid" >&2
	done
}

up() { ip netns exec "$DF_UP" "$@"; }
wl() { ip netns exec "$DF_WL" "$@"; }

# df_setup_net: the two namespaces, the veth pair, addresses and routes.
df_setup_net() {
	df_init
	local ns
	for ns in "$DF_UP" "$DF_WL"; do
		ip netns add "$ns"
		DF_NETNS+=("$ns")
		ip -n "$ns" link set lo up
		# Addresses usable at once: no duplicate address detection.
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0
	done
	ip link add "$DF_VETH_UP" netns "$DF_UP" type veth peer name "$DF_VETH_WL" netns "$DF_WL"
	ip -n "$DF_UP" addr add "$DF_UP4/24" dev "$DF_VETH_UP"
	ip -n "$DF_UP" addr add "$DF_UP6/64" dev "$DF_VETH_UP" nodad
	ip -n "$DF_WL" addr add "$DF_WL4/24" dev "$DF_VETH_WL"
	ip -n "$DF_WL" addr add "$DF_WL6/64" dev "$DF_VETH_WL" nodad
	ip -n "$DF_UP" link set "$DF_VETH_UP" up
	ip -n "$DF_WL" link set "$DF_VETH_WL" up
	# The targets the zones point at live on the upstream's loopback.
	{
		local i
		for i in 5 6 10 11 12 20 30; do echo "addr add 198.18.1.$i/32 dev lo"; done
		for i in $(seq 1 60); do echo "addr add 198.18.2.$i/32 dev lo"; done
		echo "addr add 198.18.3.1/32 dev lo"
		for i in 10 20 30; do echo "addr add 2001:db8:1::$i/128 dev lo nodad"; done
	} | ip -n "$DF_UP" -batch -
	ip -n "$DF_WL" route add 198.18.0.0/15 via "$DF_UP4"
	ip -n "$DF_WL" -6 route add 2001:db8::/32 via "$DF_UP6"
	# The glibc resolver in the workload namespace asks dnsfence.
	[ -d /etc/netns ] || { mkdir -p /etc/netns; DF_MADE_ETC_NETNS=1; }
	mkdir -p "/etc/netns/$DF_WL"
	printf 'nameserver 127.0.0.1\noptions timeout:2 attempts:2\n' >"/etc/netns/$DF_WL/resolv.conf"
}

# df_render TEMPLATE OUT: copy a zones/ template, filling @DIR@ and @ZONES@.
df_render() {
	sed -e "s|@DIR@|$DF_TMP|g" -e "s|@ZONES@|$DF_TMP/zones|g" "$1" >"$2"
}

# df_poll TENTHS CMD...: run CMD every 0.1 s until it succeeds, at most TENTHS
# times. Returns CMD's last status. DF_POLL_STEP=S runs CMD every S seconds
# instead (a CMD that costs more than a tenth's sleep: dnsfence check).
df_poll() {
	local n=$1
	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep "${DF_POLL_STEP:-0.1}"
	done
}

# df_bound PID PORT: a UDP socket of PID's network namespace has the local
# port PORT (read from /proc, no process started: cheaper than a dig
# while a server starts; its answer is still what a test waits for).
df_bound() {
	local hex local_addr f
	hex=$(printf '%04X' "$2")
	for f in "/proc/$1/net/udp" "/proc/$1/net/udp6"; do
		[ -r "$f" ] || continue
		while read -r _ local_addr _; do
			[[ "$local_addr" != *":$hex" ]] || return 0
		done <"$f"
	done
	return 1
}

df_start_nsd() {
	mkdir -p "$DF_TMP/zones"
	cp "$DF_E2E_DIR"/zones/*.zone "$DF_TMP/zones/"
	# Records a test generated with df_zone_add.
	local extra
	for extra in "$DF_TMP"/zones.add/*.zone; do
		if [ -f "$extra" ]; then cat "$extra" >>"$DF_TMP/zones/${extra##*/}"; fi
	done
	df_render "$DF_E2E_DIR/zones/nsd.conf.in" "$DF_TMP/nsd.conf"
	ip netns exec "$DF_UP" nsd -d -c "$DF_TMP/nsd.conf" >>"$DF_TMP/nsd.log" 2>&1 &
	DF_NSD_PID=$!
	DF_PIDS+=("$DF_NSD_PID")
	df_poll 100 df_bound "$DF_NSD_PID" 5300 || fail "nsd did not bind port 5300 within 10 s"
	df_poll 10 up dig +time=1 +tries=1 +norec -p 5300 @"$DF_UP4" allowed.test SOA ||
		fail "nsd did not answer on $DF_UP4 port 5300 within 10 s"
}

# df_start_local_nsd [ADDR]: a second nsd, in the workload namespace on
# ADDR:5300 (default 127.0.0.1) with the test zones, as root: a local
# resolver beside dnsfence (an upstream on a loopback address, or on an
# address of the namespace, needs local_upstream_user "root" then). Its
# pid is DF_LOCAL_NSD_PID. After df_setup.
DF_LOCAL_NSD_PID=""
df_start_local_nsd() {
	local addr=${1:-127.0.0.1}
	mkdir -p "$DF_TMP/lzones"
	cp "$DF_E2E_DIR"/zones/*.zone "$DF_TMP/lzones/"
	sed -e "s|198.18.0.1@5300|$addr@5300|" -e "s|$DF_TMP/nsd|$DF_TMP/lnsd|g" \
		-e "s|\"$DF_TMP/zones\"|\"$DF_TMP/lzones\"|" -e "s|$DF_TMP/zone.list|$DF_TMP/lzone.list|" \
		-e "s|$DF_TMP/xfrd.state|$DF_TMP/lxfrd.state|" "$DF_TMP/nsd.conf" >"$DF_TMP/lnsd.conf"
	grep -q "$addr@5300" "$DF_TMP/lnsd.conf" || fail "could not write the local nsd's config"
	ip netns exec "$DF_WL" nsd -d -c "$DF_TMP/lnsd.conf" >>"$DF_TMP/lnsd.log" 2>&1 &
	DF_LOCAL_NSD_PID=$!
	DF_PIDS+=("$DF_LOCAL_NSD_PID")
	df_poll 100 wl dig +time=1 +tries=1 +norec -p 5300 @"$addr" allowed.test SOA ||
		fail "the local nsd did not answer on $addr:5300: $(cat "$DF_TMP/lnsd.log")"
}

# df_squat UID ADDR LOG [PORT [ANSWER]]: as UID in the workload, bind
# ADDR:PORT (default 5300: a local upstream's port, its resolver gone) and
# answer every question with A ANSWER (default 198.18.2.50), logging
# "asked", then "answered" or "send failed: ..." (a DROP in OUTPUT fails
# the send with EPERM) to LOG. Returns once bound.
df_squat() {
	df_wl_as "$1" "$DF_PY" - "$2" "${4:-5300}" "${5:-198.18.2.50}" >"$3" 2>&1 <<'PY' &
import socket, struct, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((sys.argv[1], int(sys.argv[2])))
answer = socket.inet_aton(sys.argv[3])
print("bound", flush=True)
while True:
    m, peer = u.recvfrom(4096)
    o = 12
    while m[o]:
        o += 1 + m[o]
    a = struct.unpack(">H", m[o + 1:o + 3])[0] == 1
    r = m[:2] + struct.pack(">HHHHH", 0x8180, 1, int(a), 0, 0) + m[12:o + 5]
    if a:
        r += b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 300, 4) + answer
    print("asked", peer, flush=True)
    try:
        u.sendto(r, peer)
        print("answered", peer, flush=True)
    except OSError as e:
        print("send failed:", e, flush=True)
PY
	DF_PIDS+=("$!")
	df_poll 50 grep -q bound "$3" || fail "uid $1 could not bind $2:${4:-5300}: $(cat "$3")"
}

# df_stop_local_nsd: stop df_start_local_nsd's nsd and wait until its
# port 5300 is free (a squatter may take it then).
df_stop_local_nsd() {
	kill "$DF_LOCAL_NSD_PID"
	df_poll 50 bash -c "! ip netns exec $DF_WL ss -Hlun sport = :5300 | grep -q ." ||
		fail "the local nsd still holds port 5300"
}

# expect_squat_held LOG UPSTREAM [ANSWER]: after df_squat's squatter (LOG)
# was to be asked a question below *.allowed.test (the last df_dig): it
# was asked (or the test proves nothing), its ANSWER (default
# 198.18.2.50) is not in the reply, not in dnsfence4 and not reachable,
# and the daemon's log names uid 4242 as the answerer for UPSTREAM.
expect_squat_held() {
	local answer=${3:-198.18.2.50}
	grep -q asked "$1" || fail "the squatter was never asked: the test proves nothing ($(cat "$1"))"
	expect_out_lacks "$answer"
	expect_not_in_set dnsfence4 "$answer"
	expect_fenced "$answer" 80
	expect_log_contains "from uid 4242: an answer to dnsfence's question to the upstream $2 from a socket of this namespace"
}

df_unbound_ready() {
	local out
	out="$(up dig +time=1 +tries=1 @"$DF_UP4" ns.allowed.test A +short)" || return 1
	[ "$out" = "$DF_UP4" ]
}

df_start_unbound() {
	[ -f "$DF_TMP/unbound.conf" ] || {
		: >"$DF_TMP/root.hints"
		df_render "$DF_E2E_DIR/zones/unbound.conf.in" "$DF_TMP/unbound.conf"
	}
	ip netns exec "$DF_UP" unbound -d -c "$DF_TMP/unbound.conf" >>"$DF_TMP/unbound.stderr" 2>&1 &
	DF_UNBOUND_PID=$!
	DF_PIDS+=("$DF_UNBOUND_PID")
	df_poll 100 df_bound "$DF_UNBOUND_PID" 53 || fail "unbound did not bind port 53 within 10 s"
	df_poll 100 df_unbound_ready ||
		fail "unbound did not resolve ns.allowed.test on $DF_UP4:53 within 10 s ($(cat "$DF_TMP/unbound.stderr"))"
}

# df_stop_unbound: stop the upstream resolver (outage tests); its port then
# answers with ICMP port unreachable.
df_stop_unbound() {
	[ -n "$DF_UNBOUND_PID" ] || return 0
	kill -TERM "$DF_UNBOUND_PID" 2>/dev/null || true
	df_wait_gone "$DF_UNBOUND_PID" 50 || { kill -KILL "$DF_UNBOUND_PID" 2>/dev/null || true; }
	DF_UNBOUND_PID=""
}

# df_setup: namespaces, nsd and unbound, ready to answer.
df_setup() {
	df_setup_net
	df_start_nsd
	df_start_unbound
}

# df_start_listener PORT: a TCP server (python http.server) on every address
# of the upstream namespace, IPv4 and IPv6, on PORT.
df_start_listener() {
	local port=$1
	(cd "$DF_TMP" && exec ip netns exec "$DF_UP" "$DF_PY" -m http.server --bind :: "$port") \
		>>"$DF_TMP/listener-$port.log" 2>&1 &
	DF_PIDS+=("$!")
	df_poll 50 df_tcp_listening "$DF_UP" "$port" || fail "listener on port $port did not start"
}

# df_srv6_far_side PORT: the upstream namespace becomes an SRv6-capable
# host (seg6_enabled: it forwards a packet on to the next segment of its
# routing header) with a TCP listener on PORT (every address) that logs
# the address each connection reached; df_arrived ADDR counts them.
DF_ARRIVED=""
df_srv6_far_side() {
	up sysctl -qw net.ipv6.conf.all.seg6_enabled=1 "net.ipv6.conf.$DF_VETH_UP.seg6_enabled=1"
	DF_ARRIVED="$DF_TMP/arrived.txt"
	: >"$DF_ARRIVED"
	(cd "$DF_TMP" && exec ip netns exec "$DF_UP" "$DF_PY" "$DF_E2E_DIR/addr_logger.py" "$1" "$DF_ARRIVED") \
		>>"$DF_TMP/addr-logger.log" 2>&1 &
	DF_PIDS+=("$!")
	df_poll 50 df_tcp_listening "$DF_UP" "$1" || fail "the logging listener on port $1 did not start"
}
df_arrived() { awk -v a="$1" '$0 == a { n++ } END { print n + 0 }' "$DF_ARRIVED"; }
# df_wait_arrived ADDR N: wait up to 3 s until the listener has logged N
# connections on ADDR (it logs after its accept, not before the client's
# connect returns).
df_arrived_least() { [ "$(df_arrived "$1")" -ge "$2" ]; }
df_wait_arrived() { df_poll 30 df_arrived_least "$1" "$2"; }

df_tcp_listening() {
	ip netns exec "$1" ss -Htln "sport = :$2" | grep . >/dev/null
}

# df_front_end_pages: the two sites of a shared front end (a CDN serving
# names by SNI or Host): $DF_TMP/www/allowed/index.html says
# allowed-page, $DF_TMP/www/evil/index.html evil-page.
df_front_end_pages() {
	mkdir -p "$DF_TMP/www/allowed" "$DF_TMP/www/evil"
	echo "allowed-page" >"$DF_TMP/www/allowed/index.html"
	echo "evil-page" >"$DF_TMP/www/evil/index.html"
}

# df_front_end_cert NAME...: one self-signed certificate for every NAME,
# $DF_TMP/cert.pem and key.pem (readable by nginx's workers).
df_front_end_cert() {
	local san="" n
	for n in "$@"; do san+="${san:+,}DNS:$n"; done
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$1" \
		-addext "subjectAltName=$san" \
		-keyout "$DF_TMP/key.pem" -out "$DF_TMP/cert.pem" 2>/dev/null
	chmod 0644 "$DF_TMP/key.pem"
}

# df_start_nginx PORT DIRECTIVE...: nginx in the upstream namespace, its
# files under $DF_TMP, with each DIRECTIVE (a server block, a certificate)
# inside http {}; waits until PORT listens there.
df_start_nginx() {
	local port=$1 d
	shift
	{
		cat <<EOF
daemon off;
user root;
worker_processes 1;
pid $DF_TMP/nginx.pid;
error_log $DF_TMP/nginx.err;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $DF_TMP/nginx-body;
	proxy_temp_path $DF_TMP/nginx-proxy;
	fastcgi_temp_path $DF_TMP/nginx-fastcgi;
	uwsgi_temp_path $DF_TMP/nginx-uwsgi;
	scgi_temp_path $DF_TMP/nginx-scgi;
	keepalive_timeout 60s;
EOF
		for d in "$@"; do printf '\t%s\n' "$d"; done
		echo "}"
	} >"$DF_TMP/nginx.conf"
	ip netns exec "$DF_UP" nginx -c "$DF_TMP/nginx.conf" >>"$DF_TMP/nginx.log" 2>&1 &
	DF_PIDS+=("$!")
	df_poll 50 df_tcp_listening "$DF_UP" "$port" ||
		fail "nginx did not start: $(cat "$DF_TMP/nginx.err" "$DF_TMP/nginx.log" 2>/dev/null)"
}

# df_tcp_connect ADDR PORT [SECONDS]: 0 if the workload can open a TCP
# connection to ADDR:PORT.
df_tcp_connect() {
	wl timeout "${3:-3}" bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# --- dnsfence exec ------------------------------------------------------------

# df_exec_lab: the lab of the `dnsfence exec` tests: df_setup, a web server
# on port 80 of every upstream address (198.18.1.11 is never answered, so
# only an unfenced process reaches it; its log $DF_TMP/listener-80.log),
# the workload's resolv.conf naming unbound (the namespace works unfenced)
# and a config allowing www.allowed.test; DF_CGROOT is the cgroup2 mount.
df_exec_lab() {
	df_setup
	df_start_listener 80
	printf 'nameserver 198.18.0.1\noptions timeout:2 attempts:1\n' >"/etc/netns/$DF_WL/resolv.conf"
	df_config allow='["www.allowed.test"]'
	DF_CGROOT="$(findmnt -n -t cgroup2 -o TARGET | head -1)"
	[ -n "$DF_CGROOT" ] || fail "no cgroup2 mount on this machine"
	df_own_cgroup
}

# df_own_cgroup: this test's shell, and so all it starts, in a cgroup of
# its own, DF_CG (df<pid>-cg below the one it was started in): exec makes
# its command's cgroup below its own, so a test looks for what exec left
# under DF_CG alone, never at the cgroups of tests running beside it. The
# EXIT trap moves the shell back and removes DF_CG.
df_own_cgroup() {
	local own
	own="$(sed -n 's|^0::||p' "/proc/$$/cgroup")"
	DF_CG_PARENT="$DF_CGROOT${own%/}"
	DF_CG="$DF_CG_PARENT/df$$-cg"
	mkdir "$DF_CG"
	echo $$ >"$DF_CG/cgroup.procs"
}

# df_drop_own_cgroup: undo df_own_cgroup (the clean-up; every process the
# test started is gone or is killed here).
df_drop_own_cgroup() {
	local d
	[ -n "$DF_CG" ] && [ -d "$DF_CG" ] || return 0
	echo $$ >"$DF_CG_PARENT/cgroup.procs"
	echo 1 >"$DF_CG/cgroup.kill" 2>/dev/null
	for d in $(find "$DF_CG" -depth -mindepth 1 -type d 2>/dev/null) "$DF_CG"; do
		df_poll 50 rmdir "$d" || echo "$DF_TEST: could not remove cgroup $d" >&2
	done
}

# df_tls_lab MODE ARG...: tls_lab.py MODE ("serve" CERT KEY PORT ADDR...,
# or "route" PORT ADDR...) in the upstream namespace, logging what the
# server read to $SRV_LOG, started once port 443 listens. TLS_LAB is the
# copy any uid can run (df_share): the workload's client side.
df_tls_lab() {
	local mode=$1
	shift
	TLS_LAB="$(df_share tls_lab.py)"
	SRV_LOG="$DF_TMP/tls-$mode.log"
	: >"$SRV_LOG"
	up "$DF_PY" "$TLS_LAB" "$mode" "$SRV_LOG" "$@" >>"$DF_TMP/tls-$mode.out" 2>&1 &
	DF_PIDS+=("$!")
	df_poll 50 df_tcp_listening "$DF_UP" 443 || fail "tls_lab.py $mode did not start: $(cat "$DF_TMP/tls-$mode.out")"
}

# df_quic_lab: quic_initial.py's listener on the upstream's udp/443: it
# decrypts client Initials as a server does (drops datagrams under 1200
# bytes, skips Initials that do not authenticate) and logs one line per
# datagram to $ARR: its DCID, then the server names it read. Q is the copy
# the workload runs (df_share); df_quic_send, df_quic_expect_read and
# df_quic_expect_not_read use both.
df_quic_lab() {
	Q="$(df_share quic_initial.py)"
	ARR="$DF_TMP/quic-arrived.txt"
	: >"$ARR"
	ip netns exec "$DF_UP" "$DF_PY" "$Q" listen 443 "$ARR" >>"$DF_TMP/quic-listener.log" 2>&1 &
	DF_PIDS+=("$!")
	df_poll 50 sh -c "ip netns exec $DF_UP ss -Huln 'sport = :443' | grep -q ." ||
		fail "the QUIC listener did not start"
}

# df_quic_send UID ARG...: quic_initial.py send ARG... as UID in the workload.
df_quic_send() {
	local uid=$1
	shift
	df_wl_as "$uid" "$DF_PY" "$Q" send "$@" >/dev/null || fail "quic_initial.py send $*: failed"
}

# df_quic_arrived DCID: datagrams under DCID that reached the listener.
df_quic_arrived() { awk -v d="$1" '$1 == d { n++ } END { print n + 0 }' "$ARR"; }

# df_quic_read DCID NAME: times the server read a ClientHello naming NAME
# under DCID.
df_quic_read() {
	awk -v d="$1" -v n="$2" '$1 == d && ("," $3 ",") ~ ("," n ",") { c++ } END { print c + 0 }' "$ARR"
}
df_quic_was_read() { [ "$(df_quic_read "$1" "$2")" -ge 1 ]; }

# df_quic_expect_read DCID NAME WHAT: the server reads a ClientHello naming
# NAME from a datagram under DCID (waits 2 s).
df_quic_expect_read() {
	df_poll 20 df_quic_was_read "$1" "$2" ||
		fail "$3: the server never read $2 under DCID $1 ($(df_quic_arrived "$1") datagrams arrived)"
}

# df_quic_expect_not_read DCID NAME WHAT: the server has not read NAME under
# DCID a second later (after a verdict takes).
df_quic_expect_not_read() {
	sleep 1
	[ "$(df_quic_read "$1" "$2")" -eq 0 ] || fail "$3: the server read $2 under DCID $1"
}

# df_wl_cg CMD...: CMD in the workload namespace with the cgroup tree at
# /sys/fs/cgroup (ip netns exec mounts a fresh /sys, without it; a
# container or a host has it).
df_wl_cg() {
	ip netns exec "$DF_WL" sh -c 'mount -t cgroup2 cgroup2 /sys/fs/cgroup && exec "$@"' _ "$@"
}

# df_served TOKEN: how many requests for /TOKEN... the port-80 server logged.
df_served() { grep -c "GET /$1" "$DF_TMP/listener-80.log" || true; }

# df_expect_reaches_unfenced UID: UID, unfenced, reaches 198.18.1.11:80,
# and the server logs the request (the exec attacks' control).
df_expect_reaches_unfenced() {
	df_wl_as "$1" curl -s -o /dev/null --max-time 5 "http://198.18.1.11/control-$$" ||
		fail "control: uid $1 cannot reach 198.18.1.11:80 unfenced"
	df_poll 30 bash -c "grep -q 'GET /control-$$' '$DF_TMP/listener-80.log'" ||
		fail "control: the server did not log uid $1's unfenced request"
}

# --- dnsfence -----------------------------------------------------------------

# A wildcard_budget no test client can use up: for tests that flood unique
# names below a wildcard to test something else (the budget has its own,
# test_wildcard_flood_budget_bounds_new_names.sh).
DF_BUDGET_UNBOUNDED='{"burst": 10000000, "per_minute": 600000000}'

# df_config [KEY=JSON]...: write a config to $DF_TMP/dnsfence.json: listen on
# loopback, upstream unbound, ports tcp/80, 443 and 8080 (the tests'
# listeners), debug log, state_dir $DF_TMP/state and the control socket in
# $DF_TMP (never the host's /run), guard_interval 30 (the guard's pass reads
# both rule sets back: every 5 s in every daemon of a parallel suite, it was
# a tenth of the suite's CPU; a test of the guard gives its own), plus each
# KEY=JSON (which replaces a default).
#   df_config allow='["www.allowed.test"]' deny_rcode='"refused"'
df_config() {
	DF_DNSFENCE_CONF="$DF_TMP/dnsfence.json"
	"$DF_PY" - "$DF_DNSFENCE_CONF" "$DF_TMP/state" "$@" <<'EOF'
import json, os, sys
conf = {"listen": ["127.0.0.1:53", "[::1]:53"], "upstreams": ["198.18.0.1"], "allow": [],
        "ports": ["tcp/80", "tcp/443", "tcp/8080"], "log": {"level": "debug"},
        "state_dir": sys.argv[2],
        "control": {"socket": os.path.dirname(sys.argv[1]) + "/control.sock"},
        "guard_interval": 30}
for arg in sys.argv[3:]:
    key, _, val = arg.partition("=")
    try:
        conf[key] = json.loads(val)
    except ValueError as e:
        sys.exit("df_config: %s: bad JSON %r: %s" % (key, val, e))
with open(sys.argv[1], "w") as f:
    json.dump(conf, f, indent=2)
    f.write("\n")
EOF
}

# df_check_own_state [CONF]: the config (default $DF_DNSFENCE_CONF) keeps
# the daemon's state_dir and control socket under $DF_TMP, so that nothing
# a test runs writes under the host's run directory; fails the test if not.
df_check_own_state() {
	local conf=${1:-$DF_DNSFENCE_CONF} paths
	paths="$(env -u DNSFENCE_CONFIG "$DNSFENCE_BIN" -c "$conf" validate 2>/dev/null |
		"$DF_PY" -c 'import json, sys; c = json.load(sys.stdin); print(c["state_dir"]); print(c["control"]["socket"])')" ||
		fail "df_check_own_state: $conf does not validate"
	while IFS= read -r p; do
		case "$p" in
		"$DF_TMP"/*) ;;
		*) fail "the test's daemon would keep its state in $p, outside its temp dir $DF_TMP" ;;
		esac
	done <<<"$paths"
}

df_dnsfence_answers() {
	kill -0 "$DF_DNSFENCE_PID" 2>/dev/null || return 2
	wl dig +time=1 +tries=1 @127.0.0.1 ready.dnsfence.invalid A >/dev/null 2>&1
}

# df_create_sets: the config's kernel sets (hash:ip with timeout), in the
# workload namespace, as "serve" expects them to exist already.
df_create_sets() {
	local names
	names="$("$DF_PY" -c 'import json, sys
s = json.load(open(sys.argv[1])).get("sets", {})
print(s.get("ipv4", "dnsfence4"), s.get("ipv6", "dnsfence6"))' "$DF_DNSFENCE_CONF")"
	wl ipset create -exist "${names% *}" hash:ip family inet timeout 60
	wl ipset create -exist "${names#* }" hash:ip family inet6 timeout 60
}

# df_dnsfence CMD: run "dnsfence -c $DF_DNSFENCE_CONF CMD" once in the
# workload namespace (a clean environment, at most 60 s). Sets DF_CMD_OUT
# (stdout), DF_CMD_ERR (stderr) and DF_CMD_RC; never fails by itself.
df_dnsfence() {
	DF_CMD_RC=0
	DF_CMD_OUT="$(ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE \
		-u DNSFENCE_EXTRA_HOSTS timeout 60 "$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" "$@" \
		2>"$DF_TMP/cmd.err")" || DF_CMD_RC=$?
	DF_CMD_ERR="$(cat "$DF_TMP/cmd.err")"
	[ "${DF_VERBOSE:-0}" = 1 ] &&
		printf '$ dnsfence %s (exit %s)\n%s\n%s\n' "$*" "$DF_CMD_RC" "$DF_CMD_OUT" "$DF_CMD_ERR" >&2
	return 0
}

# df_status_value KEY: one value of the running daemon's `status --json`,
# KEY a dotted path ("set_entries.ipv4", "counters.forwarded"); fails the
# test if status fails or has no such key.
df_status_value() {
	df_dnsfence status --json
	[ "$DF_CMD_RC" -eq 0 ] || fail "status --json exited $DF_CMD_RC: $DF_CMD_ERR"
	"$DF_PY" -c 'import json, sys
v = json.loads(sys.argv[1])
for k in sys.argv[2].split("."):
    v = v[k]
print(int(v) if isinstance(v, float) and v == int(v) else v)' "$DF_CMD_OUT" "$1" ||
		fail "status --json has no $1: $DF_CMD_OUT"
}

# df_setup_fence: "dnsfence setup" for the current config (sets and rules);
# fails the test unless it exits 0.
df_setup_fence() {
	df_dnsfence setup
	[ "$DF_CMD_RC" -eq 0 ] ||
		fail "dnsfence setup exited $DF_CMD_RC: $DF_CMD_ERR"
}

# df_start_dnsfence [KEY=JSON]...: write the config (see df_config), run
# "dnsfence setup" (sets and firewall rules), then "dnsfence -c CONFIG serve"
# in the workload namespace; wait until it answers. DF_DNSFENCE_CMD replaces
# "serve" (then setup is not run first: "run" does its own).
df_start_dnsfence() {
	df_require_bin
	df_config "$@"
	df_check_own_state
	[ "${DF_DNSFENCE_CMD:-serve}" != serve ] || df_setup_fence
	DF_DNSFENCE_LOG="$DF_TMP/dnsfence.log"
	ip netns exec "$DF_WL" env -u DNSFENCE_CONFIG -u DNSFENCE_MODE -u DNSFENCE_EXTRA_HOSTS \
		"$DNSFENCE_BIN" -c "$DF_DNSFENCE_CONF" "${DF_DNSFENCE_CMD:-serve}" \
		>>"$DF_DNSFENCE_LOG" 2>&1 &
	DF_DNSFENCE_PID=$!
	DF_PIDS+=("$DF_DNSFENCE_PID")
	local n=50 rc
	while :; do
		rc=0
		# Asked only once something holds port 53 (a dig costs more than
		# the read of /proc).
		if df_bound "$DF_DNSFENCE_PID" 53; then
			df_dnsfence_answers || rc=$?
		elif kill -0 "$DF_DNSFENCE_PID" 2>/dev/null; then
			rc=1
		else
			rc=2
		fi
		[ "$rc" -eq 0 ] && return 0
		if [ "$rc" -eq 2 ]; then
			local st=0
			wait "$DF_DNSFENCE_PID" || st=$?
			fail "dnsfence exited (status $st) instead of serving"
		fi
		n=$((n - 1))
		[ "$n" -gt 0 ] || fail "dnsfence did not answer on 127.0.0.1:53 within 5 s"
		sleep 0.1
	done
}

df_stop_dnsfence() {
	[ -n "$DF_DNSFENCE_PID" ] || return 0
	kill -TERM "$DF_DNSFENCE_PID" 2>/dev/null || true
	df_wait_gone "$DF_DNSFENCE_PID" 50 || { kill -KILL "$DF_DNSFENCE_PID" 2>/dev/null || true; }
	DF_DNSFENCE_PID=""
}

# df_kill_dnsfence: SIGKILL the daemon (a crash) and wait until it and its
# DNS process are gone: the DNS process serves the control socket and
# exits a moment after its parent, and a daemon started before that is
# refused ("already serves this config").
df_kill_dnsfence() {
	local kids k
	kids="$(pgrep -P "$DF_DNSFENCE_PID" || true)"
	kill -KILL "$DF_DNSFENCE_PID"
	df_wait_gone "$DF_DNSFENCE_PID" 50 || fail "the daemon (pid $DF_DNSFENCE_PID) did not die"
	for k in $kids; do
		df_wait_gone "$k" 50 || fail "its DNS process (pid $k) outlived it by 5 s"
	done
	DF_DNSFENCE_PID=""
}

expect_dnsfence_running() {
	kill -0 "$DF_DNSFENCE_PID" 2>/dev/null ||
		fail "dnsfence (pid $DF_DNSFENCE_PID) is no longer running"
}

# --- queries and assertions ---------------------------------------------------

# df_dig ARGS...: dig in the workload namespace (at @127.0.0.1 unless ARGS
# name a server) with a short timeout. Sets DF_OUT, DF_DIG_RC, DF_DIG_CMD;
# never fails by itself.
df_dig() {
	local a server="@127.0.0.1"
	for a in "$@"; do
		case "$a" in @*) server="" ;; esac
	done
	DF_DIG_CMD="dig${server:+ $server} $*"
	DF_DIG_RC=0
	DF_ASKED_AT=$EPOCHREALTIME
	DF_OUT="$(wl dig +time=3 +tries=1 $server "$@" 2>&1)" || DF_DIG_RC=$?
	[ "${DF_VERBOSE:-0}" = 1 ] && printf '%s\n%s\n' "\$ $DF_DIG_CMD" "$DF_OUT" >&2
	return 0
}

# The rcode of the last df_dig ("" if no reply).
df_status() {
	sed -n 's/.*status: \([A-Z]*\),.*/\1/p' <<<"$DF_OUT" | head -n 1
}

# The answer section of the last df_dig, one record a line.
df_answer() {
	awk '/^;; ANSWER SECTION:/ { on = 1; next } on && /^$/ { exit } on { print }' <<<"$DF_OUT"
}

expect_reply() {
	[ "$DF_DIG_RC" -eq 0 ] || fail "expected a reply, dig exited $DF_DIG_RC"
}

# expect_rcode RCODE: the last reply's status is RCODE.
expect_rcode() {
	expect_reply
	local got
	got="$(df_status)"
	[ "$got" = "$1" ] || fail "expected status $1, saw '${got:-none}'"
}

expect_answer_contains() {
	df_answer | grep -F -- "$1" >/dev/null || fail "expected the answer section to contain '$1'"
}

expect_answer_lacks() {
	! df_answer | grep -F -- "$1" >/dev/null || fail "expected the answer section NOT to contain '$1'"
}

expect_answer_empty() {
	[ -z "$(df_answer)" ] || fail "expected an empty answer section"
}

# expect_answer_count TYPE N: N records of TYPE in the answer section.
expect_answer_count() {
	local n
	n="$(df_answer | awk -v t="$1" '$4 == t' | wc -l)"
	[ "$n" -eq "$2" ] || fail "expected $2 $1 records in the answer, saw $n"
}

expect_out_contains() {
	grep -qF -- "$1" <<<"$DF_OUT" || fail "expected the reply to contain '$1'"
}

expect_out_lacks() {
	! grep -qF -- "$1" <<<"$DF_OUT" || fail "expected the reply NOT to contain '$1'"
}

# expect_flag FLAG / expect_no_flag FLAG: a header flag (qr aa tc rd ra ...).
df_flags() {
	sed -n 's/^;; flags: \([a-z ]*\);.*/\1/p' <<<"$DF_OUT" | head -n 1
}
expect_flag() {
	[[ " $(df_flags) " == *" $1 "* ]] || fail "expected flag '$1' in the header, saw '$(df_flags)'"
}
expect_no_flag() {
	[[ " $(df_flags) " != *" $1 "* ]] || fail "expected no flag '$1' in the header, saw '$(df_flags)'"
}

# df_getent NAME: "getent ahosts NAME" through the workload's glibc resolver;
# prints the distinct addresses, one a line. Sets DF_OUT.
df_getent() {
	DF_DIG_CMD="getent ahosts $1"
	DF_DIG_RC=0
	DF_OUT="$(wl getent ahosts "$1" 2>&1)" || DF_DIG_RC=$?
	awk '{ print $1 }' <<<"$DF_OUT" | sort -u
}

# The unbound query log: did NAME reach the upstream? (log-queries lines
# look like "info: 198.18.0.2 www.allowed.test. A IN").
df_unbound_saw() {
	grep -qiF -- " $1. " "$DF_TMP/unbound.log"
}

# df_count GREP-ARGS...: what "grep -c GREP-ARGS" prints (0 when nothing
# matches), but a grep error (a missing file, a bad pattern) fails the test
# instead of reading as a count.
df_count() {
	local n rc=0
	n="$(grep -c "$@")" || rc=$?
	[ "$rc" -le 1 ] || fail "grep -c $*: exit $rc"
	printf '%s\n' "$n"
}

# df_now_ms: monotonic-enough wall clock in milliseconds.
df_now_ms() { date +%s%3N; }

# df_tcp_pipeline SERVER NAME/TYPE...: open ONE TCP connection to SERVER
# port 53 from the workload, write every query in one go (pipelined), read
# as many replies. Prints "NAME/TYPE RCODE ANCOUNT" per query, in query
# order, matching replies by ID. Exits non-zero if a reply is missing.
df_tcp_pipeline() {
	local server=$1
	shift
	wl "$DF_PY" - "$server" "$@" <<'EOF'
import random, socket, struct, sys
TYPES = {"A": 1, "NS": 2, "CNAME": 5, "TXT": 16, "AAAA": 28, "HTTPS": 65}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
server, specs = sys.argv[1], sys.argv[2:]
def query(qid, name, qtype):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", qtype, 1)
ids = random.sample(range(1, 65536), len(specs))
byid = {}
wire = b""
for qid, spec in zip(ids, specs):
    name, _, t = spec.partition("/")
    q = query(qid, name, TYPES[t or "A"])
    wire += struct.pack(">H", len(q)) + q
    byid[qid] = spec
fam = socket.AF_INET6 if ":" in server else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.settimeout(8)
s.connect((server, 53))
s.sendall(wire)
got = {}
def readn(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            sys.exit("connection closed after %d of %d replies" % (len(got), len(specs)))
        b += c
    return b
try:
    while len(got) < len(specs):
        (ln,) = struct.unpack(">H", readn(2))
        msg = readn(ln)
        qid, flags, qd, an = struct.unpack(">HHHH", msg[:8])
        if qid not in byid or qid in got:
            sys.exit("reply with unexpected id %d" % qid)
        got[qid] = "%s %s %d" % (byid[qid], RCODES.get(flags & 15, str(flags & 15)), an)
except socket.timeout:
    sys.exit("timed out after %d of %d replies" % (len(got), len(specs)))
for qid in ids:
    print(got[qid])
EOF
}

# --- kernel sets, seen from the workload ----------------------------------------

# df_zone_add FILE: append the records read from stdin to this test's copy
# of zones/FILE (e.g. allowed.test.zone). Call before df_setup, and feed it
# with a redirection, not a pipe (a pipe runs it in a subshell):
#   df_zone_add allowed.test.zone < <(seq 1 3 | sed 's/.*/n-& IN A 198.18.4.&/')
df_zone_add() {
	if [ -z "$DF_TMP" ] && [ "$BASH_SUBSHELL" -gt 0 ]; then
		echo "df_zone_add: called in a subshell (a pipe?) before df_init" >&2
		exit 1
	fi
	df_init
	mkdir -p "$DF_TMP/zones.add"
	cat >>"$DF_TMP/zones.add/$1"
}

# df_set_members SET: the members of SET in the workload, one a line.
df_set_members() {
	wl ipset list "$1" | awk 'on { print $1 } /^Members:/ { on = 1 }'
}

# df_set_timeout SET ADDR: the remaining timeout (seconds) of ADDR in SET in
# the workload; empty if ADDR is not a member.
df_set_timeout() {
	wl ipset list "$1" | awk -v a="$2" 'on && $1 == a && $2 == "timeout" { print $3 } /^Members:/ { on = 1 }'
}

expect_in_set() {
	wl ipset test "$1" "$2" >/dev/null 2>&1 || fail "expected $2 in set $1; members: $(df_set_members "$1" | tr '\n' ' ')"
}

expect_not_in_set() {
	! wl ipset test "$1" "$2" >/dev/null 2>&1 || fail "expected $2 NOT in set $1"
}

# expect_set_timeout SET ADDR LOW HIGH: ADDR is in SET with a remaining
# timeout in [LOW, HIGH], LOW and HIGH as they are right after the answer
# to the last df_dig or df_ask_connect: the kernel counts the timeout down
# meanwhile, so LOW is lowered by the whole seconds since that question
# was sent (a loaded machine checks later, never wrongly).
expect_set_timeout() {
	local t low=$3 since
	if [ -n "$DF_ASKED_AT" ]; then
		since=$(( (${EPOCHREALTIME/./} - ${DF_ASKED_AT/./} + 999999) / 1000000 ))
		low=$((low - since))
	fi
	t="$(df_set_timeout "$1" "$2")"
	[ -n "$t" ] || fail "expected $2 in set $1 (timeout $low..$4); members: $(df_set_members "$1" | tr '\n' ' ')"
	[ "$t" -ge "$low" ] && [ "$t" -le "$4" ] ||
		fail "expected $2 in set $1 with a timeout in $low..$4 (${3} less the seconds since the question), saw $t"
}

# expect_log_contains TEXT: the dnsfence log has a line with TEXT (waits up
# to 2 s: the log is written asynchronously to the reply).
expect_log_contains() {
	df_poll 20 grep -qF -- "$1" "$DF_DNSFENCE_LOG" ||
		fail "expected the dnsfence log to contain '$1'"
}

# df_fence PORT [SET4 SET6]: in the WORKLOAD namespace only, reject (TCP
# reset) every connection to PORT on the test network (198.18.0.0/15,
# 2001:db8::/32) whose destination is not in the set. With this, a connect
# made right after an answer proves the address was in the set before the
# client had it.
df_fence() {
	local port=$1 s4=${2:-dnsfence4} s6=${3:-dnsfence6}
	wl iptables -w -A OUTPUT -p tcp --dport "$port" -d 198.18.0.0/15 \
		-m set ! --match-set "$s4" dst -j REJECT --reject-with tcp-reset
	wl ip6tables -w -A OUTPUT -p tcp --dport "$port" -d 2001:db8::/32 \
		-m set ! --match-set "$s6" dst -j REJECT --reject-with tcp-reset
}

# df_unfence: remove every workload OUTPUT rule (e.g. before destroying a set
# the rules reference).
df_unfence() {
	wl iptables -w -F OUTPUT
	wl ip6tables -w -F OUTPUT
}

# df_ask_connect [+tcp] NAME TYPE PORT: in the workload, ask 127.0.0.1 for
# NAME/TYPE (UDP, EDNS 4096; TCP with +tcp) and, the moment the reply is
# read, open a TCP connection to every address in it (A, AAAA, HTTPS/SVCB
# ipv4hint/ipv6hint) on PORT. Prints "rcode RCODE", then "ADDR TTL ok" or
# "ADDR TTL FAIL why" per address. Sets DF_OUT and DF_DIG_RC (non-zero if a
# connect failed or no reply came).
df_ask_connect() {
	local tcp=0
	if [ "$1" = +tcp ]; then tcp=1; shift; fi
	DF_DIG_CMD="df_ask_connect $* (tcp=$tcp)"
	DF_DIG_RC=0
	DF_ASKED_AT=$EPOCHREALTIME
	DF_OUT="$(wl "$DF_PY" - "$tcp" "$@" <<'EOF'
import random, socket, struct, sys
TYPES = {"A": 1, "AAAA": 28, "SVCB": 64, "HTTPS": 65}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
tcp, name, qtype, port = sys.argv[1] == "1", sys.argv[2], TYPES[sys.argv[3]], int(sys.argv[4])
qid = random.randrange(1, 65536)
q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1)
for label in name.rstrip(".").split("."):
    q += bytes([len(label)]) + label.encode()
q += b"\0" + struct.pack(">HH", qtype, 1) + b"\0" + struct.pack(">HHIH", 41, 4096, 0, 0)
if tcp:
    s = socket.create_connection(("127.0.0.1", 53), timeout=8)
    s.sendall(struct.pack(">H", len(q)) + q)
    def readn(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                sys.exit("connection closed")
            b += c
        return b
    msg = readn(struct.unpack(">H", readn(2))[0])
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(8)
    s.sendto(q, ("127.0.0.1", 53))
    while True:
        msg, _ = s.recvfrom(65535)
        if msg[:2] == q[:2]:
            break
def skipname(m, o):
    while True:
        l = m[o]
        if l == 0:
            return o + 1
        if l & 0xC0 == 0xC0:
            return o + 2
        o += 1 + l
_, flags, qd, an = struct.unpack(">HHHH", msg[:8])
o = 12
for _ in range(qd):
    o = skipname(msg, o) + 4
addrs = []
for _ in range(an):
    o = skipname(msg, o)
    t, c, ttl, rdlen = struct.unpack(">HHIH", msg[o:o + 10])
    o += 10
    rd = msg[o:o + rdlen]
    o += rdlen
    if t == 1 and rdlen == 4:
        addrs.append((socket.inet_ntop(socket.AF_INET, rd), ttl))
    elif t == 28 and rdlen == 16:
        addrs.append((socket.inet_ntop(socket.AF_INET6, rd), ttl))
    elif t in (64, 65):
        p = skipname(rd, 2)
        while p + 4 <= len(rd):
            k, l = struct.unpack(">HH", rd[p:p + 4])
            v = rd[p + 4:p + 4 + l]
            p += 4 + l
            if k == 4:
                addrs += [(socket.inet_ntop(socket.AF_INET, v[i:i + 4]), ttl) for i in range(0, l, 4)]
            elif k == 6:
                addrs += [(socket.inet_ntop(socket.AF_INET6, v[i:i + 16]), ttl) for i in range(0, l, 16)]
# Connect first, print afterwards: nothing between the reply and the SYNs.
res = []
for a, ttl in addrs:
    c = socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM)
    c.settimeout(3)
    try:
        c.connect((a, port))
        res.append("ok")
    except OSError as e:
        res.append("FAIL " + (e.strerror or str(e)))
    finally:
        c.close()
print("rcode", RCODES.get(flags & 15, str(flags & 15)))
for (a, ttl), r in zip(addrs, res):
    print(a, ttl, r)
sys.exit(1 if any(r != "ok" for r in res) else 0)
EOF
)" || DF_DIG_RC=$?
	[ "${DF_VERBOSE:-0}" = 1 ] && printf '%s\n%s\n' "\$ $DF_DIG_CMD" "$DF_OUT" >&2
	return 0
}

# expect_connected ADDR...: after df_ask_connect, each ADDR was in the reply
# and the connection to it, made right after the reply, got through the fence.
expect_connected() {
	local a
	for a in "$@"; do
		awk -v a="$a" '$1 == a && $3 == "ok" { f = 1 } END { exit !f }' <<<"$DF_OUT" ||
			fail "expected $a in the reply and connectable at once through the fence"
	done
}

# df_asked_rcode / df_asked_addrs: the rcode and the addresses of the last
# df_ask_connect.
df_asked_rcode() { awk '$1 == "rcode" { print $2 }' <<<"$DF_OUT"; }
df_asked_addrs() { awk '$1 != "rcode" { print $1 }' <<<"$DF_OUT"; }

# expect_fenced ADDR PORT: the workload cannot connect to ADDR:PORT (the
# fence's control: proves a connect through it CAN fail).
expect_fenced() {
	! df_tcp_connect "$1" "$2" || fail "the fence let a connection to $1 port $2 through (not in the set)"
}

# --- the fence (firewall, privileges) ---------------------------------------

# df_wl_as UID CMD...: run CMD in the workload namespace as UID (gid UID, no
# supplementary groups, no capabilities): the workload, not the daemon.
df_wl_as() {
	local uid=$1
	shift
	ip netns exec "$DF_WL" setpriv --reuid "$uid" --regid "$uid" --clear-groups \
		--inh-caps=-all --bounding-set=-all "$@"
}

# df_ride_sweep UID NAME [UPSTREAM]: the conntrack ride. As UID, bind each
# port of 40000-40007 (narrow the daemon's ephemeral range to it first:
# sysctl net.ipv4.ip_local_port_range="40000 40007" in the workload) and
# send a query for NAME from it to UPSTREAM (default 198.18.0.1) port 53;
# print the ports that got an answer.
df_ride_sweep() {
	df_wl_as "$1" "$DF_PY" - "$2" "${3:-198.18.0.1}" <<'PY'
import socket, struct, sys, select, random
name, upstream = sys.argv[1], sys.argv[2]
family = socket.AF_INET6 if ":" in upstream else socket.AF_INET
q = struct.pack(">HHHHHH", random.randrange(65536), 0x0100, 1, 0, 0, 0)
for label in name.split("."):
    q += bytes([len(label)]) + label.encode()
q += b"\0" + struct.pack(">HH", 1, 1)
socks = []
for port in range(40000, 40008):
    s = socket.socket(family, socket.SOCK_DGRAM)
    try:
        s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
        s.sendto(q, (upstream, 53))
    except OSError:
        s.close()
        continue
    socks.append((s, port))
r, _, _ = select.select([s for s, _ in socks], [], [], 1.5)
for s, port in socks:
    if s in r:
        try:
            s.recv(4096)
            print(port)
        except OSError:
            pass
PY
}

# expect_no_ride UID TAG WHAT: the conntrack ride (df_ride_sweep) of a
# denied name TAG-PID.evil.test from UID reaches nothing: unbound never
# logs it and no port of the sweep gets an answer. WHAT names the moment.
expect_no_ride() {
	local name="$2-$$.evil.test" answered
	answered="$(df_ride_sweep "$1" "$name")"
	sleep 0.5
	if df_unbound_saw "$name"; then
		fail "$3: $name reached the upstream 198.18.0.1 from port(s) ${answered:-?} of the daemon"
	fi
	[ -z "$answered" ] || fail "$3: the upstream answered the workload on port(s) $answered"
	ok "$3: the daemon's old ports, rebound by uid $1, carry nothing to 198.18.0.1"
}

# df_conntrack_to ADDR: the workload's UDP conntrack entries to ADDR:53.
df_conntrack_to() {
	wl conntrack -L -p udp -d "$1" --dport 53 2>/dev/null | awk '/dport=53/ { n++ } END { print n + 0 }'
}

# df_proc_field PID FIELD: a field of /proc/PID/status ("Uid", "CapEff").
df_proc_field() {
	sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"
}

# The late-answer tests' reload from nsd on 198.18.0.1 to [2001:db8::1]
# (CONTROL: the control object): it must succeed and delete the entries
# to 198.18.0.1, and the workload must hold the daemon's old port(s)
# (df_late_bound).
df_late_reload_replaces() { # CONTROL
	df_config allow='["*.allowed.test"]' upstreams='["[2001:db8::1]"]' control="$1"
	df_dnsfence reload
	[ "$DF_CMD_RC" -eq 0 ] || fail "reload exited $DF_CMD_RC: $DF_CMD_ERR"
	df_wait_log 100 "conntrack entries to replaced upstream(s) 198.18.0.1 deleted" ||
		fail "the daemon never said it deleted the flows to the replaced upstream 198.18.0.1"
	df_late_bound
	ok "control: reload deleted the entries to 198.18.0.1; uid 4242 holds the daemon's old port(s) ($(grep '^bound' "$DF_TMP/late.log")); its direct query is refused (EPERM)"
}

# The late-answer tests' workload (late_answer_workload.py, its output in
# $DF_TMP/late.log). df_late_bound: it holds the daemon's old port(s) and
# its own query from them straight to the upstream was refused (the
# controls: without a port or with that query passing, the test proves
# nothing).
df_late_bound() {
	df_poll 200 grep -q '^bound' "$DF_TMP/late.log" || fail "the workload bound nothing: $(cat "$DF_TMP/late.log")"
	grep -q '^bound \[[0-9]' "$DF_TMP/late.log" ||
		fail "the workload saw no socket of the daemon to the upstream: the test proves nothing ($(cat "$DF_TMP/late.log"))"
	df_poll 100 grep -q 'control send.*failed:.*Operation not permitted' "$DF_TMP/late.log" ||
		fail "control: the workload's direct query was not refused: $(cat "$DF_TMP/late.log")"
}

# df_late_refused PORT WHO: once the upstream woke, its late packet from
# 198.18.0.1:PORT reached the old port (the control), and the workload's
# queries after it were refused and got no answer; WHO names the upstream
# in the failure.
df_late_refused() {
	local port=$1 who=$2
	df_poll 150 grep -q "ANSWER\|^done" "$DF_TMP/late.log" || true
	cat "$DF_TMP/late.log" >&2
	wl conntrack -L -p udp 2>/dev/null | grep 'src=198.18.0.1' >&2 || true
	grep -q "late packet from ('198.18.0.1', $port)" "$DF_TMP/late.log" ||
		fail "no late answer of $who reached the old port: the test proves nothing ($(cat "$DF_TMP/late.log"))"
	! grep -q ANSWER "$DF_TMP/late.log" ||
		fail "uid 4242 got an answer for the denied evil.test straight from $who: $(grep -m1 ANSWER "$DF_TMP/late.log")"
	grep -q "^send from .*failed:.*Operation not permitted" "$DF_TMP/late.log" ||
		fail "the workload's queries after the late answer were not refused: $(cat "$DF_TMP/late.log")"
}

# df_wait_log TENTHS TEXT: wait until the dnsfence log contains TEXT.
df_wait_log() {
	df_poll "$1" grep -qF -- "$2" "$DF_DNSFENCE_LOG"
}

# df_connect_as UID ADDR PORT [SECONDS]: 0 if a workload process running as
# UID (not root, not the daemon's uid) can open a TCP connection to
# ADDR:PORT.
df_connect_as() {
	df_wl_as "$1" timeout "${4:-3}" bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$2" "$3" 2>/dev/null
}

# df_remove_firewall: remove dnsfence's chain and jumps (both families),
# keeping the sets and the OUTPUT policy, so a test can destroy a set under
# a running daemon (the rules hold a reference to it). The guard puts them
# back after guard_interval seconds: pass guard_interval=3600 to
# df_start_dnsfence when the test needs them gone for longer.
# df_open_fence: remove our rules and set OUTPUT's policy back to ACCEPT
# (both families), so that a test can destroy the sets the rules hold while
# the daemon keeps serving. Start the daemon with guard_interval=3600 first,
# or the guard puts everything back.
df_open_fence() {
	df_remove_firewall
	wl iptables -w -P OUTPUT ACCEPT
	wl ip6tables -w -P OUTPUT ACCEPT
}

df_remove_firewall() {
	local t
	for t in iptables ip6tables; do
		wl "$t" -w -D OUTPUT -j DNSFENCE-OUT 2>/dev/null || true
		wl "$t" -w -F DNSFENCE-OUT 2>/dev/null || true
		wl "$t" -w -X DNSFENCE-OUT 2>/dev/null || true
	done
}

# --- attack fixtures shared by the whole-namespace and the subjects tests ----

# df_docker_forwarder PORT: Docker's embedded resolver as a container sees
# it. Root in the workload namespace binds 127.0.0.11:PORT, then moves
# itself into the upstream namespace (as dockerd's socket lives in the
# host's) and relays each datagram to 198.18.0.1:53 from a socket opened
# there; nat OUTPUT DNATs 127.0.0.11:53 to PORT, as Docker installs it.
df_docker_forwarder() {
	local port=$1 p
	cat >"$DF_TMP/relay.py" <<'PY'
import ctypes, os, select, socket, sys
port, upns = int(sys.argv[1]), sys.argv[2]
lst = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
lst.bind(("127.0.0.11", port))
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/run/netns/" + upns, os.O_RDONLY)
if libc.setns(fd, 0x40000000) != 0:
    sys.exit("setns: errno %d" % ctypes.get_errno())
os.close(fd)
print("ready", flush=True)
clients = {}
while True:
    r, _, _ = select.select([lst] + list(clients), [], [], 5)
    for s in r:
        if s is lst:
            data, peer = lst.recvfrom(65535)
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.connect(("198.18.0.1", 53))
            u.send(data)
            clients[u] = peer
        else:
            try:
                lst.sendto(s.recv(65535), clients[s])
            except OSError:
                pass
            del clients[s]
            s.close()
PY
	ip netns exec "$DF_WL" "$DF_PY" "$DF_TMP/relay.py" "$port" "$DF_UP" >"$DF_TMP/relay.log" 2>&1 &
	DF_PIDS+=("$!")
	df_poll 50 grep -q ready "$DF_TMP/relay.log" || fail "the forwarder did not start: $(cat "$DF_TMP/relay.log")"
	for p in udp tcp; do
		wl iptables -w -t nat -A OUTPUT -d 127.0.0.11/32 -p "$p" --dport 53 \
			-j DNAT --to-destination "127.0.0.11:$port"
	done
	wl ss -Huln | grep "127.0.0.11:$port" >/dev/null || fail "127.0.0.11:$port is not listed"
}

# df_mld_capture: capture IPv6 on the upstream side of the veth into
# $DF_TMP/mld.pcap, then add 2001:db8::99 (nodad), whose solicited-node
# group ff02::1:ff00:99 is reported (the control; setup sets
# force_mld_version=1, so the reports are MLDv1). The kernel's own
# reports for a new address may go out before the daemon has the group
# in its MLD set (it syncs once a second) and be dropped, so once the
# group is in the set, the upstream side asks as a snooping querier does
# (df_mld_query) and the report must leave.
df_mld_capture() {
	df_mld_pcap mld
	wl ip addr add 2001:db8::99/64 dev "$DF_VETH_WL" nodad
	if wl ipset list -n 2>/dev/null | grep -x dnsfence6-mld >/dev/null; then
		df_poll 50 wl ipset test dnsfence6-mld ff02::1:ff00:99 2>/dev/null ||
			fail "the MLD set dnsfence6-mld did not get ff02::1:ff00:99 (of 2001:db8::99) within 5 s"
	fi
	df_mld_reported() { tcpdump -r "$DF_TMP/mld.pcap" -n -v 2>/dev/null | grep "listener report.*ff02::1:ff00:99" >/dev/null; }
	df_mld_query
	df_poll 50 df_mld_reported || { df_mld_query && df_poll 50 df_mld_reported; } ||
		fail "control: no MLD report for ff02::1:ff00:99 (of 2001:db8::99) left, even after two queries: $(tcpdump -r "$DF_TMP/mld.pcap" -n -v 2>/dev/null)"
}

# df_mld_pcap NAME: capture IPv6 on the upstream side of the veth into
# $DF_TMP/NAME.pcap, once tcpdump listens (its pid the last of DF_PIDS).
df_mld_pcap() {
	up tcpdump -i "$DF_VETH_UP" -n -U --immediate-mode -w "$DF_TMP/$1.pcap" \
		ip6 >"$DF_TMP/tcpdump-$1.log" 2>&1 &
	DF_PIDS+=("$!")
	df_poll 50 grep -q "listening on" "$DF_TMP/tcpdump-$1.log" || fail "tcpdump did not start: $(cat "$DF_TMP/tcpdump-$1.log")"
}

# df_mld_recapture NAME: stop the last capture, start $DF_TMP/NAME.pcap.
df_mld_recapture() {
	kill -TERM "${DF_PIDS[-1]}"
	df_wait_gone "${DF_PIDS[-1]}" 30 || fail "tcpdump did not stop"
	df_mld_pcap "$1"
}

# df_mld_query: an MLDv1 general query (max response delay 0) from the
# upstream side of the veth to ff02::1, as a snooping querier sends: the
# workload's kernel reports every group it is in.
df_mld_query() {
	local ifindex
	ifindex="$(up cat "/sys/class/net/$DF_VETH_UP/ifindex")"
	up "$DF_PY" - "$ifindex" <<'PY' || fail "could not send the MLD query"
import socket, struct, sys
ifindex = int(sys.argv[1])
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, ifindex)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_HOPOPTS, bytes([0, 0, 5, 2, 0, 0, 1, 0]))
s.sendto(struct.pack(">BBHHH", 130, 0, 0, 0, 0) + bytes(16), ("ff02::1", 0, 0, ifindex))
PY
}

# df_join_groups UID GROUP...: UID joins each IPv6 multicast GROUP on the
# workload's veth (IPV6_JOIN_GROUP needs no privilege) and stays a member
# while the kernel repeats its reports.
df_join_groups() {
	local uid=$1 ifindex
	shift
	ifindex="$(wl cat "/sys/class/net/$DF_VETH_WL/ifindex")"
	df_wl_as "$uid" "$DF_PY" - "$ifindex" "$@" <<'PY' || fail "uid $uid could not join its groups"
import socket, struct, sys, time
ifindex = int(sys.argv[1])
socks = []
for g in sys.argv[2:]:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                 socket.inet_pton(socket.AF_INET6, g) + struct.pack("@I", ifindex))
    socks.append(s)
joined = open("/proc/net/igmp6").read()
for g in sys.argv[2:]:
    if socket.inet_pton(socket.AF_INET6, g).hex() not in joined:
        sys.exit("not a member of %s" % g)
time.sleep(2.5)  # the kernel repeats the report (robustness 2, 1 s apart)
PY
}

# expect_mld_reports_only_control GROUP...: the capture holds the control's
# report (ff02::1:ff00:99) and none announcing a GROUP.
expect_mld_reports_only_control() {
	local report g
	sleep 0.5
	report="$(tcpdump -r "$DF_TMP/mld.pcap" -n -v 2>/dev/null)"
	grep -q "listener report.*ff02::1:ff00:99" <<<"$report" ||
		fail "control: no MLD report for the solicited-node group ff02::1:ff00:99 left: $report"
	for g in "$@"; do
		! grep -qF "$g" <<<"$report" || fail "an MLD report announcing the workload's group $g left the namespace:
$(grep -F "$g" <<<"$report")"
	done
}

# df_zone_nat64: nat64.allowed.test answers 169.254.169.254 in four IPv6
# forms (NAT64, local-use NAT64, 6to4, IPv4-compatible), and two public
# addresses (the NAT64 form of 198.18.1.10, and 2001:db8:1::10). Before
# df_setup.
df_zone_nat64() {
	df_zone_add allowed.test.zone <<'ZONE'
nat64 IN AAAA 64:ff9b::a9fe:a9fe
nat64 IN AAAA 64:ff9b:1::a9fe:a9fe
nat64 IN AAAA 2002:a9fe:a9fe::1
nat64 IN AAAA ::a9fe:a9fe
nat64 IN AAAA 64:ff9b::c612:10a
nat64 IN AAAA 2001:db8:1::10
ZONE
}

# expect_nat64_judged: the last answer for nat64.allowed.test AAAA lacks
# every form of 169.254.169.254 (none in the set, each logged) and keeps
# the two public addresses (in the set).
expect_nat64_judged() {
	local a shown
	# ::a9fe:a9fe is written ::169.254.169.254 by inet_ntop (and dig).
	for a in 64:ff9b::a9fe:a9fe 64:ff9b:1::a9fe:a9fe 2002:a9fe:a9fe::1 ::a9fe:a9fe; do
		shown=$a
		[ "$a" != ::a9fe:a9fe ] || shown=::169.254.169.254
		expect_answer_lacks "$a"
		expect_answer_lacks "$shown"
		expect_not_in_set dnsfence6 "$a"
		grep -F "nat64.allowed.test" "$DF_DNSFENCE_LOG" | grep -F -- " $shown:" >/dev/null ||
			fail "no log line names nat64.allowed.test and $shown"
	done
	expect_answer_contains 64:ff9b::c612:10a
	expect_answer_contains 2001:db8:1::10
	expect_answer_count AAAA 2
	expect_in_set dnsfence6 64:ff9b::c612:10a
	expect_in_set dnsfence6 2001:db8:1::10
}
