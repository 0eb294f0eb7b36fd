#!/bin/bash
# bench.sh - `make bench`: every blitz engine that runs here, nginx and h2o,
# side by side in one run on the veth testbed, each measured with wrk, with
# `blitz bench` (closed loop and at fixed fractions of its peak) and in the
# TechEmpower plaintext shape (16 pipelined requests per connection, with
# h2load and `blitz bench -P 16`), RUNS times per configuration, and with
# the other NAPI policy (blitz-bench-other-napi: placement.sh says why the
# default is FIFO). The runs are interleaved (run 1 of every engine, then
# run 2, ...; each engine started afresh, warmed up for WARMUP s, default 0:
# its first rows, wrk's, are no peak candidates and warm it), so
# the two rows of a ratio are close in time on a machine whose load drifts.
#
# Owns: the benchmark table, bench-results/*.json, *.md and the PNG plot.
# Touches only its own testbed (prefix $BENCH_PREFIX) and tears it down in
# a trap; never benchmarks an address outside the testbed's namespaces.
#
# Placement (scripts/placement.sh): fair by default, both veths' NAPI
# threaded and pinned to their side's CPU, the server on BENCH_SERVER_CPU,
# the client on BENCH_CLIENT_CPU; PLACEMENT=default keeps the old one.
#
# Every row: RPS; the server CPUs' busy time over the run (/proc/stat, so
# softirqs and NAPI threads count) / requests answered = cost per request
# (ns); the client CPU's busy %; "bound by" (placement.sh's bound_by:
# server when the server CPU was >= 90% busy - both when the client was
# too, which counts as server-bound: a saturated server is at its peak
# whatever the client did -, else client when the client was >= 90% busy -
# for blitz bench its own busy loop time, since it spins -, else neither).
# dpdk busy-polls (its CPU reads 100% at any load): its bound is taken by
# elimination (the client had headroom) and its cost also from its own work
# counters (polls that did work, printed by the engine at exit: work_ns).
# Ratios to nginx in RPS and in cost per request, per run, then the median
# and the spread ((max - min) / median) over the runs.
#
# Many connections: BIG_CONNS (default 100000; "" for none) adds a `blitz
# bench -c BIG_CONNS` row per engine, one run (at least 5 s: opening them takes some of
# it; "established" says how many were open at once). One source address has ~20000 ports
# here (40000-59999), so the client gets enough addresses (testbed.sh's
# BLITZ_TB_CLI_ADDRS, `blitz bench --src-addrs`: 2 x connections / 20000);
# the servers get the open files they need (prlimit, in the server's
# namespace only), nginx and h2o as many worker connections, epoll
# --max-conns. The generator keeps at most 192 batches outstanding at
# once (veth's RX ring holds 256 frames): the other connections take turns.
#
# Environment: DURATION (s per run, default 3), RUNS (3), CONNS (wrk, default
# "10 100"), BB_CONNS (blitz bench and the pipelined shape, 100), PIPELINE
# (16), LAT_FRACTIONS (open-loop runs at these fractions of each server's
# blitz-bench peak, default "0.5 0.8 0.95"; "" for none), ENGINES (default
# "xdp epoll afxdp dpdk nginx h2o"), CLIENTS (default "wrk blitz-bench h2load
# blitz-bench-pipe blitz-bench-other-napi"), WARMUP (0 s), BUILD, BENCH_OUT (bench-results), BENCH_PORT (8080),
# BENCH_PREFIX (bzb), BENCH_CLIENT_CPU (0), BENCH_SERVER_CPU (1), PLACEMENT,
# NAPI_RT_PRIO (1: SCHED_FIFO NAPI threads, 0: not; SRV_NAPI_RT_PRIO the
# server side alone, default NAPI_RT_PRIO), BENCH_RT (0; 1: shield the
# benchmark from other load, see below), HEADROOM (1.5) and
# HEADROOM_ENGINE (afxdp) for the generator-headroom row.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac
DURATION=${DURATION:-3}
RUNS=${RUNS:-3}
CONNS=${CONNS:-10 100}
BB_CONNS=${BB_CONNS:-100}
BIG_CONNS=${BIG_CONNS-100000}
PIPELINE=${PIPELINE:-16}
WARMUP=${WARMUP:-0}
LAT_FRACTIONS=${LAT_FRACTIONS-0.5 0.8 0.95}
ENGINES=${ENGINES:-xdp epoll afxdp dpdk nginx h2o}
CLIENTS=${CLIENTS:-wrk blitz-bench h2load blitz-bench-pipe blitz-bench-other-napi}
OUT=${BENCH_OUT:-$here/bench-results}
PORT=${BENCH_PORT:-8080}
PREFIX=${BENCH_PREFIX:-bzb}
CCPU=${BENCH_CLIENT_CPU:-0}
SCPU=${BENCH_SERVER_CPU:-1}
BLITZ=$BUILD/blitz
BENCH_DIR=$here/scripts/bench
TICK=$(getconf CLK_TCK)
# shellcheck source=scripts/placement.sh
source "$here/scripts/placement.sh"
SRV_CPUS=$SCPU CLI_CPUS=$CCPU
# The other NAPI policy, for the blitz-bench-other-napi rows.
ALT_NAPI_PRIO=0
[ "$NAPI_RT_PRIO" != 0 ] || ALT_NAPI_PRIO=1
# BENCH_RT=1: on a shared machine, the benchmark's processes (the servers
# that sleep: epoll, nginx, h2o; and the clients) SCHED_FIFO 1 and the NAPI
# threads FIFO 2 (above them, as they were above the ordinary processes),
# so other load takes only what the kernel keeps for it
# (sched_rt_runtime_us: 5%). The busy pollers (afxdp, dpdk) stay ordinary:
# at FIFO one starves its own helper threads (dpdk never came up). It starves everything
# else on both CPUs while it runs; the other-NAPI rows are not measured
# (an ordinary NAPI thread would starve behind a FIFO generator).
BENCH_RT=${BENCH_RT:-0}
RT=()
case $BENCH_RT in
0) ;;
1)
	if [ "$NAPI_RT_PRIO" = 0 ] || [ "$SRV_NAPI_RT_PRIO" = 0 ]; then
		echo "bench: BENCH_RT=1 needs FIFO NAPI threads (NAPI_RT_PRIO and SRV_NAPI_RT_PRIO not 0): a FIFO process would starve them" >&2
		exit 1
	fi
	[ "$NAPI_RT_PRIO" -ge 2 ] || NAPI_RT_PRIO=2
	[ "$SRV_NAPI_RT_PRIO" -ge 2 ] || SRV_NAPI_RT_PRIO=2
	RT=(chrt -f 1)
	CLIENTS=$(echo "$CLIENTS" | tr ' ' '\n' | grep -vx blitz-bench-other-napi | tr '\n' ' ')
	;;
*)
	echo "bench: BENCH_RT must be 0 or 1, not '$BENCH_RT'" >&2
	exit 1
	;;
esac

# shellcheck source=scripts/lib.sh
source "$here/scripts/lib.sh"
note() { echo "bench: $*" >&2; }

require_root
for t in wrk jq taskset nsenter curl ethtool; do
	command -v "$t" >/dev/null || die "$t missing: run scripts/install-deps.sh"
done
if ! [[ $DURATION =~ ^[0-9]+$ ]] || [ "$DURATION" -lt 1 ] || [ "$DURATION" -gt 600 ]; then
	die "DURATION must be 1..600 seconds, not '$DURATION'"
fi
if ! [[ $WARMUP =~ ^[0-9]+$ ]] || [ "$WARMUP" -gt 60 ]; then
	die "WARMUP must be 0..60 seconds, not '$WARMUP'"
fi
if ! [[ $RUNS =~ ^[0-9]+$ ]] || [ "$RUNS" -lt 1 ] || [ "$RUNS" -gt 20 ]; then
	die "RUNS must be 1..20, not '$RUNS'"
fi
for c in $CONNS; do
	if ! [[ $c =~ ^[0-9]+$ ]] || [ "$c" -lt 1 ] || [ "$c" -gt 30000 ]; then
		die "CONNS must be numbers 1..30000 (wrk), not '$c'"
	fi
done
for c in $BB_CONNS $BIG_CONNS; do
	if ! [[ $c =~ ^[0-9]+$ ]] || [ "$c" -lt 1 ] || [ "$c" -gt 600000 ]; then
		die "BB_CONNS and BIG_CONNS must be numbers 1..600000, not '$c'"
	fi
done
[ "$(echo "$BB_CONNS" | wc -w)" -eq 1 ] || die "BB_CONNS is one number, not '$BB_CONNS'"
# Source addresses for c connections: each has the 20000 ports of blitz
# bench's default range, and a connection takes two slots.
src_addrs_for() { echo $(((2 * $1 + 19999) / 20000)); }
max_conns=$BB_CONNS
[ -n "$BIG_CONNS" ] && [ "$BIG_CONNS" -gt "$max_conns" ] && max_conns=$BIG_CONNS
n_src=$(src_addrs_for "$max_conns")
[ "$n_src" -le 64 ] || die "$max_conns connections need $n_src source addresses, at most 64"
# Open files and worker connections of the servers: every connection and
# some to spare.
NOFILE=$((max_conns + 4096))
[ "$NOFILE" -ge 65536 ] || NOFILE=65536
if ! prlimit --nofile="$NOFILE:$NOFILE" true 2>/dev/null; then
	hard=$(ulimit -Hn)
	note "cannot raise the open files limit to $NOFILE (no CAP_SYS_RESOURCE?): the kernel servers get $hard, fewer connections than $max_conns"
	NOFILE=$hard
fi
for c in $CLIENTS; do
	case $c in wrk | blitz-bench | h2load | blitz-bench-pipe | blitz-bench-other-napi) ;;
	*) die "CLIENTS: unknown client '$c' (wrk, blitz-bench, h2load, blitz-bench-pipe, blitz-bench-other-napi)" ;;
	esac
done

bpf_stats_old=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)

# shellcheck source=scripts/bench/lib_server.sh
source "$here/scripts/bench/lib_server.sh"
server_state_init bench

cleanup() {
	stop_server
	sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_old" 2>/dev/null || true
	scripts/testbed.sh down "$PREFIX" || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -f "$BUILD/xdp_pass.bpf.o" ] || die "$BUILD/xdp_pass.bpf.o missing: run make"
eval "$(BLITZ_TB_CLI_ADDRS=$n_src scripts/testbed.sh up "$PREFIX")"
URL="http://$SRV_IP:$PORT/"
[ "$(nproc)" -ge 2 ] || note "one CPU: server and client share it, no placement is fair"
placement_apply || true

# --- measuring a server ---------------------------------------------------


# utime+stime in ticks summed over the tree (threads are included in a
# process's /proc/PID/stat).
tree_ticks() {
	local sum=0 p f
	for p in $(pid_tree "$1"); do
		f=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
		# shellcheck disable=SC2086
		set -- $f
		sum=$((sum + ${12} + ${13}))
	done
	echo "$sum"
}

tree_rss_kb() {
	local sum=0 p v
	for p in $(pid_tree "$1"); do
		v=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# The ids of the BPF programs attached to the server's interface (XDP and
# TC), as the srv namespace sees them.
srv_prog_ids() {
	$SRV bpftool net show dev "$SRV_IF" -j 2>/dev/null |
		jq -r '.[0] | ((.xdp // []) + (.tc // [])) | .[] | (.id // .prog_id)' 2>/dev/null || true
}

bpf_runtime_ns() {
	local sum=0 id v
	for id in $(srv_prog_ids); do
		v=$(bpftool prog show id "$id" -j 2>/dev/null | jq -r '.run_time_ns // 0')
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# Bytes of the maps those programs use (their memlock accounting), in kB.
bpf_maps_kb() {
	local sum=0 id m v
	for id in $(srv_prog_ids); do
		for m in $(bpftool prog show id "$id" -j 2>/dev/null | jq -r '.map_ids // [] | .[]'); do
			v=$(bpftool map show id "$m" -j 2>/dev/null | jq -r '.bytes_memlock // 0')
			sum=$((sum + ${v:-0}))
		done
	done
	echo $((sum / 1024))
}

# --- starting each engine ---------------------------------------------------

# The line of a server's log that most likely says why it failed.
log_reason() {
	local l
	l=$(grep -iE 'fail|error|cannot|invalid|refused|not available|no such' "$1" | tail -n1 || true)
	[ -n "$l" ] || l=$(grep 'blitz:' "$1" | tail -n1 || true)
	[ -n "$l" ] || l=$(grep -v '^[[:space:]]*$' "$1" | tail -n1)
	echo "$l" | tr -s ' \t' ' ' | cut -c1-160
}

blitz_has() { # verb: the CLI exists and knows the verb
	[ -x "$BLITZ" ] && "$BLITZ" "$1" -h >/dev/null 2>&1
}

start_engine() { # engine; sets server_pid / xdp_loaded; 1 with a reason on fd 3
	local e=$1 log=$tmp/$1.log
	case $e in
	xdp)
		blitz_has load || {
			echo "no $BLITZ with a 'load' verb" >&3
			return 1
		}
		if ! $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$log" 2>&1; then
			log_reason "$log" >&3
			return 1
		fi
		xdp_loaded=1
		;;
	epoll | afxdp | dpdk)
		blitz_has serve || {
			echo "no $BLITZ with a 'serve' verb" >&3
			return 1
		}
		if [ "$e" = epoll ]; then
			$SRV prlimit --nofile="$NOFILE:$NOFILE" taskset -c "$SCPU" "${RT[@]}" "$BLITZ" serve \
				--engine epoll -t 1 -p "$PORT" --max-conns "$NOFILE" >"$log" 2>&1 &
		else
			# Not FIFO under BENCH_RT: a busy poller at FIFO starves its
			# own helper threads (dpdk never came up).
			# --max-conns sizes their connection tables (and the
			# kernel path's, which fits it to its open files) for
			# the many-connection row: not NOFILE, which may have
			# fallen back to what the hard limit allows.
			$SRV prlimit --nofile="$NOFILE:$NOFILE" taskset -c "$SCPU" "$BLITZ" serve \
				"$SRV_IF" --engine "$e" -p "$PORT" --max-conns "$((max_conns + 4096))" >"$log" 2>&1 &
		fi
		server_pid=$!
		;;
	nginx)
		command -v nginx >/dev/null || {
			echo "nginx not installed" >&3
			return 1
		}
		sed "s|@TMP@|$tmp|g;s|@IP@|$SRV_IP|g;s|@PORT@|$PORT|g;s|@CONNS@|$NOFILE|g" \
			"$BENCH_DIR/nginx.conf.in" >"$tmp/nginx.conf"
		$SRV prlimit --nofile="$NOFILE:$NOFILE" taskset -c "$SCPU" "${RT[@]}" nginx -c "$tmp/nginx.conf" \
			>"$log" 2>&1 &
		server_pid=$!
		;;
	h2o)
		command -v h2o >/dev/null || {
			echo "h2o not installed" >&3
			return 1
		}
		mkdir -p "$tmp/www"
		printf 'Hello World!' >"$tmp/www/index.html"
		chmod -R a+rX "$tmp/www"
		sed "s|@TMP@|$tmp|g;s|@IP@|$SRV_IP|g;s|@PORT@|$PORT|g;s|@CONNS@|$NOFILE|g" \
			"$BENCH_DIR/h2o.conf.in" >"$tmp/h2o.conf"
		$SRV prlimit --nofile="$NOFILE:$NOFILE" taskset -c "$SCPU" "${RT[@]}" h2o -c "$tmp/h2o.conf" \
			>"$log" 2>&1 &
		server_pid=$!
		;;
	*)
		echo "unknown engine" >&3
		return 1
		;;
	esac
	# Answered once is not enough: an engine that fails while setting up
	# its fast path may exit right after its fallback listener answered,
	# and serve's kernel (epoll) listener answers before the fast path is
	# up (loading the XDP program takes seconds on a loaded machine): the
	# connections opened until then stay the kernel's for their life.
	if wait_ready && wait_fast_path "$e" "$log" && sleep 0.5 &&
		{ [ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null; }; then
		return 0
	else
		{
			echo -n "did not answer GET / with Hello World! within 5 s, its fast path was not up within 30 s, or it exited"
			[ -s "$log" ] && echo -n ": $(log_reason "$log")"
			echo
		} >&3
		return 1
	fi
}

# --- one measurement -----------------------------------------------------------

results=$tmp/results.jsonl
: >"$results"
skipped=$tmp/skipped.jsonl
: >"$skipped"
engine_notes=$tmp/engines.jsonl
: >"$engine_notes"

# The client's result as one JSON object with: requests rps errors
# retransmits lat_{mean,p50,p90,p95,p99,p999,max}_us self_busy_pct (blitz
# bench's own busy loop time, else null).
client_wrk() { # conns out
	$CLI taskset -c "$CCPU" "${RT[@]}" timeout $((DURATION + 30)) wrk -t1 -c"$1" -d"${DURATION}s" \
		--timeout 2s -s "$BENCH_DIR/wrk-report.lua" "$URL" >"$2.txt" 2>&1 || true
	sed -n 's/^BENCHJSON //p' "$2.txt" | tail -n1 |
		jq -c '{requests, rps: (.requests / (.duration_us / 1e6)),
		  errors: (.err_connect + .err_read + .err_write + .err_status + .err_timeout),
		  retransmits: null, lat_mean_us, lat_p50_us, lat_p90_us, lat_p95_us,
		  lat_p99_us, lat_p999_us, lat_max_us, self_busy_pct: null}' 2>/dev/null
}

client_h2load() { # conns pipeline out
	$CLI taskset -c "$CCPU" "${RT[@]}" timeout $((DURATION + 30)) h2load --h1 -t1 -c"$1" -m"$2" \
		-D "$DURATION" "$URL" >"$3.txt" 2>&1 || true
	# "finished in 3.00s, 123.45 req/s, ..." / "requests: T total, S started,
	# D done, OK succeeded, F failed, E errored, TO timeout" / "time for
	# request: min max mean sd" (units us, ms or s).
	awk '
	function us(v) { if (v ~ /ms$/) return v * 1000; if (v ~ /us$/) return v + 0; if (v ~ /s$/) return v * 1e6; return v + 0 }
	/^finished in/ { sub(/s,$/, "", $3); dur = $3 + 0 }
	/^requests:/ { done = $8; ok = $8; fail = $10 + 0; err = $12 + 0; to = $14 + 0; ok = $8 }
	/^requests:/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^succeeded/) ok = $i }
	/^time for request:/ { mx = us($5); mean = us($6) }
	END { if (dur > 0) printf "{\"requests\":%d,\"rps\":%.1f,\"errors\":%d,\"retransmits\":null,\"lat_mean_us\":%.1f,\"lat_p50_us\":null,\"lat_p90_us\":null,\"lat_p95_us\":null,\"lat_p99_us\":null,\"lat_p999_us\":null,\"lat_max_us\":%.1f,\"self_busy_pct\":null}\n", ok, ok / dur, fail + err + to, mean, mx }' "$3.txt"
}

client_blitz() { # conns pipeline rate out
	local extra=() d=$DURATION
	[ "$3" = 0 ] || extra=(-R "$3")
	extra+=(--src-addrs "$(src_addrs_for "$1")")
	# Opening 100,000 connections takes a second or two of the run.
	[ "$1" -ge 20000 ] && [ "$d" -lt 5 ] && d=5
	$CLI taskset -c "$CCPU" "${RT[@]}" timeout $((d + 30)) "$BLITZ" bench "$SRV_IP:$PORT" \
		-i "$CLI_IF" -c "$1" -P "$2" -d "$d" "${extra[@]}" --json >"$4.json" 2>"$4.err" || true
	jq -c '{requests, rps, errors, retransmits, lat_mean_us, lat_p50_us, lat_p90_us,
	  lat_p95_us, lat_p99_us, lat_p999_us, lat_p9999_us, lat_max_us,
	  self_busy_pct: .client_busy_pct, client_limited, client_limit_why,
	  syn_retransmits, data_retransmits, rst_rx, timeouts, peak_established,
	  src_addrs}' "$4.json" 2>/dev/null
}

# measure ENGINE CLIENT CONNS PIPELINE RATE RUN: one run, one row.
measure() {
	local e=$1 cl=$2 c=$3 pipe=$4 rate=$5 run=$6 j0 j1 t0 t1 k0=0 k1=0 b0=0 b1=0 \
		out line cpu rss maps rss_kind bp=0
	out=$tmp/$e-$cl-$c-$pipe-$rate-$run
	[ "$e" = dpdk ] && bp=1
	j0=$(cpu_snapshot)
	t0=$(date +%s%N)
	if [ "$e" = xdp ]; then b0=$(bpf_runtime_ns); else k0=$(tree_ticks "$server_pid"); fi
	case $cl in
	wrk) line=$(client_wrk "$c" "$out") ;;
	h2load) line=$(client_h2load "$c" "$pipe" "$out") ;;
	*) line=$(client_blitz "$c" "$pipe" "$rate" "$out") ;;
	esac
	t1=$(date +%s%N)
	j1=$(cpu_snapshot)
	if [ "$e" = xdp ]; then
		b1=$(bpf_runtime_ns)
		cpu=$(awk -v d=$((b1 - b0)) -v w=$((t1 - t0)) 'BEGIN {printf "%.1f", 100 * d / w}')
		rss=0
	else
		k1=$(tree_ticks "$server_pid")
		cpu=$(awk -v d=$((k1 - k0)) -v w=$((t1 - t0)) -v hz="$TICK" \
			'BEGIN {printf "%.1f", 100 * d / hz / (w / 1e9)}')
		rss=$(tree_rss_kb "$server_pid")
	fi
	# The server's memory: its processes' RSS plus the BPF maps of the
	# programs on its interface (all of the xdp engine's; afxdp's redirect).
	maps=$(bpf_maps_kb)
	rss_kind=rss_plus_bpf_maps
	if [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null; then
		note "$e $cl c=$c: the server exited: $(log_reason "$tmp/$e.log")"
		line=
	fi
	if [ -z "$line" ]; then
		note "$e $cl c=$c: no result: $(tail -n1 "$out".* 2>/dev/null | tail -n1)"
		line='{"requests":0,"rps":0,"errors":0,"failed":true}'
	fi
	local ccpu scpu sns lim bb snp cnp
	# The NAPI policies the row ran with, as the kernel reports them.
	snp=$(napi_policy "$SRV_IF")
	cnp=$(napi_policy "$CLI_IF")
	ccpu=$(cpu_busy_pct "$j0" "$j1" "$CCPU")
	scpu=$(cpu_busy_pct "$j0" "$j1" "$SCPU")
	sns=$(cpu_busy_ns "$j0" "$j1" "$SCPU")
	# The client's limit: blitz bench's own busy loop time (it spins), else
	# the client CPU's busy time.
	lim=$(echo "$line" | jq -r '.self_busy_pct // empty' 2>/dev/null)
	[ -n "$lim" ] || lim=$ccpu
	bb=open-loop
	[ "$rate" != 0 ] || bb=$(bound_by "$lim" "$scpu" "$bp")
	echo "$line" | jq -c --arg e "$e" --arg cl "$cl" --argjson c "$c" --argjson p "$pipe" \
		--argjson rate "$rate" --argjson run "$run" --argjson cpu "$cpu" \
		--argjson ccpu "$ccpu" --argjson scpu "$scpu" --argjson sns "$sns" --argjson bp "$bp" \
		--argjson lim "$lim" --arg bb "$bb" --arg snp "$snp" --arg cnp "$cnp" \
		--argjson rss "$rss" --argjson maps "$maps" --arg rk "$rss_kind" --arg pl "$PLACEMENT" \
		'. as $x | $x + {engine: $e, client: $cl, conns: $c, pipeline: $p, rate: $rate, run: $run,
		 mode: (if $rate > 0 then "open" else "closed" end), placement: $pl,
		 rps: ($x.rps | floor),
		 cost_ns: (if $x.requests > 0 then ($sns / $x.requests | round) else null end),
		 server_cpu_busy_pct: $scpu, client_cpu_busy_pct: $ccpu, client_limit_pct: $lim,
		 busy_poll: ($bp == 1),
		 bound_by: $bb, srv_napi_policy: $snp, cli_napi_policy: $cnp,
		 server_cpu_pct: $cpu, server_mem_kb: ($rss + $maps), server_rss_kb: $rss,
		 server_bpf_maps_kb: $maps, server_mem_kind: $rk}' >>"$results"
	tail -n1 "$results" | jq -r '"  \(.engine) \(.client) c=\(.conns)\(if .pipeline > 1 then " P=\(.pipeline)" else "" end)\(if .rate > 0 then " R=\(.rate)" else "" end) run \(.run): \(.rps) req/s, \(.cost_ns // "-") ns/req, p99 \(.lat_p99_us // "-")us, CPU'"$CCPU"'/'"$SCPU"' busy \(.client_cpu_busy_pct)/\(.server_cpu_busy_pct)%, bound by \(.bound_by), errors \(.errors)"'
}

# The engine's own cost per request from its exit log, for the busy
# pollers (afxdp: "cost N ns per request"; dpdk: "ns_per_request=N").
engine_work_ns() {
	sed -n 's/.*afxdp: cost \([0-9]*\) ns per request.*/\1/p; s/.*[^_]ns_per_request=\([0-9]*\).*/\1/p' "$1" 2>/dev/null | tail -n1
}

# --- the run -------------------------------------------------------------------

sysctl -qw kernel.bpf_stats_enabled=1 || note "cannot enable bpf_stats: xdp CPU will read 0"
load_before=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load_before" 'BEGIN {exit !(l > 0.5)}'; then
	note "load average $load_before before the run: something else uses the CPUs, figures will be noisy"
fi
has_client() { [[ " $CLIENTS " == *" $1 "* ]]; }
if ! blitz_has bench; then
	note "no \`blitz bench\` in $BLITZ: wrk and h2load only"
	CLIENTS=$(echo "$CLIENTS" | tr ' ' '\n' | grep -v '^blitz-bench' | tr '\n' ' ')
	LAT_FRACTIONS=
fi
if has_client h2load && ! command -v h2load >/dev/null; then
	note "h2load missing (nghttp2-client): no h2load rows"
	CLIENTS=$(echo "$CLIENTS" | tr ' ' '\n' | grep -vx h2load | tr '\n' ' ')
fi
n_eng=$(echo "$ENGINES" | wc -w)
per_run=0
has_client wrk && per_run=$((per_run + $(echo "$CONNS" | wc -w)))
for c in blitz-bench h2load blitz-bench-pipe blitz-bench-other-napi; do
	has_client "$c" && per_run=$((per_run + 1))
done
# Phase two, once per engine: the open-loop rows, the many-connection row
# (about 10 s with its ramp) and the headroom row.
n_once=$(echo "$LAT_FRACTIONS" | wc -w)
[ -n "$BIG_CONNS" ] && has_client blitz-bench && n_once=$((n_once + 2))
echo "bench: $n_eng engines x ($RUNS runs x $per_run configurations + $n_once once)" \
	"x ${DURATION}s on $SRV_IF (client on CPU $CCPU, server on CPU $SCPU, placement $PLACEMENT), runs interleaved, at most" \
	"$((n_eng * ((RUNS * per_run + n_once) * (DURATION + 3) + (RUNS + 1) * (WARMUP + 4))))s"
alive() { [ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null; }
# start_placed E: start engine E, place its NAPI again (attaching XDP may
# recreate one) and warm it up (WARMUP s of blitz bench, not measured:
# the first seconds after a start run on cold caches); 1 when it did not
# start (its reason in $tmp/reason).
start_placed() {
	start_engine "$1" 3>"$tmp/reason" || return 1
	placement_quiet || true
	if [ "$WARMUP" -gt 0 ] && blitz_has bench; then
		$CLI taskset -c "$CCPU" "${RT[@]}" timeout $((WARMUP + 20)) "$BLITZ" bench "$SRV_IP:$PORT" \
			-i "$CLI_IF" -c "$BB_CONNS" -d "$WARMUP" >/dev/null 2>&1 || true
	fi
}
# stop_noted E: stop it; a busy poller's own cost per request (from its
# exit log) into the engine notes.
stop_noted() {
	local w
	stop_server
	w=$(engine_work_ns "$tmp/$1.log")
	if [ -n "$w" ]; then jq -nc --arg e "$1" --argjson w "$w" '{engine: $e, work_ns: $w}' >>"$engine_notes"; fi
}
declare -A not_started=()
# The runs are interleaved: run 1 of every engine, then run 2, and so on,
# each engine started afresh for its run. The ratio to nginx is taken run
# by run, so its two figures are minutes apart rather than the length of
# every other engine's runs: the load of a shared machine drifts.
for run in $(seq "$RUNS"); do
	i=0
	for e in $ENGINES; do
		i=$((i + 1))
		[ -z "${not_started[$e]:-}" ] || continue
		echo "[run $run/$RUNS, $i/$n_eng] $e: starting"
		if ! start_placed "$e"; then
			reason=$(head -n1 "$tmp/reason")
			echo "[run $run/$RUNS, $i/$n_eng] $e: skipped: $reason"
			if [ "$run" = 1 ]; then
				jq -nc --arg e "$e" --arg r "$reason" '{engine: $e, reason: $r}' >>"$skipped"
				not_started[$e]=1
			fi
			stop_server
			continue
		fi
		if has_client wrk; then
			for c in $CONNS; do
				alive && measure "$e" wrk "$c" 1 0 "$run"
			done
		fi
		if has_client blitz-bench && alive; then measure "$e" blitz-bench "$BB_CONNS" 1 0 "$run"; fi
		if has_client h2load && alive; then measure "$e" h2load "$BB_CONNS" "$PIPELINE" 0 "$run"; fi
		if has_client blitz-bench-pipe && alive; then measure "$e" blitz-bench-pipe "$BB_CONNS" "$PIPELINE" 0 "$run"; fi
		# The other NAPI policy on both veths (SCHED_OTHER when the
		# default is FIFO, and back): the figure beside the headline.
		if has_client blitz-bench-other-napi && [ "$PLACEMENT" != default ] && alive; then
			NAPI_RT_PRIO=$ALT_NAPI_PRIO SRV_NAPI_RT_PRIO=$ALT_NAPI_PRIO placement_quiet || true
			measure "$e" blitz-bench-other-napi "$BB_CONNS" 1 0 "$run"
			placement_quiet || true
		fi
		if ! alive; then echo "[run $run/$RUNS, $i/$n_eng] $e: the server has exited"; fi
		stop_noted "$e"
	done
done
# Phase two, per engine: rows that need the peaks of every run, or that
# are no peak candidates (one run each).
for e in $ENGINES; do
	[ -z "${not_started[$e]:-}" ] || continue
	hr=0
	[ "$e" = "${HEADROOM_ENGINE:-afxdp}" ] && has_client blitz-bench-pipe && hr=1
	if [ -z "$LAT_FRACTIONS" ] && [ "$hr" = 0 ] && { [ -z "$BIG_CONNS" ] || ! has_client blitz-bench; }; then
		continue
	fi
	echo "[once] $e: starting"
	if ! start_placed "$e"; then
		echo "[once] $e: skipped: $(head -n1 "$tmp/reason")"
		stop_server
		continue
	fi
	# Many connections (a peak candidate only if it is the best row).
	if [ -n "$BIG_CONNS" ] && has_client blitz-bench && alive; then
		measure "$e" blitz-bench "$BIG_CONNS" 1 0 1
	fi
	# Latency at fixed fractions of this server's closed-loop blitz bench
	# peak (the median of its runs), open loop.
	peak=$(jq -s --arg e "$e" --argjson c "$BB_CONNS" '[.[] | select(.engine == $e and .client == "blitz-bench" and .conns == $c and .mode == "closed" and .rps > 0) | .rps] | sort | if length > 0 then .[length / 2 | floor] else 0 end' "$results")
	for f in $LAT_FRACTIONS; do
		rate=$(awk -v p="$peak" -v f="$f" 'BEGIN {printf "%d", p * f}')
		if [ "$rate" -gt 0 ] && alive; then measure "$e" blitz-bench "$BB_CONNS" 1 "$rate" 1; fi
	done
	# The generator's headroom: on HEADROOM_ENGINE (default afxdp, which
	# answers 16 pipelined requests in few frames and far above the xdp
	# engine's peak; epoll is the other choice), blitz bench -P 16 open
	# loop at HEADROOM (1.5) x the xdp engine's best blitz bench figure
	# (the median of each configuration, the best of them): RPS at the rate
	# asked, and not busy, say the generator is not the limit at that rate.
	xpeak=$(jq -s '[.[] | select(.engine == "xdp" and (.client | IN("blitz-bench", "blitz-bench-pipe")) and .conns == '"$BB_CONNS"' and .mode == "closed" and .rps > 0)] | group_by(.client) | map(map(.rps) | sort | .[length / 2 | floor]) | max // 0' "$results")
	if [ "$hr" = 1 ] && [ "$xpeak" -gt 0 ] && alive; then
		rate=$(awk -v p="$xpeak" -v f="${HEADROOM:-1.5}" 'BEGIN {printf "%d", p * f}')
		measure "$e" blitz-bench-headroom "$BB_CONNS" "$PIPELINE" "$rate" 1
	fi
	if ! alive; then echo "[once] $e: the server has exited"; fi
	stop_noted "$e"
done

# --- results ---------------------------------------------------------------------

mkdir -p "$OUT"
ts=$(date -u +%Y%m%dT%H%M%SZ)
json=$OUT/bench-$ts.json
jq -s --slurpfile sk "$skipped" --slurpfile en "$engine_notes" --arg ts "$ts" \
	--argjson d "$DURATION" --argjson runs "$RUNS" --arg pl "$PLACEMENT" --arg why "$PLACEMENT_WHY" \
	--argjson napi_rt "$(if [ "$PLACEMENT" = default ]; then echo null; else echo "$NAPI_RT_PRIO"; fi)" \
	--argjson srv_napi_rt "$(if [ "$PLACEMENT" = default ]; then echo null; else echo "$SRV_NAPI_RT_PRIO"; fi)" \
	--argjson bench_rt "$BENCH_RT" \
	--arg conns "$CONNS" --arg kernel "$(uname -r)" --argjson cpus "$(nproc)" \
	--arg cpu_model "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" \
	--arg load_before "$load_before" --arg load_after "$(cut -d' ' -f1 /proc/loadavg)" \
	--argjson ccpu "$CCPU" --argjson scpu "$SCPU" -f "$BENCH_DIR/summary.jq" \
	"$results" >"$json"
cp "$json" "$OUT/latest.json"

# The summary in Markdown, for the README.
jq -r -f "$BENCH_DIR/table-md.jq" "$json" >"${json%.json}.md"
cp "${json%.json}.md" "$OUT/latest.md"

echo
jq -r '["engine", "client", "conns", "P", "RPS", "spread", "ns/req", "p99", "CPU'"$CCPU"'/'"$SCPU"'", "bound by", "x nginx", "spread", "cost x", "errors"],
	(.summary[] | select(.mode == "closed") | [.engine, .client, .conns, .pipeline, .rps, "\(.rps_spread_pct)%",
	  (.cost_ns // "-"), (if .lat_p99_us then "\(.lat_p99_us)us" else "-" end),
	  "\(.client_cpu_busy_pct)/\(.server_cpu_busy_pct)%", .bound_by,
	  (.ratio_nginx // "-"), (if .ratio_spread_pct then "\(.ratio_spread_pct)%" else "-" end),
	  (.cost_ratio_nginx // "-"), .errors]) | @tsv' "$json" | column -t -s $'\t'
echo
jq -r 'if (.latency | length) > 0 then "open loop (blitz bench -R, latency from when due):",
	(["engine", "rate", "of peak", "RPS", "p50", "p90", "p99", "p99.9", "max", "retransmits"] | @tsv),
	(.latency[] | [.engine, .rate, .fraction, .rps, .lat_p50_us, .lat_p90_us, .lat_p99_us, .lat_p999_us, .lat_max_us, .retransmits] | @tsv)
	else empty end' "$json" | column -t -s $'\t'
jq -r '.skipped[] | "skipped \(.engine): \(.reason)"' "$json"
jq -r '.headroom[] | "generator: blitz bench -P \(.pipeline) on one CPU drove \(.rps) req/s of \(.rate) asked (\(.of_xdp_peak)x the xdp engine'"'"'s best blitz bench figure \(.xdp_peak)) against \(.engine), busy \(.self_busy_pct)%: \(if .client_limited and .self_busy_pct < 90 then "\(.engine) could not keep up (\(.client_limit_why)), the generator had room: no verdict on it at this rate (HEADROOM_ENGINE=...)" elif .client_limited then "it was the limit (\(.client_limit_why))" else "not the limit" end)"' "$json"
if jq -e '(.headroom | length) == 0 and ([.summary[] | select(.engine == "xdp")] | length) > 0' "$json" >/dev/null; then
	echo "generator: no headroom row (HEADROOM_ENGINE=${HEADROOM_ENGINE:-afxdp} did not run, or no blitz-bench-pipe client)"
fi
# The headline: each engine's best server-bound row (or, when none was,
# its best row with neither side saturated: a lower bound), never a row
# bound by the client; spreads over the runs beside every figure.
jq -r '.headline[] | "peak (\(if .bound_by == "both" then "server-bound, the client saturated too" elif .kind == "server" then "server-bound" else "neither side saturated: a lower bound" end)): \(.engine) \(.rps) req/s (spread \(.rps_spread_pct)% over \(.runs) runs) at \(.cost_ns // "-") ns/req via \(.client) c=\(.conns) P=\(.pipeline), server CPU \(.server_cpu_busy_pct)%, client \(.client_limit_pct)%: \(.ratio_nginx // "-")x nginx in RPS (spread \(.ratio_spread_pct // "-")%), \(.cost_ratio_nginx // "-")x in cost (spread \(.cost_ratio_spread_pct // "-")%)\(if .ratio_note then " (\(.ratio_note))" else ", against nginx in the same configuration" end)\(if .other_napi then "; with the other NAPI policy (\(.other_napi.client) -c \(.other_napi.conns)): \(.other_napi.rps) req/s (spread \(.other_napi.rps_spread_pct)%) at \(.other_napi.cost_ns // "-") ns/req, bound by \(.other_napi.bound_by), \(.other_napi.ratio_nginx // "-")x nginx in RPS, \(.other_napi.cost_ratio_nginx // "-")x in cost" else "" end)"' "$json"
jq -r '.no_headline[] | "no peak for \(.engine): \(.why); best row \(.rps) req/s via \(.client) c=\(.conns) P=\(.pipeline) (client \(.client_limit_pct)% busy)\(if .other_napi then "; with the other NAPI policy: \(.other_napi.rps) req/s at \(.other_napi.cost_ns // "-") ns/req, bound by \(.other_napi.bound_by), \(.other_napi.ratio_nginx // "-")x nginx in RPS, \(.other_napi.cost_ratio_nginx // "-")x in cost" else "" end)"' "$json"
jq -r '"load average before the run \(.host.loadavg_before), after \(.host.loadavg_after) (\(.host.cpus) CPUs); placement \(.placement)\(if .bench_rt == 1 then ", BENCH_RT=1 (servers and clients SCHED_FIFO 1, NAPI FIFO \(.napi_rt_prio))" else "" end)"' "$json"
echo "results: $json"

# The plot: RPS by connections (wrk medians), cost per request by engine
# (the server-bound peak's), latency percentiles (blitz bench closed loop).
if command -v gnuplot >/dev/null; then
	jq -r '
	  [.summary[] | select(.client == "wrk" and .rps > 0)] as $r |
	  ([$r[].engine] | reduce .[] as $e ([]; if index([$e]) then . else . + [$e] end)) as $eng |
	  ([$r[].conns] | unique) as $cs |
	  (["conns"] + $eng | @tsv),
	  ($cs[] as $c | [$c] + [$eng[] as $e | ($r | map(select(.engine == $e and .conns == $c)) | first | .rps // "-")] | @tsv)' \
		"$json" >"$tmp/rps.dat"
	jq -r '(["engine", "ns"] | @tsv), (.headline[] | [.engine, .cost_ns] | @tsv)' "$json" >"$tmp/cost.dat"
	jq -r '(["engine", "p50", "p90", "p99", "p99.9"] | @tsv),
	  (.summary[] | select(.client == "blitz-bench" and .mode == "closed" and .rps > 0) |
	   [.engine, .lat_p50_us, .lat_p90_us, .lat_p99_us, .lat_p999_us] | map(. // "-") | @tsv)' "$json" >"$tmp/lat.dat"
	png=$OUT/bench-$ts.png
	if [ "$(wc -l <"$tmp/rps.dat")" -lt 2 ] && [ "$(wc -l <"$tmp/cost.dat")" -lt 2 ]; then
		note "no successful run: no plot"
	elif [ "$(wc -l <"$tmp/rps.dat")" -lt 2 ] || [ "$(wc -l <"$tmp/cost.dat")" -lt 2 ]; then
		note "no plot: its panels need wrk rows (RPS by connections) and a headline (cost per request)"
	elif gnuplot -e "rps='$tmp/rps.dat'; cost='$tmp/cost.dat'; lat='$tmp/lat.dat'; out='$png'; title='make bench $ts (${DURATION}s x $RUNS runs, placement $PLACEMENT)'" \
		"$BENCH_DIR/plot.gp" 2>"$tmp/gnuplot.err"; then
		cp "$png" "$OUT/latest.png"
		echo "plot: $png"
	else
		note "gnuplot failed: $(tail -n1 "$tmp/gnuplot.err")"
	fi
else
	note "gnuplot missing: no plot"
fi
