#!/bin/bash
# testbed.sh up|down|env [PREFIX] - two network namespaces joined by a veth
# pair, the only network blitz's tests and benchmarks ever touch.
#
#   ${PREFIX}-srv  veth ${PREFIX}s  10.77.X.1/24  fd77:X::1/64  (blitz here)
#   ${PREFIX}-cli  veth ${PREFIX}c  10.77.X.2/24  fd77:X::2/64  (clients)
#
# BLITZ_TB_QUEUES=N gives both veths N RX and N TX queues (default: the
# kernel's, 1 in use). X is derived from PREFIX so several testbeds can coexist. The client's
# veth gets an XDP_PASS program, without which veth drops XDP_TX'd frames.
# `env` prints the variables a test sources, SRV and CLI among them: the
# command prefixes that run a command in each namespace. They use
# `nsenter --net`, which keeps the host's mount namespace and so its
# /sys/fs/bpf, where blitz pins its maps (`ip netns exec` would remount
# /sys and hide the pins from the next command).
set -euo pipefail
cmd=${1:-}
# BLITZ_TB_TAG (a few letters) is appended to every prefix, so that
# several checkouts can run their tests at once without sharing names.
P=${2:-${BLITZ_TB:-bz}}${BLITZ_TB_TAG:-}
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$here/build}

# A stable subnet byte for this prefix (1..250).
X=$(($(printf '%s' "$P" | cksum | cut -d' ' -f1) % 250 + 1))
SRV_NS="$P-srv" CLI_NS="$P-cli" SRV_IF="${P}s" CLI_IF="${P}c"
SRV_IP="10.77.$X.1" CLI_IP="10.77.$X.2"
SRV_IP6="fd77:$X::1" CLI_IP6="fd77:$X::2"

print_env() {
	cat <<EOT
SRV_NS=$SRV_NS
CLI_NS=$CLI_NS
SRV_IF=$SRV_IF
CLI_IF=$CLI_IF
SRV_IP=$SRV_IP
CLI_IP=$CLI_IP
SRV_IP6=$SRV_IP6
CLI_IP6=$CLI_IP6
SRV="nsenter --net=/run/netns/$SRV_NS"
CLI="nsenter --net=/run/netns/$CLI_NS"
EOT
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
	ip -n "$SRV_NS" link set "$SRV_IF" up
	ip -n "$CLI_NS" link set "$CLI_IF" up
	# veth's native XDP needs the peer to have a program for XDP_TX.
	ip -n "$CLI_NS" link set dev "$CLI_IF" xdpdrv obj "$BUILD/xdp_pass.bpf.o" sec xdp
	# Larger backlogs for benchmarks with many connections.
	for ns in "$SRV_NS" "$CLI_NS"; do
		ip netns exec "$ns" sysctl -qw net.core.somaxconn=65535
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_max_syn_backlog=65535
		ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="1024 65000"
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_tw_reuse=1
	done
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
}

case $cmd in
up) up && print_env ;;
down) down ;;
env) print_env ;;
*)
	echo "usage: testbed.sh up|down|env [PREFIX]" >&2
	exit 2
	;;
esac
