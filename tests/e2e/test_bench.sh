#!/bin/bash
# test_bench.sh - `blitz bench` (the AF_XDP load generator) against nginx on
# the testbed, and a one-second `scripts/bench.sh` producing its JSON and PNG.
#
# Prints PASS/FAIL/SKIP lines (tests/run.sh protocol). Only touches the
# testbeds it creates (prefixes tb6 and tb6b), torn down in a trap.
set -u
cd "$(dirname "$0")/../.." || exit 1
here=$(pwd)
export BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$here/$BUILD ;; esac
BLITZ=$BUILD/blitz
PREFIX=tb6
PORT=8080

skip_all() {
	echo "SKIP bench_blitz_bench: $1"
	echo "SKIP bench_status_errors: $1"
	echo "SKIP bench_reconnect: $1"
	echo "SKIP bench_xdp_restored: $1"
	echo "SKIP bench_script: $1"
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip_all "needs root (netns, XDP)"
[ -x "$BLITZ" ] || skip_all "$BLITZ not built"
for t in nginx jq wrk; do
	command -v "$t" >/dev/null || skip_all "$t not installed"
done

tmp=$(mktemp -d /tmp/blitz-test-bench.XXXXXX)
chmod 755 "$tmp"
nginx_pid=
cleanup() {
	[ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
	scripts/testbed.sh down "$PREFIX" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! env_out=$(scripts/testbed.sh up "$PREFIX" 2>"$tmp/tb.err"); then
	skip_all "testbed: $(tail -n1 "$tmp/tb.err")"
fi
eval "$env_out"

# nginx as the bench config has it, plus a 404 location and a small
# keepalive_requests on a second port to make it close connections.
sed "s|@TMP@|$tmp|g;s|@IP@|$SRV_IP|g;s|@PORT@|$PORT|g" \
	scripts/bench/nginx.conf.in >"$tmp/nginx.conf"
# Insert two server blocks before the last closing brace of http {}.
head -n -1 "$tmp/nginx.conf" >"$tmp/n2"
cat >>"$tmp/n2" <<EOF
	server {
		listen $SRV_IP:$((PORT + 1));
		keepalive_requests 20;
		default_type text/plain;
		location /missing { return 404 "no"; }
		location / { return 200 "Hello World!"; }
	}
}
EOF
mv "$tmp/n2" "$tmp/nginx.conf"
$SRV nginx -c "$tmp/nginx.conf" >"$tmp/nginx.log" 2>&1 &
nginx_pid=$!
for _ in $(seq 50); do
	[ "$($CLI curl -s -m 1 "http://$SRV_IP:$PORT/" 2>/dev/null)" = "Hello World!" ] && break
	sleep 0.1
done

xdp_id() {
	$CLI ip -j link show dev "$CLI_IF" | jq -r '.[0].xdp.prog.id // 0'
}
id_before=$(xdp_id)

# bench <name> <port> [args...]: JSON in $tmp/<name>.json, 1 on failure.
bench() {
	local name=$1 port=$2
	shift 2
	$CLI timeout 60 "$BLITZ" bench "$SRV_IP:$port" -i "$CLI_IF" --json "$@" \
		>"$tmp/$name.json" 2>"$tmp/$name.err"
}

# jq -e on a result file; prints the values on failure.
check() { # name filter
	jq -e "$2" "$tmp/$1.json" >/dev/null 2>&1
}

if bench main "$PORT" -c 10 -d 2; then
	fields='["target","conns","requests","ok","rps","errors","retransmits","lat_mean_us","lat_p50_us","lat_p95_us","lat_p99_us","lat_max_us","duration_s"]'
	if ! check main "$fields - keys | length == 0"; then
		echo "FAIL bench_blitz_bench: JSON lacks fields: $(cat "$tmp/main.json")"
	elif ! check main '.rps > 0 and .requests > 0 and .errors == 0 and .ok == .requests and .conns == 10'; then
		echo "FAIL bench_blitz_bench: want rps > 0 and no errors: $(cat "$tmp/main.json")"
	elif ! check main '.lat_p50_us > 0 and .lat_p50_us <= .lat_p95_us and .lat_p95_us <= .lat_p99_us and .lat_p99_us <= .lat_max_us'; then
		echo "FAIL bench_blitz_bench: latency percentiles out of order: $(cat "$tmp/main.json")"
	elif ! grep -q 'req/s' "$tmp/main.err"; then
		echo "FAIL bench_blitz_bench: no progress line on stderr"
	else
		echo "PASS bench_blitz_bench $(jq -r '"\(.rps | floor) req/s, p99 \(.lat_p99_us) us"' "$tmp/main.json")"
	fi
else
	echo "FAIL bench_blitz_bench: exited non-zero: $(tail -n1 "$tmp/main.err")"
fi

# Every response is checked: a 404 is an error, counted by status.
if bench missing $((PORT + 1)) -c 2 -d 1 --path /missing; then
	if check missing '.requests > 0 and .ok == 0 and .err_status == .requests'; then
		echo "PASS bench_status_errors"
	else
		echo "FAIL bench_status_errors: want every response a status error: $(cat "$tmp/missing.json")"
	fi
else
	echo "FAIL bench_status_errors: exited non-zero: $(tail -n1 "$tmp/missing.err")"
fi

# A server that closes after 20 requests: new connections, no errors, and
# -n bounds the run by count.
if bench reconnect $((PORT + 1)) -c 4 -d 10 -n 400; then
	if check reconnect '.requests == 400 and .errors == 0 and .connects >= 20'; then
		echo "PASS bench_reconnect"
	else
		echo "FAIL bench_reconnect: want 400 requests over >= 20 connections: $(cat "$tmp/reconnect.json")"
	fi
else
	echo "FAIL bench_reconnect: exited non-zero: $(tail -n1 "$tmp/reconnect.err")"
fi

id_after=$(xdp_id)
if [ "$id_before" != 0 ] && [ "$id_after" = "$id_before" ]; then
	echo "PASS bench_xdp_restored"
else
	echo "FAIL bench_xdp_restored: XDP program of $CLI_IF was $id_before, is $id_after"
fi

kill "$nginx_pid" 2>/dev/null
wait "$nginx_pid" 2>/dev/null
nginx_pid=
scripts/testbed.sh down "$PREFIX" >/dev/null 2>&1

# The whole script, one second per run, nginx and whatever engines start.
if ! command -v gnuplot >/dev/null; then
	echo "SKIP bench_script: gnuplot not installed"
	exit 0
fi
out=$tmp/results
if timeout 300 env DURATION=1 CONNS=10 BENCH_OUT="$out" BENCH_PREFIX=tb6b \
	scripts/bench.sh >"$tmp/script.log" 2>&1; then
	j=$out/latest.json
	if ! [ -s "$j" ] || ! [ -s "$out/latest.png" ]; then
		echo "FAIL bench_script: no latest.json or latest.png in $out"
	elif ! jq -e '.results | map(select(.engine == "nginx" and .client == "wrk" and .conns == 10 and .rps > 0 and .errors == 0 and .ratio_nginx == 1)) | length == 1' "$j" >/dev/null; then
		echo "FAIL bench_script: no good nginx row: $(jq -c .results "$j")"
	elif ! jq -e '.results[0] | has("lat_p95_us") and has("lat_p99_us") and has("server_cpu_pct") and has("server_mem_kb")' "$j" >/dev/null; then
		echo "FAIL bench_script: result rows lack fields: $(jq -c '.results[0]' "$j")"
	elif [ "$(head -c 4 "$out/latest.png" | tail -c 3)" != PNG ]; then
		echo "FAIL bench_script: latest.png is not a PNG"
	else
		echo "PASS bench_script $(jq -r '[.results[] | "\(.engine)/\(.client)=\(.rps)"] | join(" ")' "$j")"
	fi
else
	echo "FAIL bench_script: exited non-zero: $(tail -n3 "$tmp/script.log" | tr '\n' ' ')"
fi
