#!/bin/bash
# tests/e2e/test_serve_attach.sh - attaching the fast path under live
# load breaks no connection. `blitz serve --engine xdp` answers on its
# kernel listener first and attaches XDP and the TC hand-off under it, so
# h2load starts the moment the port answers and keeps running across the
# attach: one long pipelined run (-D) whose connections are the kernel's
# from before the attach, and back-to-back short runs (-n, -m 16 and -m 1
# in turn) whose connections are made before, during and after it. Every
# request of every short run must succeed, without loss and with 5% of the
# frames the client receives dropped (tests/e2e/lib_loss.sh), and the fast
# path must have answered some. h2load -D counts no error for a reset
# connection, so without loss the server's kernel must also have sent no
# RST (what a connection it has no socket for gets). Then `blitz load` in
# front of `blitz serve --engine epoll`: short runs across its attach, and
# a long run (the kernel's connections) across the load and the unload.
# Each case waits until the client's connections have closed (a long run
# ends with requests in flight, re-sent under loss) so that none of them
# meets the next case's server; a case in which every run began after the
# fast path was armed (a slow start under loss) is run again, at most
# three times.
# Testbed prefix: $SERVE_ATTACH_TB (default e2esa). Every client runs under
# `timeout`; the testbed goes down in a trap.
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_loss.sh
source "$(dirname "$0")/lib_loss.sh"
# shellcheck source=tests/e2e/lib_epoll.sh
source "$(dirname "$0")/lib_epoll.sh"

T=serve_attach
PORT=8080
N=2000       # requests of each short run
MAX_RUNS=120 # bounds the loop of short runs (the attach takes seconds)

e2e_begin "$T" "${SERVE_ATTACH_TB:-e2esa}"
if ! command -v h2load >/dev/null; then
	skip "$T" "h2load is not installed (scripts/install-deps.sh)"
	exit 0
fi
URL="http://$SRV_IP:$PORT/"

# h2_counts FILE - "succeeded failed errored" of an h2load output.
h2_counts() {
	sed -n 's/^requests: .* \([0-9]*\) succeeded, \([0-9]*\) failed, \([0-9]*\) errored.*/\1 \2 \3/p' "$1"
}

# out_rsts - the RSTs the server namespace's kernel has sent (Tcp
# OutRsts): a connection reset while a fast path attaches or detaches is
# reset by the kernel (it has no socket for it), so the kernel's count
# says what h2load -D does not (it counts no error for a reset connection).
out_rsts() { # shellcheck disable=SC2016 # awk fields, not shell
	$SRV awk '/^Tcp:/ { if (!n) { for (i = 2; i <= NF; i++) if ($i == "OutRsts") n = i } else print $n }' /proc/net/snmp
}

# snmp_all - every counter of the server namespace's /proc/net/snmp and
# netstat, one "GroupName value" a line: what a failed RST check prints
# the changes of (TcpExt's TCPAbortOnData, TCPAbortOnClose... say why the
# kernel reset; none of them moving says it had no socket).
snmp_all() { # shellcheck disable=SC2016 # awk fields, not shell
	$SRV awk '{ if (FNR % 2) { split($0, h) } else { for (i = 2; i <= NF; i++) print h[1] h[i], $i } }' /proc/net/netstat /proc/net/snmp
}

# snmp_moved BEFORE - the counters about resets, aborts, listeners and
# cookies that moved since the snapshot BEFORE (a file snmp_all wrote),
# "name +delta" on one line.
snmp_moved() {
	snmp_all | awk 'NR == FNR { v[$1] = $2; next }
		$1 ~ /Rst|Reset|Abort|Listen|Cookie|PAWS|Challenge|Attempt/ && $2 != v[$1] { printf "%s +%d ", $1, $2 - v[$1] }' "$1" -
}

# rst_trace_start - record, in a tracing instance of its own, every RST
# the kernel sends (the tcp_send_reset event: the socket's state and the
# kernel's reason, NO_SOCKET and the rest), so that a failed RST check
# can say which connections were reset and why. Quietly nothing where
# tracefs cannot be mounted.
RST_TRACE=''
rst_trace_start() {
	local t=/sys/kernel/tracing
	if [ -n "$RST_TRACE" ]; then # a case before had it: start afresh
		: >"$RST_TRACE/trace"
		echo 1 >"$RST_TRACE/events/tcp/tcp_send_reset/enable"
		return 0
	fi
	[ -d $t/instances ] || mount -t tracefs nodev $t 2>/dev/null || return 0
	[ -e $t/events/tcp/tcp_send_reset ] || return 0
	RST_TRACE=$t/instances/blitz_serve_attach_$$
	mkdir "$RST_TRACE" 2>/dev/null || { RST_TRACE=''; return 0; }
	on_exit "rmdir '$RST_TRACE'"
	echo 1 >"$RST_TRACE/events/tcp/tcp_send_reset/enable"
}

# rst_trace_show - the recorded RSTs the server sent (at most 5), on one
# line. The event is every namespace's; its src is the side that sends
# the RST (the socket's local end, or with none the segment's destination),
# so the server's are those from the service's port (a listener's reads
# [::]:PORT) and not from the client's address.
rst_trace_show() {
	[ -n "$RST_TRACE" ] || return 0
	echo 0 >"$RST_TRACE/events/tcp/tcp_send_reset/enable"
	grep -E "src=[^ ]*:$PORT dest=" "$RST_TRACE/trace" | grep -vF "src=$CLI_IP:" | head -5 |
		sed 's/.*tcp_send_reset: //; s/skbaddr=[^ ]* skaddr=[^ ]* //' | tr '\n' ';'
}

# long_start NAME SECONDS - a pipelined h2load run in the background.
long_start() {
	$CLI timeout $(($2 + 30)) h2load --h1 -D "$2" -c 20 -m 16 "$URL" >"$TMP/$1.h2" 2>&1 &
	LONG_PID=$!
}

# long_end NAME - wait for the long run; LONG_OK when it ended with every
# request of every connection answered, LONG_WHY otherwise.
long_end() {
	local ok failed errored
	wait "$LONG_PID"
	read -r ok failed errored <<<"$(h2_counts "$TMP/$1.h2")"
	LONG_OK=0 LONG_WHY="$(grep -E '^requests|^finished|error' "$TMP/$1.h2" | head -5 | tr '\n' ' ')"
	if [ "${ok:-0}" -gt 0 ] && [ "$failed" = 0 ] && [ "$errored" = 0 ]; then
		LONG_OK=1 LONG_WHY="$ok requests, 0 failed"
	fi
}

# long_check NAME - PASS when the long run ended with every request of
# every connection answered.
long_check() {
	long_end "$1"
	if [ "$LONG_OK" = 1 ]; then
		pass "${T}_$1 ($LONG_WHY)"
	else
		fail "${T}_$1" "$LONG_WHY"
	fi
}

# open_conns - the client's connections to the port that are open or
# closing (TIME-WAIT aside).
open_conns() {
	$CLI ss -Htn state connected exclude time-wait "( dport = :$PORT )" | wc -l
}

# drain_client - wait (up to 20 s) until none of the client's connections
# to the port is open or closing, TIME-WAIT aside. A long run ends with
# requests in flight; under loss its connections sit in FIN-WAIT-1
# re-sending them with backed-off timers, and a retransmission that meets
# the next case's server would be reset by its kernel (no socket) and
# counted there. Returns 1 if some are still open.
drain_client() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(open_conns)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# short_runs NAME N - short runs of N requests back to back, -m 16 and
# -m 1 in turn, from now until two runs after serve's "serving on" line
# (the fast path is attached and armed). Sets runs, before (runs started
# before the line), bad (runs with a request that did not succeed) and
# BAD_SAMPLE.
short_runs() {
	local i m ok failed errored after=0 n=$2
	runs=0 before=0 bad=0 BAD_SAMPLE=''
	for ((i = 0; i < MAX_RUNS && after < 2; i++)); do
		if grep -q '^blitz: serving on' "$SERVE_LOG"; then
			after=$((after + 1))
		else
			before=$((before + 1))
		fi
		m=$((i % 2 ? 1 : 16))
		$CLI timeout 30 h2load --h1 -n "$n" -c 20 -m $m "$URL" >"$TMP/$1.$i.h2" 2>&1
		runs=$((runs + 1))
		read -r ok failed errored <<<"$(h2_counts "$TMP/$1.$i.h2")"
		if [ "${ok:-0}" != "$n" ] || [ "$failed" != 0 ] || [ "$errored" != 0 ]; then
			bad=$((bad + 1))
			[ -n "$BAD_SAMPLE" ] || BAD_SAMPLE="run $i (-m $m): $(grep -E '^requests' "$TMP/$1.$i.h2")"
		fi
		kill -0 "$SERVE_PID" 2>/dev/null || break
	done
}

# attach_try NAME PERMILLE N - serve --engine xdp started under load, once.
# Sets runs, before, bad, BAD_SAMPLE, LONG_OK/LONG_WHY, rsts, dropped,
# xreq and drained; returns 1 when the kernel listener never answered.
attach_try() {
	local name=$1 pm=$2 n=$3 s0 s1 r0
	dropped=0 rsts=0 xreq=0 drained=1
	serve_start "$TMP/$name.serve" "$SRV_IF" --engine xdp -p $PORT
	if ! wait_port "$CLI" "$SRV_IP" $PORT 20; then
		fail "${T}_$name" "the kernel listener never answered: $(tr '\n' ' ' <"$SERVE_LOG")"
		serve_stop
		return 1
	fi
	# The loss starts once the listener answers: a lost reply to
	# wait_port's probe would cost a second of the attach's window.
	if [ "$pm" -gt 0 ]; then
		loss_on "$CLI" "$CLI_IF" "$pm" ingress || {
			fail "${T}_${name}_loss" "cannot attach the dropper"
			serve_stop
			return 1
		}
		s0=$(loss_stats "$CLI" "$CLI_IF")
	fi
	r0=$(out_rsts) # from here: wait_port's SYNs before the listen were reset
	rst_trace_start
	long_start "${name}_long" 8
	short_runs "$name" "$n"
	long_end "${name}_long"
	if [ "$pm" -gt 0 ]; then
		s1=$(loss_stats "$CLI" "$CLI_IF")
		loss_off "$CLI" "$CLI_IF"
		dropped=$((${s1#* } - ${s0#* }))
	fi
	drain_client || drained=0
	rsts=$(($(out_rsts) - r0))
	rst_trace_show >"$TMP/$name.rsts"
	xreq=$(($(counter "$SRV_IF" requests) + $(counter "$SRV_IF" tc_requests)))
	echo "  $name: $runs runs ($before begun before 'serving on'), $bad with errors; $rsts kernel RSTs; XDP+TC answered $xreq, handoff $(counter "$SRV_IF" handoff), pass_kernel_owns $(counter "$SRV_IF" pass_kernel_owns), drop_bad_cookie $(counter "$SRV_IF" drop_bad_cookie), $dropped frames dropped"
	serve_stop
}

# attach_case NAME PERMILLE N - attach_try, again (at most 3 tries) while
# every run began after the fast path was armed: the case is about runs
# that span the attach, and under loss the first run can start late.
attach_case() {
	local name=$1 pm=$2 n=$3 try
	for ((try = 1; try <= 3; try++)); do
		attach_try "$name" "$pm" "$n" || return
		if [ "$before" -gt 0 ] || [ "$bad" -gt 0 ] || [ "$LONG_OK" != 1 ] || [ $try -eq 3 ]; then
			break
		fi
		echo "  $name: no run began before the fast path was armed; again"
	done
	if [ "$LONG_OK" = 1 ]; then
		pass "${T}_${name}_long ($LONG_WHY)"
	else
		fail "${T}_${name}_long" "$LONG_WHY"
	fi
	check "${T}_${name}_drained" "client connections still open 20 s after the runs: $(open_conns)" [ "$drained" = 1 ]
	# Under loss a client's retransmission after a close can meet no
	# socket and be reset as TCP does: counted, asserted only clean.
	[ "$pm" -gt 0 ] ||
		check "${T}_${name}_no_rst" "the server's kernel sent $rsts RSTs ($(cat "$TMP/$name.rsts"))" [ "$rsts" -eq 0 ]
	if [ "$bad" -eq 0 ] && [ "$before" -gt 0 ] && [ "$runs" -gt "$before" ] &&
		[ "$xreq" -gt 0 ] && { [ "$pm" -eq 0 ] || [ "$dropped" -gt 0 ]; }; then
		pass "${T}_${name}_short ($runs runs of $n, $before begun before the fast path was armed, every request answered)"
	else
		fail "${T}_${name}_short" "$bad of $runs runs with errors ($before before 'serving on', fast path answered $xreq, $dropped dropped): $BAD_SAMPLE"
	fi
}

attach_case clean 0 $N
# Under loss a run takes seconds (a lost SYN-ACK costs one): shorter runs,
# so that several begin before the fast path is armed.
attach_case loss50 50 $((N / 4))

# ---- blitz load / unload under the kernel's connections ----
# `blitz load` in front of a running serve --engine epoll: short runs
# across its attach (new connections the fast path takes as soon as it
# answers), a long run across the load and the unload (the kernel's
# connections, which stay the kernel's).
serve_start "$TMP/epoll.serve" "$SRV_IF" --engine epoll -p $PORT
if wait_port "$CLI" "$SRV_IP" $PORT 20; then
	drain_client
	r0=$(out_rsts)
	snmp_all >"$TMP/load.snmp"
	rst_trace_start
	long_start load_unload 15
	sleep 1
	$SRV "$BLITZ" load "$SRV_IF" -p $PORT >"$TMP/load.out" 2>&1 &
	LOAD_PID=$!
	on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
	runs=0 bad=0 BAD_SAMPLE='' after=0
	for ((i = 0; i < MAX_RUNS && after < 2; i++)); do
		kill -0 "$LOAD_PID" 2>/dev/null || after=$((after + 1))
		$CLI timeout 30 h2load --h1 -n $N -c 20 -m 16 "$URL" >"$TMP/load.$i.h2" 2>&1
		runs=$((runs + 1))
		read -r ok failed errored <<<"$(h2_counts "$TMP/load.$i.h2")"
		if [ "${ok:-0}" != $N ] || [ "$failed" != 0 ] || [ "$errored" != 0 ]; then
			bad=$((bad + 1))
			[ -n "$BAD_SAMPLE" ] || BAD_SAMPLE="run $i: $(grep -E '^requests' "$TMP/load.$i.h2")"
		fi
	done
	wait "$LOAD_PID"
	load_rc=$?
	xreq=$(($(counter "$SRV_IF" requests) + $(counter "$SRV_IF" tc_requests)))
	echo "  load: $runs runs across the attach, $bad with errors; XDP+TC answered $xreq"
	if [ "$load_rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$xreq" -gt 0 ]; then
		pass "${T}_load_short ($runs runs of $N across blitz load's attach, every request answered)"
	else
		fail "${T}_load_short" "load exit $load_rc, $bad of $runs runs with errors, fast path answered $xreq: $BAD_SAMPLE $(tr '\n' ' ' <"$TMP/load.out")"
	fi
	$SRV "$BLITZ" unload "$SRV_IF" >>"$TMP/load.out" 2>&1
	check "${T}_load_unload_during" "the long run ended before the unload: $(tr '\n' ' ' <"$TMP/load.out")" kill -0 "$LONG_PID"
	long_check load_unload
	drain_client # as the attach cases do: the long run's closes counted whole
	rsts=$(($(out_rsts) - r0))
	rst_trace_show >"$TMP/load.rsts"
	check "${T}_load_unload_no_rst" "the server's kernel sent $rsts RSTs ($(cat "$TMP/load.rsts")); counters moved: $(snmp_moved "$TMP/load.snmp")" [ "$rsts" -eq 0 ]
else
	fail "${T}_load_unload" "serve --engine epoll never answered: $(tr '\n' ' ' <"$SERVE_LOG")"
fi
serve_stop
e2e_status
