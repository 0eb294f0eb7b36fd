#!/bin/bash
# scripts/demo.sh - the main job (`make demo`): build the veth testbed, load
# blitz onto the server's NIC with the CLI, benchmark its peak RPS against
# the kernel path (nginx, one worker) in the same run, unload, tear down.
# Every blitz command it runs is printed ("[netns]$ blitz ...") so the
# user sees the CLI at work.
#
#   server namespace: nginx on 8081 (CPU 1), measured first; then blitz's
#                     XDP program on port 8080 (loaded after nginx's rows:
#                     an XDP program on veth, even passing nginx's frames,
#                     makes veth copy every skb, which costs nginx 2.4x)
#   client namespace: wrk pinned to CPU 0, at each of CONNS connections;
#                     then `blitz bench` (AF_XDP load generator) at the
#                     largest CONNS against each, for the peak
#
# Placement is fair (scripts/placement.sh; PLACEMENT=default for the old
# one): both veths' NAPI threaded and pinned to their side's CPU, so every
# cycle of the server's work (blitz's XDP program runs in the server veth's
# NAPI, nginx's TCP too) lands on the server's CPU. Each row says what a
# request cost the server CPU (its /proc/stat busy time / requests) and
# which side was the limit (server when its CPU was >= 90% busy, both when
# the client was too, else client when it was, else neither). wrk (one
# thread) is usually the limit itself; `blitz bench` bypasses the client's
# kernel too and shows the peak. A failing `blitz bench` is reported and
# the wrk table is still printed.
# Also reads the XDP program's cost per frame from the kernel's BPF stats
# (kernel.bpf_stats_enabled) during the blitz runs.
# Owns: its testbed (DEMO_TB), its nginx and the blitz load on that testbed,
# all undone in the EXIT trap. Must never touch another interface.
# Env: BUILD (build dir), DURATION (seconds per run, default 5),
#      CONNS (default "10 100 300"), DEMO_TB (testbed prefix, default demo),
#      BLITZ_BENCH (default 1; 0 skips the `blitz bench` runs),
#      PLACEMENT (fair, the default, or default).
# shellcheck disable=SC2086 # $SRV/$CLI are command prefixes: they must split
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
# lib.sh brings the testbed helpers (tb_up, on_exit, wait_port).
# shellcheck source=tests/e2e/lib.sh
source "$here/tests/e2e/lib.sh"
# shellcheck source=scripts/placement.sh
source "$here/scripts/placement.sh"
export PLACEMENT

DURATION=${DURATION:-5}
CONNS=${CONNS:-10 100 300}
TB=${DEMO_TB:-demo}
BLITZ_BENCH=${BLITZ_BENCH:-1}
BLITZ_PORT=8080
NGINX_PORT=8081
SRV_CPU=1
CLI_CPU=0

# shellcheck source=scripts/lib.sh
source "$here/scripts/lib.sh"

# The blitz binary as the user would type it (relative to the tree).
BLITZ_SHOWN=${BLITZ#"$here"/}
# show NETNS ARGS... - print the blitz command line about to run, as the
# user would type it inside that namespace.
show() {
	local ns=$1
	shift
	echo "[$ns]\$ $BLITZ_SHOWN $*"
}

require_root
[ -x "$BLITZ" ] || die "$BLITZ is missing: run make"
for c in wrk nginx bpftool taskset curl ethtool; do
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

body=$($CLI timeout 5 curl -sS "http://$SRV_IP:$NGINX_PORT/")
[ "$body" = "Hello World!" ] || die "nginx answered '$body'"

# ---- blitz: loaded after nginx's rows ----
prog_id=
load_blitz() {
	echo
	show "$SRV_NS" load "$SRV_IF" -p "$BLITZ_PORT"
	$SRV "$BLITZ" load "$SRV_IF" -p "$BLITZ_PORT" | tee "$TMP/load.out" ||
		die "blitz load failed"
	on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
	prog_id=$(sed -n 's/.*prog id \([0-9]*\).*/\1/p' "$TMP/load.out")
	echo "(expected here: every request of this demo fits one segment, which the xdp engine answers by itself)"
	show "$SRV_NS" status "$SRV_IF"
	$SRV "$BLITZ" status "$SRV_IF" || die "blitz status failed"
	echo
	for port in "$BLITZ_PORT" "$NGINX_PORT"; do
		body=$($CLI timeout 5 curl -sS "http://$SRV_IP:$port/")
		[ "$body" = "Hello World!" ] || die "port $port answered '$body'"
	done
	# Attaching XDP may recreate the server veth's NAPI: place again.
	placement_quiet || true
}

SRV_CPUS=$SRV_CPU CLI_CPUS=$CLI_CPU
placement_apply || true
echo "CPU $SRV_CPU: nginx and blitz's XDP program (the server veth's NAPI); CPU $CLI_CPU: the clients"

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
	io.write(string.format("RESULT %.1f %.1f %d %d %d\n",
		summary.requests / (summary.duration / 1e6), latency.mean,
		latency:percentile(95),
		e.connect + e.read + e.write + e.status + e.timeout,
		summary.requests))
end
LUA

# cost_bound J0 J1 REQUESTS CLIENT_PCT - "ns_per_request bound_by" between
# two cpu_snapshot: the server CPU's busy time over the requests, and which
# side was the limit (placement.sh's bound_by; CLIENT_PCT: blitz bench's
# own busy time, as it spins; else the client CPU's).
cost_bound() {
	local sns scpu ccpu=$4
	sns=$(cpu_busy_ns "$1" "$2" "$SRV_CPU")
	scpu=$(cpu_busy_pct "$1" "$2" "$SRV_CPU")
	[ -n "$ccpu" ] || ccpu=$(cpu_busy_pct "$1" "$2" "$CLI_CPU")
	awk -v s="$sns" -v n="$3" 'BEGIN { if (n > 0) printf "%.0f ", s / n; else printf "- " }'
	bound_by "$ccpu" "$scpu" 0
}

# wrk_run NAME PORT CONNS - one wrk run; appends a row to $TMP/rows.
wrk_run() {
	local name=$1 port=$2 c=$3 res s0 s1 nsf=- j0 j1 cb
	s0=$(bpf_stat)
	j0=$(cpu_snapshot)
	$CLI taskset -c "$CLI_CPU" timeout $((DURATION + 15)) \
		wrk -t1 -c"$c" -d"${DURATION}s" --timeout 2s -s "$TMP/report.lua" \
		"http://$SRV_IP:$port/" >"$TMP/wrk.out" 2>&1
	j1=$(cpu_snapshot)
	s1=$(bpf_stat)
	res=$(sed -n 's/^RESULT //p' "$TMP/wrk.out")
	[ -n "$res" ] || res="0 0 0 -1 0"
	cb=$(cost_bound "$j0" "$j1" "$(awk '{print $5}' <<<"$res")" "")
	[ "$name" = blitz ] && nsf=$(ns_per_frame "$s0" "$s1")
	echo "$name $c $res $nsf $cb" >>"$TMP/rows"
	printf '  %-6s %4s conns: %s\n' "$name" "$c" "$(awk '{printf "%.0f req/s", $1}' <<<"$res")"
}

# peak_run NAME PORT CONNS - one `blitz bench` run; appends a row to
# $TMP/peak, or a line saying why not to $TMP/peak.err (returns 1).
peak_run() {
	local name=$1 port=$2 c=$3 s0 s1 nsf=- res why out=$TMP/bb-$1.json j0 j1 cb
	s0=$(bpf_stat)
	j0=$(cpu_snapshot)
	if ! $CLI taskset -c "$CLI_CPU" timeout $((DURATION + 20)) \
		"$BLITZ" bench "$SRV_IP:$port" -i "$CLI_IF" -c "$c" -d "$DURATION" \
		--json >"$out" 2>"$TMP/bb-$name.err"; then
		# Its last line says why, after the program's "blitz: " prefix.
		why=$(tail -n1 "$TMP/bb-$name.err" | sed 's/^blitz: //' | cut -c1-200)
		echo "against $name failed: ${why:-exit status only}" >>"$TMP/peak.err"
		echo "  $name: blitz bench failed: ${why:-exit status only}"
		return 1
	fi
	j1=$(cpu_snapshot)
	s1=$(bpf_stat)
	res=$("$PY" -c 'import json,sys
j = json.load(open(sys.argv[1]))
print("%.1f %.1f %.1f %d %.0f %d" % (j["rps"], j["lat_mean_us"], j["lat_p95_us"],
      j["errors"], j["client_busy_pct"], j["requests"]))' "$out" 2>/dev/null)
	if [ -z "$res" ]; then
		echo "against $name: unreadable result: $(head -c 200 "$out")" >>"$TMP/peak.err"
		echo "  $name: blitz bench printed no result"
		return 1
	fi
	cb=$(cost_bound "$j0" "$j1" "$(awk '{print $6}' <<<"$res")" "$(awk '{print $5}' <<<"$res")")
	[ "$name" = blitz ] && nsf=$(ns_per_frame "$s0" "$s1")
	echo "$name $c $res $nsf $cb" >>"$TMP/peak"
	printf '  %-6s %4s conns: %s\n' "$name" "$c" "$(awk '{printf "%.0f req/s", $1}' <<<"$res")"
}

max_conn=$(printf '%s\n' $CONNS | sort -n | tail -n1)
: >"$TMP/rows"
: >"$TMP/peak"
: >"$TMP/peak.err"
peak_ok=1
if [ "$BLITZ_BENCH" != 1 ]; then
	echo "skipped (BLITZ_BENCH=$BLITZ_BENCH)" >"$TMP/peak.err"
	peak_ok=0
elif ! "$BLITZ" bench -h >/dev/null 2>&1; then
	echo "not run: no \`blitz bench\` in $BLITZ_SHOWN" >"$TMP/peak.err"
	peak_ok=0
fi
# rows NAME PORT: wrk at each of CONNS, then blitz bench at the largest.
rows() {
	echo "$1: wrk -t1 on CPU $CLI_CPU, ${DURATION}s per run, connections: $CONNS"
	for c in $CONNS; do wrk_run "$1" "$2" "$c"; done
	if [ "$peak_ok" = 1 ]; then
		echo "$1: peak with blitz bench (AF_XDP client, kernel bypassed on the client too) on CPU $CLI_CPU"
		show "$CLI_NS" bench "$SRV_IP:$2" -i "$CLI_IF" -c "$max_conn" -d "$DURATION" --json
		peak_run "$1" "$2" "$max_conn"
	fi
}
# nginx first, with no XDP program on the server's veth: one there (even
# passing nginx's frames to the kernel) makes veth copy every skb for it,
# which cost nginx 2.4x its RPS (48k req/s at 21 us a request against
# 116-121k at 8.4-8.8 us without). On a NIC, XDP_PASS costs tens of ns.
echo
rows nginx "$NGINX_PORT"
load_blitz
rows blitz "$BLITZ_PORT"

echo
if ! "$PY" - "$TMP/rows" "$TMP/peak" "$TMP/peak.err" "$max_conn" >"$TMP/report" <<'PY'
import os
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
# name conns rps mean p95 errors requests xdp_ns/frame cost bound
for name, c, rps, mean, p95, e, _n, nsf, cost, bound in rows:
    rps = float(rps)
    ratio = "%.2fx" % (rps / nginx[c]) if nginx.get(c) else "-"
    out.append([name, c, "%.0f" % rps, "%.0f us" % float(mean),
                "%d us" % int(p95), ratio, e, cost, bound, nsf])
table(["target", "conns", "RPS", "mean latency", "p95 latency", "vs nginx",
       "errors", "ns/request", "bound by", "XDP ns/frame"], out)

pk = {r[0]: r for r in peak}
if peak:
    print()
    print("peak (blitz bench, %s conns):" % maxc)
    pn = float(pk["nginx"][2]) if "nginx" in pk else 0
    out = []
    # name conns rps mean p95 errors busy requests xdp_ns/frame cost bound
    for name, c, rps, mean, p95, e, busy, _n, nsf, cost, bound in peak:
        rps = float(rps)
        out.append([name, c, "%.0f" % rps, "%.0f us" % float(mean),
                    "%.0f us" % float(p95),
                    "%.2fx" % (rps / pn) if pn else "-", e, busy + "%", cost,
                    bound, nsf])
    table(["target", "conns", "RPS", "mean latency", "p95 latency",
           "vs nginx", "errors", "client busy", "ns/request", "bound by",
           "XDP ns/frame"], out)
for e in errs:
    print("blitz bench: " + e)

# The closing line: each side's best row (wrk or blitz bench), its cost per
# request, and the ratios, all from this run. A server's peak is at least
# the most it answered in any row: a server-bound row that answered less
# than another row (nginx under blitz bench at 300 connections: 41k req/s at
# 24.7 us a request, against 71k under wrk) is not its peak, so the best
# row by RPS is taken, and its "bound by" says whether it is the peak.
def best(name):
    cand = [(float(r[2]), r[-2], r[-1], "wrk" if len(r) == 10 else "blitz bench")
            for r in rows + peak if r[0] == name and float(r[2]) > 0]
    return max(cand) if cand else None

b, n = best("blitz"), best("nginx")
def say(name, x):
    s = "%s %s req/s at %s ns/request (%s" % (name, k(x[0]), x[1], x[3])
    if x[2] in ("server", "both"):
        return s + (", server-bound)" if x[2] == "server" else
                    ", server-bound, the client saturated too)")
    return s + ", bound by %s: not its peak)" % x[2]
if b and n:
    head = "peak: " + say("blitz", b) + " vs " + say("nginx", n)
    head += ": %.1fx nginx in RPS" % (b[0] / n[0])
    if b[1] != "-" and n[1] != "-" and float(b[1]) > 0:
        head += ", %.1fx in cost per request" % (float(n[1]) / float(b[1]))
    head += ", same run, fair placement" if os.environ.get("PLACEMENT", "fair") != "default" else ", same run, default placement"
elif b:
    head = "peak: " + say("blitz", b) + " (no nginx figure, see above)"
else:
    head = "peak: not measured (blitz bench %s)" % (
        errs[0].split(" (")[0] if errs and not errs[0].startswith("against")
        else "failed, see above")
print("VERDICT " + head)
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
# The closing line: the README's result, from the same generator as its
# table (scripts/gen-results.sh over docs/bench.json), to set this run beside.
# Its peak is 16 pipelined requests a segment, this demo's one: say so.
if ref=$(scripts/gen-results.sh headline 2>/dev/null); then
	echo "the README's run, for comparison (its peak pipelines 16 requests a segment, this demo's sends one: expect this one lower): $ref"
fi
