#!/bin/bash
# tests/e2e/test_conns.sh - many concurrent connections on the userspace TCP
# core: `blitz serve --engine afxdp` (then dpdk, where blitz-dpdk can start)
# sized with --max-conns, and `blitz bench -c N -n N --window 512` from one
# source address (N = CONNS_N, default 20,000), which opens all N before
# its clock starts and then sends one request on each. Checks, per engine:
#   *_held       all N connections established at once (peak_established)
#   *_answered   each of them got a 200 (conns_answered = N), 0 errors
#   *_fast_path  serve's kernel (epoll) path accepted none of them and the
#                XDP program passed no segment as kernel-owned: the
#                generator started only once the fast path was up (serve's
#                kernel listener answers first, and a connection it accepts
#                stays the kernel's)
# and afxdp_idle_timeout: serve --idle-timeout 1 closes an idle keep-alive
# connection of the afxdp engine within 6 s (the core's default is 60 s);
# afxdp_umem: a queue whose table holds at most 65,536 connections gets
# 4,096 UMEM frames, one over that 16,384 (its RX ring must hold the
# bursts of many connections); client_queue: the testbed's client veth has
# its transmit queue (a full server ring then stops it instead of dropping
# the frame); afxdp_umem_option: serve --umem-frames 2048 gets 2,048 at a
# table that would give 16,384, and answers.
# Bounded: every run under `timeout`, about 15 s an engine on a quiet
# machine.
#
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=conns
PORT=8080
N=${CONNS_N:-20000}
e2e_begin "$T" "${CONNS_TB:-cnb}"
need_cmds "$T" jq || exit 0
PINS=/sys/fs/bpf/blitz/$SRV_IF
on_exit "rm -rf '$PINS'"
SERVE_PID=

start() { # ENGINE LOG: 0 up, 1 failed, 2 cannot run here
	local e=$1 log=$2 what="^afxdp: $SRV_IF queue 0" secs=15
	[ "$e" = dpdk ] && what="^blitz-dpdk: serving" secs=30
	$SRV "$BLITZ" serve "$SRV_IF" --engine "$e" -p "$PORT" --max-conns $((N + 4096)) \
		>"$log" 2>&1 &
	SERVE_PID=$!
	on_exit "kill -9 $SERVE_PID"
	if ! wait_line "$log" "$what" "$SERVE_PID" "$secs"; then
		[ "$e" = dpdk ] && grep -qiE "not available|cannot start|did not start" "$log" && return 2
		return 1
	fi
}

for e in ${CONNS_ENGINES:-afxdp dpdk}; do
	rm -rf "$PINS"
	log=$TMP/$e.log
	start "$e" "$log"
	rc=$?
	if [ "$rc" = 2 ]; then
		skip "${T}_$e" "blitz-dpdk cannot start here: $(tail -2 "$log" | tr '\n' ' ')"
		stop_pid "$SERVE_PID" INT 10
		continue
	fi
	if [ "$rc" != 0 ]; then
		fail "${T}_${e}_serve" "$(tail -3 "$log" | tr '\n' ' ')"
		stop_pid "$SERVE_PID" INT 10
		continue
	fi
	# One address: ports 1024-65535 are 64,512 slots, two a connection.
	$CLI timeout 50 "$BLITZ" bench "$SRV_IP:$PORT" -i "$CLI_IF" -c "$N" -n "$N" -d 20 \
		--ramp 15 --ports 1024-65535 --window 512 --json >"$TMP/$e.json" 2>"$TMP/$e.err"
	owned=$($SRV "$BLITZ" stats "$SRV_IF" --json 2>/dev/null | jq -r '.counters.pass_kernel_owns // empty')
	# dpdk's port has no XDP program of serve's to count kernel-owned
	# segments: its kernel path is the TAP, which the epoll count covers.
	[ "$e" = afxdp ] || owned=0
	stop_pid "$SERVE_PID" INT 10
	kern=$(sed -n 's/^epoll: \([0-9]*\) connections.*/\1/p' "$log" | tail -n1)
	if ! jq -e . "$TMP/$e.json" >/dev/null 2>&1; then
		fail "${T}_${e}_held" "no result from blitz bench: $(tail -2 "$TMP/$e.err" | tr '\n' ' ')"
		continue
	fi
	r=$(jq -r '"\(.peak_established) \(.conns_answered) \(.errors) \(.ramp_s) \(.duration_s) \(.syn_retransmits) \(.data_retransmits)"' "$TMP/$e.json")
	read -r held answered errors ramp dur synr datar <<<"$r"
	echo "# $e: $held held, $answered answered, $errors errors, opened in $ramp s, answered in $dur s, retransmits SYN $synr data $datar; kernel path ${kern:-?} connections, pass_kernel_owns ${owned:-?}"
	check "${T}_${e}_held" "$held of $N connections established at once" [ "$held" = "$N" ]
	check "${T}_${e}_answered" "$answered of $N connections answered, $errors errors" \
		test "$answered" = "$N" -a "$errors" = 0
	check "${T}_${e}_fast_path" "the kernel path accepted ${kern:-?} connections, pass_kernel_owns ${owned:-?}" \
		test "${kern:-x}" = 0 -a "${owned:-x}" = 0
done
qd=$($CLI tc qdisc show dev "$CLI_IF")
check "${T}_client_queue" "the client veth's qdisc: $qd" grep -q "^qdisc pfifo" <<<"$qd"

# serve --idle-timeout reaches the engine's TCP core: a keep-alive
# connection left idle after its answer is closed by the server (EOF)
# within 6 s with --idle-timeout 1 (the core's own default is 60 s).
idle_closed() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	$CLI timeout 12 bash -c '
		exec 3<>"/dev/tcp/$0/$1" || exit 2
		printf "GET / HTTP/1.1\r\nHost: x\r\n\r\n" >&3
		read -r -t 3 line <&3 || exit 3
		case $line in "HTTP/1.1 200"*) ;; *) exit 4 ;; esac
		timeout 6 cat <&3 >/dev/null' "$SRV_IP" "$PORT"
}
rm -rf "$PINS"
# --max-conns over the default 65,536 of one queue: the larger UMEM.
$SRV "$BLITZ" serve "$SRV_IF" --engine afxdp -p "$PORT" --idle-timeout 1 --max-conns 70000 >"$TMP/idle.log" 2>&1 &
SERVE_PID=$!
on_exit "kill -9 $SERVE_PID"
if wait_line "$TMP/idle.log" "^afxdp: $SRV_IF queue 0" "$SERVE_PID" 15; then
	idle_closed
	rc=$?
	check "${T}_afxdp_idle_timeout" "an idle keep-alive connection was not closed within 6 s of --idle-timeout 1 (status $rc; 124: still open)" [ "$rc" = 0 ]
	umem_small=$(sed -n 's/.* \([0-9]*\) UMEM frames.*/\1/p' "$TMP/afxdp.log" 2>/dev/null | head -n1)
	umem_big=$(sed -n 's/.* \([0-9]*\) UMEM frames.*/\1/p' "$TMP/idle.log" | head -n1)
	check "${T}_afxdp_umem" "UMEM frames: ${umem_small:-?} at --max-conns $((N + 4096)), ${umem_big:-?} at 70000 (want 4096, 16384)" \
		test "${umem_small:-x}" = 4096 -a "${umem_big:-x}" = 16384
else
	fail "${T}_afxdp_idle_timeout" "serve did not start: $(tail -2 "$TMP/idle.log" | tr '\n' ' ')"
fi
stop_pid "$SERVE_PID" INT 10

# serve --umem-frames overrides the size the table would give.
rm -rf "$PINS"
$SRV "$BLITZ" serve "$SRV_IF" --engine afxdp -p "$PORT" --max-conns 70000 --umem-frames 2048 >"$TMP/umem.log" 2>&1 &
SERVE_PID=$!
on_exit "kill -9 $SERVE_PID"
if wait_line "$TMP/umem.log" "^afxdp: $SRV_IF queue 0" "$SERVE_PID" 15; then
	umem=$(sed -n 's/.* \([0-9]*\) UMEM frames.*/\1/p' "$TMP/umem.log" | head -n1)
	check "${T}_afxdp_umem_option" "UMEM frames with --umem-frames 2048 at --max-conns 70000: ${umem:-?}" \
		test "${umem:-x}" = 2048
	check "${T}_afxdp_umem_option_serves" "no answer with --umem-frames 2048" \
		$CLI timeout 5 curl -sf -o /dev/null "http://$SRV_IP:$PORT/"
else
	fail "${T}_afxdp_umem_option" "serve did not start: $(tail -2 "$TMP/umem.log" | tr '\n' ' ')"
fi
stop_pid "$SERVE_PID" INT 10
e2e_status
