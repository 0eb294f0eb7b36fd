#!/bin/bash
# tests/e2e/test_differential.sh - one request corpus (tests/e2e/corpus/)
# sent to every engine; the responses must be byte-identical apart from
# the Date value, and each connection must end the same way (FIN or left
# open). docs/architecture.md: "One wire contract, every engine".
#
# ENGINES (environment, space-separated; the first is the reference):
#   epoll      `blitz serve -e epoll` alone (the kernel path)
#   xdp        `blitz load` with the TC hand-off and the epoll engine
#              behind it (what XDP does not answer goes to the kernel)
#   xdp_serve  `blitz serve <if> -e xdp` (the same, in one process)
#   afxdp      `blitz serve <if> -e afxdp`: the AF_XDP engine (a child of
#              serve) with the epoll listener behind it
#   dpdk       `blitz serve <if> -e dpdk`: blitz-dpdk on the server veth
#              (af_packet PMD, --takeover: the veth's addresses move to a
#              TAP while it runs), in a testbed of its own: the testbed is
#              built afresh after it
# Default: epoll xdp afxdp dpdk. More engines are one start_<name> each.
# DIFF_V6=1 sends the corpus over IPv6; DIFF_PARALLEL (8) connections at
# a time; DIFF_KEEP=1 keeps the responses for a look.
# An engine that cannot start here is SKIPped with the reason; with fewer
# than two engines nothing is compared and the test says SKIP, never PASS.
# Owns nothing outside its testbed (prefix h4b) and its temp dir.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

T=differential
PORT=8080
PREFIX=${DIFF_TB:-h4b}
ENGINES=${ENGINES:-epoll xdp afxdp dpdk}
CORPUS=$E2E_ROOT/tests/e2e/corpus
SEND=$E2E_ROOT/tests/e2e/send_raw.py
TOOL=$E2E_ROOT/$BUILD/tests/bpf/test_tc_handoff
[[ $BUILD = /* ]] && TOOL=$BUILD/tests/bpf/test_tc_handoff
PARALLEL=${DIFF_PARALLEL:-8}

need_root $T
need_cmds $T "$BLITZ" "$PY" || exit 0
TMP=$(mktemp -d)
if [ -n "${DIFF_KEEP:-}" ]; then echo "  outputs kept in $TMP"; else on_exit "rm -rf $TMP"; fi
if ! tb_up "$PREFIX" >"$TMP/tb.log" 2>&1; then
	fail $T "testbed: $(tail -1 "$TMP/tb.log")"
	exit 1
fi

# DIFF_V6=1: send the corpus over IPv6 instead.
DST=$SRV_IP
[ -n "${DIFF_V6:-}" ] && DST=$SRV_IP6

# ---- engines: start_<name> sets STOP (a command string) or fails ----
STOP=
serve_epoll_bg() { # the epoll engine alone, in the background
	# shellcheck disable=SC2086 # $SRV is a command prefix
	$SRV "$BLITZ" serve --engine epoll -p $PORT >>"$TMP/serve.log" 2>&1 &
	EPOLL_PID=$!
	wait_port "$CLI" "$SRV_IP" $PORT 5 && kill -0 "$EPOLL_PID" 2>/dev/null
}

start_epoll() {
	if ! serve_epoll_bg; then
		WHY="blitz serve --engine epoll did not start: $(tail -1 "$TMP/serve.log")"
		kill "$EPOLL_PID" 2>/dev/null
		return 1
	fi
	STOP="kill $EPOLL_PID; wait $EPOLL_PID"
}

# Without the hand-off, what XDP does not answer gets no reply at all.
handoff_supported() {
	if ! "$TOOL" supported - 2>/dev/null; then
		WHY="no TC hand-off on this kernel (bpf_sk_assign_tcp_reqsk, Linux >= 6.9)"
		return 1
	fi
}

start_xdp() {
	handoff_supported || return 1
	# shellcheck disable=SC2086
	if ! $SRV "$BLITZ" load "$SRV_IF" -p $PORT >"$TMP/load.log" 2>&1; then
		WHY="blitz load failed: $(tail -1 "$TMP/load.log")"
		return 1
	fi
	STOP="$SRV $BLITZ unload $SRV_IF"
	# shellcheck disable=SC2086
	if ! $SRV "$TOOL" present "$SRV_IF" 2>/dev/null &&
		! $SRV "$TOOL" attach "$SRV_IF" 2>"$TMP/attach.log"; then
		WHY="no TC hand-off: $(tail -1 "$TMP/attach.log")"
		eval "$STOP"
		return 1
	fi
	if ! serve_epoll_bg; then
		WHY="no epoll engine behind xdp: $(tail -1 "$TMP/serve.log")"
		kill "$EPOLL_PID" 2>/dev/null
		eval "$STOP"
		return 1
	fi
	STOP="kill $EPOLL_PID; wait $EPOLL_PID; $STOP"
	if ! has_xdp "$SRV_IF"; then
		WHY="no XDP program on $SRV_IF after blitz load"
		eval "$STOP"
		return 1
	fi
}

start_xdp_serve() {
	handoff_supported || return 1
	# shellcheck disable=SC2086
	$SRV "$BLITZ" serve "$SRV_IF" --engine xdp -p $PORT >"$TMP/serve_xdp.log" 2>&1 &
	local pid=$!
	# The epoll listener comes up first, then the fast path.
	wait_line "$TMP/serve_xdp.log" 'tier xdp' $pid 5
	if ! wait_port "$CLI" "$SRV_IP" $PORT 5 || ! kill -0 $pid 2>/dev/null ||
		! has_xdp "$SRV_IF"; then
		WHY="blitz serve $SRV_IF --engine xdp did not start: $(tail -1 "$TMP/serve_xdp.log")"
		kill $pid 2>/dev/null
		return 1
	fi
	STOP="kill $pid; wait $pid"
}

start_afxdp() {
	# shellcheck disable=SC2086
	$SRV "$BLITZ" serve "$SRV_IF" --engine afxdp -p $PORT >"$TMP/serve_afxdp.log" 2>&1 &
	local pid=$!
	# The engine child says so once its socket is bound.
	if ! wait_line "$TMP/serve_afxdp.log" "^afxdp: $SRV_IF queue 0" $pid 5 ||
		! wait_port "$CLI" "$SRV_IP" $PORT 5 || ! kill -0 $pid 2>/dev/null ||
		! has_xdp "$SRV_IF"; then
		WHY="blitz serve $SRV_IF --engine afxdp did not start: $(grep -v '^epoll: ' "$TMP/serve_afxdp.log" | tail -2 | tr '\n' ' ')"
		kill -INT $pid 2>/dev/null
		wait $pid 2>/dev/null
		return 1
	fi
	STOP="kill -INT $pid; wait $pid"
}

# blitz-dpdk through `blitz serve` (which execs it, so $! is blitz-dpdk).
# The client veth must not send TSO/GSO super-frames: af_packet truncates
# them to its 2 KB frames (tests/e2e/test_dpdk_engine.sh).
start_dpdk() {
	local dpdk
	dpdk=$(dirname "$BLITZ")/blitz-dpdk
	if [ ! -x "$dpdk" ]; then
		WHY="$dpdk is missing (DPDK not installed, or not built)"
		return 1
	fi
	if [ ! -c /dev/net/tun ]; then
		WHY="no /dev/net/tun: blitz-dpdk's exception path (TAP) cannot exist"
		return 1
	fi
	# shellcheck disable=SC2086
	$CLI ethtool -K "$CLI_IF" tso off gso off >/dev/null 2>&1
	# shellcheck disable=SC2086
	$SRV "$BLITZ" serve "$SRV_IF" --engine dpdk -p $PORT >"$TMP/serve_dpdk.log" 2>&1 &
	DPDK_PID=$!
	if ! wait_line "$TMP/serve_dpdk.log" '^blitz-dpdk: serving' $DPDK_PID 10 ||
		! wait_port "$CLI" "$SRV_IP" $PORT 5 || ! kill -0 $DPDK_PID 2>/dev/null; then
		WHY="blitz serve $SRV_IF --engine dpdk did not start: $(grep -vE '^(EAL|  |blitz: serving)' "$TMP/serve_dpdk.log" | tail -2 | tr '\n' ' ')"
		kill $DPDK_PID 2>/dev/null
		wait $DPDK_PID 2>/dev/null
		return 1
	fi
	STOP="kill $DPDK_PID; wait $DPDK_PID"
}

# Engines after which the testbed is built afresh (they reconfigure it).
FRESH_AFTER=" dpdk "
fresh_testbed() {
	"$E2E_ROOT"/scripts/testbed.sh down "$PREFIX" >/dev/null 2>&1
	tb_up "$PREFIX" >"$TMP/tb.log" 2>&1
}

# ---- the corpus ----
# send_one ENGINE FILE: writes ENGINE/NAME.out (normalised) and NAME.end
send_one() {
	local eng=$1 req=$2 name split=() raw
	name=$(basename "$req" .req)
	raw=$TMP/$eng/$name.raw
	if [ -f "${req%.req}.split" ]; then
		split=(--split "$(cat "${req%.req}.split")" --pause 0.3)
	fi
	# shellcheck disable=SC2086 # $CLI is a command prefix
	$CLI "$PY" "$SEND" "$DST" $PORT "$req" --out "$raw" --quiet 0.6 \
		--timeout 5 "${split[@]}" 2>"$TMP/$eng/$name.err"
	sed -n 's/^end=\([a-z]*\).*/\1/p' "$TMP/$eng/$name.err" >"$TMP/$eng/$name.end"
	# The Date value is the only byte allowed to differ; it must still
	# be an IMF-fixdate (anything else is left in and will differ).
	"$PY" -c '
import re, sys
d = open(sys.argv[1], "rb").read()
d = re.sub(rb"Date: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\n",
           b"Date: <date>\r\n", d)
open(sys.argv[2], "wb").write(d)' "$raw" "$TMP/$eng/$name.out"
}

run_corpus() {
	local eng=$1 req pids=()
	mkdir -p "$TMP/$eng"
	for req in "$CORPUS"/*.req; do
		send_one "$eng" "$req" &
		pids+=($!)
		# Wait for the senders only: the server runs in the background.
		if [ ${#pids[@]} -ge "$PARALLEL" ]; then
			wait "${pids[@]}"
			pids=()
		fi
	done
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
}

RAN=()
for eng in $ENGINES; do
	WHY=
	if ! declare -F "start_$eng" >/dev/null; then
		skip "${T}_$eng" "no engine named '$eng' in this test"
		continue
	fi
	if ! "start_$eng"; then
		skip "${T}_$eng" "$WHY"
		if [[ $FRESH_AFTER = *" $eng "* ]] && ! fresh_testbed; then
			fail "$T" "testbed after $eng: $(tail -1 "$TMP/tb.log")"
			break
		fi
		continue
	fi
	run_corpus "$eng"
	case $eng in
	xdp*)
		# Make sure the fast path itself answered, and that it handed
		# connections over: else this compares epoll with epoll.
		req=$(counter "$SRV_IF" requests)
		hof=$(counter "$SRV_IF" handoff)
		ok=0
		[ "$req" -gt 0 ] && [ "$hof" -gt 0 ] && ok=1
		check "${T}_${eng}_took_part" \
			"XDP answered $req request(s) and handed $hof segment(s) to the kernel" \
			[ $ok = 1 ]
		echo "  $eng: XDP answered $req request(s), handed over $hof segment(s)"
		;;
	afxdp)
		# The AF_XDP engine answered (it publishes every 250 ms), not
		# the epoll listener behind it.
		sleep 0.6
		req=$(counter "$SRV_IF" requests)
		nox=$(counter "$SRV_IF" pass_no_xsk)
		check "${T}_${eng}_took_part" \
			"the afxdp engine answered $req request(s); $nox segment(s) passed to the kernel" \
			[ "$req" -gt 0 ]
		echo "  $eng: the AF_XDP engine answered $req request(s), $nox segment(s) went to the kernel"
		;;
	dpdk)
		kill -USR1 "$DPDK_PID" 2>/dev/null
		sleep 0.5
		req=$(grep '^stats:' "$TMP/serve_dpdk.log" | tail -1 | sed -n 's/.* tcp\.requests=\([0-9]*\).*/\1/p')
		check "${T}_${eng}_took_part" "blitz-dpdk answered ${req:-no} request(s)" \
			[ "${req:-0}" -gt 0 ]
		echo "  $eng: blitz-dpdk answered ${req:-no} request(s)"
		;;
	esac
	eval "$STOP" >/dev/null 2>&1
	STOP=
	RAN+=("$eng")
	if [[ $FRESH_AFTER = *" $eng "* ]] && ! fresh_testbed; then
		fail "$T" "testbed after $eng: $(tail -1 "$TMP/tb.log")"
		break
	fi
done

if [ "${#RAN[@]}" -lt 2 ]; then
	skip $T "fewer than two engines ran (${RAN[*]:-none}): nothing to compare"
	e2e_status
	exit $?
fi

REF=${RAN[0]}
echo "  reference: $REF; compared: ${RAN[*]:1}"
for req in "$CORPUS"/*.req; do
	name=$(basename "$req" .req)
	why=
	ref=$TMP/$REF/$name.out
	if ! head -c 9 "$ref" | grep -q '^HTTP/1\.1 '; then
		why="$REF gave no HTTP/1.1 response ($(cat "$TMP/$REF/$name.end"))"
	fi
	for eng in "${RAN[@]:1}"; do
		[ -n "$why" ] && break
		if ! cmp -s "$ref" "$TMP/$eng/$name.out"; then
			why="$eng differs from $REF: $("$PY" -c '
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
print("at byte %d: %r vs %r" % (i, a[max(0, i - 20):i + 30], b[max(0, i - 20):i + 30]))' \
				"$ref" "$TMP/$eng/$name.out")"
		elif ! cmp -s "$TMP/$REF/$name.end" "$TMP/$eng/$name.end"; then
			why="$eng ends with $(cat "$TMP/$eng/$name.end"), $REF with $(cat "$TMP/$REF/$name.end")"
		fi
	done
	if [ -n "$why" ]; then fail "${T}_$name" "$why"; else pass "${T}_$name"; fi
done
# Every engine's keep-alive responses say how long an idle connection is
# kept (issue 10: Keep-Alive: timeout=60, within cookie v2's validity);
# closing ones do not. Checked on every response of every engine.
why=$("$PY" "$E2E_ROOT/tests/e2e/differential_compare.py" "$TMP" "${RAN[@]}")
check "${T}_keep_alive_timeout" "${why}" [ -z "$why" ]
e2e_status
