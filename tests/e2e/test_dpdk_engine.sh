#!/bin/bash
# tests/e2e/test_dpdk_engine.sh - the dpdk engine end to end: blitz-dpdk on
# the server veth of a two-namespace testbed through the af_packet PMD,
# real clients in the client namespace (curl, wget, python http.client,
# wrk, ab), a 7 KB request from a client with its default TSO/GSO, raw
# segments (tests/e2e/tcp_raw.py: RFC 5961 challenge ACKs, 2,000 partial
# requests, a tail-loss probe), ARP and IPv6 neighbour discovery with nothing static, ping and
# ping -6, blitz resolving a peer itself, two queues, and the exception path:
# a TCP connection to another port reaches a kernel server through the TAP.
#
# How the server namespace is set up, and why (see dpdk/engine.h):
# - blitz-dpdk --takeover VETH --tap TAP: the TAP gets the veth's MAC, the
#   veth's addresses and routes move to the TAP while blitz runs (and back
#   at exit), and the veth gets no IPv6, rp_filter=1 and arp_ignore=8:
#   af_packet does not take the veth from the kernel, which sees every
#   frame too and must not answer it (a second ARP reply, a RST for port
#   80). The kernel answers what blitz does not (other ports, UDP, router
#   discovery) on the same addresses, through the TAP.
# - the client veth keeps its default offloads (TSO/GSO on): blitz-dpdk
#   attaches a pass-all XDP program to the server veth, which makes the
#   kernel segment on the client to the MSS (dpdk/veth_mss.c).
# EAL runs without hugepages: --no-huge -m 512 --no-pci --no-shconf
# (DPDK 22.11 refuses --in-memory with --no-huge: "--legacy-mem is not
# compatible with --in-memory").
# Every client runs under `timeout`; the testbed goes down in a trap.
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tcp_raw.sh
source "$(dirname "$0")/lib_tcp_raw.sh"

T=dpdk_engine
PORT=80
OTHER_PORT=8080
BODY="Hello World!"
DPDK=$E2E_ROOT/$BUILD/blitz-dpdk
[[ $BUILD = /* ]] && DPDK=$BUILD/blitz-dpdk
PREFIX=${DPDK_TB:-e2edk}
TAP=${PREFIX}tap

need_root "$T"
need_dpdk_tap "$T" "$DPDK"
e2e_up "$T" "$PREFIX"
URL="http://$SRV_IP:$PORT/"
SRV_MAC=$($SRV ip -br link show dev "$SRV_IF" | awk '{print $3}')

# ---- one network stack on the veth: blitz's (--takeover does it) ----
# The client veth keeps its default offloads: TSO on (veth would hand its
# 64 KB super-frames through to af_packet's 2 KB frames unless blitz-dpdk's
# XDP program on the server veth makes the client segment).
CLI_TSO=$($CLI ethtool -k "$CLI_IF" | awk '/^tcp-segmentation-offload:/ {print $2}')

# start_dpdk LCORES NQUEUES [ARGS...] - blitz-dpdk on LCORES, one queue
# each, its routes moved to the TAP too (dpdk_start). Sets DPDK_PID.
start_dpdk() {
	local lcores=$1 nq=$2
	shift 2
	dpdk_start "$lcores" "${VDEV:-net_af_packet0,iface=$SRV_IF,qpairs=$nq,qdisc_bypass=1}" 10 "$@"
}

# stop_dpdk - SIGTERM, bounded wait; 0 when it exited 0 by itself.
stop_dpdk() {
	stop_pid "$DPDK_PID" TERM 5 && [ "$STOP_RC" -eq 0 ]
}

if start_dpdk 0 1; then
	pass "${T}_start"
else
	dpdk_start_failed "$T"
fi

# ---- ARP and ping, nothing static ----
$CLI ip neigh flush dev "$CLI_IF"
if $CLI timeout 10 ping -c 3 -i 0.2 -W 2 "$SRV_IP" >"$TMP/ping" 2>&1 &&
	grep -q '3 received' "$TMP/ping"; then
	pass "${T}_ping"
else
	kill -USR1 "$DPDK_PID" 2>/dev/null
	sleep 0.3
	fail "${T}_ping" "$(tail -2 "$TMP/ping") $(grep '^stats:' "$TMP/dpdk.log" | tail -1)"
fi
neigh=$($CLI ip neigh show "$SRV_IP" dev "$CLI_IF")
if [ -n "$SRV_MAC" ] && echo "$neigh" | grep -qi "lladdr $SRV_MAC" &&
	! echo "$neigh" | grep -q PERMANENT; then
	pass "${T}_arp_learned"
else
	fail "${T}_arp_learned" "client's entry for $SRV_IP: '$neigh', want lladdr $SRV_MAC learnt"
fi

# IPv6: blitz answers the neighbour solicitation and the echo itself.
$CLI ip -6 neigh flush dev "$CLI_IF"
if $CLI timeout 10 ping -6 -c 2 -i 0.2 -W 2 "$SRV_IP6" >"$TMP/ping" 2>&1 &&
	grep -q '2 received' "$TMP/ping"; then
	pass "${T}_ping6"
else
	fail "${T}_ping6" "$(tail -2 "$TMP/ping")"
fi

# ---- real clients (lib.sh; wrk: af_packet on veth is slow by nature) ----
real_clients "$T" "$SRV_IP" "$PORT" "$SRV_IP6"

# A request larger than one segment (5 KB of headers) is reassembled.
big=$(head -c 5000 /dev/zero | tr '\0' a)
if [ "$($CLI timeout 10 curl -sS -H "X-Big: $big" "$URL" 2>"$TMP/e")" = "$BODY" ]; then
	pass "${T}_multi_segment_request"
else
	fail "${T}_multi_segment_request" "$(tr '\n' ' ' <"$TMP/e")"
fi
# A 7 KB request from a client whose veth keeps TSO/GSO on (its default):
# answered at once, not after retransmissions (--max-time 2: the first
# retransmission of a lost super-frame alone would take ~1 s).
big=$(head -c 7000 /dev/zero | tr '\0' b)
t0=$(date +%s%N)
got=$($CLI timeout 10 curl -sS --max-time 2 -H "X-Big: $big" "$URL" 2>"$TMP/e")
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$CLI_TSO" != on ]; then
	fail "${T}_7k_request_client_tso" "the client veth's TSO is '$CLI_TSO', not its default 'on'"
elif [ "$got" = "$BODY" ] && grep -q 'is a veth: an XDP pass program' "$TMP/dpdk.log"; then
	pass "${T}_7k_request_client_tso (${ms} ms)"
else
	fail "${T}_7k_request_client_tso" "got '$got' in ${ms} ms: $(tr '\n' ' ' <"$TMP/e") $(grep -i 'xdp' "$TMP/dpdk.log" | head -2 | tr '\n' ' ')"
fi

# The kernel's copy of each frame on the veth is dropped at its ingress
# hook (dpdk/kernel_drop.c), before IP: requests to blitz raise the server
# namespace's IPv4 InReceives by nothing (without the drop, by every frame:
# the kernel dropped them later, at rp_filter). af_packet still sees them
# (the answers come).
ip_in() { $SRV cat /proc/net/snmp | awk '/^Ip: [0-9]/ {print $4}'; }
if grep -q 'no TCX ingress drop' "$TMP/dpdk.log"; then
	skip "${T}_kernel_drops_at_ingress" "$(grep -m1 'no TCX ingress drop' "$TMP/dpdk.log")"
else
	in0=$(ip_in)
	ok=0
	for _ in $(seq 20); do
		[ "$($CLI timeout 5 curl -sS "$URL" 2>/dev/null)" = "$BODY" ] && ok=$((ok + 1))
	done
	in1=$(ip_in)
	# (A curl lost to a loaded machine is not the point: most answered.)
	if [ "$ok" -ge 10 ] && [ $((in1 - in0)) -lt "$ok" ] &&
		grep -q "the kernel's stack drops its frames at tc ingress" "$TMP/dpdk.log"; then
		pass "${T}_kernel_drops_at_ingress ($((in1 - in0)) IPv4 frames up the kernel's stack for $ok requests)"
	else
		fail "${T}_kernel_drops_at_ingress" "$ok of 20 answered; the kernel's IPv4 InReceives rose by $((in1 - in0)) (want fewer than the requests answered); $(grep -i 'tc ingress\|TCX' "$TMP/dpdk.log" | head -1)"
	fi
fi

# ---- raw segments: RFC 5961, and 2,000 partial requests ----
raw_rfc5961 "$T" "$SRV_IP" "$PORT" "$SRV_MAC"
raw_partial_flood "$T" "$SRV_IP" "$PORT" "$SRV_MAC"
# Corrupted segments dropped and counted (the stats line SIGUSR1 prints);
# curl (whose frames carry veth's partial sums) still answered.
dpdk_bad_csum() {
	local i n
	n=$(grep -c '^stats:' "$TMP/dpdk.log")
	kill -USR1 "$DPDK_PID"
	for ((i = 0; i < 50; i++)); do
		if [ "$(grep -c '^stats:' "$TMP/dpdk.log")" -gt "$n" ]; then
			# A counter at 0 is left out of the line.
			grep '^stats:' "$TMP/dpdk.log" | tail -1 |
				awk '{v = 0; for (i = 2; i <= NF; i++) if ($i ~ /^tcp\.bad_csum=/) v = substr($i, 14); print v}'
			return
		fi
		sleep 0.1
	done
	echo -1
}
raw_csum "$T" "$SRV_IP" "$PORT" "$SRV_MAC" "$SRV_IP6" dpdk_bad_csum
raw_dsack "$T" "$SRV_IP" "$PORT" "$SRV_MAC"
rc_curl_get "${T}_csum_curl_after" "$URL"

# ---- the exception path: another port, served by the kernel ----
mkdir -p "$TMP/www"
echo "kernel behind the TAP" >"$TMP/www/k.txt"
(cd "$TMP/www" && exec $SRV timeout 60 "$PY" -m http.server "$OTHER_PORT" --bind :: >/dev/null 2>&1) &
on_exit "kill $!"
if wait_port "$SRV" 127.0.0.1 "$OTHER_PORT" 5 &&
	[ "$($CLI timeout 10 curl -sS "http://$SRV_IP:$OTHER_PORT/k.txt" 2>"$TMP/e")" = "kernel behind the TAP" ]; then
	pass "${T}_exception_tcp"
else
	fail "${T}_exception_tcp" "curl to port $OTHER_PORT: $(tr '\n' ' ' <"$TMP/e")"
fi
if [ "$($CLI timeout 10 curl -sS -g "http://[$SRV_IP6]:$OTHER_PORT/k.txt" 2>"$TMP/e")" = "kernel behind the TAP" ]; then
	pass "${T}_exception_tcp_ipv6"
else
	fail "${T}_exception_tcp_ipv6" "$(tr '\n' ' ' <"$TMP/e")"
fi

# ---- shutdown: SIGTERM, exit 0, totals, the TAP gone ----
if stop_dpdk && grep -q '^totals:' "$TMP/dpdk.log"; then
	pass "${T}_sigterm"
else
	fail "${T}_sigterm" "$(tail -3 "$TMP/dpdk.log" | tr '\n' ' ')"
fi
if $SRV ip link show "$TAP" >/dev/null 2>&1; then
	fail "${T}_tap_removed" "$TAP still exists after exit"
else
	pass "${T}_tap_removed"
fi
addrs=$($SRV ip -br addr show dev "$SRV_IF")
if echo "$addrs" | grep -q "$SRV_IP/24" && echo "$addrs" | grep -q "$SRV_IP6/64" &&
	[ "$($SRV sysctl -n net.ipv4.conf."$SRV_IF".arp_ignore)" = 0 ]; then
	pass "${T}_takeover_restored"
else
	fail "${T}_takeover_restored" "veth after exit: $addrs"
fi
tot=$(grep '^totals:' "$TMP/dpdk.log")
cnt() { echo "$tot" | grep -oE "(^| )$1=[0-9]+" | cut -d= -f2; }
why=
for c in arp_reply:1 icmp_echo:3 icmp6_echo:2 nd_advert:1 to_tap_frames:1 from_tap_frames:1 tap_csum_fix:1; do
	v=$(cnt "${c%:*}")
	[ "${v:-0}" -ge "${c#*:}" ] || why="$why ${c%:*}=${v:-0}"
done
if [ -z "$why" ]; then
	pass "${T}_counters"
else
	fail "${T}_counters" "$why ($tot)"
fi
cost=$(grep '^requests=' "$TMP/dpdk.log")
if [ -n "$cost" ]; then
	pass "${T}_cost ($cost)"
else
	fail "${T}_cost" "no requests= line in the exit report"
fi

# ---- blitz resolves a peer itself: ARP request, reply learnt ----
# --learn arp stops learning from IP packets, and a static entry on the
# client (this check only) stops the client's own ARP request from
# teaching us: the echo reply then needs the client's MAC, blitz asks once,
# learns it from the answer, and the later replies need no request.
if start_dpdk 0 1 --learn arp; then
	$CLI ip neigh replace "$SRV_IP" lladdr "$SRV_MAC" dev "$CLI_IF" nud permanent
	$CLI timeout 10 ping -c 3 -i 0.3 -W 2 "$SRV_IP" >"$TMP/ping" 2>&1
	got=$(grep -c 'bytes from' "$TMP/ping")
	$CLI ip neigh del "$SRV_IP" dev "$CLI_IF"
	stop_dpdk
	tot=$(grep '^totals:' "$TMP/dpdk.log")
	if [ "$got" -ge 2 ] && [ "$(cnt arp_request)" = 1 ] && [ "$(cnt icmp_echo)" = 3 ]; then
		pass "${T}_arp_resolve"
	else
		fail "${T}_arp_resolve" "$got echo replies; want 1 ARP request for 3 echoes: $tot"
	fi
else
	fail "${T}_arp_resolve" "$(tail -3 "$TMP/dpdk.log" | tr '\n' ' ')"
fi

# ---- a 64 KiB --body-file arrives intact (many segments, the window) ----
head -c 65536 /dev/urandom >"$TMP/body.bin"
if start_dpdk 0 1 --body-file "$TMP/body.bin" --content-type application/octet-stream; then
	$CLI timeout 20 curl -sS -o "$TMP/got.bin" "$URL" 2>"$TMP/e"
	raw_tlp "$T" "$SRV_IP" "$PORT" "$SRV_MAC"
	stop_dpdk
	if cmp -s "$TMP/body.bin" "$TMP/got.bin"; then
		pass "${T}_body_64k"
	else
		fail "${T}_body_64k" "got $(stat -c %s "$TMP/got.bin" 2>/dev/null || echo 0) bytes, not the file: $(tr '\n' ' ' <"$TMP/e")"
	fi
else
	fail "${T}_body_64k" "$(tail -3 "$TMP/dpdk.log" | tr '\n' ' ')"
fi

# ---- two queues: af_packet fanout spreads flows, one lcore each ----
if [ "$(nproc)" -ge 2 ]; then
	if start_dpdk 0-1 2; then
		$CLI timeout 20 wrk -t2 -c16 -d3 "$URL" >"$TMP/wrk2" 2>&1
		stop_dpdk
		busy=$(grep -cE '^queue [0-9]+: .*requests=[1-9]' "$TMP/dpdk.log")
		if [ "$busy" -ge 2 ] && ! grep -qE 'Non-2xx|Socket errors' "$TMP/wrk2"; then
			pass "${T}_two_queues ($(awk '/^Requests\/sec/ {print int($2)}' "$TMP/wrk2") req/s)"
		else
			fail "${T}_two_queues" "queues that answered: $busy; $(grep -E '^queue|Requests/sec|errors' "$TMP/dpdk.log" "$TMP/wrk2" | tr '\n' ' ')"
		fi
	else
		fail "${T}_two_queues" "$(tail -3 "$TMP/dpdk.log" | tr '\n' ' ')"
	fi
else
	skip "${T}_two_queues" "one CPU"
fi

# ---- the af_xdp PMD instead of af_packet (the kernel never sees the
# frames it redirects); SKIP where it cannot load its XDP program ----
if VDEV="net_af_xdp0,iface=$SRV_IF" start_dpdk 0 1; then
	out=$($CLI timeout 10 curl -sS "$URL" 2>&1)
	$CLI timeout 20 wrk -t1 -c10 -d2 "$URL" >"$TMP/wrk3" 2>&1
	stop_dpdk
	rps=$(awk '/^Requests\/sec/ {print int($2)}' "$TMP/wrk3")
	if [ "$out" != "$BODY" ]; then
		fail "${T}_af_xdp" "curl: $out"
	elif [ "${rps:-0}" -le 0 ] || grep -qE 'Non-2xx|Socket errors' "$TMP/wrk3"; then
		fail "${T}_af_xdp" "wrk: $(grep -E 'Requests/sec|Non-2xx|Socket errors' "$TMP/wrk3" | tr '\n' ' ')"
	elif $SRV ip link show dev "$SRV_IF" | grep -q 'xdp'; then
		fail "${T}_af_xdp" "an XDP program is left on $SRV_IF after exit"
	else
		pass "${T}_af_xdp (${rps} req/s)"
	fi
else
	skip "${T}_af_xdp" "net_af_xdp did not start: $(grep -v '^ ' "$TMP/dpdk.log" | grep -iE 'af_xdp|xdp|error' | tail -1)"
	stop_dpdk 2>/dev/null
fi

e2e_status
