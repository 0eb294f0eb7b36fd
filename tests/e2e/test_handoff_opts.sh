#!/bin/bash
# tests/e2e/test_handoff_opts.sh - issue 10 part 4: the kernel socket that a
# TC hand-off (bpf_sk_assign_tcp_reqsk) makes has the options the client's
# SYN negotiated with the XDP SYN-ACK: timestamps, SACK, window scale (the
# client's shift, ours 7) and the client's MSS class (docs/cookie-v2.md:
# IPv4 536/1300/1440/1460, IPv6 1220/1420/1440/8940; the kernel's mss is the
# class less 12 bytes with timestamps). Read with `ss -tino` (iproute2
# prints "ts" and "sack" only with -o) on both ends of each connection:
# the server's line must say what the client's SYN asked for, and the
# client's must agree (same ts/sack, the shifts swapped).
# Cases: Linux defaults (v4, v6), no timestamps, no SACK, no window
# scaling, MSS 536, 1360 (class 1300) and 1460 on v4, 1220 on v6 (the
# client's own sysctls and a host route's advmss in the client namespace).
# The connection: a GET with a body (XDP passes it, TC hands it to nginx
# listening on the port) kept open by send_raw.py's --quiet.
# PAWS: on a connection whose first GET XDP answered and whose second the
# kernel answered after the hand-off, every TSval the client receives is
# at or above the previous one (tests/e2e/ts_watch.py on the client's
# interface), and the client's TcpExtPAWSEstab stays 0.
# With net.ipv4.tcp_sack or tcp_window_scaling at 0 in the server's
# namespace (the kfunc refuses sack_ok / wscale_ok then) the XDP SYN-ACK
# leaves that option out as the kernel would: load says so and succeeds,
# and the handed-off socket has what Linux agreed on (v4 and v6, each
# sysctl and both, a client without timestamps too; `blitz serve` keeps
# its xdp tier with both off); a sysctl changed
# after load shows in `blitz status` until `blitz reload` follows it;
# until then a hand-off leaves SACK out (the kernel's tcp_sack read live)
# and cannot leave window scaling out (refused, handoff_fail).
# tcp_timestamps=0 still refuses (the TSecr carries the cookie).
# Testbed prefix: $HOPTS_TB (default e2ehop).
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_epoll.sh
source "$(dirname "$0")/lib_epoll.sh"

T=handoff_opts
PORT=8080
SEND=$E2E_ROOT/tests/e2e/send_raw.py
WATCH=$E2E_ROOT/tests/e2e/ts_watch.py

e2e_begin "$T" "${HOPTS_TB:-e2ehop}"
if ! command -v nginx >/dev/null; then
	skip "${T}" "nginx is not installed: no kernel listener to hand off to"
	exit 0
fi
if ! nginx_start $PORT 64 "" "		listen [::]:$PORT;"; then
	fail "${T}_nginx" "nginx did not start: $(tail -1 "$TMP/ngx/out.log")"
	exit 1
fi
e2e_load "$T" -p $PORT
printf 'GET /body HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody' >"$TMP/req"

# conn NAME HOST: one handed-off connection to HOST, open until 1 s after
# its reply (ss reads it within ~0.1 s); the `ss -tino` lines of its
# server and client ends in $TMP/NAME.ss, .css.
conn() {
	local h0 i pid
	h0=$(counter "$SRV_IF" handoff)
	$CLI timeout 10 "$PY" "$SEND" "$2" $PORT "$TMP/req" --quiet 1 --timeout 5 \
		--out "$TMP/$1.out" 2>"$TMP/$1.err" &
	pid=$!
	: >"$TMP/$1.ss"
	: >"$TMP/$1.css"
	for ((i = 0; i < 30; i++)); do
		sleep 0.1
		$SRV ss -tinoH state established "( sport = :$PORT )" >"$TMP/$1.ss" 2>/dev/null
		$CLI ss -tinoH state established "( dport = :$PORT )" >"$TMP/$1.css" 2>/dev/null
		grep -q 'mss:' "$TMP/$1.ss" && grep -q 'mss:' "$TMP/$1.css" && break
	done
	wait $pid
	handed=$(($(counter "$SRV_IF" handoff) - h0))
}

# opts FILE: "ts=yes|no sack=yes|no wscale:S,R|none mss:N" of an ss line.
opts() {
	local info ts=no sack=no ws mss
	info=$(tr '\n' ' ' <"$1")
	grep -qw ts <<<"$info" && ts=yes
	grep -qw sack <<<"$info" && sack=yes
	ws=$(grep -o 'wscale:[0-9]*,[0-9]*' <<<"$info")
	mss=$(grep -o ' mss:[0-9]*' <<<"$info" | tr -d ' ')
	echo "ts=$ts sack=$sack ${ws:-wscale:none} ${mss:-mss:none}"
}

# The client's shifts swapped to the server's order (snd,rcv).
swapped() {
	# shellcheck disable=SC2001 # two groups swapped
	sed 's/wscale:\([0-9]*\),\([0-9]*\)/wscale:\2,\1/' <<<"$1"
}

# verdict NAME WANT: WANT is opts()'s line for the server's socket, with
# wscale:C,7 where C is the client's own shift (read from its socket).
verdict() {
	local srv cli cws want=$2
	srv=$(opts "$TMP/$1.ss")
	cli=$(opts "$TMP/$1.css")
	cws=$(grep -o 'wscale:[0-9]*,[0-9]*' <<<"$cli")
	want=${want/wscale:C,7/$(swapped "$cws")}
	if [ "$handed" -lt 1 ] || ! head -c 12 "$TMP/$1.out" | grep -q '^HTTP/1.1 200'; then
		fail "${T}_$1" "handoffs $handed, reply '$(head -c 12 "$TMP/$1.out")' ($(cat "$TMP/$1.err"))"
	elif [ "$srv" != "$want" ]; then
		fail "${T}_$1" "server socket '$srv', want '$want'; ss: $(tr '\n\t' '  ' <"$TMP/$1.ss")"
	elif [ "${srv% mss:*}" != "$(swapped "${cli% mss:*}")" ]; then
		fail "${T}_$1" "client socket '$cli' disagrees with the server's '$srv'"
	else
		pass "${T}_$1 ($srv; client: $cli)"
	fi
}

# case NAME HOST WANT [ADVMSS]: the client's options as set before it.
case_run() {
	local name=$1 host=$2 want=$3 advmss=$4 fam=-4 plen=32
	[[ $host = *:* ]] && fam=-6 plen=128
	if [ -n "$advmss" ]; then
		$CLI ip $fam route replace "$host/$plen" dev "$CLI_IF" advmss "$advmss"
	fi
	conn "$name" "$host"
	[ -n "$advmss" ] && $CLI ip $fam route del "$host/$plen" dev "$CLI_IF"
	verdict "$name" "$want"
}

client_sysctl() {
	$CLI sysctl -qw net.ipv4.tcp_timestamps="$1" net.ipv4.tcp_sack="$2" \
		net.ipv4.tcp_window_scaling="$3"
}

# Linux defaults: MSS 1460 (v4) and 1440 (v6, class 1440), timestamps.
case_run v4_default "$SRV_IP" "ts=yes sack=yes wscale:C,7 mss:1448"
case_run v6_default "$SRV_IP6" "ts=yes sack=yes wscale:C,7 mss:1428"
# Each option left out on its own.
client_sysctl 0 1 1
case_run v4_no_ts "$SRV_IP" "ts=no sack=yes wscale:C,7 mss:1460"
case_run v6_no_ts "$SRV_IP6" "ts=no sack=yes wscale:C,7 mss:1440"
client_sysctl 1 0 1
case_run v4_no_sack "$SRV_IP" "ts=yes sack=no wscale:C,7 mss:1448"
client_sysctl 1 1 0
case_run v4_no_wscale "$SRV_IP" "ts=yes sack=yes wscale:none mss:1448"
# MSS classes: 536 (none of the options), 1360 (class 1300), 1220 on v6.
client_sysctl 1 0 0
case_run v4_mss536_bare "$SRV_IP" "ts=yes sack=no wscale:none mss:524" 536
client_sysctl 0 1 1
case_run v4_mss536_no_ts "$SRV_IP" "ts=no sack=yes wscale:C,7 mss:536" 536
client_sysctl 1 1 1
case_run v4_mss1360 "$SRV_IP" "ts=yes sack=yes wscale:C,7 mss:1288" 1360
case_run v4_mss1460 "$SRV_IP" "ts=yes sack=yes wscale:C,7 mss:1448" 1460
case_run v6_mss1220 "$SRV_IP6" "ts=yes sack=yes wscale:C,7 mss:1208" 1220

# PAWS across the hand-off: GET / (XDP answers it), then the GET with a
# body on the same connection (handed off, nginx answers), everything the
# server sends watched on the client's interface.
printf 'GET / HTTP/1.1\r\nHost: t\r\n\r\n' >"$TMP/req2"
cat "$TMP/req" >>"$TMP/req2"
split=$(printf 'GET / HTTP/1.1\r\nHost: t\r\n\r\n' | wc -c)
paws0=$($CLI nstat -az TcpExtPAWSEstab | awk '/PAWSEstab/ {print $2}')
h0=$(counter "$SRV_IF" handoff)
r0=$(counter "$SRV_IF" requests)
$CLI timeout 20 "$PY" "$WATCH" "$CLI_IF" "$SRV_IP" $PORT 5 >"$TMP/watch.out" 2>"$TMP/watch.err" &
wpid=$!
wait_line "$TMP/watch.err" ready $wpid 10
$CLI timeout 10 "$PY" "$SEND" "$SRV_IP" $PORT "$TMP/req2" --split "$split" --pause 0.5 \
	--quiet 1 --timeout 5 --out "$TMP/paws.out" 2>"$TMP/paws.err"
wait $wpid
paws1=$($CLI nstat -az TcpExtPAWSEstab | awk '/PAWSEstab/ {print $2}')
handed=$(($(counter "$SRV_IF" handoff) - h0))
xdp=$(($(counter "$SRV_IF" requests) - r0))
w=$(cat "$TMP/watch.out")
n200=$(grep -ao 'HTTP/1.1 200' "$TMP/paws.out" | wc -l)
data=$(sed -n 's/.* data=\([0-9]*\).*/\1/p' <<<"$w")
if [ "$handed" -ge 1 ] && [ "$xdp" -ge 1 ] && [ "$n200" = 2 ] && [ "${data:-0}" -ge 2 ] &&
	[[ $w = *" back=0"* ]] && [ "${paws1:-x}" = "${paws0:-y}" ]; then
	pass "${T}_paws_across_handoff ($w; xdp answered $xdp, handed off $handed)"
else
	fail "${T}_paws_across_handoff" "$w; xdp $xdp, handoffs $handed, 200s $n200, PAWSEstab $paws0 -> $paws1 $(cat "$TMP/watch.err")"
fi

# The server's kernel without SACK, then without window scaling, then
# without both: the XDP SYN-ACK leaves out what its sysctl leaves out, so
# the kfunc takes the hand-off and both sockets agree without it.
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
$SRV sysctl -qw net.ipv4.tcp_sack=0
on_exit "$SRV sysctl -qw net.ipv4.tcp_sack=1 net.ipv4.tcp_window_scaling=1"
if $SRV "$BLITZ" load "$SRV_IF" -p $PORT >"$TMP/nosack.out" 2>&1 &&
	grep -q 'leave out SACK-permitted (net.ipv4.tcp_sack)' "$TMP/nosack.out"; then
	pass "${T}_load_srv_no_sack ($(grep -o 'SYN-ACKs leave out.*' "$TMP/nosack.out"))"
else
	fail "${T}_load_srv_no_sack" "$(tr '\n' ' ' <"$TMP/nosack.out")"
fi
case_run v4_srv_no_sack "$SRV_IP" "ts=yes sack=no wscale:C,7 mss:1448"
case_run v6_srv_no_sack "$SRV_IP6" "ts=yes sack=no wscale:C,7 mss:1428"

# Changed while loaded: status says the SYN-ACKs follow the old values
# until a reload reads them again.
$SRV sysctl -qw net.ipv4.tcp_sack=1 net.ipv4.tcp_window_scaling=0
$SRV "$BLITZ" status "$SRV_IF" >"$TMP/st1.out" 2>&1
$SRV "$BLITZ" reload "$SRV_IF" >"$TMP/rl1.out" 2>&1
rl=$?
$SRV "$BLITZ" status "$SRV_IF" >"$TMP/st2.out" 2>&1
if grep -q 'tcp_window_scaling turned off since (still offered: the kernel refuses' "$TMP/st1.out" &&
	grep -q 'tcp_sack turned on since' "$TMP/st1.out" &&
	grep -q "blitz reload $SRV_IF" "$TMP/st1.out" && [ $rl = 0 ] &&
	grep -q 'leave out window scaling' "$TMP/rl1.out" &&
	grep -q 'offer SACK-permitted again' "$TMP/rl1.out" &&
	! grep -q 'SYN-ACKs follow' "$TMP/st2.out"; then
	pass "${T}_status_then_reload ($(grep -o 'SYN-ACKs follow.*' "$TMP/st1.out"))"
else
	fail "${T}_status_then_reload" "status: $(tr '\n' ' ' <"$TMP/st1.out"); reload ($rl): $(tr '\n' ' ' <"$TMP/rl1.out"); after: $(tr '\n' ' ' <"$TMP/st2.out")"
fi
case_run v4_srv_no_wscale "$SRV_IP" "ts=yes sack=yes wscale:none mss:1448"
case_run v6_srv_no_wscale "$SRV_IP6" "ts=yes sack=yes wscale:none mss:1428"

$SRV sysctl -qw net.ipv4.tcp_sack=0
$SRV "$BLITZ" reload "$SRV_IF" >"$TMP/rl2.out" 2>&1 ||
	fail "${T}_reload_srv_bare" "$(tr '\n' ' ' <"$TMP/rl2.out")"
case_run v4_srv_bare "$SRV_IP" "ts=yes sack=no wscale:none mss:1448"
case_run v6_srv_bare "$SRV_IP6" "ts=yes sack=no wscale:none mss:1428"
client_sysctl 0 1 1
case_run v4_srv_bare_no_ts "$SRV_IP" "ts=no sack=no wscale:none mss:1460"
client_sysctl 1 1 1
$SRV sysctl -qw net.ipv4.tcp_sack=1 net.ipv4.tcp_window_scaling=1

# Turned off after load, no reload: the SYN-ACK still offers both. The
# hand-off reads tcp_sack live and leaves SACK out (the client keeps it:
# it may send SACK blocks, which the kernel ignores); window scaling
# cannot be taken back, so the kfunc refuses it (handoff_fail) and the
# request goes unanswered, as Linux's own syncookies would refuse it.
$SRV "$BLITZ" reload "$SRV_IF" >"$TMP/rl3.out" 2>&1 ||
	fail "${T}_reload_srv_all" "$(tr '\n' ' ' <"$TMP/rl3.out")"
$SRV sysctl -qw net.ipv4.tcp_sack=0
conn v4_live_no_sack "$SRV_IP"
$SRV sysctl -qw net.ipv4.tcp_sack=1
srv=$(opts "$TMP/v4_live_no_sack.ss")
cli=$(opts "$TMP/v4_live_no_sack.css")
if [ "$handed" -ge 1 ] && head -c 12 "$TMP/v4_live_no_sack.out" | grep -q '^HTTP/1.1 200' &&
	[[ $srv = "ts=yes sack=no wscale:"*",7 mss:1448" ]] &&
	[[ $cli = "ts=yes sack=yes wscale:7,"* ]]; then
	pass "${T}_v4_live_no_sack ($srv; client: $cli)"
else
	fail "${T}_v4_live_no_sack" "handoffs $handed, server '$srv', client '$cli', reply '$(head -c 12 "$TMP/v4_live_no_sack.out")'"
fi
$SRV sysctl -qw net.ipv4.tcp_window_scaling=0
f0=$(counter "$SRV_IF" handoff_fail)
h0=$(counter "$SRV_IF" handoff)
$CLI timeout 10 "$PY" "$SEND" "$SRV_IP" $PORT "$TMP/req" --quiet 1 --timeout 2 \
	--out "$TMP/live_ws.out" 2>"$TMP/live_ws.err"
$SRV sysctl -qw net.ipv4.tcp_window_scaling=1
failed=$(($(counter "$SRV_IF" handoff_fail) - f0))
handed=$(($(counter "$SRV_IF" handoff) - h0))
if [ "$failed" -ge 1 ] && [ "$handed" = 0 ] && ! grep -q 'HTTP/1.1' "$TMP/live_ws.out"; then
	pass "${T}_v4_live_no_wscale_refused (handoff_fail $failed)"
else
	fail "${T}_v4_live_no_wscale_refused" "handoff_fail $failed, handoff $handed, reply '$(head -c 12 "$TMP/live_ws.out")'"
fi

# blitz serve (its own epoll listener behind XDP, on another port than
# nginx's) with neither option in the kernel: the xdp tier, not epoll
# alone, and its hand-offs agree without them.
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
$SRV sysctl -qw net.ipv4.tcp_sack=0 net.ipv4.tcp_window_scaling=0
serve_start "$TMP/serve.log" "$SRV_IF" --engine xdp -p 8081
if serve_wait_line "tier xdp" 20 && has_xdp "$SRV_IF" &&
	grep -q 'SYN-ACKs leave out SACK-permitted (net.ipv4.tcp_sack) and window scaling' "$TMP/serve.log"; then
	pass "${T}_serve_srv_bare ($(grep -o 'tier xdp[^;]*' "$TMP/serve.log" | head -1))"
	PORT=8081 conn serve_bare "$SRV_IP"
	verdict serve_bare "ts=yes sack=no wscale:none mss:1448"
else
	fail "${T}_serve_srv_bare" "$(tr '\n' ' ' <"$TMP/serve.log")"
fi
serve_stop TERM 10
$SRV sysctl -qw net.ipv4.tcp_sack=1 net.ipv4.tcp_window_scaling=1

# Timestamps are not followed: every segment after the handshake is
# proved by its TSecr, so load refuses, names it, attaches nothing.
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
$SRV sysctl -qw net.ipv4.tcp_timestamps=0
if $SRV "$BLITZ" load "$SRV_IF" -p $PORT >"$TMP/nots.out" 2>&1; then
	fail "${T}_refused_tcp_timestamps" "load succeeded with net.ipv4.tcp_timestamps=0"
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
elif grep -q "net.ipv4.tcp_timestamps is 0" "$TMP/nots.out" && ! has_xdp "$SRV_IF"; then
	pass "${T}_refused_tcp_timestamps"
else
	fail "${T}_refused_tcp_timestamps" "$(tr '\n' ' ' <"$TMP/nots.out")"
fi
$SRV sysctl -qw net.ipv4.tcp_timestamps=1
e2e_status
