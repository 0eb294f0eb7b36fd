#!/bin/bash
# tests/e2e/test_multiqueue.sh - every engine on every queue of a
# multi-queue veth pair (2, then 4 RX/TX queues on both ends, threaded
# NAPI, each NAPI thread pinned to a CPU in turn). Client flows run from
# every CPU (taskset) and spread over the client's TX queues, which veth
# maps one to one onto the server's RX queues (veth_xmit: the skb's queue
# mapping picks the peer's rx queue). Checked per queue from the driver's
# own counters (ethtool -S rx_queue_N_xdp_tx / _xdp_redirect):
#   xdp    answers on every queue; the per-CPU counters show every CPU
#   afxdp  one socket per queue, each carries requests; serve and status
#          say each socket's mode (copy on veth) and why
#   dpdk   (2 queues) RSS over the af_packet vdev's queue pairs: every
#          queue receives
# Testbed prefixes: mq2, mq4 (and $BLITZ_TB_TAG). Bounded: wrk runs 2 s.
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=multiqueue
PORT=8080
BODY="Hello World!"
need_root "$T"
need_blitz "$T"
need_cmds "${T}_wrk" wrk ethtool || exit 0
NCPU=$(nproc)

# napi_threaded NS IF - threaded NAPI on IF, its threads pinned to CPUs in turn.
napi_threaded() {
	local ns=$1 ifn=$2 i=0 pid
	ip netns exec "$ns" sh -c "echo 1 > /sys/class/net/$ifn/threaded" 2>/dev/null || return 1
	for pid in $(ps -e -o pid=,comm= | awk -v p="napi/$ifn-" 'index($2, p) == 1 { print $1 }' | sort -n); do
		taskset -p -c $((i++ % NCPU)) "$pid" >/dev/null
	done
	[ "$i" -gt 0 ]
}

# load_from_every_cpu - wrk from each CPU at once, 2 s, 16 connections each.
load_from_every_cpu() {
	local c pids=()
	for ((c = 0; c < NCPU; c++)); do
		$CLI taskset -c "$c" timeout 10 wrk -t1 -c16 -d2s "http://$SRV_IP:$PORT/" >"$TMP/wrk$c" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
}

# queue_stat NAME - "q0 q1 ..." of the server's rx_queue_N_NAME counters.
queue_stat() {
	ip netns exec "$SRV_NS" ethtool -S "$SRV_IF" |
		awk -v s="_$1:" '$1 ~ /^rx_queue_[0-9]+_/ && substr($1, length($1) - length(s) + 1) == s { print $2 }' |
		tr '\n' ' '
}

# every_nonzero Q "v0 v1 ..." - Q values, all > 0.
every_nonzero() {
	local n=0 v
	for v in $2; do
		[ "$v" -gt 0 ] || return 1
		n=$((n + 1))
	done
	[ "$n" -eq "$1" ]
}

# delta "a0 a1" "b0 b1" - b - a per queue.
delta() {
	"$PY" -c 'import sys; a = sys.argv[1].split(); b = sys.argv[2].split()
print(" ".join(str(int(y) - int(x)) for x, y in zip(a, b)))' "$1" "$2"
}

for Q in 2 4; do
	export BLITZ_TB_QUEUES=$Q
	e2e_up "${T}_$Q" "mq$Q"
	unset BLITZ_TB_QUEUES
	q=$(ip netns exec "$SRV_NS" ethtool -l "$SRV_IF" | awk '/^Current/ { c = 1 } c && /^RX:/ { print $2 }')
	check "${T}_${Q}_queues" "the server veth has $q RX queues" test "$q" = "$Q"

	# ---- xdp ----
	$SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load" 2>&1 ||
		fail "${T}_${Q}_xdp_load" "$(cat "$TMP/load")"
	napi_threaded "$SRV_NS" "$SRV_IF" && napi_threaded "$CLI_NS" "$CLI_IF" ||
		echo "# threaded NAPI could not be set up: queues run in the senders' softirq"
	before=$(queue_stat xdp_tx)
	load_from_every_cpu
	per_q=$(delta "$before" "$(queue_stat xdp_tx)")
	echo "# $Q queues, xdp: XDP_TX frames per RX queue: $per_q"
	check "${T}_${Q}_xdp_every_queue" "XDP_TX per queue: $per_q" every_nonzero "$Q" "$per_q"
	per_cpu=$(bpftool -j map dump pinned "/sys/fs/bpf/blitz/$SRV_IF/counters_block" 2>/dev/null |
		"$PY" -c 'import json, sys
# One entry: per CPU, every counter, a u64 each.
at = lambda v, i: int.from_bytes(bytes(int(b, 16) for b in v[8 * i:8 * i + 8]), "little")
for e in json.load(sys.stdin):
    print(" ".join(str(at(v["value"], 3)) for v in e["values"]))  # BLITZ_CNT_REQUESTS' 2>/dev/null)
	echo "# $Q queues, xdp: requests answered per CPU: $per_cpu"
	check "${T}_${Q}_xdp_every_cpu" "requests per CPU: '$per_cpu'" every_nonzero "$NCPU" "$(echo "$per_cpu" | cut -d' ' -f1-"$NCPU")"
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

	# ---- afxdp: one socket per queue ----
	$SRV "$BLITZ" serve "$SRV_IF" --engine afxdp -p "$PORT" >"$TMP/afxdp" 2>&1 &
	pid=$!
	on_exit "kill -9 $pid"
	if ! wait_line "$TMP/afxdp" "afxdp: $SRV_IF queue $((Q - 1)): " "$pid" 20 ||
		! wait_port "$CLI" "$SRV_IP" "$PORT" 10; then
		fail "${T}_${Q}_afxdp" "$(tr '\n' '|' <"$TMP/afxdp")"
		stop_pid "$pid" KILL
		e2e_teardown
		continue
	fi
	n=$(grep -c "^afxdp: $SRV_IF queue [0-9]*: copy mode (bind with XDP_ZEROCOPY: .*no zero-copy" "$TMP/afxdp")
	check "${T}_${Q}_afxdp_serve_says_mode" "$n of $Q sockets said copy mode and why: $(grep "^afxdp: $SRV_IF queue" "$TMP/afxdp" | head -1)" test "$n" -eq "$Q"
	$SRV "$BLITZ" status "$SRV_IF" >"$TMP/status" 2>&1
	n=$(grep -c "^$SRV_IF: AF_XDP socket on queue [0-9]*: copy mode (.*no zero-copy" "$TMP/status")
	check "${T}_${Q}_afxdp_status_says_mode" "$n of $Q sockets in status: $(tr '\n' '|' <"$TMP/status")" test "$n" -eq "$Q"
	napi_threaded "$SRV_NS" "$SRV_IF" >/dev/null
	before=$(queue_stat xdp_redirect)
	load_from_every_cpu
	per_q=$(delta "$before" "$(queue_stat xdp_redirect)")
	echo "# $Q queues, afxdp: frames redirected per RX queue: $per_q"
	stop_pid "$pid" TERM 10
	reqs=$(sed -n 's/^afxdp: queue [0-9]*: [0-9]* frames in, \([0-9]*\) requests$/\1/p' "$TMP/afxdp" | tr '\n' ' ')
	echo "# $Q queues, afxdp: requests per socket: $reqs"
	check "${T}_${Q}_afxdp_every_socket" "redirected per queue: $per_q, requests per socket: '$reqs'" \
		bash -c "$(declare -f every_nonzero); every_nonzero $Q '$per_q' && every_nonzero $Q '$reqs'"
	check "${T}_${Q}_afxdp_report_removed" "left: $(echo /run/blitz/afxdp-*.xsk)" \
		test ! -e "/run/blitz/afxdp-$(sed -n 's/^blitz: afxdp engine pid \([0-9]*\) .*/\1/p' "$TMP/afxdp" | head -1).xsk"

	# ---- dpdk: RSS over 2 queue pairs (once) ----
	if [ "$Q" = 2 ]; then
		if [ ! -x "$(dirname "$BLITZ")/blitz-dpdk" ]; then
			skip "${T}_dpdk_rss" "blitz-dpdk is not built (libdpdk-dev)"
		else
			$SRV "$BLITZ" serve "$SRV_IF" --engine dpdk -q 2 -p "$PORT" >"$TMP/dpdk" 2>&1 &
			pid=$!
			on_exit "kill -9 $pid"
			if wait_line "$TMP/dpdk" "blitz-dpdk: serving" "$pid" 40 && wait_port "$CLI" "$SRV_IP" "$PORT" 10; then
				load_from_every_cpu
				stop_pid "$pid" TERM 15 # the per-queue totals come at exit
				rx=$(sed -n 's/^queue \([0-9]*\): lcore=[0-9]* rx=\([0-9]*\) .*/\2/p' "$TMP/dpdk" | tail -2 | tr '\n' ' ')
				echo "# 2 queues, dpdk: frames received per queue: $rx ($(grep -m1 -oE 'RSS over 2 queues|2 queues spread by .*' "$TMP/dpdk"))"
				# RSS in the PMD, or (af_packet) the kernel's fanout hash.
				check "${T}_dpdk_rss" "rx per queue: '$rx' $(grep -m1 -E 'RSS|spread' "$TMP/dpdk")" \
					bash -c "$(declare -f every_nonzero); every_nonzero 2 '$rx' && grep -qE 'RSS over 2 queues|2 queues spread by' '$TMP/dpdk'"
			elif grep -qiE "cannot|EAL: (FATAL|Error)" "$TMP/dpdk"; then
				skip "${T}_dpdk_rss" "blitz-dpdk did not start here: $(grep -m1 -iE "cannot|EAL" "$TMP/dpdk")"
			else
				fail "${T}_dpdk_rss" "$(tail -5 "$TMP/dpdk" | tr '\n' '|')"
			fi
			stop_pid "$pid" TERM 15
		fi
	fi
	e2e_teardown
done

e2e_status
