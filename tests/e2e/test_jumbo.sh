#!/bin/bash
# tests/e2e/test_jumbo.sh - jumbo frames: on a veth pair at MTU 9000
# (the client's pass program multi-buffer too: `sec xdp.frags`), `blitz
# load` attaches in native mode (a single-buffer program gets ERANGE
# there) and answers in the driver; the largest body load accepts grows
# with the MSS; a request segment larger than a page (a multi-buffer
# frame) is measured by its whole length, not taken for malformed, and
# the kernel path answers it on the same connection. Testbed prefix:
# $JUMBO_TB (default jb).
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=jumbo
PORT=8080
BODY="Hello World!"
e2e_begin "$T" "${JUMBO_TB:-jb}"

# At MTU 1500 a 1800-byte body cannot be answered in one segment.
big=$(head -c 1800 /dev/zero | tr '\0' b)
$SRV "$BLITZ" load "$SRV_IF" -p "$PORT" --body "$big" >"$TMP/l1500" 2>&1
rc=$?
check "${T}_body_1500_refused" "rc $rc: $(cat "$TMP/l1500")" \
	test "$rc" -eq 1 -a -n "$(grep 'does not fit one segment: at most [0-9]* bytes with MTU 1500' "$TMP/l1500")"

$CLI ip link set dev "$CLI_IF" xdp off
$CLI ip link set dev "$CLI_IF" xdpdrv obj "$(dirname "$BLITZ")/xdp_pass.bpf.o" sec xdp.frags 2>"$TMP/e" ||
	fail "${T}_client_pass_frags" "$(cat "$TMP/e")"
if ! $SRV ip link set dev "$SRV_IF" mtu 9000 2>"$TMP/e" || ! $CLI ip link set dev "$CLI_IF" mtu 9000 2>>"$TMP/e"; then
	fail "${T}_mtu_9000" "$(cat "$TMP/e")"
	exit 1
fi

$SRV "$BLITZ" load "$SRV_IF" -p "$PORT" -m native >"$TMP/load" 2>&1
rc=$?
check "${T}_load_native" "rc $rc: $(cat "$TMP/load")" test "$rc" -eq 0 -a -n "$(grep 'native mode' "$TMP/load")"
r0=$(counter "$SRV_IF" requests)
got=$($CLI timeout 5 curl -s "http://$SRV_IP:$PORT/")
r1=$(counter "$SRV_IF" requests)
check "${T}_xdp_answers" "curl '$got', requests $r0 -> $r1" test "$got" = "$BODY" -a "$r1" -gt "$r0"
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

$SRV "$BLITZ" load "$SRV_IF" -p "$PORT" --body "$big" >"$TMP/l9000" 2>&1
rc=$?
check "${T}_body_9000_accepted" "rc $rc: $(cat "$TMP/l9000")" test "$rc" -eq 0
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

# A 6000-byte POST in one segment: a multi-buffer frame (over a page).
$SRV "$BLITZ" serve "$SRV_IF" --engine xdp -p "$PORT" >"$TMP/serve" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
if ! wait_line "$TMP/serve" "tier xdp \(native\)" "$pid" 20; then
	fail "${T}_serve_native" "$(tr '\n' '|' <"$TMP/serve")"
else
	m0=$(counter "$SRV_IF" pass_malformed)
	p0=$(counter "$SRV_IF" pass_not_trivial)
	$CLI timeout 10 "$PY" "$E2E_ROOT/tests/e2e/jumbo_post.py" "$SRV_IP" "$PORT" >"$TMP/post" 2>&1
	m1=$(counter "$SRV_IF" pass_malformed)
	p1=$(counter "$SRV_IF" pass_not_trivial)
	check "${T}_multibuffer_request" "answer '$(head -c 200 "$TMP/post")', pass_malformed $m0 -> $m1, pass_not_trivial $p0 -> $p1" \
		test "$(head -1 "$TMP/post")" = "HTTP/1.1 405 Method Not Allowed" -a "$m1" -eq "$m0" -a "$p1" -gt "$p0"
fi
stop_pid "$pid" TERM 10
check "${T}_serve_stops_clean" "exit $STOP_RC: $(tail -2 "$TMP/serve" | tr '\n' '|')" test "$STOP_RC" -eq 0

e2e_status
