#!/bin/bash
# tests/e2e/test_qa_cli.sh - a new user's mistakes with the CLI, found by
# the QA pass: each must give one line saying what is wrong, exit non-zero
# (never a crash) and leave nothing half-attached; and serve stopped while
# it starts must stop at once. Testbed prefix: $QA_CLI_TB (default qcli).
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=qa_cli
PORT=8080
e2e_begin "$T" "${QA_CLI_TB:-qcli}"
PINS=/sys/fs/bpf/blitz/$SRV_IF

# nothing_left - no XDP program, no pins, no TC filter, no listener.
nothing_left() {
	! has_xdp "$SRV_IF" && [ ! -e "$PINS" ] &&
		[ -z "$($SRV tc filter show dev "$SRV_IF" ingress 2>/dev/null)" ] &&
		[ -z "$($SRV ss -Hltn "sport = :$PORT")" ]
}

# ---- serve --engine xdp|afxdp over another XDP program ----
# serve's finish() ran with no XDP program attached and dereferenced it:
# SIGSEGV (rc 139) after the right message. Now: rc 1, the one error line
# on stderr, the other program untouched, nothing of ours left.
$SRV ip link set dev "$SRV_IF" xdpdrv obj "$(dirname "$BLITZ")/xdp_pass.bpf.o" sec xdp 2>"$TMP/e"
if has_xdp "$SRV_IF"; then
	foreign=$($SRV ip -d link show dev "$SRV_IF" | grep -o 'prog/xdp id [0-9]*')
	for eng in xdp afxdp; do
		$SRV timeout 30 "$BLITZ" serve "$SRV_IF" --engine "$eng" -p "$PORT" \
			>"$TMP/out" 2>"$TMP/err"
		rc=$?
		now=$($SRV ip -d link show dev "$SRV_IF" | grep -o 'prog/xdp id [0-9]*')
		if [ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
			grep -q "already has an XDP program .*not blitz's" "$TMP/err" &&
			[ "$now" = "$foreign" ] && [ ! -e "$PINS" ] &&
			[ -z "$($SRV ss -Hltn "sport = :$PORT")" ]; then
			pass "${T}_serve_${eng}_over_foreign_xdp"
		else
			fail "${T}_serve_${eng}_over_foreign_xdp" "rc $rc (139: crashed), xdp '$now' (was '$foreign'), stderr: $(tr '\n' '|' <"$TMP/err")"
		fi
	done
	$SRV ip link set dev "$SRV_IF" xdp off
else
	skip "${T}_serve_xdp_over_foreign_xdp" "cannot attach xdp_pass.bpf.o: $(cat "$TMP/e")"
fi

# ---- serve --engine afxdp stopped while it starts ----
# The engine's child reset its inherited stop flag after fork: a SIGTERM
# serve sent it before that line was lost, serve waited 3 s, SIGKILLed it
# and exited 1 ("did not stop in 3000 ms"). A stop right after the kernel
# path is up (serve is then attaching XDP, the child not forked yet) hit
# it nearly every time.
bad=
for delay in 0 0.05 0.1 0.2; do
	$SRV "$BLITZ" serve "$SRV_IF" --engine afxdp -p "$PORT" >"$TMP/af.log" 2>&1 &
	pid=$!
	on_exit "kill -9 $pid"
	if ! wait_line "$TMP/af.log" "^epoll: " "$pid" 20; then
		bad="$bad [no start: $(tr '\n' '|' <"$TMP/af.log")]"
		stop_pid "$pid" TERM 5
		continue
	fi
	sleep "$delay"
	t0=$(date +%s%N)
	stop_pid "$pid" TERM 8
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$STOP_RC" -ne 0 ] || grep -q "did not stop" "$TMP/af.log" || ! nothing_left; then
		bad="$bad [delay $delay: rc $STOP_RC after $ms ms: $(grep -E 'did not stop|exited' "$TMP/af.log" | tr '\n' '|')]"
	fi
	$SRV ip link set dev "$SRV_IF" xdp off 2>/dev/null
done
if [ -z "$bad" ]; then
	pass "${T}_afxdp_stop_while_starting"
else
	fail "${T}_afxdp_stop_while_starting" "$bad"
fi

# ---- -a with an address the XDP program never answers ----
# It was taken: `-a 127.0.0.1` on lo made the program drop every segment
# to a kernel listener on 127.0.0.1 (the source is martian: drop_martian)
# while load said "a kernel listener is on port ...: ... go to it"; a
# multicast, broadcast, unspecified or v4-mapped one served nothing.
# cli_refuses NAME PATTERN ARGS... - one line matching, rc 1, nothing left.
cli_refuses() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$($SRV timeout 20 "$BLITZ" "$@" 2>&1)
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
		printf '%s\n' "$out" | grep -q -- "$pat" && nothing_left; then
		pass "$name"
	else
		fail "$name" "rc $rc, said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
}
cli_refuses "${T}_load_a_multicast" "never answers a multicast address" \
	load "$SRV_IF" -p "$PORT" -a 224.0.0.1
cli_refuses "${T}_load_a_broadcast" "never answers a broadcast" \
	load "$SRV_IF" -p "$PORT" -a 255.255.255.255
cli_refuses "${T}_load_a_unspecified6" "never answers the unspecified" \
	load "$SRV_IF" -p "$PORT" -a ::
cli_refuses "${T}_load_a_v4mapped" "never answers a v4-mapped" \
	load "$SRV_IF" -p "$PORT" -a "::ffff:$SRV_IP"

# ---- serve --metrics with a spec it cannot bind ----
# It was checked only when the metrics thread started, after the kernel
# listener and the fast path were up; now with the other options.
for eng in xdp epoll; do
	cli_refuses "${T}_serve_${eng}_metrics_port" "bad --metrics '99999'" \
		serve "$SRV_IF" --engine $eng -p "$PORT" --metrics 99999
	cli_refuses "${T}_serve_${eng}_metrics_host" "bad --metrics 'nohost:9100'" \
		serve "$SRV_IF" --engine $eng -p "$PORT" --metrics nohost:9100
done

# ---- serve --umem-frames: afxdp's sockets only, a power of two ----
cli_refuses "${T}_serve_umem_not_afxdp" "is for the afxdp engine" \
	serve "$SRV_IF" --engine xdp -p "$PORT" --umem-frames 8192
cli_refuses "${T}_serve_umem_auto" "is for the afxdp engine" \
	serve "$SRV_IF" -p "$PORT" --umem-frames 8192
cli_refuses "${T}_serve_umem_pow2" "bad --umem-frames '5000': use a power of two" \
	serve "$SRV_IF" --engine afxdp -p "$PORT" --umem-frames 5000
cli_refuses "${T}_serve_umem_range" "bad --umem-frames '128'" \
	serve "$SRV_IF" --engine afxdp -p "$PORT" --umem-frames 128

# The loopback case on lo, with the kernel listener it used to blackhole.
$SRV ip link set dev lo up
(cd "$TMP" && exec $SRV "$PY" -m http.server "$PORT" --bind 127.0.0.1 >/dev/null 2>&1) &
lo_pid=$!
on_exit "kill $lo_pid"
on_exit "$SRV $BLITZ unload lo"
if wait_port "$SRV" 127.0.0.1 "$PORT" 5; then
	out=$($SRV "$BLITZ" load lo -p "$PORT" -a 127.0.0.1 2>&1)
	rc=$?
	code=$($SRV timeout 10 curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")
	if [ "$rc" -eq 1 ] && printf '%s' "$out" | grep -q "never answers a loopback address" &&
		[ "$code" = 200 ] && ! $SRV ip link show dev lo | grep -q prog/xdp; then
		pass "${T}_load_lo_a_loopback"
	else
		fail "${T}_load_lo_a_loopback" "rc $rc, kernel listener answered '$code', said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	$SRV "$BLITZ" unload lo >/dev/null 2>&1
else
	skip "${T}_load_lo_a_loopback" "python http.server did not listen on 127.0.0.1:$PORT"
fi
kill "$lo_pid" 2>/dev/null
wait "$lo_pid" 2>/dev/null

# reload -a: refused, the loaded addresses kept.
if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" -a "$SRV_IP" >/dev/null 2>&1; then
	out=$($SRV "$BLITZ" reload "$SRV_IF" -a 127.0.0.2 2>&1)
	rc=$?
	st=$($SRV "$BLITZ" status "$SRV_IF" 2>&1 | sed -n 2p)
	if [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
		printf '%s' "$out" | grep -q "never answers a loopback" &&
		printf '%s' "$st" | grep -qw -- "$SRV_IP"; then
		pass "${T}_reload_a_loopback"
	else
		fail "${T}_reload_a_loopback" "rc $rc, status '$st', said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	# ---- stats --prometheus <ifname>: a name nothing runs on ----
	# It printed nothing and exited 0; now one line and rc 1 (and the
	# loaded interface still scrapes).
	out=$($SRV "$BLITZ" stats nosuchif0 --prometheus 2>&1)
	rc=$?
	got=$($SRV "$BLITZ" stats "$SRV_IF" --prometheus 2>/dev/null | grep -c "interface=\"$SRV_IF\"")
	if [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
		printf '%s' "$out" | grep -q "no engine runs on nosuchif0" && [ "$got" -gt 0 ]; then
		pass "${T}_stats_prometheus_unknown_if"
	else
		fail "${T}_stats_prometheus_unknown_if" "rc $rc, $got samples for $SRV_IF, said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
else
	fail "${T}_reload_a_loopback" "blitz load $SRV_IF -a $SRV_IP failed"
fi

e2e_status
