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

e2e_status
