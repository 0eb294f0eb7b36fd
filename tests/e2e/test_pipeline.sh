#!/bin/bash
# tests/e2e/test_pipeline.sh - TechEmpower-shaped pipelining against
# `blitz load` ALONE (no kernel listener on the port: whatever blitz does
# not answer is reset), issue 12 parts 2 and 4: h2load --h1 -m 16 and
# `blitz bench -P 16` get every response (0 failed, 0 errors) and the
# client's TCP retransmits (almost) nothing: batches too big for one XDP
# frame are answered by the TC program in several segments. Then nginx on
# the same port with the same clients, and both RPS printed side by side
# (asserted: correctness only; speed is for scripts/bench.sh).
# Testbed prefix: $PIPELINE_TB (default e2epip). Every client runs under
# `timeout`; the testbed goes down in a trap.
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=pipeline
PORT=8080
N=20000
MAX_RETRANS=20 # of about 2,500 request segments: "near 0"

e2e_begin "$T" "${PIPELINE_TB:-e2epip}"
if ! command -v h2load >/dev/null; then
	skip "${T}_h2load" "h2load is not installed (scripts/install-deps.sh)"
	exit 0
fi

# The client namespace's retransmitted segments so far.
retrans() {
	$CLI nstat -az TcpRetransSegs 2>/dev/null | awk '/TcpRetransSegs/ {print $2; f=1} END {if (!f) print 0}'
}

# h2l NAME: h2load -m 16 against the server; sets ok, failed, rps, rtx.
h2l() {
	local r0
	r0=$(retrans)
	$CLI timeout 60 h2load --h1 -n $N -c 20 -m 16 "http://$SRV_IP:$PORT/" >"$TMP/$1.h2" 2>&1
	rtx=$(($(retrans) - r0))
	ok=$(sed -n 's/^requests: .* \([0-9]*\) succeeded, \([0-9]*\) failed.*/\1/p' "$TMP/$1.h2")
	failed=$(sed -n 's/^requests: .* succeeded, \([0-9]*\) failed.*/\1/p' "$TMP/$1.h2")
	rps=$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' "$TMP/$1.h2")
	ok=${ok:-0} failed=${failed:--1} rps=${rps:-0}
}

# bnc NAME: blitz bench -P 16 for 2 s; sets bok, berr, brps, brtx.
bnc() {
	local r0
	r0=$(retrans)
	$CLI timeout 60 "$BLITZ" bench "$SRV_IP:$PORT" -i "$CLI_IF" -c 20 -P 16 -d 2 --json \
		>"$TMP/$1.json" 2>"$TMP/$1.err"
	# bench runs its own TCP: its retransmissions are in its JSON
	brtx=$(jq -r '.retransmits // -1' "$TMP/$1.json" 2>/dev/null)
	bok=$(jq -r '.ok // 0' "$TMP/$1.json" 2>/dev/null)
	berr=$(jq -r '.errors // -1' "$TMP/$1.json" 2>/dev/null)
	brps=$(jq -r '.rps // 0 | floor' "$TMP/$1.json" 2>/dev/null)
	: "$r0"
}

# ---- blitz load alone ----
e2e_load "$T" -p $PORT
if grep -q "nothing listens on port $PORT" "$TMP/load.out"; then
	pass "${T}_alone"
else
	fail "${T}_alone" "a kernel listener is on port $PORT: $(tr '\n' '|' <"$TMP/load.out")"
fi

h2l blitz
b_rps=$rps
tc=$(counter "$SRV_IF" tc_requests)
if [ "$ok" -eq $N ] && [ "$failed" -eq 0 ] && [ "$rtx" -le $MAX_RETRANS ] && [ "$tc" -gt 0 ]; then
	pass "${T}_h2load_m16 ($ok of $N, $rtx client retransmissions, $tc answered by TC)"
else
	fail "${T}_h2load_m16" "$ok of $N succeeded, $failed failed, $rtx client retransmissions, tc_requests $tc: $(grep -E '^requests|^status' "$TMP/blitz.h2" | tr '\n' ' ')"
fi

bnc blitz_bench
b_brps=$brps
if [ "$bok" -gt 0 ] && [ "$berr" -eq 0 ] && [ "$brtx" -ge 0 ] && [ "$brtx" -le $MAX_RETRANS ]; then
	pass "${T}_bench_P16 ($bok responses, $brtx retransmissions)"
else
	fail "${T}_bench_P16" "ok $bok errors $berr retransmits $brtx: $(tr '\n' ' ' <"$TMP/blitz_bench.err" | tail -c 300)"
fi
echo "  blitz counters: tc_requests $(counter "$SRV_IF" tc_requests) tc_segments $(counter "$SRV_IF" tc_segments) tc_partial $(counter "$SRV_IF" tc_partial) tc_gso $(counter "$SRV_IF" tc_gso) tc_fail $(counter "$SRV_IF" tc_fail) pass_too_big $(counter "$SRV_IF" pass_too_big) drop_bad_cookie $(counter "$SRV_IF" drop_bad_cookie)"
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

# ---- nginx on the same port, the same clients ----
if ! command -v nginx >/dev/null; then
	skip "${T}_nginx" "nginx is not installed: no RPS beside blitz's"
	exit 0
fi
if ! nginx_start $PORT 1024 "	keepalive_requests 1000000;" \
	"		default_type text/plain;"; then
	fail "${T}_nginx" "nginx did not start: $(tr '\n' ' ' <"$TMP/ngx/out.log")"
	exit 1
fi
h2l nginx
bnc nginx_bench
check "${T}_nginx_reference" "nginx: $ok of $N, $failed failed (the client, not blitz, would be at fault)" \
	[ "$ok" -eq $N ]
echo "  RPS, same client, same run (veth, shared CPUs: not a benchmark):"
echo "    h2load --h1 -n $N -c 20 -m 16: blitz load $b_rps, nginx $rps"
echo "    blitz bench -c 20 -P 16 -d 2:  blitz load $b_brps, nginx $brps"
