#!/bin/bash
# placement.sh - where benchmark work runs on the veth testbed, and what it
# costs. Sourced by scripts/demo.sh, scripts/bench.sh and
# tests/e2e/test_bench.sh, so all three place and measure alike.
#
# Fair placement (PLACEMENT=fair, the default): both veths' NAPI threaded
# and each NAPI kthread pinned to its side's CPU, the server (and every
# thread it starts) on the server CPU(s), the client on the other(s).
# Why: on veth a frame's receive path runs in the NAPI of the *sending* CPU
# unless the NAPI is threaded, so by default the client's CPU pays for the
# server's receive work (nginx's TCP, blitz's XDP program): threaded and
# pinned, each side's work runs, and is counted, on its own CPU.
# PLACEMENT=default leaves the NAPI alone (the old, unfair placement).
#
# The NAPI kthreads also run SCHED_FIFO (priority NAPI_RT_PRIO, default 1;
# 0 keeps them SCHED_OTHER; SRV_NAPI_RT_PRIO the server's alone), on both
# sides, decided by measurement (xdp and nginx under blitz bench -c 100,
# 3 runs x 5 s, quiet machine, main at d27160c):
#   both FIFO          xdp 572k req/s at 1,389 ns   nginx 121k at 8,293 ns
#   client FIFO only   xdp 599k at 1,373 ns         nginx 117k at 8,576 ns
#   both SCHED_OTHER   xdp 488k at 1,020 ns         nginx 93.5k at 7,053 ns
# The client's: a threaded NAPI is an ordinary task that waits for the
# scheduler to preempt the busy-polling blitz bench on its CPU, so replies
# reach it in bursts (xdp's p99 2.8 ms against 0.3 ms) and every server
# answers less: an artefact of the generator, which a NIC's softirq (run
# at once) does not have. The server's: no difference beyond the noise for either
# server; FIFO is what a NIC's softirq does (it preempts the server's
# process at once) and it keeps the in-kernel path of every server from
# waiting behind other load (not nginx's worker: compare engines on a
# quiet machine). The cost per request is lower with
# SCHED_OTHER (bursts are batched) but so is the RPS: bench.sh shows that
# policy's figure beside every headline (its blitz-bench-other-napi rows).
# The kernel's RT throttling (sched_rt_runtime_us) still leaves the CPU 5%.
#
# Owns nothing: callers set SRV_NS SRV_IF CLI_NS CLI_IF (testbed.sh env)
# and SRV_CPUS CLI_CPUS (CPU lists as taskset -c takes them, e.g. "1" or
# "2,3"). Must never touch an interface outside the caller's testbed.
# shellcheck shell=bash

PLACEMENT=${PLACEMENT:-fair}
NAPI_RT_PRIO=${NAPI_RT_PRIO:-1}
SRV_NAPI_RT_PRIO=${SRV_NAPI_RT_PRIO:-$NAPI_RT_PRIO}
for p in "$NAPI_RT_PRIO" "$SRV_NAPI_RT_PRIO"; do
	case $p in [0-9] | [1-9][0-9]) ;; *)
		echo "placement: NAPI_RT_PRIO and SRV_NAPI_RT_PRIO must be 0 (SCHED_OTHER) or a SCHED_FIFO priority 1..99, not '$p'" >&2
		exit 1 ;;
	esac
done
PLACEMENT_WHY="veth runs a frame's receive path on the sending CPU unless its NAPI is threaded: threaded and pinned, each side's work runs (and is counted) on its own CPU"
[ "$NAPI_RT_PRIO" = 0 ] || PLACEMENT_WHY="$PLACEMENT_WHY; the NAPI threads run SCHED_FIFO $NAPI_RT_PRIO so that, like a NIC's softirq, they preempt the busy-polling client or server at once"

# The CPUs of a list ("1", "0,2", "2-3") one per line.
cpu_list_expand() {
	local part a b
	for part in ${1//,/ }; do
		if [[ $part == *-* ]]; then
			a=${part%-*} b=${part#*-}
			seq "$a" "$b"
		else
			echo "$part"
		fi
	done
}

# napi_rt PID: the NAPI kthread PID to SCHED_FIFO NAPI_RT_PRIO (or back to
# SCHED_OTHER with NAPI_RT_PRIO=0). 1 when chrt fails.
napi_rt() { # PID [PRIO]
	local prio=${2:-$NAPI_RT_PRIO}
	if [ "$prio" = 0 ]; then
		chrt -o -p 0 "$1" >/dev/null 2>&1
	else
		chrt -f -p "$prio" "$1" >/dev/null 2>&1
	fi
}

# napi_pin NS IF CPUS: GRO on (which makes veth create its NAPI), threaded
# NAPI (written from inside the namespace: nsenter keeps the host's /sys),
# and every napi/IF-* kthread pinned to CPUS (and made SCHED_FIFO, see
# napi_rt). 1 when a step fails.
napi_pin() { # NS IF CPUS [PRIO]
	local ns=$1 ifn=$2 cpus=$3 prio=${4:-$NAPI_RT_PRIO} pat pid n=0
	ip netns exec "$ns" ethtool -K "$ifn" gro on >/dev/null 2>&1 || return 1
	ip netns exec "$ns" sh -c "echo 1 > /sys/class/net/$ifn/threaded" 2>/dev/null || return 1
	# Kernel thread names are cut at 15 characters.
	pat="napi/$ifn-"
	pat=${pat:0:15}
	for pid in $(ps -eo pid=,comm= | awk -v p="$pat" 'index($2, p) == 1 {print $1}'); do
		taskset -pc "$cpus" "$pid" >/dev/null 2>&1 || return 1
		napi_rt "$pid" "$prio" || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# napi_pin_per_queue NS IF: threaded NAPI on IF, the NAPI of RX queue k
# (the k-th by NAPI id: veth numbers its queues' NAPIs in order) pinned to
# CPU k mod the CPU count. On veth a reply lands on the peer's queue
# (sending CPU mod queues), so with this the xdp engine answers each of
# `blitz bench -t N`'s threads on the queue that thread reads.
napi_pin_per_queue() {
	local ns=$1 ifn=$2 pat k=0 pid ncpu
	ncpu=$(nproc)
	ip netns exec "$ns" ethtool -K "$ifn" gro on >/dev/null 2>&1 || return 1
	ip netns exec "$ns" sh -c "echo 1 > /sys/class/net/$ifn/threaded" 2>/dev/null || return 1
	pat="napi/$ifn-"
	pat=${pat:0:15}
	for pid in $(ps -eo pid=,comm= | awk -v p="$pat" 'index($2, p) == 1 {n = $2; sub(".*-", "", n); print n, $1}' | sort -n | awk '{print $2}'); do
		taskset -pc $((k % ncpu)) "$pid" >/dev/null 2>&1 || return 1
		napi_rt "$pid" || return 1
		k=$((k + 1))
	done
	[ "$k" -gt 0 ]
}

# napi_policy IF: the scheduling policy of IF's NAPI kthread(s) as chrt
# reads it back (SCHED_FIFO, SCHED_OTHER), "none" without one.
napi_policy() {
	local pat pid pol=none
	pat="napi/$1-"
	pat=${pat:0:15}
	for pid in $(ps -eo pid=,comm= | awk -v p="$pat" 'index($2, p) == 1 {print $1}'); do
		pol=$(chrt -p "$pid" 2>/dev/null | sed -n 's/.*scheduling policy: //p')
		break
	done
	echo "${pol:-none}"
}

# placement_apply: make the placement PLACEMENT says. Idempotent: call it
# again after anything that may recreate a NAPI (attaching XDP). Prints one
# line saying what it did, and returns 1 if fair placement failed.
placement_apply() {
	if [ "$PLACEMENT" = default ]; then
		echo "placement: default (PLACEMENT=default): receive work runs on the sending CPU"
		return 0
	fi
	if napi_pin "$SRV_NS" "$SRV_IF" "$SRV_CPUS" "$SRV_NAPI_RT_PRIO" && napi_pin "$CLI_NS" "$CLI_IF" "$CLI_CPUS"; then
		echo "placement: fair: server and its veth NAPI on CPU $SRV_CPUS, client and its NAPI on CPU $CLI_CPUS ($PLACEMENT_WHY)"
		return 0
	fi
	echo "placement: cannot thread and pin the veth NAPI: receive work runs on the sending CPU (the figures favour the kernel servers)"
	return 1
}

# placement_quiet: placement_apply without its line.
placement_quiet() { placement_apply >/dev/null; }

# cpu_snapshot: "cpu busy_jiffies" for every CPU, from /proc/stat (user,
# nice, system, irq, softirq, steal: NAPI threads and softirqs count).
cpu_snapshot() {
	awk '/^cpu[0-9]/ {sub("cpu", "", $1); print $1, $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat
}

# cpu_busy_ns BEFORE AFTER CPUS: busy nanoseconds of CPUS between two
# snapshots.
cpu_busy_ns() {
	local hz
	hz=$(getconf CLK_TCK)
	paste -d' ' <(echo "$1") <(echo "$2") |
		awk -v cpus="$(cpu_list_expand "$3" | tr '\n' ' ')" -v hz="$hz" '
		BEGIN { n = split(cpus, c, " "); for (i = 1; i <= n; i++) want[c[i]] = 1 }
		($1 in want) { s += $5 - $2 }
		END { printf "%.0f", s * 1e9 / hz }'
}

# cpu_busy_pct BEFORE AFTER CPUS: mean busy % of CPUS between snapshots.
cpu_busy_pct() {
	paste -d' ' <(echo "$1") <(echo "$2") |
		awk -v cpus="$(cpu_list_expand "$3" | tr '\n' ' ')" '
		BEGIN { n = split(cpus, c, " "); for (i = 1; i <= n; i++) want[c[i]] = 1 }
		($1 in want) { b += $5 - $2; t += $6 - $3 }
		END { printf "%.1f", (t > 0 ? 100 * b / t : 0) }'
}

# bound_by CLIENT_PCT SERVER_PCT BUSY_POLL: which side limited a closed-loop
# run. A server whose CPU was >= 90% busy has reached its peak whatever the
# client did: "server", or "both" when the client was >= 90% busy too (both
# count as server-bound for a headline). Else "client" when the client was
# >= 90% busy, else "server" for a busy-polling server (its CPU reads 100%
# at any load: by elimination, the client had headroom), else "neither".
# scripts/bench/summary.jq's bound_by applies the same rule to the medians.
bound_by() {
	awk -v c="$1" -v s="$2" -v bp="$3" 'BEGIN {
		if (bp != 1 && s >= 90) print (c >= 90 ? "both" : "server");
		else if (c >= 90) print "client";
		else if (bp == 1) print "server";
		else print "neither" }'
}
