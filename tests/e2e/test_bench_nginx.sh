#!/bin/bash
# tests/e2e/test_bench_nginx.sh - `blitz bench` against a server it does not
# know (nginx, one worker, access log on), with the README's two-host
# commands, and what it prints checked against nginx's own access log:
#   requests  bench's answered requests <= the log's lines <= those plus
#             the requests in flight at the end (conns x pipeline) and 2%
#   req/s     bench's rate within 15% of the log's (lines over the span of
#             their timestamps)
#   latency   bench's mean where Little's law on nginx's rate puts it
#             (requests outstanding / rate, 30% for noise), p50 <= p90 <=
#             p99 <= p99.9 <= max
#   errors    0 and every logged status 200; against a path nginx answers
#             404, bench's status errors equal the log's 404 lines
#   the limit at a fixed rate (-R) the log holds rate x duration (+-10%)
#             when bench prints no WARNING, and under 95% of it when bench
#             says it fell behind; the busy share bench reports is
#             no more than its CPU's busy time in /proc/stat, and a WARNING
#             when it is 90% or more
# Testbed prefix: $BENCH_NGINX_TB (default bn).
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=bench_nginx
PORT=80
CONNS=100
DUR=10
e2e_begin "$T" "${BENCH_NGINX_TB:-bn}"
need_cmds "$T" nginx taskset || exit 0

LOG=$TMP/ngx/access.log
if ! nginx_start "$PORT" 4096 "	log_format t '\$msec \$status';" \
	"		access_log $LOG t;
		location = /missing { return 404; }"; then
	fail "${T}_nginx" "nginx did not start: $(cat "$TMP/ngx/out.log" "$TMP/ngx/error.log" 2>/dev/null | head -c 200)"
	e2e_status
	exit
fi
taskset -pc 1 "$NGX_PID" >/dev/null 2>&1
for p in $(pgrep -P "$NGX_PID"); do taskset -pc 1 "$p" >/dev/null 2>&1; done

# cpu0 - "busy total" jiffies of CPU 0, from /proc/stat.
cpu0() { awk '$1 == "cpu0" { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

# bench NAME ARGS... - run `blitz bench $SRV_IP:$PORT -i $CLI_IF ARGS` on
# CPU 0 with nginx's log emptied first; its summary in $TMP/NAME.out, the
# log in $TMP/NAME.log, CPU 0's busy % over the run in CPU_BUSY.
bench() {
	local name=$1 a b
	shift
	: >"$LOG"
	a=$(cpu0)
	$CLI taskset -c 0 timeout $((DUR + 30)) "$BLITZ" bench "$SRV_IP:$PORT" -i "$CLI_IF" "$@" \
		>"$TMP/$name.out" 2>&1
	BENCH_RC=$?
	b=$(cpu0)
	sleep 0.5 # nginx writes its last lines
	cp "$LOG" "$TMP/$name.log"
	CPU_BUSY=$(echo "$a $b" | awk '{ t = $4 - $2; print (t > 0 ? int(100 * ($3 - $1) / t) : 0) }')
}

# field NAME WHAT - a figure of bench's summary.
field() {
	awk -v w="$2" '
		$1 == "requests" && w == "answered" { print $2 }
		$1 == "requests" && w == "ok" { gsub(/\(/, "", $3); print $3 }
		$1 == "requests" && w == "rps" { print $5 }
		$1 == "latency" && w ~ /^(mean|p50|p90|p99|p99\.9|max)$/ { for (i = 2; i < NF; i++) if ($i == w) print $(i + 1) }
		$1 == "errors" && w == "errors" { print $2 }
		$1 == "errors" && w == "status" { gsub(/,/, "", $4); print $4 }
		$1 == "client" && w == "busy" { for (i = 2; i < NF; i++) if ($i == "busy") { sub(/%/, "", $(i + 1)); print $(i + 1) } }
		$3 == "connections," && w == "elapsed" { print $6 }
	' "$TMP/$1.out" | head -1
}

# log_rate NAME - lines per second of the log over its timestamps' span.
log_rate() { awk 'NR == 1 { a = $1 } { b = $1 } END { if (b > a) printf "%.0f", NR / (b - a); else print 0 }' "$TMP/$1.log"; }

# The README's two commands, one request per segment and 16 pipelined.
for shape in "closed 1" "pipe 16"; do
	set -- $shape
	name=$1 depth=$2
	if [ "$depth" -gt 1 ]; then bench "$name" -c $CONNS -d $DUR -P "$depth"; else bench "$name" -c $CONNS -d $DUR; fi
	if [ "$BENCH_RC" -ne 0 ] || [ -z "$(field "$name" rps)" ]; then
		fail "${T}_${name}_ran" "rc $BENCH_RC: $(tail -c 300 "$TMP/$name.out")"
		continue
	fi
	ok=$(field "$name" ok)
	lines=$(wc -l <"$TMP/$name.log")
	n200=$(awk '$2 == 200' "$TMP/$name.log" | wc -l)
	slack=$((CONNS * depth + ok / 50))
	check "${T}_${name}_requests" "bench answered $ok, nginx logged $lines (slack $slack)" \
		test "$ok" -gt 0 -a "$lines" -ge "$ok" -a "$lines" -le $((ok + slack))
	check "${T}_${name}_errors" "bench errors $(field "$name" errors), nginx 200s $n200 of $lines" \
		test "$(field "$name" errors)" -eq 0 -a "$n200" -eq "$lines"
	rps=$(field "$name" rps)
	nrate=$(log_rate "$name")
	check "${T}_${name}_rps" "bench $rps req/s, nginx's log $nrate req/s" \
		awk -v a="$rps" -v b="$nrate" 'BEGIN { exit !(b > 0 && a / b > 0.85 && a / b < 1.15) }'
	# Little's law on nginx's rate: a closed loop keeps between CONNS (one
	# request of each batch still unanswered) and CONNS x depth requests
	# outstanding, so the mean latency lies between CONNS / rate and
	# CONNS x depth / rate (one and the same at depth 1); 30% for noise.
	mean=$(field "$name" mean)
	check "${T}_${name}_latency" "bench mean $mean us, Little's law on nginx's $nrate req/s: $CONNS..$((CONNS * depth)) outstanding" \
		awk -v m="$mean" -v c="$CONNS" -v p="$depth" -v r="$nrate" 'BEGIN { exit !(r > 0 && m > 0.7e6 * c / r && m < 1.3e6 * c * p / r) }'
	pcts="$(field "$name" p50) $(field "$name" p90) $(field "$name" p99) $(field "$name" p99.9) $(field "$name" max)"
	check "${T}_${name}_percentiles" "p50 p90 p99 p99.9 max: $pcts" \
		awk -v s="$pcts" 'BEGIN { n = split(s, v, " "); if (n != 5 || v[1] <= 0) exit 1; for (i = 2; i <= n; i++) if (v[i] + 0 < v[i - 1] + 0) exit 1 }'
	busy=$(field "$name" busy)
	warned=$(grep -c '^  WARNING' "$TMP/$name.out")
	check "${T}_${name}_limit" "bench busy $busy%, CPU 0 busy $CPU_BUSY%, WARNING lines $warned" \
		awk -v b="$busy" -v c="$CPU_BUSY" -v w="$warned" 'BEGIN { exit !(b <= c + 5 && (b < 90 || w > 0)) }'
done

# Errors: a path nginx answers 404; bench counts each as a status error.
bench missing -c 10 -d 2 --path /missing
st=$(field missing status)
n404=$(awk '$2 == 404' "$TMP/missing.log" | wc -l)
check "${T}_status_errors" "bench status errors '$st', nginx's 404 lines $n404: $(grep -E '^  (requests|errors)' "$TMP/missing.out" | tr -s ' ')" \
	test -n "$st" -a "${st:-0}" -gt 0 -a "$n404" -ge "${st:-0}" -a "$n404" -le $((${st:-0} + 10 + ${st:-0} / 50))

# A fixed rate: nginx logs about rate x duration when bench says it kept up
# (no WARNING); when bench says it fell behind, nginx's log agrees (under
# 95% of what was asked). Either way bench's count is nginx's.
bench rate -c 10 -d 3 -R 1000
lines=$(wc -l <"$TMP/rate.log")
ok=$(field rate ok)
behind=$(grep -c '^  WARNING    open loop fell behind' "$TMP/rate.out")
warned=$(grep -c '^  WARNING' "$TMP/rate.out")
check "${T}_open_loop" "nginx logged $lines of 3000 asked, bench $ok, WARNING lines $warned (fell behind: $behind): $(grep -E '^  (requests|client|WARNING)' "$TMP/rate.out" | tr -s ' ')" \
	test "${ok:-0}" -gt 0 -a "$lines" -ge "${ok:-0}" -a "$lines" -le $((${ok:-0} + 20)) -a \( \( "$warned" -eq 0 -a "$lines" -ge 2700 -a "$lines" -le 3300 \) -o \( "$behind" -eq 1 -a "$lines" -lt 2850 \) \)

e2e_status
