#!/bin/bash
# tests/e2e/test_reload.sh - `blitz reload` under load (issue 17 item 2):
# the xdp engine loaded with key A, then two clients at once for the
# length of 20 reloads -
#   - `blitz bench` (its own TCP over AF_XDP), open loop, every response
#     checked: 0 errors, 0 RSTs received;
#   - tests/e2e/fleet_client.py, keep-alive connections of the client
#     kernel's TCP (timestamps, PAWS) that never reconnect: 0 failed, 0
#     resets, and the client's own TcpEstabResets (nstat) unchanged;
# while every reload changes the body (v1..v20; each must be seen by the
# client), and some the content type, the addresses, the MACs and the key
# (A -> B at reload 10: the old key stays accepted), each one a new
# program instance with new config maps. The server must drop no segment
# as a bad cookie and answer none with an expired-cookie RST. Then: bad
# arguments (a new port, a missing body file, a body too big, a second
# rotation inside the first one's window, a bad MAC, a loose key file)
# each give one line and leave the loaded program and body as they were;
# `load --replace` is reload; unload after reloads leaves nothing.
# Reports bench's p99 without and with reloads (the reload's added
# latency; not asserted). 1-4 minutes here, most of it the 20 reloads
# (each loads a new program: 7-10 s apiece seen on a loaded 2-CPU machine).
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=reload
PORT=8080
RELOADS=${RELOADS:-20}
need_cmds $T nstat || exit 0
e2e_begin "$T" "${RELOAD_TB:-e2erl}"
KA=$TMP/a.key
KB=$TMP/b.key
KC=$TMP/c.key
for k in "$KA" "$KB" "$KC"; do
	(umask 077 && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$k")
done

# The kernel's ephemeral ports stay out of bench's source ports.
$CLI sysctl -qw net.ipv4.ip_local_port_range="20000 39999"

e2e_load "$T" -p "$PORT" --secret-file "$KA" --body v0
prog_id() { $SRV ip -j link show dev "$SRV_IF" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0].get("xdp",{}).get("prog",{}).get("id",0))'; }
# shellcheck disable=SC2086
get() { $CLI curl -s -m 5 "http://$SRV_IP:$PORT/"; }

# ---- bench alone: the baseline p99 ----
bench() { # SECONDS OUT: open loop, 1000 req/s over 20 connections
	# shellcheck disable=SC2086
	$CLI "$BLITZ" bench "$SRV_IP:$PORT" -i "$CLI_IF" -c 20 -R 1000 -d "$1" --json >"$2" 2>"$2.err"
}
jf() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null || echo -1; }
bench 5 "$TMP/base.json"
BASE_P99=$(jf "$TMP/base.json" lat_p99_us)
check "${T}_bench_baseline" "bench without reloads: $(head -c 300 "$TMP/base.json" "$TMP/base.json.err")" \
	[ "$(jf "$TMP/base.json" errors)" = 0 ]

# ---- 20 reloads under load ----
bad0=$(counter "$SRV_IF" drop_bad_cookie)
rst0=$(counter "$SRV_IF" rst_expired)
nres0=$($CLI nstat -asz TcpEstabResets | awk '/TcpEstabResets/ {print $2}')
# Both clients run until the reloads are done ($TMP/stop, SIGINT); their
# own bounds only cap a test gone wrong (a reload takes seconds on a loaded
# machine: 20 of them took 149 s once, past a fixed 150 s client).
$CLI "$BLITZ" bench "$SRV_IP:$PORT" -i "$CLI_IF" -c 20 -R 1000 -d 480 --json \
	>"$TMP/load.json" 2>"$TMP/load.json.err" &
BPID=$!
on_exit "kill -INT $BPID"
# shellcheck disable=SC2086
$CLI "$PY" "$E2E_ROOT/tests/e2e/fleet_client.py" "$SRV_IP" "$PORT" 40 480 100 - "$TMP/stop" \
	"$TMP/seen" >"$TMP/ka.json" 2>"$TMP/ka.err" &
KPID=$!
# wait_seen BODY - wait (at most 30 s) until the keep-alive connections have had
# BODY as an answer: the next reload comes only once this one was seen,
# whatever the machine's load.
wait_seen() {
	local i
	for ((i = 0; i < 300; i++)); do
		grep -qxF -- "$1" "$TMP/seen" 2>/dev/null && return 0
		kill -0 "$KPID" 2>/dev/null || break
		sleep 0.1
	done
	grep -qxF -- "$1" "$TMP/seen" 2>/dev/null
}
unseen=""
wait_seen v0 || unseen+=" v0"
ok=0 fails=""
t0=$(date +%s.%N)
for ((i = 1; i <= RELOADS; i++)); do
	extra=()
	case $i in
	5) extra=(--content-type text/html) ;;
	8) extra=(-a "$SRV_IP") ;;
	10) extra=(--secret-file "$KB") ;;
	12) extra=(--mac 02:00:5e:00:01:07) ;;
	15) extra=(--content-type application/json) ;;
	esac
	if $SRV "$BLITZ" reload "$SRV_IF" --body "v$i" "${extra[@]}" >"$TMP/r$i.out" 2>&1; then
		ok=$((ok + 1))
	else
		fails+="$i: $(tr '\n' ' ' <"$TMP/r$i.out") "
	fi
	wait_seen "v$i" || unseen+=" v$i"
done
t1=$(date +%s.%N)
touch "$TMP/stop"
kill -INT "$BPID" 2>/dev/null
wait "$BPID" "$KPID"
check "${T}_reloads_done" "$ok of $RELOADS reloads: $fails" [ "$ok" = "$RELOADS" ]
grep -q "new cookie key" "$TMP/r10.out" || fail "${T}_rotation_said" "$(cat "$TMP/r10.out")"

LOAD_P99=$(jf "$TMP/load.json" lat_p99_us)
berr=$(jf "$TMP/load.json" errors) brst=$(jf "$TMP/load.json" rst_rx) bok=$(jf "$TMP/load.json" ok)
bench_clean() { [ "$berr" = 0 ] && [ "$brst" = 0 ] && [ "$bok" -gt 1000 ]; }
check "${T}_bench_no_errors" "bench during reloads: errors $berr, RSTs received $brst, ok $bok: $(tail -c 300 "$TMP/load.json.err")" \
	bench_clean
KA_RES=$(cat "$TMP/ka.json")
ka() { "$PY" -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2], -1))' "$KA_RES" "$1" 2>/dev/null || echo -1; }
ka_clean() { [ "$(ka opened)" = 40 ] && [ "$(ka failed)" = 0 ] && [ "$(ka resets)" = 0 ]; }
check "${T}_keepalive_no_failures" "keep-alive client: $KA_RES $(tail -1 "$TMP/ka.err")" ka_clean
nres1=$($CLI nstat -asz TcpEstabResets | awk '/TcpEstabResets/ {print $2}')
check "${T}_client_no_resets" "client TcpEstabResets $nres0 -> $nres1" [ "$nres0" = "$nres1" ]
seen=$("$PY" -c 'import json,sys
b = json.loads(sys.argv[1])["bodies"]
n = int(sys.argv[2])
print(sum(1 for i in range(n + 1) if b.get("v%d" % i, 0) > 0))' "$KA_RES" "$RELOADS" 2>/dev/null || echo 0)
check "${T}_every_body_seen" "bodies seen by the live connections: $seen of $((RELOADS + 1)) (not within 30 s of its reload:${unseen:- none}) ($KA_RES)" \
	[ "$seen" = $((RELOADS + 1)) ]
bad1=$(counter "$SRV_IF" drop_bad_cookie)
rst1=$(counter "$SRV_IF" rst_expired)
srv_clean() { [ "$bad0" = "$bad1" ] && [ "$rst0" = "$rst1" ]; }
check "${T}_no_bad_cookie" "server drop_bad_cookie $bad0 -> $bad1, rst_expired $rst0 -> $rst1" srv_clean
check "${T}_new_body_after" "after the reloads: '$(get)'" [ "$(get)" = "v$RELOADS" ]
ctype=$($CLI curl -s -m 5 -o /dev/null -w '%{content_type}' "http://$SRV_IP:$PORT/")
check "${T}_content_type_kept" "Content-Type '$ctype' (set at reload 15, read back from the loaded template since)" \
	[ "$ctype" = application/json ]
echo "# reload: $RELOADS reloads in $(echo "$t1 - $t0" | bc) s under 1000 req/s (bench) + 400 req/s (keep-alive)"
echo "# reload: bench p99 $BASE_P99 us without reloads, $LOAD_P99 us with; max $(jf "$TMP/base.json" lat_max_us) / $(jf "$TMP/load.json" lat_max_us) us; retransmits $(jf "$TMP/base.json" retransmits) / $(jf "$TMP/load.json" retransmits)"

# ---- bad arguments: one line each, nothing changed ----
PID0=$(prog_id)
bad_arg() { # NAME WHY-PATTERN ARGS...
	local name=$1 pat=$2 rc lines
	shift 2
	$SRV "$BLITZ" reload "$SRV_IF" "$@" >"$TMP/bad.out" 2>&1
	rc=$?
	lines=$(grep -c . "$TMP/bad.out")
	if [ $rc -ne 0 ] && [ "$lines" = 1 ] && grep -qE -- "$pat" "$TMP/bad.out" &&
		[ "$(prog_id)" = "$PID0" ] && [ "$(get)" = "v$RELOADS" ]; then
		pass "${T}_bad_$name"
	else
		fail "${T}_bad_$name" "rc $rc, $lines lines: $(tr '\n' ' ' <"$TMP/bad.out"); prog $PID0 -> $(prog_id), body '$(get)'"
	fi
}
bad_arg port "keeps the port" -p 9090 --body nope
bad_arg body_file "body-file|No such file|cannot" --body-file "$TMP/none"
bad_arg too_big "does not fit" --body "$(head -c 3000 /dev/zero | tr '\0' x)"
# (back to A would be safe: A is the previous key; C would cut A's.)
bad_arg second_rotation "still accepted" --secret-file "$KC"
bad_arg mac "bad --mac" --mac 01:00:00:00:00:01
cp "$KB" "$TMP/loose.key" && chmod 644 "$TMP/loose.key"
bad_arg loose_key "600|mode" --secret-file "$TMP/loose.key"
bad_arg both_keys "not both" --secret-file "$KA" --accept-key "$KB"
out=$($SRV "$BLITZ" reload "${SRV_IF}x" --body x 2>&1)
check "${T}_bad_no_interface" "reload on a missing interface: $out" [ "$(printf '%s\n' "$out" | grep -c .)" = 1 ]

# ---- load --replace is reload ----
if $SRV "$BLITZ" load "$SRV_IF" --replace --body replaced >"$TMP/rep.out" 2>&1 &&
	grep -q "reloaded" "$TMP/rep.out" && [ "$(get)" = replaced ]; then
	pass "${T}_load_replace"
else
	fail "${T}_load_replace" "$(tr '\n' ' ' <"$TMP/rep.out"); body '$(get)'"
fi

# ---- unload after reloads: nothing left ----
TCID=$(sed -n 's/.*hand-off [0-9]* -> \([0-9]*\).*/\1/p' "$TMP/rep.out")
tc_link_of() { bpftool link show -j 2>/dev/null | "$PY" -c 'import json,sys; print(any(l.get("prog_id") == int(sys.argv[1]) for l in json.load(sys.stdin)))' "${1:-0}"; }
if $SRV "$BLITZ" unload "$SRV_IF" >"$TMP/unload.out" 2>&1 && ! has_xdp "$SRV_IF" &&
	[ ! -e "/sys/fs/bpf/blitz/$SRV_IF" ] &&
	[ -n "$TCID" ] && [ "$(tc_link_of "$TCID")" = False ]; then
	pass "${T}_unload_after_reloads"
else
	fail "${T}_unload_after_reloads" "$(tr '\n' ' ' <"$TMP/unload.out"); pins: $(ls "/sys/fs/bpf/blitz/$SRV_IF" 2>&1); hand-off $TCID linked: $(tc_link_of "$TCID")"
fi
e2e_status
