#!/bin/bash
# tests/e2e/lib_loss.sh - a lossy link for the tests and benchmarks, sourced
# after lib.sh (or alone by scripts). This kernel has no sch_netem, so loss
# comes from tests/loss/loss.bpf.c, built per rate as
# build/tests/loss/loss_<permille>.bpf.o and attached with tc on a veth.
#
# Owns: attaching and detaching the dropper, and reading what it dropped.
# Must never: touch a device outside the namespace it is given.
#
#   loss_on NS IF PERMILLE [ingress|egress|both]   (default ingress)
#   loss_off NS IF
#   loss_stats NS IF      -> "seen dropped" summed over the attached hooks
# NS is a command prefix ("$CLI", i.e. nsenter --net=...) or empty.

LOSS_ROOT=${E2E_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
LOSS_BUILD=${BUILD:-build}
[[ $LOSS_BUILD = /* ]] || LOSS_BUILD=$LOSS_ROOT/$LOSS_BUILD

# loss_obj PERMILLE - the object for a rate, built on demand.
loss_obj() {
	local o="$LOSS_BUILD/tests/loss/loss_$1.bpf.o"
	if [ ! -f "$o" ]; then
		make -s -C "$LOSS_ROOT" BUILD="$LOSS_BUILD" "$o" >&2 || return 1
	fi
	echo "$o"
}

loss_on() {
	local ns=$1 dev=$2 pm=$3 dir=${4:-ingress} obj d
	obj=$(loss_obj "$pm") || return 1
	# shellcheck disable=SC2086 # $ns is a command prefix
	$ns tc qdisc add dev "$dev" clsact 2>/dev/null
	case $dir in
	both) dir="ingress egress" ;;
	ingress | egress) ;;
	*)
		echo "loss_on: direction '$dir' is not ingress, egress or both" >&2
		return 1
		;;
	esac
	for d in $dir; do
		# shellcheck disable=SC2086
		$ns tc filter add dev "$dev" "$d" bpf da obj "$obj" sec tc || return 1
	done
}

loss_off() {
	# shellcheck disable=SC2086
	$1 tc qdisc del dev "$2" clsact 2>/dev/null || true
}

# The loss_stats map of every dropper program attached to DEV.
loss_stats() {
	local ns=$1 dev=$2 d id m seen=0 dropped=0 v
	for d in ingress egress; do
		# shellcheck disable=SC2086
		for id in $($ns tc filter show dev "$dev" "$d" 2>/dev/null |
			sed -n 's/.* name loss .*/&/p' | sed -n 's/.* id \([0-9]*\) .*/\1/p'); do
			for m in $(bpftool -j prog show id "$id" | jq -r '.map_ids[]?'); do
				v=$(bpftool -j map dump id "$m" 2>/dev/null |
					jq -r '[.[].formatted.value] | "\(.[0]) \(.[1])"' 2>/dev/null) || continue
				seen=$((seen + ${v% *})) dropped=$((dropped + ${v#* }))
			done
		done
	done
	echo "$seen $dropped"
}
