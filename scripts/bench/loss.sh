#!/bin/bash
# scripts/bench/loss.sh - pipelined clients on a lossy link: the time
# `h2load --h1 -n N -c C -m M` takes against nginx (the kernel's TCP) and
# each blitz engine in the same run, with LOSS permille of the frames the
# client receives dropped at random (tests/loss/loss.bpf.c on the client
# veth's ingress: this kernel has no netem). Runs are interleaved (run 1 of
# every engine and rate, then run 2, ...), each server started afresh, so
# the rows of one ratio are close in time on a machine whose load drifts.
#
# Owns: its own testbed (prefix $LOSS_PREFIX, torn down in a trap) and the
# servers it starts there. Never sends to an address outside the testbed.
#
# Engines: nginx (one worker, keepalive_requests above the run's size, as
# for any pipelining benchmark), xdp-load (`blitz load` alone, nothing
# listening behind it), xdp-serve (`blitz serve --engine xdp`: the xdp
# engine with its epoll listener behind), afxdp, dpdk, epoll.
#
# Environment: ENGINES (default "nginx xdp-load xdp-serve afxdp dpdk";
# "none": the 64 KiB part alone),
# LOSS (permille, default "10 50"), RUNS (3), N (200000), C (20), M (16),
# TIMEOUT (s per h2load run, default 120: a run that does not finish in it
# counts as stalled), DIR (ingress; egress or both), BUILD, LOSS_PORT (8080),
# LOSS_PREFIX (bzl), LOSS_OUT (a JSON-lines file of every run, default
# bench-results/loss-<time>.jsonl), CLIENT_CPU (0), SERVER_CPU (1).
#
# Prints one line per run and, at the end, per engine and rate: the median
# time, its spread over the runs, requests done of N, and the ratio of the
# median to nginx's median at the same rate.
#
# The 64 KiB latency part (LAT_N > 0): each engine of LAT_ENGINES (default
# "epoll afxdp dpdk"; epoll is the kernel's TCP, the reference) serves a
# 64 KiB body; LAT_N curls one after another (a new connection each, as
# tests/e2e/test_afxdp_engine.sh's *_loss_latency) with LAT_LOSS permille
# (default 50; 0: a clean link, no dropper) dropped in LAT_DIR (default
# both), at most LAT_BUDGET s (90) per engine and run; every body checked by
# its length. The curls run on CLIENT_CPU, as h2load does (LAT_PIN=0: where
# the scheduler puts them): a curl on the server's CPU would share it with
# a polling engine and not with epoll.
# Prints p50 and p99 per engine and run, their ratios to epoll's in the same
# run, the same after the handshake (curl's time_total - time_connect: a
# lost SYN or SYN-ACK costs the client's 1 s SYN timer whatever the server,
# and with a few such in 200 transfers p99 is mostly which of them; and
# the kernel answers a SYN in softirq (on a veth, the sending CPU) while afxdp and
# dpdk answer it once their thread on SERVER_CPU runs, which under other
# load costs them ms in time_connect that is no TCP recovery), the
# server's resends by kind (timeouts, tail-loss probes, RACK/SACK, fast
# retransmits), each transfer's times kept next to LOSS_OUT, and how long the server's threads waited for a CPU (run queue, from
# /proc/PID/task/*/schedstat) over the curls: a server that waits for the
# CPU while other load runs is slow for that reason, not for its TCP.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
export BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac
ENGINES=${ENGINES:-nginx xdp-load xdp-serve afxdp dpdk}
[ "$ENGINES" = none ] && ENGINES=
LOSS=${LOSS:-10 50}
RUNS=${RUNS:-3}
N=${N:-200000}
C=${C:-20}
M=${M:-16}
TIMEOUT=${TIMEOUT:-120}
LAT_N=${LAT_N:-0}
LAT_ENGINES=${LAT_ENGINES:-epoll afxdp dpdk}
LAT_LOSS=${LAT_LOSS:-50}
LAT_DIR=${LAT_DIR:-both}
LAT_BUDGET=${LAT_BUDGET:-90}
LAT_PIN=${LAT_PIN:-1}
DIR=${DIR:-ingress}
PORT=${LOSS_PORT:-8080}
PREFIX=${LOSS_PREFIX:-bzl}
CCPU=${CLIENT_CPU:-0}
SCPU=${SERVER_CPU:-1}
BLITZ=$BUILD/blitz
mkdir -p "$here/bench-results"
OUT=${LOSS_OUT:-$here/bench-results/loss-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

die() {
	echo "loss: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "run as root (netns, XDP, tc)"
for t in h2load jq taskset nsenter curl tc bpftool; do
	command -v "$t" >/dev/null || die "$t missing: run scripts/install-deps.sh"
done
[ -x "$BLITZ" ] || die "$BLITZ missing: run make"
for v in RUNS N C M TIMEOUT LAT_BUDGET; do
	if ! [[ ${!v} =~ ^[0-9]+$ ]] || [ "${!v}" -lt 1 ]; then
		die "$v must be a positive number, not '${!v}'"
	fi
done
if [ "$N" -gt 10000000 ] || [ "$TIMEOUT" -gt 1800 ] || [ "$RUNS" -gt 20 ]; then
	die "N <= 10000000, TIMEOUT <= 1800 s and RUNS <= 20 (bounded runs)"
fi
if ! [[ $LAT_N =~ ^[0-9]+$ ]] || [ "$LAT_N" -gt 5000 ] || [ "$LAT_BUDGET" -gt 1800 ] ||
	! [[ $LAT_LOSS =~ ^[0-9]+$ ]] || [ "$LAT_LOSS" -gt 500 ]; then
	die "LAT_N 0..5000, LAT_BUDGET <= 1800 s, LAT_LOSS permille <= 500"
fi
for e in $LAT_ENGINES; do
	case $e in epoll | afxdp | dpdk | nginx) ;;
	*) die "LAT_ENGINES: unknown engine '$e' (epoll afxdp dpdk nginx)" ;;
	esac
done
for l in $LOSS; do
	if ! [[ $l =~ ^[0-9]+$ ]] || [ "$l" -gt 500 ]; then
		die "LOSS is permille 0..500, not '$l'"
	fi
done
for e in $ENGINES; do
	case $e in nginx | xdp-load | xdp-serve | afxdp | dpdk | epoll) ;;
	*) die "ENGINES: unknown engine '$e' (nginx xdp-load xdp-serve afxdp dpdk epoll)" ;;
	esac
done

# shellcheck source=scripts/bench/lib_server.sh
. "$here/scripts/bench/lib_server.sh"
server_state_init loss
cleanup() {
	stop_server
	[ -n "${CLI_IF:-}" ] && loss_off "$CLI" "$CLI_IF"
	scripts/testbed.sh down "$PREFIX" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=tests/e2e/lib_loss.sh
. "$here/tests/e2e/lib_loss.sh"
eval "$(scripts/testbed.sh up "$PREFIX")"
URL="http://$SRV_IP:$PORT/"

READY_BODY="Hello World!"

start_engine() { # engine [serve args]; 1 when it does not come up (the log says why)
	local e=$1 log=$tmp/$1.log
	shift
	case $e in
	nginx)
		sed "s|@TMP@|$tmp|g;s|@IP@|$SRV_IP|g;s|@PORT@|$PORT|g;s|@CONNS@|4096|g" \
			"$here/scripts/bench/nginx.conf.in" >"$tmp/nginx.conf"
		$SRV taskset -c "$SCPU" nginx -c "$tmp/nginx.conf" >"$log" 2>&1 &
		server_pid=$!
		;;
	xdp-load)
		$SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$log" 2>&1 || return 1
		xdp_loaded=1
		;;
	xdp-serve)
		$SRV taskset -c "$SCPU" "$BLITZ" serve "$SRV_IF" --engine xdp -p "$PORT" >"$log" 2>&1 &
		server_pid=$!
		;;
	epoll)
		$SRV taskset -c "$SCPU" "$BLITZ" serve --engine epoll -t 1 -p "$PORT" "$@" >"$log" 2>&1 &
		server_pid=$!
		;;
	afxdp | dpdk)
		$SRV taskset -c "$SCPU" "$BLITZ" serve "$SRV_IF" --engine "$e" -p "$PORT" "$@" >"$log" 2>&1 &
		server_pid=$!
		;;
	esac
	# serve's epoll fallback answers before the afxdp/dpdk child is up (and
	# dpdk's takeover breaks what it accepted): wait for the child first.
	wait_fast_path "$e" "$log" || return 1
	wait_ready && sleep 0.3 && { [ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null; }
}

# One h2load run under loss; appends a JSON line, prints a summary line.
measure() { # engine permille run
	local e=$1 pm=$2 r=$3 out=$tmp/h2load.out rc t ndone ok failed errored st0 st1 seen dropped stalled
	loss_on "$CLI" "$CLI_IF" "$pm" "$DIR" || die "cannot attach the dropper to $CLI_IF"
	st0=$(loss_stats "$CLI" "$CLI_IF")
	rc=0
	$CLI taskset -c "$CCPU" timeout --kill-after=5 "$TIMEOUT" \
		h2load --h1 -n "$N" -c "$C" -m "$M" "$URL" >"$out" 2>&1 || rc=$?
	st1=$(loss_stats "$CLI" "$CLI_IF")
	loss_off "$CLI" "$CLI_IF"
	seen=$((${st1% *} - ${st0% *})) dropped=$((${st1#* } - ${st0#* }))
	t=$(sed -n 's/^finished in \([0-9.]*\)\(m\?s\),.*/\1 \2/p' "$out")
	case $t in
	*" ms") t=$(awk -v v="${t% *}" 'BEGIN { printf "%.3f", v / 1000 }') ;;
	*" s") t=${t% *} ;;
	*) t=null ;;
	esac
	read -r ndone ok failed errored < <(sed -n \
		's/^requests: .* \([0-9]*\) done, \([0-9]*\) succeeded, \([0-9]*\) failed, \([0-9]*\) errored.*/\1 \2 \3 \4/p' \
		"$out" | head -n1) || true
	stalled=false
	if [ "$rc" -ne 0 ] || [ "${ok:-0}" != "$N" ]; then
		stalled=true
		# The server's log, kept for the post-mortem (tmp goes at exit).
		cp "$tmp/$e.log" "${OUT%.jsonl}-$e-$pm-$r.log" 2>/dev/null || true
	fi
	jq -nc --arg e "$e" --argjson pm "$pm" --argjson run "$r" --argjson t "$t" \
		--argjson n "$N" --argjson c "$C" --argjson m "$M" --argjson rc "$rc" \
		--argjson "done" "${ndone:-0}" --argjson ok "${ok:-0}" --argjson failed "${failed:-0}" \
		--argjson errored "${errored:-0}" --argjson seen "$seen" --argjson dropped "$dropped" \
		--argjson stalled "$stalled" --arg dir "$DIR" \
		'{engine: $e, permille: $pm, dir: $dir, run: $run, n: $n, c: $c, m: $m, time_s: $t,
		  done: $done, succeeded: $ok, failed: $failed, errored: $errored, h2load_rc: $rc,
		  frames_seen: $seen, frames_dropped: $dropped, incomplete: $stalled}' >>"$OUT"
	printf 'loss: run %d %-9s %4.1f%%  %8s s  %d/%d succeeded  %d of %d client frames dropped%s\n' \
		"$r" "$e" "$(awk -v p="$pm" 'BEGIN { print p / 10 }')" "$t" "${ok:-0}" "$N" "$dropped" "$seen" \
		"$([ "$stalled" = true ] && echo "  INCOMPLETE (h2load rc $rc)")"
}

echo "loss: h2load --h1 -n $N -c $C -m $M, loss on $CLI_IF $DIR, $RUNS runs, client CPU $CCPU, server CPU $SCPU, load average $(cut -d' ' -f1-3 /proc/loadavg); results in $OUT"
for r in $(seq "$RUNS"); do
	for pm in $LOSS; do
		for e in $ENGINES; do
			if start_engine "$e"; then
				measure "$e" "$pm" "$r"
			else
				echo "loss: run $r $e did not come up: $(tail -n1 "$tmp/$e.log" 2>/dev/null)"
				jq -nc --arg e "$e" --argjson pm "$pm" --argjson run "$r" \
					'{engine: $e, permille: $pm, run: $run, error: "did not start"}' >>"$OUT"
			fi
			stop_server
		done
	done
done

# The 64 KiB latency part: curls one after another under loss.
# srv_wait_ns: nanoseconds every thread of every process in the server's
# namespace has spent waiting on a run queue (schedstat's second field).
srv_wait_ns() {
	local p t w sum=0
	for p in $(ip netns pids "$SRV_NS" 2>/dev/null); do
		for t in /proc/"$p"/task/*/schedstat; do
			read -r _ w _ <"$t" 2>/dev/null || continue
			sum=$((sum + w))
		done
	done
	echo "$sum"
}
# lat_counters ENGINE - the server's loss-recovery counters, one line:
# "retransmits tlp_probes rack_retransmits fast_retransmits timeouts"
# (afxdp/dpdk: the TCP core's, timeouts = RTOs fired; epoll: the kernel's
# in the server namespace, TcpTimeouts). A probe that sends new data is
# no retransmission, so the kinds need not add up to retransmits.
lat_counters() {
	local e=$1 snap=$tmp/snap
	case $e in
	epoll)
		$SRV nstat -az 2>/dev/null | awk '
			{ v[$1] = $2 }
			END { printf "%d %d %d %d %d\n", v["TcpRetransSegs"], v["TcpExtTCPLossProbes"],
			      v["TcpExtTCPSackRecovery"], v["TcpExtTCPFastRetrans"], v["TcpExtTCPTimeouts"] }'
		;;
	*)
		$SRV "$BLITZ" stats "$SRV_IF" --prometheus >"$snap" 2>/dev/null || : >"$snap"
		awk '/^blitz_(retransmits|tlp_probes|rack_retransmits|fast_retransmits|rto_timeouts)_total/ {
			n = $1; sub(/\{.*/, "", n); v[n] += $NF }
			END { r = v["blitz_retransmits_total"]; t = v["blitz_tlp_probes_total"]
			      k = v["blitz_rack_retransmits_total"]; f = v["blitz_fast_retransmits_total"]
			      printf "%d %d %d %d %d\n", r, t, k, f, v["blitz_rto_timeouts_total"] }' "$snap"
		;;
	esac
}
# p50_p99 - the 50th and 99th percentile of the numbers on stdin (nearest
# rank), "null null" when there are none.
p50_p99() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (!NR) { print "null null"; exit }
		i50 = int(NR * 0.50 + 0.5); i99 = int(NR * 0.99 + 0.5)
		if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1
		print v[i50], v[i99] }'
}
lat_measure() { # engine run
	local e=$1 r=$2 out=$tmp/lat.txt i ok=0 bad=0 t0 res st0="0 0" st1="0 0" p50 p99 w0 w1 wait_ms pin
	local c0 c1 x50 x99 synlost rec code size tc ts tt
	if [ "$LAT_LOSS" -gt 0 ]; then
		loss_on "$CLI" "$CLI_IF" "$LAT_LOSS" "$LAT_DIR" || die "cannot attach the dropper to $CLI_IF"
		st0=$(loss_stats "$CLI" "$CLI_IF")
	fi
	: >"$out"
	pin=(taskset -c "$CCPU")
	[ "$LAT_PIN" = 0 ] && pin=()
	c0=$(lat_counters "$e")
	w0=$(srv_wait_ns)
	t0=$SECONDS
	for ((i = 0; i < LAT_N && SECONDS - t0 < LAT_BUDGET; i++)); do
		res=$($CLI "${pin[@]}" timeout 20 curl -s -o /dev/null --max-time 15 \
			-w '%{http_code} %{size_download} %{time_connect} %{time_starttransfer} %{time_total}' \
			"$URL" 2>/dev/null || true)
		read -r code size tc ts tt <<<"$res"
		if [ "$code" = 200 ] && [ "$size" = 65536 ]; then
			ok=$((ok + 1))
			# total, connect, first byte (ms): the trace of one transfer
			awk -v t="$tt" -v c="$tc" -v f="$ts" \
				'BEGIN { printf "%.1f %.1f %.1f\n", t * 1000, c * 1000, f * 1000 }' >>"$out"
		else
			bad=$((bad + 1))
		fi
	done
	w1=$(srv_wait_ns)
	c1=$(lat_counters "$e")
	wait_ms=$(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
	if [ "$LAT_LOSS" -gt 0 ]; then
		st1=$(loss_stats "$CLI" "$CLI_IF")
		loss_off "$CLI" "$CLI_IF"
	fi
	cp "$out" "${OUT%.jsonl}-64k-$e-$r.txt" 2>/dev/null || true
	# The server's log beside it: a failed transfer or a restarted engine
	# shows there.
	[ "$bad" -eq 0 ] || cp "$tmp/$e.log" "${OUT%.jsonl}-64k-$e-$r.log" 2>/dev/null || true
	read -r p50 p99 < <(awk '{ print $1 }' "$out" | p50_p99)
	# After the handshake (total - connect): what the server's TCP owes;
	# a lost SYN or SYN-ACK costs the client's 1 s SYN timer on any server.
	read -r x50 x99 < <(awk '{ printf "%.1f\n", $1 - $2 }' "$out" | p50_p99)
	synlost=$(awk '$2 >= 900 { n++ } END { print n + 0 }' "$out")
	rec=$(paste -d' ' <(echo "$c0") <(echo "$c1") | awk '{ printf "{\"retransmits\": %d, \"tlp\": %d, \"rack\": %d, \"fast\": %d, \"rto\": %d}", $6 - $1, $7 - $2, $8 - $3, $9 - $4, $10 - $5 }')
	jq -nc --arg e "$e" --argjson pm "$LAT_LOSS" --arg dir "$LAT_DIR" --argjson run "$r" \
		--argjson n "$ok" --argjson bad "$bad" --argjson p50 "$p50" --argjson p99 "$p99" \
		--argjson x50 "$x50" --argjson x99 "$x99" --argjson synlost "$synlost" --argjson rec "$rec" \
		--argjson dropped "$((${st1#* } - ${st0#* }))" --argjson wait "$wait_ms" \
		--arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson pinned "$([ "$LAT_PIN" = 0 ] && echo false || echo true)" \
		'{latency_64k: true, client_pinned: $pinned, engine: $e, permille: $pm, dir: $dir, run: $run, samples: $n,
		  failed: $bad, p50_ms: $p50, p99_ms: $p99, after_connect_p50_ms: $x50, after_connect_p99_ms: $x99,
		  handshakes_over_900ms: $synlost, recovery: $rec, frames_dropped: $dropped,
		  server_runq_wait_ms: $wait, loadavg: $load}' >>"$OUT"
	printf 'loss: 64k run %d %-6s %4.1f%% %s  p50 %s ms  p99 %s ms  after connect p50 %s p99 %s ms  (%d bodies, %d failed, %d handshakes over 0.9 s; server waited %s ms for a CPU; load %s; resends %s)\n' \
		"$r" "$e" "$(awk -v p="$LAT_LOSS" 'BEGIN { print p / 10 }')" "$LAT_DIR" "$p50" "$p99" "$x50" "$x99" "$ok" "$bad" \
		"$synlost" "$wait_ms" "$(cut -d' ' -f1 /proc/loadavg)" "$rec"
}
if [ "$LAT_N" -gt 0 ]; then
	head -c 49152 /dev/urandom | base64 -w0 >"$tmp/body64k" # 65536 bytes
	chmod 644 "$tmp/body64k"
	READY_BODY=$(head -c 12 "$tmp/body64k")
	for r in $(seq "$RUNS"); do
		for e in $LAT_ENGINES; do
			if [ "$e" = nginx ]; then
				echo "loss: 64k: nginx is not measured here (serves no body file); use epoll"
				continue
			fi
			if start_engine "$e" --body-file "$tmp/body64k" --content-type application/octet-stream; then
				lat_measure "$e" "$r"
			else
				echo "loss: 64k run $r $e did not come up: $(tail -n1 "$tmp/$e.log" 2>/dev/null)"
			fi
			stop_server
		done
	done
fi

# Per engine and rate: median time (of complete runs), spread, ratio.
echo
echo "loss: summary (median of complete runs; ratio = median / nginx's median at the same loss)"
jq -rs '
  def median: sort | if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  [ .[] | select(.error == null and .latency_64k == null) ] as $rows
  | [ $rows[] | {engine, permille} ] | unique[] as $k
  | [ $rows[] | select(.engine == $k.engine and .permille == $k.permille) ] as $rs
  | [ $rs[] | select(.incomplete | not) | .time_s ] as $ts
  | ([ $rows[] | select(.engine == "nginx" and .permille == $k.permille and (.incomplete | not)) | .time_s ] | median) as $ng
  | ($ts | median) as $med
  | "\($k.engine)\t\($k.permille / 10)%\tmedian \(if $med then ($med * 1000 | round / 1000 | tostring) + " s" else "-" end)\tspread \(if ($ts | length) > 1 then ((($ts | max) - ($ts | min)) / $med * 100 | round | tostring) + "%" else "-" end)\tcomplete \($ts | length)/\($rs | length)\tratio \(if $med and $ng then ($med / $ng * 100 | round / 100 | tostring) + "x nginx" else "-" end)"
' "$OUT" | column -t -s $'\t'
if [ "$LAT_N" -gt 0 ]; then
	echo
	echo "loss: 64 KiB under ${LAT_LOSS} permille ($LAT_DIR): p50 / p99 per run, ratio to epoll's in the same run"
	jq -rs '
	  [ .[] | select(.latency_64k == true) ] as $rows
	  | $rows[] as $x
	  | ([ $rows[] | select(.engine == "epoll" and .run == $x.run) ][0]) as $ep
	  | "run \($x.run)\t\($x.engine)\tp50 \($x.p50_ms) ms\tp99 \($x.p99_ms) ms\tn \($x.samples)\trunq wait \($x.server_runq_wait_ms // "-") ms\t\(if $ep and $ep.p50_ms and $x.p50_ms then "p50 \(($x.p50_ms / $ep.p50_ms * 100 | round) / 100)x  p99 \(($x.p99_ms / $ep.p99_ms * 100 | round) / 100)x epoll" else "-" end)\t\(if $ep and $ep.after_connect_p50_ms and $x.after_connect_p50_ms then "after connect p50 \(($x.after_connect_p50_ms / $ep.after_connect_p50_ms * 100 | round) / 100)x  p99 \(($x.after_connect_p99_ms / $ep.after_connect_p99_ms * 100 | round) / 100)x" else "-" end)\tslow handshakes \($x.handshakes_over_900ms // "-")"
	' "$OUT" | column -t -s $'\t'
fi
