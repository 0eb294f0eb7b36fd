#!/bin/bash
# bench.sh - `make bench`: every blitz engine that runs here, nginx and h2o,
# side by side in one run on the veth testbed, measured with wrk.
#
# Owns: the benchmark table, bench-results/*.json and the PNG plot. Touches
# only its own testbed (prefix $BENCH_PREFIX) and tears it down in a trap;
# never benchmarks an address outside the testbed's namespaces.
#
# Environment: DURATION (s per run, default 10), CONNS (default
# "10 64 100 300"), ENGINES (default "xdp epoll afxdp dpdk nginx h2o"),
# BUILD (default build), BENCH_OUT (default bench-results), BENCH_PORT
# (8080), BENCH_PREFIX (bzb), BENCH_CLIENT_CPU (0), BENCH_SERVER_CPU (1),
# BLITZ_BENCH (default 1: when `blitz bench` exists, one run of it per
# engine at the largest CONNS, client "blitz-bench"; 0: wrk only).
#
# CPU placement: wrk runs in the client namespace pinned to CPU 0 (one
# thread); every server process is pinned to CPU 1. The xdp engine has no
# process: on veth its program runs in the NAPI softirq of the receiving
# veth, which is raised by the sender, i.e. on the client's CPU 0 — so for
# xdp the client CPU also pays the server's work, and its "server CPU" is
# bpf_stats run time / wall time (the program alone, no driver overhead).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac
DURATION=${DURATION:-10}
CONNS=${CONNS:-10 64 100 300}
ENGINES=${ENGINES:-xdp epoll afxdp dpdk nginx h2o}
OUT=${BENCH_OUT:-$here/bench-results}
PORT=${BENCH_PORT:-8080}
PREFIX=${BENCH_PREFIX:-bzb}
CCPU=${BENCH_CLIENT_CPU:-0}
SCPU=${BENCH_SERVER_CPU:-1}
BLITZ=$BUILD/blitz
BENCH_DIR=$here/scripts/bench
BLITZ_BENCH=${BLITZ_BENCH:-1}
TICK=$(getconf CLK_TCK)

die() {
	echo "bench: $*" >&2
	exit 1
}
note() { echo "bench: $*" >&2; }

[ "$(id -u)" -eq 0 ] || die "run as root (netns, XDP)"
for t in wrk jq taskset nsenter curl; do
	command -v "$t" >/dev/null || die "$t missing: run scripts/install-deps.sh"
done
if ! [[ $DURATION =~ ^[0-9]+$ ]] || [ "$DURATION" -lt 1 ] || [ "$DURATION" -gt 600 ]; then
	die "DURATION must be 1..600 seconds, not '$DURATION'"
fi
for c in $CONNS; do
	if ! [[ $c =~ ^[0-9]+$ ]] || [ "$c" -lt 1 ] || [ "$c" -gt 10000 ]; then
		die "CONNS must be numbers 1..10000, not '$c'"
	fi
done

tmp=$(mktemp -d /tmp/blitz-bench.XXXXXX)
chmod 755 "$tmp"
server_pid=
xdp_loaded=
bpf_stats_old=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)

stop_server() {
	if [ -n "$server_pid" ]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=
	fi
	if [ -n "$xdp_loaded" ]; then
		$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1 || true
		xdp_loaded=
	fi
}

cleanup() {
	stop_server
	sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_old" 2>/dev/null || true
	scripts/testbed.sh down "$PREFIX" || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -f "$BUILD/xdp_pass.bpf.o" ] || die "$BUILD/xdp_pass.bpf.o missing: run make"
eval "$(scripts/testbed.sh up "$PREFIX")"
URL="http://$SRV_IP:$PORT/"

# --- measuring a server ---------------------------------------------------

# The server process and its descendants.
pid_tree() {
	local p=$1 c
	[ -d "/proc/$p" ] || return 0
	echo "$p"
	for c in $(pgrep -P "$p" 2>/dev/null || true); do
		pid_tree "$c"
	done
}

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

# Wait until the server answers with the hello body; 0 when it does.
wait_ready() {
	local i body
	for i in $(seq 50); do
		body=$($CLI curl -s -m 1 "$URL" 2>/dev/null || true)
		[ "$body" = "Hello World!" ] && return 0
		if [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null; then
			return 1
		fi
		[ "$i" -lt 50 ] && sleep 0.1
	done
	return 1
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
			$SRV taskset -c "$SCPU" "$BLITZ" serve --engine epoll -t 1 -p "$PORT" \
				>"$log" 2>&1 &
		else
			$SRV taskset -c "$SCPU" "$BLITZ" serve "$SRV_IF" --engine "$e" -p "$PORT" \
				>"$log" 2>&1 &
		fi
		server_pid=$!
		;;
	nginx)
		command -v nginx >/dev/null || {
			echo "nginx not installed" >&3
			return 1
		}
		sed "s|@TMP@|$tmp|g;s|@IP@|$SRV_IP|g;s|@PORT@|$PORT|g" \
			"$BENCH_DIR/nginx.conf.in" >"$tmp/nginx.conf"
		$SRV taskset -c "$SCPU" nginx -c "$tmp/nginx.conf" >"$log" 2>&1 &
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
		sed "s|@TMP@|$tmp|g;s|@IP@|$SRV_IP|g;s|@PORT@|$PORT|g" \
			"$BENCH_DIR/h2o.conf.in" >"$tmp/h2o.conf"
		$SRV taskset -c "$SCPU" h2o -c "$tmp/h2o.conf" >"$log" 2>&1 &
		server_pid=$!
		;;
	*)
		echo "unknown engine" >&3
		return 1
		;;
	esac
	# Answered once is not enough: an engine that fails while setting up
	# its fast path may exit right after its fallback listener answered.
	if wait_ready && sleep 0.5 && { [ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null; }; then
		return 0
	else
		{
			echo -n "did not answer GET / with Hello World! within 5 s, or exited"
			[ -s "$log" ] && echo -n ": $(log_reason "$log")"
			echo
		} >&3
		return 1
	fi
}

# --- one measurement ---------------------------------------------------------

results=$tmp/results.jsonl
: >"$results"
skipped=$tmp/skipped.jsonl
: >"$skipped"

# "busy total" jiffies of each CPU from /proc/stat, one line per CPU.
cpu_jiffies() {
	awk '/^cpu[0-9]/ {b = $2 + $3 + $4 + $7 + $8 + $9; t = b + $5 + $6; print b, t}' /proc/stat
}

# Busy % of the client's and the server's CPU between two cpu_jiffies.
cpu_busy_pct() { # before after cpu
	paste -d' ' <(echo "$1") <(echo "$2") |
		awk -v n="$3" 'NR == n + 1 {d = $4 - $2; printf "%.1f", (d > 0 ? 100 * ($3 - $1) / d : 0)}'
}

run_wrk() { # engine conns
	local e=$1 c=$2 t0 t1 k0=0 k1=0 b0=0 b1=0 out line cpu rss rss_kind j0 j1
	j0=$(cpu_jiffies)
	t0=$(date +%s%N)
	if [ "$e" = xdp ]; then b0=$(bpf_runtime_ns); else k0=$(tree_ticks "$server_pid"); fi
	out=$tmp/wrk-$e-$c.txt
	$CLI taskset -c "$CCPU" timeout $((DURATION + 30)) wrk -t1 -c"$c" -d"${DURATION}s" \
		--timeout 2s -s "$BENCH_DIR/wrk-report.lua" "$URL" >"$out" 2>&1 || true
	t1=$(date +%s%N)
	j1=$(cpu_jiffies)
	if [ "$e" = xdp ]; then
		b1=$(bpf_runtime_ns)
		cpu=$(awk -v d=$((b1 - b0)) -v w=$((t1 - t0)) 'BEGIN {printf "%.1f", 100 * d / w}')
		rss=$(bpf_maps_kb)
		rss_kind=bpf_maps_memlock
	else
		k1=$(tree_ticks "$server_pid")
		cpu=$(awk -v d=$((k1 - k0)) -v w=$((t1 - t0)) -v hz="$TICK" \
			'BEGIN {printf "%.1f", 100 * d / hz / (w / 1e9)}')
		rss=$(tree_rss_kb "$server_pid")
		rss_kind=VmRSS
	fi
	line=$(sed -n 's/^BENCHJSON //p' "$out" | tail -n1)
	if [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null; then
		note "$e c=$c: the server exited: $(log_reason "$tmp/$e.log")"
		line=
	fi
	if [ -z "$line" ]; then
		note "$e c=$c: wrk printed no result: $(tail -n1 "$out")"
		line='{"requests":0,"duration_us":1,"bytes":0,"err_connect":0,"err_read":0,"err_write":0,"err_status":0,"err_timeout":0,"lat_mean_us":0,"lat_stdev_us":0,"lat_p50_us":0,"lat_p95_us":0,"lat_p99_us":0,"lat_max_us":0,"failed":true}'
	fi
	echo "$line" | jq -c --arg e "$e" --argjson c "$c" --argjson cpu "$cpu" \
		--argjson ccpu "$(cpu_busy_pct "$j0" "$j1" "$CCPU")" \
		--argjson scpu "$(cpu_busy_pct "$j0" "$j1" "$SCPU")" \
		--argjson rss "$rss" --arg rk "$rss_kind" \
		'{engine: $e, client: "wrk", conns: $c,
		  rps: ((.requests / (.duration_us / 1e6)) | floor),
		  errors: (.err_connect + .err_read + .err_write + .err_status + .err_timeout),
		  server_cpu_pct: $cpu, server_mem_kb: $rss, server_mem_kind: $rk,
		  client_cpu_busy_pct: $ccpu, server_cpu_busy_pct: $scpu} + .' \
		>>"$results"
	tail -n1 "$results" | jq -r '"  \(.engine) c=\(.conns): \(.rps) req/s, mean \(.lat_mean_us)us, p95 \(.lat_p95_us)us, p99 \(.lat_p99_us)us, cpu \(.server_cpu_pct)%, CPU'"$CCPU"'/CPU'"$SCPU"' busy \(.client_cpu_busy_pct)/\(.server_cpu_busy_pct)%, errors \(.errors)"'
}

# One `blitz bench` run (AF_XDP client) per engine, when asked for.
run_blitz_bench() { # engine conns
	local e=$1 c=$2 out=$tmp/bb-$1.json j0 j1
	j0=$(cpu_jiffies)
	if ! $CLI taskset -c "$CCPU" timeout $((DURATION + 30)) "$BLITZ" bench "$SRV_IP:$PORT" \
		-i "$CLI_IF" -c "$c" -d "$DURATION" --json >"$out" 2>"$tmp/bb-$e.err"; then
		note "$e: blitz bench failed: $(tail -n1 "$tmp/bb-$e.err")"
		return 0
	fi
	j1=$(cpu_jiffies)
	jq -c --arg e "$e" --argjson ccpu "$(cpu_busy_pct "$j0" "$j1" "$CCPU")" \
		--argjson scpu "$(cpu_busy_pct "$j0" "$j1" "$SCPU")" \
		'{engine: $e, client: "blitz-bench", conns: .conns, rps: (.rps | floor),
		errors: .errors, lat_mean_us: .lat_mean_us, lat_p50_us: .lat_p50_us,
		lat_p95_us: .lat_p95_us, lat_p99_us: .lat_p99_us, lat_max_us: .lat_max_us,
		requests: .requests, retransmits: .retransmits,
		client_busy_pct: .client_busy_pct,
		client_cpu_busy_pct: $ccpu, server_cpu_busy_pct: $scpu}' "$out" >>"$results"
	tail -n1 "$results" | jq -r '"  \(.engine) c=\(.conns) (blitz bench): \(.rps) req/s, p95 \(.lat_p95_us)us, errors \(.errors), client busy \(.client_busy_pct)%"'
}

# --- the run -------------------------------------------------------------------

sysctl -qw kernel.bpf_stats_enabled=1 || note "cannot enable bpf_stats: xdp CPU will read 0"
load_before=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load_before" 'BEGIN {exit !(l > 0.5)}'; then
	note "load average $load_before before the run: something else uses the CPUs, figures will be noisy"
fi
n_eng=$(echo "$ENGINES" | wc -w)
n_conn=$(echo "$CONNS" | wc -w)
max_conn=$(echo "$CONNS" | tr ' ' '\n' | sort -n | tail -n1)
if [ "$BLITZ_BENCH" = 1 ] && ! blitz_has bench; then
	note "no \`blitz bench\` in $BLITZ: wrk only"
	BLITZ_BENCH=0
fi
n_runs=$((n_conn + BLITZ_BENCH))
echo "bench: $n_eng engines x $n_runs runs x ${DURATION}s on $SRV_IF" \
	"(wrk -t1 on CPU $CCPU in $CLI_NS, server on CPU $SCPU), at most" \
	"$((n_eng * (n_runs * (DURATION + 3) + 10)))s"
i=0
for e in $ENGINES; do
	i=$((i + 1))
	echo "[$i/$n_eng] $e: starting"
	if ! start_engine "$e" 3>"$tmp/reason"; then
		reason=$(head -n1 "$tmp/reason")
		echo "[$i/$n_eng] $e: skipped: $reason"
		jq -nc --arg e "$e" --arg r "$reason" '{engine: $e, reason: $r}' >>"$skipped"
		stop_server
		continue
	fi
	for c in $CONNS; do
		if [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null; then
			echo "[$i/$n_eng] $e: the server has exited: no more runs"
			break
		fi
		echo "[$i/$n_eng] $e: wrk -c $c -d ${DURATION}s"
		run_wrk "$e" "$c"
	done
	if [ "$BLITZ_BENCH" = 1 ] && [ -n "$server_pid$xdp_loaded" ] &&
		{ [ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null; }; then
		echo "[$i/$n_eng] $e: blitz bench -c $max_conn -d $DURATION"
		run_blitz_bench "$e" "$max_conn"
	fi
	stop_server
done

# --- results ---------------------------------------------------------------------

mkdir -p "$OUT"
ts=$(date -u +%Y%m%dT%H%M%SZ)
json=$OUT/bench-$ts.json
jq -s --slurpfile sk "$skipped" --arg ts "$ts" --argjson d "$DURATION" \
	--arg conns "$CONNS" --arg kernel "$(uname -r)" --argjson cpus "$(nproc)" \
	--arg cpu_model "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" \
	--arg load_before "$load_before" --arg load_after "$(cut -d' ' -f1 /proc/loadavg)" \
	'. as $r |
	{timestamp: $ts, duration_s: $d,
	 conns: ($conns | split(" ") | map(select(. != "") | tonumber)),
	 host: {kernel: $kernel, cpus: $cpus, cpu_model: $cpu_model,
	   loadavg_before: ($load_before | tonumber), loadavg_after: ($load_after | tonumber)},
	 setup: "veth testbed; wrk -t1 pinned to CPU '"$CCPU"' in the client netns; server pinned to CPU '"$SCPU"'; xdp engine runs in the veth softirq on the sender CPU, its CPU is bpf_stats run_time_ns / wall time and its memory the BPF maps memlock",
	 skipped: $sk,
	 results: [$r[] | . as $x |
	   ($r | map(select(.engine == "nginx" and .client == $x.client and .conns == $x.conns)) | first) as $n |
	   $x + {ratio_nginx: (if $n and $n.rps > 0 then (($x.rps / $n.rps * 100 | round) / 100) else null end)}]}' \
	"$results" >"$json"
cp "$json" "$OUT/latest.json"

# The same table in Markdown, for the README.
jq -r '"| engine | client | conns | RPS | mean | p95 | p99 | errors | server CPU | server mem | × nginx | CPU'"$CCPU"'/'"$SCPU"' busy |",
	"|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
	(.results[] | "| \(.engine) | \(.client) | \(.conns) | \(.rps) | \(.lat_mean_us) µs | \(.lat_p95_us) µs | \(.lat_p99_us) µs | \(if .failed then "FAILED" else .errors end) | \(if .server_cpu_pct then "\(.server_cpu_pct)%" else "-" end) | \(if .server_mem_kb then "\(.server_mem_kb) kB" + (if .server_mem_kind == "bpf_maps_memlock" then " (maps)" else "" end) else "-" end) | \(.ratio_nginx // "-") | \(if .client_cpu_busy_pct then "\(.client_cpu_busy_pct)/\(.server_cpu_busy_pct)%" else "-" end) |"),
	"",
	(.skipped[] | "Skipped \(.engine): \(.reason)"),
	"",
	"\(.timestamp), \(.duration_s) s per run, Linux \(.host.kernel), \(.host.cpus) CPUs (\(.host.cpu_model)), load average \(.host.loadavg_before) before the run."' \
	"$json" >"${json%.json}.md"
cp "${json%.json}.md" "$OUT/latest.md"

echo
jq -r '["engine", "client", "conns", "RPS", "mean", "p95", "p99", "errors", "srv CPU", "srv mem", "x nginx", "CPU'"$CCPU"'/'"$SCPU"' busy"],
	(.results[] | [.engine, .client, .conns, .rps,
	  "\(.lat_mean_us)us", "\(.lat_p95_us)us", "\(.lat_p99_us)us",
	  (if .failed then "FAILED" else .errors end),
	  (if .server_cpu_pct then "\(.server_cpu_pct)%" else "-" end),
	  (if .server_mem_kb then "\(.server_mem_kb)kB" + (if .server_mem_kind == "bpf_maps_memlock" then "(maps)" else "" end) else "-" end),
	  (.ratio_nginx // "-"),
	  (if .client_cpu_busy_pct then "\(.client_cpu_busy_pct)/\(.server_cpu_busy_pct)%" else "-" end)]) | @tsv' "$json" | column -t -s $'\t'
jq -r '.skipped[] | "skipped \(.engine): \(.reason)"' "$json"
jq -r '"load average before the run \(.host.loadavg_before), after \(.host.loadavg_after) (\(.host.cpus) CPUs)"' "$json"
echo "results: $json"

# The plot: one row per connection count, one column per engine; runs
# that failed or had more than 1% errors are left out (they are in the table).
if command -v gnuplot >/dev/null; then
	for m in rps lat_p95_us; do
		jq -r --arg m "$m" '
		  [.results[] | select(.client == "wrk" and (.failed | not) and .rps > 0 and .errors * 100 <= .requests)] as $r |
		  ([$r[].engine] | reduce .[] as $e ([]; if index([$e]) then . else . + [$e] end)) as $eng |
		  ([$r[].conns] | unique) as $cs |
		  (["conns"] + $eng | @tsv),
		  ($cs[] as $c | [$c] + [$eng[] as $e | ($r | map(select(.engine == $e and .conns == $c)) | first | .[$m] // "-")] | @tsv)' \
			"$json" >"$tmp/$m.dat"
	done
	png=$OUT/bench-$ts.png
	if [ "$(wc -l <"$tmp/rps.dat")" -lt 2 ]; then
		note "no successful run: no plot"
	elif gnuplot -e "rps='$tmp/rps.dat'; p95='$tmp/lat_p95_us.dat'; out='$png'; title='make bench $ts (${DURATION}s per run)'" \
		"$BENCH_DIR/plot.gp" 2>"$tmp/gnuplot.err"; then
		cp "$png" "$OUT/latest.png"
		echo "plot: $png"
	else
		note "gnuplot failed: $(tail -n1 "$tmp/gnuplot.err")"
	fi
else
	note "gnuplot missing: no plot"
fi
