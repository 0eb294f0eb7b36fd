#!/bin/bash
# scripts/demo.sh - the main job (`make demo`): build the veth testbed, load
# blitz onto the server's NIC with the CLI, benchmark it against nginx (one
# worker) in the same run, print one table, unload and tear down.
#
#   server namespace: blitz's XDP program on port 8080, nginx on 8081 (CPU 1)
#   client namespace: wrk pinned to CPU 0, at each of CONNS connections
#
# Also reads the XDP program's cost per frame from the kernel's BPF stats
# (kernel.bpf_stats_enabled) during the blitz runs.
# Env: BUILD (build dir), DURATION (seconds per run, default 5),
#      CONNS (default "10 100 300"), DEMO_TB (testbed prefix, default demo).
# shellcheck disable=SC2086 # $SRV/$CLI are command prefixes: they must split
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
# lib.sh brings the testbed helpers (tb_up, on_exit, wait_port).
# shellcheck source=tests/e2e/lib.sh
source "$here/tests/e2e/lib.sh"

DURATION=${DURATION:-5}
CONNS=${CONNS:-10 100 300}
TB=${DEMO_TB:-demo}
BLITZ_PORT=8080
NGINX_PORT=8081
SRV_CPU=1
CLI_CPU=0

die() {
	echo "demo: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, XDP): run it with sudo"
[ -x "$BLITZ" ] || die "$BLITZ is missing: run make"
for c in wrk nginx bpftool taskset curl; do
	command -v "$c" >/dev/null || die "$c is not installed: run scripts/install-deps.sh"
done
[ "$(nproc)" -ge 2 ] || {
	SRV_CPU=0
	echo "demo: one CPU only: server and client share it"
}

TMP=$(mktemp -d /tmp/blitz-demo.XXXXXX)
tb_up "$TB" || die "scripts/testbed.sh up $TB failed"
on_exit "rm -rf '$TMP'"
echo "testbed: $SRV_NS ($SRV_IF $SRV_IP) <-> $CLI_NS ($CLI_IF $CLI_IP)"

# ---- nginx: one worker, the same answer as blitz ----
cat >"$TMP/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log;
events { worker_connections 4096; }
http {
	access_log off;
	keepalive_requests 1000000;
	server {
		listen $SRV_IP:$NGINX_PORT backlog=4096;
		location / {
			default_type text/plain;
			return 200 "Hello World!";
		}
	}
}
EOF
$SRV taskset -c "$SRV_CPU" nginx -c "$TMP/nginx.conf" -e "$TMP/nginx-error.log" \
	>"$TMP/nginx.out" 2>&1 &
on_exit "kill $!"
wait_port "$CLI" "$SRV_IP" "$NGINX_PORT" 5 ||
	die "nginx did not start: $(cat "$TMP/nginx.out" "$TMP/nginx-error.log" 2>/dev/null)"

# ---- blitz ----
$SRV "$BLITZ" load "$SRV_IF" -p "$BLITZ_PORT" | tee "$TMP/load.out" ||
	die "blitz load failed"
on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
prog_id=$(sed -n 's/.*prog id \([0-9]*\).*/\1/p' "$TMP/load.out")
for port in "$BLITZ_PORT" "$NGINX_PORT"; do
	body=$($CLI timeout 5 curl -sS "http://$SRV_IP:$port/")
	[ "$body" = "Hello World!" ] || die "port $port answered '$body'"
done

# veth runs a receiving interface's XDP program and stack in the NAPI of
# whichever CPU sent the frame (here: wrk's), for blitz and nginx alike.
# NAPI_PIN=1 makes the veths' NAPI threaded and pins each to its side's
# CPU instead; measured here it made nginx at 10 connections erratic
# (ms-scale wakeups), so it is not the default.
napi_pin() { # NS IFNAME CPU
	local pid
	ip netns exec "$1" sh -c "echo 1 > /sys/class/net/$2/threaded" 2>/dev/null ||
		return 1
	for pid in $(pgrep "^napi/$2-"); do
		taskset -pc "$3" "$pid" >/dev/null || return 1
	done
}
if [ "${NAPI_PIN:-0}" = 1 ]; then
	if napi_pin "$SRV_NS" "$SRV_IF" "$SRV_CPU" && napi_pin "$CLI_NS" "$CLI_IF" "$CLI_CPU"; then
		echo "CPU $SRV_CPU: nginx and the server veth's receive path (blitz's XDP program)"
		echo "CPU $CLI_CPU: wrk and the client veth's receive path"
	else
		echo "demo: cannot pin veth NAPI threads: receive work runs on the sender's CPU"
	fi
else
	echo "CPU $SRV_CPU: nginx; CPU $CLI_CPU: wrk. veth runs the receive path (blitz's XDP"
	echo "program, the kernel's TCP for nginx) on the sending CPU (NAPI_PIN=1 changes that)"
fi

old_stats=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
sysctl -qw kernel.bpf_stats_enabled=1
on_exit "sysctl -qw kernel.bpf_stats_enabled=$old_stats"

# run_ns / run_cnt of the XDP program so far.
bpf_stat() {
	bpftool prog show id "$prog_id" --json 2>/dev/null |
		"$PY" -c 'import json,sys; p=json.load(sys.stdin); print(p.get("run_time_ns",0), p.get("run_cnt",0))' 2>/dev/null ||
		echo "0 0"
}

# wrk's done() hook: mean and p95 latency (us), RPS and errors.
cat >"$TMP/report.lua" <<'EOF'
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("RESULT %.1f %.1f %d %d\n",
		summary.requests / (summary.duration / 1e6), latency.mean,
		latency:percentile(95),
		e.connect + e.read + e.write + e.status + e.timeout))
end
EOF

# bench NAME PORT CONNS - one wrk run; appends a row to $TMP/rows.
bench() {
	local name=$1 port=$2 c=$3 res s0 s1 nsf=-
	s0=$(bpf_stat)
	$CLI taskset -c "$CLI_CPU" timeout $((DURATION + 15)) \
		wrk -t1 -c"$c" -d"${DURATION}s" --timeout 2s -s "$TMP/report.lua" \
		"http://$SRV_IP:$port/" >"$TMP/wrk.out" 2>&1
	s1=$(bpf_stat)
	res=$(sed -n 's/^RESULT //p' "$TMP/wrk.out")
	[ -n "$res" ] || res="0 0 0 -1"
	if [ "$name" = blitz ]; then
		# shellcheck disable=SC2183,SC2046 # two numbers each
		nsf=$(printf '%s %s %s %s\n' $s0 $s1 |
			awk '{ d = $4 - $2; if (d > 0) printf "%.0f", ($3 - $1) / d; else print "-" }')
	fi
	echo "$name $c $res $nsf" >>"$TMP/rows"
	printf '  %-6s %4s conns: %s\n' "$name" "$c" "$(awk '{printf "%.0f rps", $1}' <<<"$res")"
}

echo "benchmark: wrk -t1 on CPU $CLI_CPU, ${DURATION}s per run, connections: $CONNS"
: >"$TMP/rows"
for c in $CONNS; do bench blitz "$BLITZ_PORT" "$c"; done
for c in $CONNS; do bench nginx "$NGINX_PORT" "$c"; done

echo
"$PY" - "$TMP/rows" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
nginx = {r[1]: float(r[2]) for r in rows if r[0] == "nginx"}
head = ["target", "conns", "RPS", "mean latency", "p95 latency", "vs nginx",
        "errors", "XDP ns/frame"]
out = []
for name, c, rps, mean, p95, errs, nsf in rows:
    rps = float(rps)
    ratio = "%.2fx" % (rps / nginx[c]) if nginx.get(c) else "-"
    out.append([name, c, "%.0f" % rps, "%.0f us" % float(mean),
                "%d us" % int(p95), ratio, errs, nsf])
w = [max(len(str(r[i])) for r in out + [head]) for i in range(len(head))]
for r in [head] + out:
    print("  ".join(str(v).rjust(w[i]) if i else str(v).ljust(w[i])
                    for i, v in enumerate(r)))
EOF
echo
echo "XDP ns/frame: run_time_ns / run_cnt of blitz's program (kernel.bpf_stats_enabled)"
echo "during that run; every frame of the run, SYNs and ACKs included."
"$BLITZ" --version >/dev/null
$SRV "$BLITZ" stats "$SRV_IF" | awk 'NR == 1 || $2 > 0'
