#!/bin/bash
# hugepages.sh [N] [--node NODE] | --status | --release - hugepages for the
# dpdk engine on a real deployment.
#
#   hugepages.sh 512           reserve 512 2 MiB pages (1 GiB), mount
#                              hugetlbfs on /dev/hugepages if needed, show
#   hugepages.sh 256 --node 0  reserve them on NUMA node 0 only (sysfs)
#   hugepages.sh --status      show what is reserved, free and mounted
#   hugepages.sh --release     give every 2 MiB page back (0 reserved)
#
# blitz-dpdk then runs without --no-huge, e.g. `blitz-dpdk --in-memory
# -l 0-1 -a 0000:01:00.0 -- -a ADDR --tap blitz0` (--in-memory: no map
# files left under the mount when it exits).
# The testbed does not need this: EAL runs there with --no-huge -m 512.
# The kernel may reserve fewer pages than asked when memory is fragmented:
# the script says how many it got and exits 1 if that is not N.
set -euo pipefail

MNT=${HUGE_MNT:-/dev/hugepages}
SIZE_KB=2048
GLOBAL=/proc/sys/vm/nr_hugepages
node=

usage() {
	sed -n '2,17s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}

nr_file() { # the nr_hugepages file for the node (or the global one)
	if [ -n "$node" ]; then
		echo "/sys/devices/system/node/node$node/hugepages/hugepages-${SIZE_KB}kB/nr_hugepages"
	else
		echo "$GLOBAL"
	fi
}

status() {
	local d n
	echo "2 MiB hugepages:"
	grep -E '^HugePages_(Total|Free|Rsvd)' /proc/meminfo | sed 's/^/  /'
	for d in /sys/devices/system/node/node*/hugepages/hugepages-"${SIZE_KB}"kB; do
		[ -d "$d" ] || continue
		n=${d#/sys/devices/system/node/node}
		n=${n%%/*}
		echo "  node $n: $(cat "$d/nr_hugepages") reserved, $(cat "$d/free_hugepages") free"
	done
	if mountpoint -q "$MNT" 2>/dev/null; then
		echo "hugetlbfs mounted on $MNT"
	else
		echo "hugetlbfs not mounted on $MNT"
	fi
}

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "hugepages.sh: needs root (writes $(nr_file))" >&2
		exit 1
	fi
}

reserve() {
	local want=$1 f got
	f=$(nr_file)
	if [ ! -w "$f" ] && [ ! -e "$f" ]; then
		echo "hugepages.sh: $f does not exist (no such NUMA node, or no 2 MiB pages on this kernel)" >&2
		exit 1
	fi
	echo "$want" >"$f"
	got=$(cat "$f")
	if ! mountpoint -q "$MNT" 2>/dev/null; then
		mkdir -p "$MNT"
		mount -t hugetlbfs -o pagesize=2M nodev "$MNT"
	fi
	status
	if [ "$got" -ne "$want" ]; then
		echo "hugepages.sh: asked for $want pages, the kernel gave $got (memory fragmented or too small): try fewer, or at boot (hugepages=$want)" >&2
		exit 1
	fi
}

release() {
	local d
	echo 0 >"$GLOBAL"
	for d in /sys/devices/system/node/node*/hugepages/hugepages-"${SIZE_KB}"kB; do
		if [ -w "$d/nr_hugepages" ]; then echo 0 >"$d/nr_hugepages"; fi
	done
	status
	left=$(cat "$GLOBAL")
	if [ "$left" -ne 0 ]; then
		echo "hugepages.sh: $left pages still in use: a DPDK process is running, or one run without --in-memory left its map files in $MNT ($(find "$MNT" -maxdepth 1 -type f 2>/dev/null | head -3 | tr '\n' ' '))" >&2
		exit 1
	fi
}

count=
action=reserve
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage 0 ;;
	--status) action=status ;;
	--release) action=release ;;
	--node)
		[ $# -ge 2 ] || usage 2
		node=$2
		shift
		;;
	[0-9]*) count=$1 ;;
	*)
		echo "hugepages.sh: unknown argument '$1'" >&2
		usage 2
		;;
	esac
	shift
done
case $action in
status) status ;;
release) need_root && release ;;
reserve)
	if [ -z "$count" ]; then
		status
	else
		need_root
		reserve "$count"
	fi
	;;
esac
