#!/bin/bash
# tests/e2e/test_trust.sh - the xdp engine trusts nothing it cannot verify
# (issue 9), end to end:
#   - only what is ours: the server namespace is a router forwarding to a
#     web server behind it ($WEB_NS) through the loaded interface; a client
#     asking that web server on the service port gets the web server's
#     page, not blitz's, while a kernel listener on the port sits on the
#     router (the TC hand-off must leave forwarded segments alone too);
#     a service address on the router's lo is answered by XDP;
#   - the kernel keeps what it owns: a 4-tuple in server-side TIME_WAIT
#     (the kernel path closed first) gets the client's new SYN from the
#     same port to the kernel, which answers; in afxdp mode, a keep-alive
#     connection the kernel accepted before the engine started keeps
#     working through the kernel while new ones are the engine's;
#   - prerequisites: tcp_syncookies=0 or tcp_timestamps=0 in the server
#     namespace: load refuses in one line each, serve runs the epoll tier;
#   - blind spoofs from the client namespace with scapy (ACK+GET without
#     timestamps, with a random TSecr; GET, POST, half a request): none
#     answered, none handed off, every one counted.
# Testbed prefix: $TRUST_TB (default trst) plus a third namespace and veth
# of the same prefix; all go down in the trap.
# $SRV, $CLI and $WEB are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/lib_netns.sh
source "$E2E_ROOT/scripts/lib_netns.sh"

T=trust
PORT=8080

e2e_begin "$T" "${TRUST_TB:-trst}"
need_cmds "$T" curl || exit 0

# ---- the web server behind the router ----
X=${SRV_IP#10.77.}
X=${X%.1}
WEB_NS=${SRV_NS%-srv}-web
RTR_IF=${SRV_IF}r WEB_IF=${SRV_IF}w
WEB_NET=10.78.$X RTR_WEB_IP=10.78.$X.1 WEB_IP=10.78.$X.2
LO_IP=10.79.$X.1 # a service address on the router's lo
WEB="nsenter --net=/run/netns/$WEB_NS"
ip netns add "$WEB_NS"
on_exit "ip netns del '$WEB_NS'"
veth_pair "$SRV_NS" "$RTR_IF" "$RTR_WEB_IP/24" "$WEB_NS" "$WEB_IF" "$WEB_IP/24"
ip -n "$WEB_NS" route add default via "$RTR_WEB_IP"
ip -n "$SRV_NS" addr add "$LO_IP/32" dev lo
ip -n "$CLI_NS" route add "$WEB_NET.0/24" via "$SRV_IP"
ip -n "$CLI_NS" route add "$LO_IP/32" via "$SRV_IP"
$SRV sysctl -qw net.ipv4.ip_forward=1

mkdir -p "$TMP/www"
echo "the real web server behind the router" >"$TMP/www/index.html"
(cd "$TMP/www" && exec $WEB "$PY" -m http.server "$PORT" --bind "$WEB_IP" >/dev/null 2>&1) &
WEB_PID=$!
on_exit "kill $WEB_PID"
# A kernel HTTP server on the router's service port (HTTP/1.0: it closes
# first). The TC hand-off then finds a listener for every 4-tuple,
# forwarded ones included; it also answers what XDP hands over.
mkdir -p "$TMP/kernel"
echo "the kernel path" >"$TMP/kernel/index.html"
(cd "$TMP/kernel" && exec $SRV "$PY" -m http.server "$PORT" --bind 0.0.0.0 >/dev/null 2>&1) &
HOLD_PID=$!
on_exit "kill $HOLD_PID"

# ---- prerequisites: no half-working xdp tier ----
# net.ipv4.tcp_syncookies=0 or tcp_timestamps=0 in the server namespace
# (both per-netns): `blitz load` refuses with one line saying what to
# change and leaves nothing attached; `blitz serve` runs the epoll tier
# and says why.
prereq_case() { # SYSCTL
	local name=${1##*.}
	$SRV sysctl -qw "$1=0"
	$SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/pre.out" 2>&1
	local rc=$?
	$SRV sysctl -qw "$1=1"
	if [ $rc != 0 ] && grep -q "$1 is 0: .*sysctl -w $1=1" "$TMP/pre.out" &&
		! has_xdp "$SRV_IF" && [ ! -e "/sys/fs/bpf/blitz/$SRV_IF" ]; then
		pass "${T}_load_refuses_${name}_0"
	else
		fail "${T}_load_refuses_${name}_0" "rc $rc: $(tr '\n' ' ' <"$TMP/pre.out")"
		$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
	fi
}
prereq_case net.ipv4.tcp_syncookies
prereq_case net.ipv4.tcp_timestamps
$SRV sysctl -qw net.ipv4.tcp_syncookies=0
$SRV "$BLITZ" serve "$SRV_IF" -p 8082 >"$TMP/serve.out" 2>&1 &
SRV_PID=$!
on_exit "kill $SRV_PID"
if wait_line "$TMP/serve.out" "serving on" "$SRV_PID" 10 &&
	grep -q "tier epoll" "$TMP/serve.out" &&
	grep -q "net.ipv4.tcp_syncookies is 0" "$TMP/serve.out" && ! has_xdp "$SRV_IF"; then
	pass "${T}_serve_epoll_without_syncookies"
else
	fail "${T}_serve_epoll_without_syncookies" "$(tr '\n' ' ' <"$TMP/serve.out")"
fi
stop_pid "$SRV_PID" INT 5
$SRV sysctl -qw net.ipv4.tcp_syncookies=1

if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load.out" 2>&1; then
	on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
else
	fail "${T}_load" "$(tr '\n' ' ' <"$TMP/load.out")"
	exit 1
fi
if ! wait_port "$CLI" "$WEB_IP" "$PORT" 10; then
	fail "${T}_forwarded" "the web server at $WEB_IP:$PORT never answered a connect"
	exit 1
fi

# ---- forwarded traffic is never answered ----
fwd0=$(counter "$SRV_IF" pass_not_local)
req0=$(counter "$SRV_IF" requests)
out=$($CLI timeout 10 curl -s "http://$WEB_IP:$PORT/" 2>&1)
fwd1=$(counter "$SRV_IF" pass_not_local)
req1=$(counter "$SRV_IF" requests)
if [ "$out" = "the real web server behind the router" ] &&
	[ "$fwd1" -gt "$fwd0" ] && [ "$req1" = "$req0" ]; then
	pass "${T}_forwarded_untouched"
else
	fail "${T}_forwarded_untouched" "got '$out'; pass_not_local $fwd0 -> $fwd1, requests $req0 -> $req1"
fi

# ---- a service address on lo is ours, answered by XDP ----
out=$($CLI timeout 10 curl -s "http://$LO_IP:$PORT/" 2>&1)
req2=$(counter "$SRV_IF" requests)
if [ "$out" = "Hello World!" ] && [ "$req2" -gt "$req1" ]; then
	pass "${T}_lo_address_served"
else
	fail "${T}_lo_address_served" "got '$out'; requests $req1 -> $req2"
fi
# and the router's own address on the loaded interface
out=$($CLI timeout 10 curl -s "http://$SRV_IP:$PORT/" 2>&1)
check "${T}_own_address_served" "got '$out'" [ "$out" = "Hello World!" ]

# ---- a 4-tuple in server-side TIME_WAIT is the kernel's, SYN included ----
# A GET with a body (not XDP's: the kernel path skips bodies) is handed
# to the kernel, whose HTTP/1.0 server
# answers and closes first (the client reads to EOF before closing): the
# router holds the 4-tuple in TIME_WAIT. Half a second later the client
# reconnects from the same port: the kernel must take the SYN (an XDP
# SYN-ACK would stall on the old socket) and answer the GET itself.
CPORT=45123
$CLI timeout 10 "$PY" "$E2E_ROOT/tests/e2e/trust_time_wait.py" "$CLI_IP" "$SRV_IP" "$PORT" $CPORT post >"$TMP/tw.out" 2>&1
if $SRV ss -Htan state time-wait "( sport = :$PORT and dport = :$CPORT )" | grep -q .; then
	ko0=$(counter "$SRV_IF" pass_kernel_owns)
	sa0=$(counter "$SRV_IF" synack)
	out=$($CLI timeout 10 "$PY" "$E2E_ROOT/tests/e2e/trust_time_wait.py" "$CLI_IP" "$SRV_IP" "$PORT" $CPORT get 2>&1)
	ko1=$(counter "$SRV_IF" pass_kernel_owns)
	sa1=$(counter "$SRV_IF" synack)
	if [ "$out" = "the kernel path" ] && [ "$ko1" -gt "$ko0" ] && [ "$sa1" = "$sa0" ]; then
		pass "${T}_time_wait_syn_to_kernel"
	else
		fail "${T}_time_wait_syn_to_kernel" "got '$out'; pass_kernel_owns $ko0 -> $ko1, synack $sa0 -> $sa1"
	fi
else
	fail "${T}_time_wait_syn_to_kernel" "no server-side TIME_WAIT for client port $CPORT after '$(cat "$TMP/tw.out")': $($SRV ss -Htan | tr '\n' '|')"
fi

# ---- blind spoofs from the client namespace ----
HAVE_SCAPY=1
if ! "$PY" -c 'import scapy.all' 2>/dev/null; then
	skip "${T}_spoofs" "scapy is not installed for $PY (scripts/install-deps.sh)"
	HAVE_SCAPY=
fi
# spoof KIND N: N blind ACK+data segments, then one real SYN as the
# control that the sniffer sees what the server sends; prints "A S": the
# answers that carried data or FIN, and the SYN-ACKs seen (must be 1).
spoof() {
	$CLI timeout 60 "$PY" "$E2E_ROOT/tests/e2e/trust_spoof.py" "$CLI_IF" "$CLI_IP" "$SRV_IP" "$PORT" "$1" "$2"
}
for kind in ${HAVE_SCAPY:+nots tsecr}; do
	d0=$(counter "$SRV_IF" drop_no_ts)
	b0=$(counter "$SRV_IF" drop_bad_cookie)
	r0=$(counter "$SRV_IF" requests)
	h0=$(counter "$SRV_IF" handoff)
	got=$(spoof "$kind" 300 2>"$TMP/spoof.err")
	d1=$(counter "$SRV_IF" drop_no_ts)
	b1=$(counter "$SRV_IF" drop_bad_cookie)
	r1=$(counter "$SRV_IF" requests)
	h1=$(counter "$SRV_IF" handoff)
	dropped=$((d1 - d0 + b1 - b0))
	if [ "$got" = "0 1" ] && [ "$dropped" -ge 300 ] && [ "$r1" = "$r0" ] && [ "$h1" = "$h0" ]; then
		pass "${T}_spoofs_$kind"
	else
		fail "${T}_spoofs_$kind" "answers with data, SYN-ACKs: '$got' (want 0 1) ($(tail -1 "$TMP/spoof.err")); dropped $dropped of 300; requests $r0 -> $r1; handoff $h0 -> $h1"
	fi
done
# ---- afxdp started after kernel connections exist ----
# The kernel answers a keep-alive connection on port $PORT2 before any
# AF_XDP socket is bound; then the afxdp engine starts (tests/helpers/afxdp_driver.c:
# the loader in afxdp mode plus afxdp_engine_run, without serve's own
# listener, which would hold the port). The old connection must keep
# working through the kernel (the XDP program must not redirect it to
# userspace TCP, which would reset it); a new one is the engine's.
PORT2=8081
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
if ! drv=$(helper afxdp_driver 2>"$TMP/drv.log"); then
	fail "${T}_afxdp_keeps_kernel_conns" "driver: $(tail -3 "$TMP/drv.log" | tr '\n' ' ')"
else
	$SRV "$PY" "$E2E_ROOT/tests/e2e/trust_ka_server.py" "$SRV_IP" "$PORT2" &
	KA_PID=$!
	on_exit "kill $KA_PID"
	wait_port "$CLI" "$SRV_IP" "$PORT2" 5
	$CLI timeout 40 "$PY" "$E2E_ROOT/tests/e2e/trust_ka_client.py" "$SRV_IP" "$PORT2" "$TMP/ready" "$TMP/go" >"$TMP/ka.out" 2>&1 &
	KC_PID=$!
	for ((i = 0; i < 50; i++)); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
	$SRV "$drv" "$SRV_IF" "$PORT2" >"$TMP/afxdp.log" 2>&1 &
	DRV_PID=$!
	on_exit "kill $DRV_PID"
	if wait_line "$TMP/afxdp.log" "^afxdp: $SRV_IF queue 0" "$DRV_PID" 10; then
		ko0=$(counter "$SRV_IF" pass_kernel_owns)
		touch "$TMP/go"
		wait "$KC_PID"
		ko1=$(counter "$SRV_IF" pass_kernel_owns)
		got=$(tr '\n' '|' <"$TMP/ka.out")
		if [ "$got" = "kernel keep-alive|kernel keep-alive|Hello World!|" ] &&
			[ "$ko1" -gt "$ko0" ]; then
			pass "${T}_afxdp_keeps_kernel_conns"
		else
			fail "${T}_afxdp_keeps_kernel_conns" "client saw '$got' (want kernel, kernel, Hello World!); pass_kernel_owns $ko0 -> $ko1"
		fi
	else
		touch "$TMP/go"
		skip "${T}_afxdp_keeps_kernel_conns" "the afxdp engine did not start here: $(tail -2 "$TMP/afxdp.log" | tr '\n' ' ')"
	fi
	stop_pid "$DRV_PID" INT 5
fi

e2e_status
