#!/bin/bash
# conns.sh - the afxdp and dpdk engines at many concurrent connections on the
# veth testbed: `blitz bench` (unpipelined, one queue) at SMALL (100) and BIG
# (100,000) connections, RUNS times, interleaved (run 1 of every row, then
# run 2, ...) so that the two rows of a ratio are close in time, in each
# PLACEMENTS (default: veth's NAPI left alone; fair: scripts/placement.sh,
# every server cycle on the server's CPU); then MILLION (1,000,000)
# connections opened, held at once and each sent one request.
#
# Every row starts the engine afresh (`blitz serve IF --engine E --max-conns`)
# and stops it after, and reads from the engine's exit lines its own cost per
# request (time in polls that did work / requests: the server's cycles,
# whatever the generator and the rest of the machine did) and how many
# connections its kernel (epoll) path accepted, and counts the segments
# its core sent again (server_retransmits) beside the frames each veth
# dropped because its peer's ring was full (server_veth_drops: responses,
# client_veth_drops: requests and ACKs). The million row also reads
# the engine process's peak RSS (VmHWM) against its RSS before the first
# connection.
#
# Environment: ENGINES (afxdp dpdk), SMALL (100), BIG (100000), MILLION
# (1000000; "" for none), RUNS (3), DURATION (5 s a row; BIG rows at least
# that after their connections are open), PLACEMENTS ("default fair"; ""
# for the million alone), MILLION_PLACEMENT (default), WINDOW (blitz bench
# --window for the million, 512), MILLION_IDLE (serve --idle-timeout for
# the million, 600 s), BUILD, CONNS_OUT (bench-results), BENCH_PORT (8080),
# CONNS_PREFIX (bzc), BENCH_CLIENT_CPU (0), BENCH_SERVER_CPU (1),
# BENCH_ARGS (more `blitz bench` arguments for every row, e.g. "-R 30000"
# for a fixed rate, where the server's idle cost shows).
#
# Owns: its testbed (prefix CONNS_PREFIX), bench-results/conns-*.jsonl and
# the rows' server and generator logs in bench-results/conns-*-logs/.
# Never benchmarks an address outside the testbed's namespaces; tears the
# testbed down in a trap.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac
export BUILD
BLITZ=$BUILD/blitz
ENGINES=${ENGINES:-afxdp dpdk}
SMALL=${SMALL:-100}
BIG=${BIG:-100000}
MILLION=${MILLION-1000000}
RUNS=${RUNS:-3}
DURATION=${DURATION:-5}
PLACEMENTS=${PLACEMENTS-default fair}
MILLION_PLACEMENT=${MILLION_PLACEMENT:-default}
WINDOW=${WINDOW:-512}
MILLION_IDLE=${MILLION_IDLE:-600}
OUT=${CONNS_OUT:-$here/bench-results}
PORT=${BENCH_PORT:-8080}
PREFIX=${CONNS_PREFIX:-bzc}
CCPU=${BENCH_CLIENT_CPU:-0}
SCPU=${BENCH_SERVER_CPU:-1}
read -r -a bench_args <<<"${BENCH_ARGS:-}"
# Source ports of the generator: the client kernel makes no connections
# to the server here, so all of them.
PORTS_LO=1024 PORTS_HI=65535

die() {
	echo "conns: $*" >&2
	exit 1
}
note() { echo "conns: $*" >&2; }

[ "$(id -u)" -eq 0 ] || die "run as root (netns, XDP)"
for t in jq taskset nsenter curl prlimit; do
	command -v "$t" >/dev/null || die "$t missing: run scripts/install-deps.sh"
done
[ -x "$BLITZ" ] || die "$BLITZ missing: run make"
for v in "$SMALL" "$BIG" $MILLION "$RUNS" "$DURATION" "$WINDOW" "$MILLION_IDLE"; do
	if ! [[ $v =~ ^[0-9]+$ ]] || [ "$v" -lt 1 ]; then
		die "SMALL, BIG, MILLION, RUNS, DURATION and WINDOW are positive numbers, not '$v'"
	fi
done

# Source addresses for c connections: a connection takes two (address,
# port) slots of the generator's.
src_addrs_for() { echo $(((2 * $1 + PORTS_HI - PORTS_LO) / (PORTS_HI - PORTS_LO + 1))); }
max_conns=$BIG
[ -n "$MILLION" ] && [ "$MILLION" -gt "$max_conns" ] && max_conns=$MILLION
n_src=$(src_addrs_for "$max_conns")
[ "$n_src" -le 64 ] || die "$max_conns connections need $n_src source addresses, at most 64"
# The kernel path's open files (serve's epoll listener sizes itself to
# them), where the limit may be raised.
NOFILE=65536
prlimit --nofile="$NOFILE:$NOFILE" true 2>/dev/null || NOFILE=$(ulimit -Hn)

# shellcheck source=scripts/placement.sh
source "$here/scripts/placement.sh"
SRV_CPUS=$SCPU CLI_CPUS=$CCPU
# The harness itself (steady_cpu's polling of the generator's progress, the
# CPU reads) runs on the client's CPU: left to the scheduler it took about
# a tenth of the server's CPU (perf), cycles and cache the server then
# lacked in both rows of a ratio.
taskset -pc "$CCPU" $$ >/dev/null 2>&1 || note "cannot move the harness to CPU $CCPU"

# stop_server, wait_ready, wait_fast_path. The engine's exit lines (its
# cost) come after it has stopped its threads: give it 10 s.
STOP_WAIT_S=10
# shellcheck source=scripts/bench/lib_server.sh
source "$here/scripts/bench/lib_server.sh"
server_state_init conns

cleanup() {
	stop_server
	scripts/testbed.sh down "$PREFIX" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

eval "$(BLITZ_TB_CLI_ADDRS=$n_src scripts/testbed.sh up "$PREFIX")"
URL="http://$SRV_IP:$PORT/"
mkdir -p "$OUT"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
results=$OUT/conns-$stamp.jsonl
logs=$OUT/conns-$stamp-logs
: >"$results"
mkdir -p "$logs"

# Frames each veth dropped on transmit because its peer's 256-frame ring
# was full ("SERVER CLIENT": the server's responses, the client's
# requests and ACKs). Every one comes back as a retransmission.
veth_drops() {
	local q='.[0].stats64.tx.dropped // 0'
	echo "$(ip -n "$SRV_NS" -s -j link show "$SRV_IF" | jq "$q")" \
		"$(ip -n "$CLI_NS" -s -j link show "$CLI_IF" | jq "$q")"
}

# kB of FIELD (VmRSS, VmHWM) summed over the server's processes.
tree_mem_kb() {
	local sum=0 p v
	for p in $(pid_tree "$1"); do
		v=$(awk -v f="$2:" '$1 == f {print $2}' "/proc/$p/status" 2>/dev/null) || continue
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# CPU time (ns) the server's threads ran, from the scheduler's own
# account (/proc/*/task/*/schedstat), and in fair placement that of the
# server veth's NAPI threads (the server's receive path, on its CPU): the
# server's cycles whatever else preempted it. The engine's own figure is
# wall time in its busy polls, so on a machine shared with other work it
# also counts the time others ran on the server's CPU.
server_cpu_ns() {
	local sum=0 p f v pids pat
	pids=$(pid_tree "$1")
	if [ "$PLACEMENT" = fair ]; then
		pat="napi/$SRV_IF-"
		pids="$pids $(ps -eo pid=,comm= | awk -v p="${pat:0:15}" 'index($2, p) == 1 {print $1}')"
	fi
	for p in $pids; do
		for f in /proc/"$p"/task/*/schedstat; do
			read -r v _ <"$f" 2>/dev/null || continue
			sum=$((sum + v))
		done
	done
	echo "$sum"
}

# steady_cpu BENCH_PID ERR D: the server's CPU per response once every
# connection is open (the handshakes of the ramp left out: they are a cost
# per connection, not per request), from the generator's progress lines:
# the server's CPU read when the line of second 1 appears and when that of
# second D does, over the responses of seconds 2..D. Sets steady (ns, or
# empty when the lines did not come).
steady_cpu() {
	local pid=$1 err=$2 d=$3 a='' b='' i
	steady=''
	[ "$d" -ge 2 ] || return 0
	for i in $(seq $((20 * (d + 900)))); do
		if [ -z "$a" ] && grep -q '^\[  *1s\]' "$err" 2>/dev/null; then
			a=$(server_cpu_ns "$server_pid")
		elif [ -n "$a" ] && grep -q "^\[ *${d}s\]" "$err" 2>/dev/null; then
			b=$(server_cpu_ns "$server_pid")
			break
		fi
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	[ -n "$b" ] || return 0
	# Responses of seconds 2..D: their req/s over about a second each.
	local resp
	resp=$(awk -v d="$d" '/^\[ *[0-9]+s\]/ {
		l = $0; sub(/^\[ */, "", l); sec = l + 0; sub(/^[0-9]+s\] */, "", l)
		if (sec >= 2 && sec <= d && !(sec in seen)) { seen[sec] = 1; n += l + 0 }
	} END { printf "%d", n }' "$err")
	[ "${resp:-0}" -gt 0 ] && steady=$(((b - a) / resp))
	return 0
}

start_server() { # engine table log
	$SRV prlimit --nofile="$NOFILE:$NOFILE" taskset -c "$SCPU" "$BLITZ" serve \
		"$SRV_IF" --engine "$1" -p "$PORT" --max-conns "$2" "${serve_extra[@]}" >"$3" 2>&1 &
	server_pid=$!
	# Until the fast path is up (its line in the log), serve's kernel
	# listener answers, and a connection it accepts stays the kernel's.
	if ! wait_ready || ! wait_fast_path "$1" "$3"; then
		note "$1 did not answer, or its fast path was not up in 30 s: $(tail -n2 "$3" | tr '\n' ' ')"
		stop_server
		return 1
	fi
	# Attaching XDP may have made a new NAPI: place it again.
	[ "$PLACEMENT" = default ] || placement_quiet || note "fair placement failed"
}

# The engine's cost per request from its exit lines: its polls that did
# work (afxdp: "cost N ns per request", of which K in TX kicks; dpdk:
# "ns_per_request=N", the PMD's syscalls included), and of that the TCP
# core and classification alone (afxdp: N - K, the kicks run veth's
# transmit and, without threaded NAPI, the peer's receive; dpdk:
# "engine_ns_per_request"). And the kernel path's connections ("epoll: N
# connections").
engine_ns() {
	sed -n 's/.*afxdp: cost \([0-9]*\) ns per request.*/\1/p; s/.*[^_]ns_per_request=\([0-9]*\).*/\1/p' "$1" | tail -n1
}
core_ns() {
	sed -n 's/.*afxdp: cost \([0-9]*\) ns per request.* of which \([0-9]*\) ns in.*/\1 \2/p; s/.*engine_ns_per_request=\([0-9]*\).*/\1 0/p' "$1" |
		tail -n1 | awk '{print $1 - $2}'
}
engine_requests() {
	sed -n 's/^afxdp: \([0-9]*\) requests,.*/\1/p; s/.*requests=\([0-9]*\) busy_ns=.*/\1/p' "$1" | tail -n1
}
# Frames the engine received (afxdp: "N frames in"; dpdk: "rx_frames=N"):
# per request, what the row's cost is made of. At BIG every connection
# also brings its handshake and its reset, and a client that waits for
# its turn sends a delayed ACK of each response: about 2.5 frames in per
# request against 1 at SMALL, each costing the kernel's receive.
engine_frames_in() {
	sed -n 's/^afxdp: [0-9]* requests,.* \([0-9]*\) frames in$/\1/p; s/.*totals: rx_frames=\([0-9]*\) .*/\1/p' "$1" | tail -n1
}
# Segments the engine's TCP core sent again (afxdp: "N retransmits";
# dpdk: "tcp.retransmits=N" in its totals line, which leaves out zeros).
engine_rtx() {
	sed -n 's/^afxdp: [0-9]* requests,.* \([0-9]*\) retransmits,.*/\1/p
		/^totals: /{s/.* tcp\.retransmits=\([0-9]*\).*/\1/p;t;s/.*/0/p}' "$1" | tail -n1
}
epoll_conns() {
	sed -n 's/^epoll: \([0-9]*\) connections.*/\1/p' "$1" | tail -n1
}

# row ENGINE CONNS PLACEMENT RUN [extra bench args...]: one measurement.
row() {
	local e=$1 c=$2 pl=$3 run=$4 log out d=$DURATION rss0 hwm=0 ns cns ep json
	local cpu0 cpu1 rq cpu steady fin srtx sd0 cd0 sd1 cd1
	shift 4
	log=$tmp/$e-$c-$pl-$run.log out=$tmp/$e-$c-$pl-$run.json
	start_server "$e" $((c + 4096)) "$log" || {
		jq -nc --arg e "$e" --argjson c "$c" --arg pl "$pl" --argjson run "$run" \
			'{engine: $e, conns: $c, placement: $pl, run: $run, failed: "server did not start"}' >>"$results"
		return 0
	}
	rss0=$(tree_mem_kb "$server_pid" VmRSS)
	cpu0=$(server_cpu_ns "$server_pid")
	read -r sd0 cd0 <<<"$(veth_drops)"
	$CLI taskset -c "$CCPU" timeout 900 "$BLITZ" bench "$SRV_IP:$PORT" -i "$CLI_IF" \
		-c "$c" -d "$d" --src-addrs "$(src_addrs_for "$c")" --ports "$PORTS_LO-$PORTS_HI" \
		"${bench_args[@]}" "$@" --json >"$out" 2>"$out.err" &
	steady_cpu "$!" "$out.err" "$d"
	wait "$!" || true
	hwm=$(tree_mem_kb "$server_pid" VmHWM)
	cpu1=$(server_cpu_ns "$server_pid")
	read -r sd1 cd1 <<<"$(veth_drops)"
	stop_server
	# The engine's exit lines (its counters: why a connection was reset)
	# and the generator's progress, kept beside the results.
	cp "$log" "$logs/$e-$c-$pl-$run.server.log" 2>/dev/null || true
	cp "$out.err" "$logs/$e-$c-$pl-$run.bench.log" 2>/dev/null || true
	rq=$(engine_requests "$log")
	cpu=''
	[ "${rq:-0}" -gt 0 ] && cpu=$(((cpu1 - cpu0) / rq))
	ns=$(engine_ns "$log")
	cns=$(core_ns "$log")
	ep=$(epoll_conns "$log")
	fin=$(engine_frames_in "$log")
	srtx=$(engine_rtx "$log")
	json=$(jq -c '{rps, requests, errors, connects, peak_established, conns_answered,
		ramp_s, syn_retransmits, data_retransmits, rst_rx, timeouts, tx_no_frame,
		client_busy_pct, xsk_mode}' "$out" 2>/dev/null) || json='{"failed":"no result"}'
	echo "$json" | jq -c --arg e "$e" --argjson c "$c" --arg pl "$pl" --argjson run "$run" \
		--arg ns "${ns:-}" --arg cns "${cns:-}" --arg ep "${ep:-}" --argjson rss0 "$rss0" --argjson hwm "$hwm" \
		--arg srtx "${srtx:-}" --argjson sdrop $((sd1 - sd0)) --argjson cdrop $((cd1 - cd0)) \
		--arg cpu "${cpu:-}" --arg steady "${steady:-}" --arg rq "${rq:-}" --arg fin "${fin:-}" \
		'{engine: $e, conns: $c, placement: $pl, run: $run} + . +
		 {engine_ns: ($ns | tonumber? // null), core_ns: ($cns | tonumber? // null),
		  cpu_ns: ($cpu | tonumber? // null), steady_cpu_ns: ($steady | tonumber? // null), epoll_conns: ($ep | tonumber? // null),
		  engine_requests: ($rq | tonumber? // null), frames_in: ($fin | tonumber? // null),
		  rss_before_kb: $rss0, rss_peak_kb: $hwm,
		  server_retransmits: ($srtx | tonumber? // null), server_veth_drops: $sdrop, client_veth_drops: $cdrop}' | tee -a "$results" >&2
}

serve_extra=()
# Fair placement threads veth's NAPI and default does not undo it (a
# default row after a fair one would not be the default placement): the
# default rows run first, whatever the order in PLACEMENTS.
order=''
for pl in $PLACEMENTS; do
	if [ "$pl" = default ]; then order="default $order"; else order="$order $pl"; fi
done
for pl in $order; do
	PLACEMENT=$pl
	case $pl in default | fair) ;; *) die "PLACEMENTS: default or fair, not '$pl'" ;; esac
	placement_apply >&2 || true
	for run in $(seq "$RUNS"); do
		for e in $ENGINES; do
			row "$e" "$SMALL" "$pl" "$run"
			row "$e" "$BIG" "$pl" "$run"
		done
	done
done
if [ -n "$MILLION" ]; then
	PLACEMENT=$MILLION_PLACEMENT
	placement_apply >&2 || true
	# Opening a million takes a minute or more on a loaded machine: the
	# first connections must not reach the 60 s idle timeout before
	# their turn comes.
	serve_extra=(--idle-timeout "$MILLION_IDLE")
	for e in $ENGINES; do
		# Each connection sends one request, after all of them are
		# open: -n MILLION, and time enough for the ramp and the answers.
		row "$e" "$MILLION" "$PLACEMENT" 1 -n "$MILLION" -d 600 --window "$WINDOW"
	done
fi

# Medians and spread ((max - min) / median) per row; the BIG/SMALL ratio of
# the engine's cost, per run, then its median.
jq -s -r --argjson small "$SMALL" --argjson big "$BIG" '
	def med: sort | if length == 0 then null else .[length / 2 | floor] end;
	# A figure with no ratio in any run (say a derived one that came out
	# negative) prints n/a instead of stopping the summary.
	def r2: if . == null then "n/a" else (. * 100 | round / 100) end;
	def spread: if length < 2 or med == 0 then 0 else ((max - min) / med * 100 | round) end;
	(map(select(.failed == null)) | group_by([.engine, .placement, .conns])[] |
	  "\(.[0].engine) \(.[0].placement) c=\(.[0].conns): \(map(.rps) | med | round) req/s (spread \(map(.rps) | spread)%), engine \(map(.engine_ns) | med) ns/request (spread \(map(.engine_ns) | spread)%), cpu \(map(.cpu_ns) | med) ns (spread \(map(.cpu_ns) | spread)%), steady cpu \(map(.steady_cpu_ns) | med) ns (spread \(map(.steady_cpu_ns) | spread)%), core \(map(.core_ns) | med) ns (spread \(map(.core_ns) | spread)%), errors \(map(.errors) | add), held \(map(.peak_established) | min), answered \(map(.conns_answered) | min), kernel path \(map(.epoll_conns) | add) connections, peak RSS \(map(.rss_peak_kb) | max) kB (\(map(.rss_before_kb) | min) kB before)"),
	def ratio($g; f): [($g | map(select(.conns == $small)))[] as $s |
	   ($g | map(select(.conns == $big and .run == $s.run)))[] |
	   select((. | f) != null and ($s | f) != null and ($s | f) > 0) | (. | f) / ($s | f)];
	def fpr: if .frames_in != null and (.engine_requests // 0) > 0 then .frames_in / .engine_requests else null end;
	def cpf: if .cpu_ns != null and fpr != null and fpr > 0 then .cpu_ns / fpr else null end;
	(group_by([.engine, .placement])[] | . as $g | ratio($g; .engine_ns) as $r | ratio($g; .core_ns) as $k |
	  ratio($g; .cpu_ns) as $u | ratio($g; .steady_cpu_ns) as $v | ratio($g; fpr) as $f | ratio($g; cpf) as $p |
	  select($r | length > 0) |
	  "\($g[0].engine) \($g[0].placement): cost at \($big) / at \($small) = \($r | med | r2) (runs: \($r | map(. * 100 | round / 100))), core alone \($k | med | r2) (runs: \($k | map(. * 100 | round / 100))), server cpu \($u | med | r2) (runs: \($u | map(. * 100 | round / 100))), steady server cpu \($v | med | r2) (runs: \($v | map(. * 100 | round / 100))); server cpu = frames in per request \($f | med | r2) (runs: \($f | map(. * 100 | round / 100))) x server cpu per frame in \($p | med | r2) (runs: \($p | map(. * 100 | round / 100)))")
' "$results"
echo "conns: rows in $results" >&2
