#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The name check judges the bytes the server reads, not the first copy of
# them: a sender that rewrites bytes the kernel already queued. The
# workload (an unprivileged uid) sends all but the last two bytes of a
# ClientHello (TLS, port 443: Python's ssl server logs every server name
# its servername callback reads) or of a request head (HTTP, port 80:
# nginx logs every Host it reads) naming www.allowed.test from a page the
# queued segment keeps referenced (MSG_ZEROCOPY from its own mmap'd
# page, or sendfile from a file's page cache), rewrites the page to the
# same bytes naming secret.evil.test, then sends the last two bytes one
# segment at a time (rewrite_retransmit.py). A fence that judges the
# first copy and lets the kernel's retransmission of a segment it dropped
# or held pass unread lets the server read secret.evil.test. Asserted,
# for TLS and HTTP, IPv4 and IPv6, zerocopy and sendfile: the server
# never reads secret.evil.test, and the client gets a reset, no answer,
# or (a fence that passes only the copy it judged) www.allowed.test's
# answer; the daemon logs each as a rewritten retransmission. Controls: the same sequence without the rewrite completes
# through the fence (the server reads www.allowed.test and answers); with
# the check off (a live reload) and the server's side dropping every
# segment that carries www.allowed.test (iptables in the upstream
# namespace, as the fence drops a held segment), a copy naming
# www.allowed.test is sent (and dropped) and the kernel's retransmission
# carries the rewritten page: the server reads secret.evil.test.
source "$(dirname "$0")/lib.sh"
WL_UID=4242
ALLOWED=www.allowed.test
DENIED=secret.evil.test # as long as $ALLOWED: the rewrite keeps the length
df_setup

df_front_end_cert "$ALLOWED" "$DENIED"
df_front_end_pages
chmod 755 "$DF_TMP" # the daemon (its user) reads the config again at reload
df_tls_lab serve "$DF_TMP/cert.pem" "$DF_TMP/key.pem" 443 198.18.1.10 2001:db8:1::10
HTTP_LOG="$DF_TMP/http-hosts.log"
: >"$HTTP_LOG"
df_start_nginx 80 "log_format hosts 'host \$http_host';" \
	"server { listen 198.18.1.10:80 default_server; listen [2001:db8:1::10]:80 default_server; server_name $ALLOWED; root $DF_TMP/www/allowed; access_log $HTTP_LOG hosts; }" \
	"server { listen 198.18.1.10:80; listen [2001:db8:1::10]:80; server_name $DENIED; root $DF_TMP/www/evil; access_log $HTTP_LOG hosts; }"

sock="$DF_TMP/control.sock"
COMMON=(allow='["'"$ALLOWED"'"]' ports='["tcp/80", "tcp/443"]' control='{"socket": "'"$sock"'", "watch": false}')
df_start_dnsfence "${COMMON[@]}"
df_dig "$ALLOWED" A
expect_rcode NOERROR
df_dig "$ALLOWED" AAAA
expect_rcode NOERROR

RR="$(df_share rewrite_retransmit.py)"
# attack MECH PROTO ADDR SENT LATER: sets OUT (the client's answer) and RC.
attack() {
	RC=0
	OUT="$(df_wl_as $WL_UID timeout 20 "$DF_PY" "$RR" "$1" "$2" "$3" "$(port_of "$2")" "$4" "$5" 2>&1)" || RC=$?
}
port_of() { if [ "$1" = tls ]; then echo 443; else echo 80; fi; }
log_of() { if [ "$1" = tls ]; then echo "$SRV_LOG"; else echo "$HTTP_LOG"; fi; }
# read_by PROTO NAME: the server of PROTO has read NAME.
read_by() {
	local p=sni
	[ "$1" = tls ] || p=host
	grep -qx "$p $2" "$(log_of "$1")"
}
# answered PROTO PAGE: OUT is a TLS server's ServerHello, or HTTP's PAGE.
answered() {
	if [ "$1" = tls ]; then
		grep -q "^answered b'\\\\x16\\\\x03\\\\x03" <<<"$OUT"
	else
		[ "$OUT" = "page $2" ]
	fi
}
CASES=()
for addr in 198.18.1.10 2001:db8:1::10; do
	for proto in tls http; do
		for mech in zerocopy sendfile; do CASES+=("$mech $proto $addr"); done
	done
done

# Control: the same sequence without the rewrite completes through the
# fence (today's drops the first copy and passes its retransmission).
for c in "${CASES[@]}"; do
	read -r mech proto addr <<<"$c"
	: >"$(log_of "$proto")"
	attack "$mech" "$proto" "$addr" "$ALLOWED" "$ALLOWED"
	{ [ "$RC" -eq 0 ] && answered "$proto" allowed-page; } ||
		fail "control: $c without the rewrite: exit $RC: $OUT"
	df_poll 30 read_by "$proto" "$ALLOWED" ||
		fail "control: $c without the rewrite: the server did not read $ALLOWED: $(cat "$(log_of "$proto")")"
done
ok "control: TLS and HTTP, IPv4 and IPv6, zerocopy and sendfile, without the rewrite: the server reads $ALLOWED and answers"

# The attack: the page rewritten to name $DENIED after the first copy left.
escaped=()
for c in "${CASES[@]}"; do
	read -r mech proto addr <<<"$c"
	: >"$(log_of "$proto")"
	attack "$mech" "$proto" "$addr" "$ALLOWED" "$DENIED"
	sleep 0.5 # a late retransmission would reach the server by now
	if read_by "$proto" "$DENIED" || { [ "$proto" = http ] && answered http evil-page; }; then
		escaped+=("$c (client: $OUT)")
	elif [ "$RC" -eq 0 ]; then
		# Answered: only a server that read the copy judged ($ALLOWED;
		# the rewrite then changed nothing) may have answered.
		{ [ "$proto" = tls ] && read_by tls "$ALLOWED"; } || answered http allowed-page ||
			fail "$c rewritten to $DENIED: an answer from a server that did not read $ALLOWED: $OUT"
	elif [ "$RC" -lt 3 ] || [ "$RC" -gt 5 ]; then
		fail "$c rewritten to $DENIED: the client failed (exit $RC): $OUT"
	fi
done
[ "${#escaped[@]}" -eq 0 ] ||
	fail "the rewritten retransmission got out, the server read $DENIED: $(printf '%s; ' "${escaped[@]}")"
ok "the rewrite to $DENIED after the first copy, TLS and HTTP, IPv4 and IPv6, zerocopy and sendfile: the server never read it"
# Each was refused for what it did, and said so.
n="$(grep -c "blocked tcp .*a rewritten retransmission" "$DF_DNSFENCE_LOG" || true)"
[ "$n" -ge "${#CASES[@]}" ] ||
	fail "$n of ${#CASES[@]} rewrites were logged as a rewritten retransmission: $(grep namecheck "$DF_DNSFENCE_LOG" | tail -n 12)"
ok "each rewrite refused and logged as a rewritten retransmission"

# Control: with the check off and the server's side dropping every segment
# that names $ALLOWED, the retransmission carries the rewritten page.
df_config "${COMMON[@]}" name_check='{"mode": "off"}'
df_dnsfence reload
[ "$DF_CMD_RC" -eq 0 ] || fail "reload with the check off exited $DF_CMD_RC: $DF_CMD_ERR"
up iptables -I INPUT -p tcp -m string --string "$ALLOWED" --algo bm -j DROP
up ip6tables -I INPUT -p tcp -m string --string "$ALLOWED" --algo bm -j DROP
# dropped IPTABLES: the packets its rule dropped.
dropped() { up "$1" -L INPUT -v -x -n | awk '/STRING match/ { print $1 }'; }
for c in "${CASES[@]}"; do
	read -r mech proto addr <<<"$c"
	ipt=iptables
	[[ $addr != *:* ]] || ipt=ip6tables
	: >"$(log_of "$proto")"
	before="$(dropped $ipt)"
	attack "$mech" "$proto" "$addr" "$ALLOWED" "$DENIED"
	df_poll 30 read_by "$proto" "$DENIED" ||
		fail "control: $c with the check off: the server did not read $DENIED from the retransmission (client: $OUT): $(cat "$(log_of "$proto")")"
	[ "$(dropped $ipt)" -gt "$before" ] ||
		fail "control: $c with the check off: no copy naming $ALLOWED was sent (the first copy named $DENIED already)"
done
ok "control: with the check off the retransmission carries the rewritten page: the server reads $DENIED"
expect_dnsfence_running
