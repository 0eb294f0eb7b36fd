#!/bin/bash
# scripts/demo.sh - the main job (`make demo`): build the veth testbed, load
# blitz onto the server's NIC with the CLI, benchmark its peak RPS against
# the kernel path (nginx, one worker) in the same run, unload, tear down.
# Every blitz command it runs is printed ("[netns]$ blitz ...") so the
# user sees the CLI at work.
#
#   server namespace: blitz's XDP program on port 8080, nginx on 8081 (CPU 1)
#   client namespace: wrk pinned to CPU 0, at each of CONNS connections;
#                     then `blitz bench` (AF_XDP load generator) at the
#                     largest CONNS against each, for the peak
#
# Why two clients: on veth the XDP program runs in the sender's NAPI, i.e.
# on wrk's CPU, and wrk (one thread) saturates that CPU first, so wrk shows
# latency but understates blitz's peak; `blitz bench` bypasses the client's
# kernel too and shows the peak. A failing `blitz bench` is reported and
# the wrk table is still printed.
# Also reads the XDP program's cost per frame from the kernel's BPF stats
# (kernel.bpf_stats_enabled) during the blitz runs.
# Owns: its testbed (DEMO_TB), its nginx and the blitz load on that testbed,
# all undone in the EXIT trap. Must never touch another interface.
# Env: BUILD (build dir), DURATION (seconds per run, default 5),
#      CONNS (default "10 100 300"), DEMO_TB (testbed prefix, default demo),
#      BLITZ_BENCH (default 1; 0 skips the `blitz bench` runs).
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
BLITZ_BENCH=${BLITZ_BENCH:-1}
BLITZ_PORT=8080
NGINX_PORT=8081
SRV_CPU=1
CLI_CPU=0

die() {
	echo "demo: $*" >&2
	exit 1
}

# The blitz binary as the user would type it (relative to the tree).
BLITZ_SHOWN=${BLITZ#"$here"/}
# show NETNS ARGS... - print the blitz command line about to run, as the
# user would type it inside that namespace.
show() {
	local ns=$1
	shift
	echo "[$ns]\$ $BLITZ_SHOWN $*"
}

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, XDP): run it with sudo"
[ -x "$BLITZ" ] || die "$BLITZ is missing: run make"
for c in wrk nginx bpftool taskset curl; do
	command -v "$c" >/dev/null || die "$c is not installed: run scripts/install-deps.sh"
done
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
	echo "demo: load average $load: something else uses the CPUs, the figures will be noisy"
fi
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
echo
show "$SRV_NS" load "$SRV_IF" -p "$BLITZ_PORT"
$SRV "$BLITZ" load "$SRV_IF" -p "$BLITZ_PORT" | tee "$TMP/load.out" ||
	die "blitz load failed"
on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
prog_id=$(sed -n 's/.*prog id \([0-9]*\).*/\1/p' "$TMP/load.out")
show "$SRV_NS" status "$SRV_IF"
$SRV "$BLITZ" status "$SRV_IF" || die "blitz status failed"
echo
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

# ns_per_frame "RUN_NS CNT" "RUN_NS CNT" - the XDP program's mean cost per
# frame between two bpf_stat samples, or "-".
ns_per_frame() {
	# shellcheck disable=SC2086 # two numbers each
	printf '%s %s %s %s\n' $1 $2 |
		awk '{ d = $4 - $2; if (d > 0) printf "%.0f", ($3 - $1) / d; else print "-" }'
}

# wrk's done() hook: mean and p95 latency (us), RPS and errors.
cat >"$TMP/report.lua" <<'LUA'
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("RESULT %.1f %.1f %d %d\n",
		summary.requests / (summary.duration / 1e6), latency.mean,
		latency:percentile(95),
		e.connect + e.read + e.write + e.status + e.timeout))
end
LUA

# wrk_run NAME PORT CONNS - one wrk run; appends a row to $TMP/rows.
wrk_run() {
	local name=$1 port=$2 c=$3 res s0 s1 nsf=-
	s0=$(bpf_stat)
	$CLI taskset -c "$CLI_CPU" timeout $((DURATION + 15)) \
		wrk -t1 -c"$c" -d"${DURATION}s" --timeout 2s -s "$TMP/report.lua" \
		"http://$SRV_IP:$port/" >"$TMP/wrk.out" 2>&1
	s1=$(bpf_stat)
	res=$(sed -n 's/^RESULT //p' "$TMP/wrk.out")
	[ -n "$res" ] || res="0 0 0 -1"
	[ "$name" = blitz ] && nsf=$(ns_per_frame "$s0" "$s1")
	echo "$name $c $res $nsf" >>"$TMP/rows"
	printf '  %-6s %4s conns: %s\n' "$name" "$c" "$(awk '{printf "%.0f req/s", $1}' <<<"$res")"
}

# peak_run NAME PORT CONNS - one `blitz bench` run; appends a row to
# $TMP/peak, or a line saying why not to $TMP/peak.err (returns 1).
peak_run() {
	local name=$1 port=$2 c=$3 s0 s1 nsf=- res why out=$TMP/bb-$1.json
	s0=$(bpf_stat)
	if ! $CLI taskset -c "$CLI_CPU" timeout $((DURATION + 20)) \
		"$BLITZ" bench "$SRV_IP:$port" -i "$CLI_IF" -c "$c" -d "$DURATION" \
		--json >"$out" 2>"$TMP/bb-$name.err"; then
		# Its last line says why, after the program's "blitz: " prefix.
		why=$(tail -n1 "$TMP/bb-$name.err" | sed 's/^blitz: //' | cut -c1-200)
		echo "against $name failed: ${why:-exit status only}" >>"$TMP/peak.err"
		echo "  $name: blitz bench failed: ${why:-exit status only}"
		return 1
	fi
	s1=$(bpf_stat)
	res=$("$PY" -c 'import json,sys
j = json.load(open(sys.argv[1]))
print("%.1f %.1f %.1f %d %.0f" % (j["rps"], j["lat_mean_us"], j["lat_p95_us"],
      j["errors"], j["client_busy_pct"]))' "$out" 2>/dev/null)
	if [ -z "$res" ]; then
		echo "against $name: unreadable result: $(head -c 200 "$out")" >>"$TMP/peak.err"
		echo "  $name: blitz bench printed no result"
		return 1
	fi
	[ "$name" = blitz ] && nsf=$(ns_per_frame "$s0" "$s1")
	echo "$name $c $res $nsf" >>"$TMP/peak"
	printf '  %-6s %4s conns: %s\n' "$name" "$c" "$(awk '{printf "%.0f req/s", $1}' <<<"$res")"
}

max_conn=$(printf '%s\n' $CONNS | sort -n | tail -n1)
echo "wrk: -t1 on CPU $CLI_CPU, ${DURATION}s per run, connections: $CONNS"
: >"$TMP/rows"
for c in $CONNS; do wrk_run blitz "$BLITZ_PORT" "$c"; done
for c in $CONNS; do wrk_run nginx "$NGINX_PORT" "$c"; done

: >"$TMP/peak"
: >"$TMP/peak.err"
if [ "$BLITZ_BENCH" != 1 ]; then
	echo "skipped (BLITZ_BENCH=$BLITZ_BENCH)" >"$TMP/peak.err"
elif ! "$BLITZ" bench -h >/dev/null 2>&1; then
	echo "not run: no \`blitz bench\` in $BLITZ_SHOWN" >"$TMP/peak.err"
else
	echo
	echo "peak: blitz bench (AF_XDP client, kernel bypassed on the client too) on CPU $CLI_CPU"
	show "$CLI_NS" bench "$SRV_IP:$BLITZ_PORT" -i "$CLI_IF" -c "$max_conn" -d "$DURATION" --json
	peak_run blitz "$BLITZ_PORT" "$max_conn"
	show "$CLI_NS" bench "$SRV_IP:$NGINX_PORT" -i "$CLI_IF" -c "$max_conn" -d "$DURATION" --json
	peak_run nginx "$NGINX_PORT" "$max_conn"
fi

echo
if ! "$PY" - "$TMP/rows" "$TMP/peak" "$TMP/peak.err" "$max_conn" >"$TMP/report" <<'PY'
import sys

def load(path):
    return [l.split() for l in open(path) if l.strip()]

def table(head, out):
    w = [max(len(str(r[i])) for r in out + [head]) for i in range(len(head))]
    for r in [head] + out:
        print("  ".join(str(v).rjust(w[i]) if i else str(v).ljust(w[i])
                        for i, v in enumerate(r)))

def k(rps):
    return "%.0fk" % (rps / 1e3) if rps >= 1e4 else "%.0f" % rps

rows, peak = load(sys.argv[1]), load(sys.argv[2])
errs = [l.strip() for l in open(sys.argv[3]) if l.strip()]
maxc = sys.argv[4]

print("wrk (one thread; shows latency, understates the peak):")
nginx = {r[1]: float(r[2]) for r in rows if r[0] == "nginx"}
out = []
for name, c, rps, mean, p95, e, nsf in rows:
    rps = float(rps)
    ratio = "%.2fx" % (rps / nginx[c]) if nginx.get(c) else "-"
    out.append([name, c, "%.0f" % rps, "%.0f us" % float(mean),
                "%d us" % int(p95), ratio, e, nsf])
table(["target", "conns", "RPS", "mean latency", "p95 latency", "vs nginx",
       "errors", "XDP ns/frame"], out)

pk = {r[0]: r for r in peak}
if peak:
    print()
    print("peak (blitz bench, %s conns):" % maxc)
    pn = float(pk["nginx"][2]) if "nginx" in pk else 0
    out = []
    for name, c, rps, mean, p95, e, busy, nsf in peak:
        rps = float(rps)
        out.append([name, c, "%.0f" % rps, "%.0f us" % float(mean),
                    "%.0f us" % float(p95),
                    "%.2fx" % (rps / pn) if pn else "-", e, busy + "%", nsf])
    table(["target", "conns", "RPS", "mean latency", "p95 latency",
           "vs nginx", "errors", "client busy", "XDP ns/frame"], out)
for e in errs:
    print("blitz bench: " + e)

wb = {r[1]: float(r[2]) for r in rows if r[0] == "blitz"}
if wb.get(maxc) and nginx.get(maxc):
    wrk = "wrk: blitz %s vs nginx %s (%.1fx) at %s conns" % (
        k(wb[maxc]), k(nginx[maxc]), wb[maxc] / nginx[maxc], maxc)
else:
    wrk = "wrk: no result at %s conns" % maxc
if "blitz" in pk and "nginx" in pk and float(pk["nginx"][2]) > 0:
    b, n = float(pk["blitz"][2]), float(pk["nginx"][2])
    head = "peak: blitz %s req/s vs nginx %s req/s (%.1fx), measured with blitz bench" % (
        k(b), k(n), b / n)
elif "blitz" in pk:
    head = "peak: blitz %s req/s measured with blitz bench (no nginx figure, see above)" % (
        k(float(pk["blitz"][2])))
else:
    head = "peak: not measured (blitz bench %s)" % (
        errs[0].split(" (")[0] if errs and not errs[0].startswith("against")
        else "failed, see above")
print("VERDICT " + head + "; " + wrk)
PY
then
	echo "demo: cannot format the results; raw rows (name conns rps mean p95 errors ...):"
	cat "$TMP/rows" "$TMP/peak" "$TMP/peak.err"
fi
grep -v '^VERDICT ' "$TMP/report"
echo
echo "XDP ns/frame: run_time_ns / run_cnt of blitz's program (kernel.bpf_stats_enabled)"
echo "during that run; every frame of the run, SYNs and ACKs included."

echo
show "$SRV_NS" stats "$SRV_IF"
$SRV "$BLITZ" stats "$SRV_IF" | awk 'NR == 1 || $2 > 0'
echo
show "$SRV_NS" unload "$SRV_IF"
$SRV "$BLITZ" unload "$SRV_IF" || echo "demo: blitz unload failed (the exit trap tries again)"
echo
sed -n 's/^VERDICT //p' "$TMP/report"
