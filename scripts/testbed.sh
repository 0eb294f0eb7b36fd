#!/bin/bash
# testbed.sh up|down|env [PREFIX] - two network namespaces joined by a veth
# pair, the only network blitz's tests and benchmarks ever touch.
#
#   ${PREFIX}-srv  veth ${PREFIX}s  10.77.X.1/24  fd77:X::1/64  (blitz here)
#   ${PREFIX}-cli  veth ${PREFIX}c  10.77.X.2/24  fd77:X::2/64  (clients)
#
# BLITZ_TB_QUEUES=N gives both veths N RX and N TX queues (default: the
# kernel's, 1 in use). BLITZ_TB_CLI_QDISC=none leaves the client's veth
# without its transmit queue (see up()). BLITZ_TB_CLI_ADDRS=N (bench, issue 15) gives the
# client N addresses, 10.77.X.2 to 10.77.X.(N+1) and fd77:X::2 up (N from 1
# to 64, default 1), for `blitz bench --src-addrs N`: more connections than
# one address's ports allow. X is derived from PREFIX so several testbeds can coexist. The client's
# veth gets an XDP_PASS program, without which veth drops XDP_TX'd frames.
#
# `env` prints the variables a test sources, SRV and CLI among them: the
# command prefixes that run a command in each namespace. They use
# `nsenter --net`, which keeps the host's mount namespace and so its
# /sys/fs/bpf, where blitz pins its maps (`ip netns exec` would remount
# /sys and hide the pins from the next command).
#
# testbed.sh fleet N [PREFIX] [KEYFILE] | fleet-down [PREFIX] | fleet-env N
# [PREFIX] - a client, a router and N servers (N from 2 to 16) sharing one
# service address on their lo, reached through an ECMP multipath route
# with L4 hashing (fib_multipath_hash_policy=1), as behind an anycast or
# BGP fabric:
#
#   ${PREFIX}-fc  ${PREFIX}fc 10.78.X.2/24 ── ${PREFIX}f0 10.78.X.1 ${PREFIX}-fr
#   ${PREFIX}-fr  ${PREFIX}fI 10.79.X.(4I+1)/30 ── ${PREFIX}sI 10.79.X.(4I+2) ${PREFIX}-fI
#   VIP 10.80.X.1/32 on lo of every ${PREFIX}-fI; on ${PREFIX}-fr:
#   ip route VIP nexthop via 10.79.X.6 nexthop via 10.79.X.10 ...
#
# With KEYFILE (a --secret-file), `blitz load ${PREFIX}sI -a VIP
# --secret-file KEYFILE` runs on every server. The router's veths carry
# an XDP_PASS program (the peer rule above). PREFIX defaults to bzf.
set -euo pipefail
cmd=${1:-}
# BLITZ_TB_TAG (a few letters) is appended to every prefix, so that
# several checkouts can run their tests at once without sharing names.
P=${2:-${BLITZ_TB:-bz}}${BLITZ_TB_TAG:-}
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$here/build}
# shellcheck source=scripts/lib_netns.sh
source "$here/scripts/lib_netns.sh"

# A stable subnet byte for this prefix (1..250).
X=$(($(printf '%s' "$P" | cksum | cut -d' ' -f1) % 250 + 1))
SRV_NS="$P-srv" CLI_NS="$P-cli" SRV_IF="${P}s" CLI_IF="${P}c"
SRV_IP="10.77.$X.1" CLI_IP="10.77.$X.2"
SRV_IP6="fd77:$X::1" CLI_IP6="fd77:$X::2"
NCLI=${BLITZ_TB_CLI_ADDRS:-1}
if ! [[ $NCLI =~ ^[0-9]+$ ]] || [ "$NCLI" -lt 1 ] || [ "$NCLI" -gt 64 ]; then
	echo "testbed.sh: BLITZ_TB_CLI_ADDRS must be 1..64, not '$NCLI'" >&2
	exit 2
fi

# print_vars NAME[:VAR]... - a line NAME="value of VAR" (VAR defaults to
# NAME) each, for the caller's eval; no value holds a quote.
print_vars() {
	local a v
	for a; do
		v=${a#*:}
		printf '%s="%s"\n' "${a%%:*}" "${!v}"
	done
}

print_env() {
	# shellcheck disable=SC2034 # read by print_vars
	local SRV="nsenter --net=/run/netns/$SRV_NS" CLI="nsenter --net=/run/netns/$CLI_NS"
	print_vars SRV_NS CLI_NS SRV_IF CLI_IF SRV_IP CLI_IP SRV_IP6 CLI_IP6 \
		CLI_ADDRS:NCLI SRV CLI
}

down() {
	ip netns del "$SRV_NS" 2>/dev/null || true
	ip netns del "$CLI_NS" 2>/dev/null || true
}

up() {
	down
	ip netns add "$SRV_NS"
	ip netns add "$CLI_NS"
	local q=()
	[ -n "${BLITZ_TB_QUEUES:-}" ] && q=(numrxqueues "$BLITZ_TB_QUEUES" numtxqueues "$BLITZ_TB_QUEUES")
	ip link add "$SRV_IF" "${q[@]}" netns "$SRV_NS" type veth peer name "$CLI_IF" "${q[@]}" netns "$CLI_NS"
	for ns in "$SRV_NS" "$CLI_NS"; do
		ip -n "$ns" link set lo up
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0
	done
	ip -n "$SRV_NS" addr add "$SRV_IP/24" dev "$SRV_IF"
	ip -n "$CLI_NS" addr add "$CLI_IP/24" dev "$CLI_IF"
	ip -n "$SRV_NS" addr add "$SRV_IP6/64" dev "$SRV_IF" nodad
	ip -n "$CLI_NS" addr add "$CLI_IP6/64" dev "$CLI_IF" nodad
	# bench (issue 15): the client's extra addresses, after CLI_IP.
	local i
	for ((i = 3; i <= NCLI + 1; i++)); do
		ip -n "$CLI_NS" addr add "10.77.$X.$i/24" dev "$CLI_IF"
		# deprecated (preferred_lft 0): still answered, never the
		# source the kernel picks (CLI_IP6 stays that).
		ip -n "$CLI_NS" addr add "fd77:$X::$(printf %x "$i")/64" dev "$CLI_IF" nodad preferred_lft 0
	done
	ip -n "$SRV_NS" link set "$SRV_IF" up
	ip -n "$CLI_NS" link set "$CLI_IF" up
	# veth's native XDP needs the peer to have a program for XDP_TX.
	ip -n "$CLI_NS" link set dev "$CLI_IF" xdpdrv obj "$BUILD/xdp_pass.bpf.o" sec xdp
	# The client's veth gets a transmit queue, as a NIC has: when the
	# server veth's 256-frame ring is full, veth (Linux 6.16 and later)
	# then stops the queue and the sender waits (AF_XDP's sendto retries,
	# the kernel's TCP queues) instead of the frame being dropped, which
	# is what veth's default (noqueue) does. At 100,000 connections the
	# generator's bursts lost 1-2% of its frames that way, each loss
	# answered by a retransmission. The server's side keeps noqueue: its
	# kernel path's cost is what the benchmarks compare.
	# BLITZ_TB_CLI_QDISC=none keeps veth's default (noqueue) on the client.
	if [ "${BLITZ_TB_CLI_QDISC:-pfifo}" != none ]; then
		ip netns exec "$CLI_NS" tc qdisc replace dev "$CLI_IF" root pfifo limit 1000
	fi
	# Larger backlogs for benchmarks with many connections.
	for ns in "$SRV_NS" "$CLI_NS"; do
		ip netns exec "$ns" sysctl -qw net.core.somaxconn=65535
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_max_syn_backlog=65535
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="1024 65000"
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_tw_reuse=1
	done
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
}

# ---- the fleet ----
fleet_vars() { # N [PREFIX]
	FN=$1
	FP=${2:-${BLITZ_TB:-bzf}}${BLITZ_TB_TAG:-}
	FX=$(($(printf '%s' "$FP" | cksum | cut -d' ' -f1) % 250 + 1))
	FC_NS="$FP-fc" FR_NS="$FP-fr"
	FC_IF="${FP}fc" FR_IF="${FP}f0"
	FC_IP="10.78.$FX.2" FR_IP="10.78.$FX.1" VIP="10.80.$FX.1"
}

fleet_print_env() {
	local i hosts="" ifs="" ips="" rifs=""
	for ((i = 1; i <= FN; i++)); do
		hosts+="$FP-f$i " ifs+="${FP}s$i " ips+="10.79.$FX.$((4 * i + 2)) "
		rifs+="${FP}f$i "
	done
	hosts=${hosts% } ifs=${ifs% } ips=${ips% } rifs=${rifs% }
	# shellcheck disable=SC2034 # read by print_vars
	local cli="nsenter --net=/run/netns/$FC_NS" rtr="nsenter --net=/run/netns/$FR_NS"
	print_vars FLEET_N:FN FLEET_CLI_NS:FC_NS FLEET_RTR_NS:FR_NS \
		FLEET_CLI_IP:FC_IP FLEET_VIP:VIP FLEET_HOSTS:hosts FLEET_IFS:ifs \
		FLEET_NEXTHOPS:ips FLEET_RTR_IFS:rifs FLEET_CLI:cli FLEET_RTR:rtr
}

fleet_down() {
	local ns nss
	nss=$(ip netns list | awk '{print $1}' | grep -E "^$FP-f([0-9]+|c|r)\$" || true)
	# Unload first: deleting the router's namespace takes the servers'
	# veths with it. Pins are per interface name and outlive a namespace:
	# an unload where the interface is gone removes them.
	for ns in $nss; do
		case $ns in
		"$FP"-f[0-9]*) nsenter --net="/run/netns/$ns" "$BUILD/blitz" unload "${FP}s${ns##*-f}" >/dev/null 2>&1 || true ;;
		esac
	done
	for ns in $nss; do
		ip netns del "$ns" 2>/dev/null || true
	done
	for ns in /sys/fs/bpf/blitz/"${FP}"s[0-9]*; do
		if [ -e "$ns" ]; then
			"$BUILD/blitz" unload "${ns##*/}" >/dev/null 2>&1 || true
		fi
	done
}

fleet_up() {
	local key=${1:-} i nh="" sip rip
	if ! [[ $FN =~ ^[0-9]+$ ]] || [ "$FN" -lt 2 ] || [ "$FN" -gt 16 ]; then
		echo "testbed.sh fleet: N must be a number from 2 to 16" >&2
		return 2
	fi
	fleet_down
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	ip netns add "$FC_NS"
	ip netns add "$FR_NS"
	veth_pair "$FC_NS" "$FC_IF" "$FC_IP/24" "$FR_NS" "$FR_IF" "$FR_IP/24"
	ip -n "$FC_NS" route add default via "$FR_IP"
	ip netns exec "$FR_NS" sysctl -qw net.ipv4.ip_forward=1
	ip netns exec "$FR_NS" sysctl -qw net.ipv4.fib_multipath_hash_policy=1
	ip netns exec "$FR_NS" sysctl -qw net.ipv4.conf.all.rp_filter=0
	ip netns exec "$FC_NS" sysctl -qw net.ipv4.ip_local_port_range="1024 65000"
	for ((i = 1; i <= FN; i++)); do
		local ns="$FP-f$i" sif="${FP}s$i" rif="${FP}f$i"
		rip="10.79.$FX.$((4 * i + 1))" sip="10.79.$FX.$((4 * i + 2))"
		ip netns add "$ns"
		veth_pair "$ns" "$sif" "$sip/30" "$FR_NS" "$rif" "$rip/30"
		ip -n "$ns" addr add "$VIP/32" dev lo
		ip -n "$ns" route add default via "$rip"
		ip netns exec "$FR_NS" sysctl -qw "net.ipv4.conf.$rif.rp_filter=0"
		# XDP_TX on the server's veth needs a program on this peer.
		ip -n "$FR_NS" link set dev "$rif" xdpdrv obj "$BUILD/xdp_pass.bpf.o" sec xdp
		nh+=" nexthop via $sip dev $rif"
	done
	# shellcheck disable=SC2086 # $nh is a list of words
	ip -n "$FR_NS" route add "$VIP/32" $nh
	if [ -n "$key" ]; then
		for ((i = 1; i <= FN; i++)); do
			if ! nsenter --net="/run/netns/$FP-f$i" "$BUILD/blitz" load "${FP}s$i" -a "$VIP" \
				--secret-file "$key" >&2; then
				echo "testbed.sh fleet: blitz load on $FP-f$i failed" >&2
				return 1
			fi
		done
	fi
}

case $cmd in
up) up && print_env ;;
down) down ;;
env) print_env ;;
fleet)
	fleet_vars "${2:-}" "${3:-}"
	fleet_up "${4:-}" && fleet_print_env
	;;
fleet-env)
	fleet_vars "${2:-}" "${3:-}"
	fleet_print_env
	;;
fleet-down)
	fleet_vars 0 "${2:-}"
	fleet_down
	;;
*)
	echo "usage: testbed.sh up|down|env [PREFIX] | fleet N [PREFIX] [KEYFILE] | fleet-down [PREFIX]" >&2
	exit 2
	;;
esac
