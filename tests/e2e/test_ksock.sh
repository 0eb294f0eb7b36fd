#!/bin/bash
# tests/e2e/test_ksock.sh - the kernel-socket filter in front of the xdp
# engine's socket lookup (bpf/blitz_ksock.h, docs/cost.md), end to end
# with `blitz load`:
#   - `blitz status` says whether the filter is on;
#   - a kernel connection made BEFORE the load (the seed's part) keeps
#     reaching the kernel: a keep-alive request on it is answered by the
#     kernel server, not by XDP;
#   - a kernel socket made AFTER the load (the tracers' part): the kernel's
#     own connect() from the service port to a server in the client
#     namespace; the bytes that server sends back reach the kernel socket;
#   - a new client's GET is answered by XDP and counts ksock_skip (the
#     lookup skipped for a tuple the kernel never had); reload keeps it on.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=ksock
PORT=8080
BACK_PORT=9099

e2e_begin "$T" "${KSOCK_TB:-ksck}"

# A kernel server on the service port: answers "kernel <n>" to every
# line, on every connection, for as long as the connection lasts. It binds
# with SO_REUSEPORT so that the outgoing socket below may share the port.
$SRV "$PY" "$E2E_ROOT/tests/e2e/ksock_server.py" "$PORT" >/dev/null 2>&1 &
on_exit "kill $!"
if ! wait_port "$CLI" "$SRV_IP" "$PORT" 10; then
	fail "${T}_setup" "the kernel server on $SRV_IP:$PORT did not come up"
	exit 1
fi

# A client connection made before the load: one line now, one after the
# load (the go file), each answer printed.
$CLI timeout 30 "$PY" "$E2E_ROOT/tests/e2e/ksock_before.py" "$SRV_IP" "$PORT" "$TMP/go" >"$TMP/before.out" 2>&1 &
BEFORE_PID=$!
on_exit "kill $BEFORE_PID"
wait_line "$TMP/before.out" "kernel 1" "$BEFORE_PID" 10

e2e_load "$T" -p "$PORT"

$SRV "$BLITZ" status >"$TMP/status.out" 2>&1
if grep -q "$SRV_IF: kernel-socket filter on (port $PORT" "$TMP/status.out"; then
	FILTER=on
	pass "${T}_status_on"
elif grep -q "no kernel-socket filter" "$TMP/load.out" &&
	grep -q "$SRV_IF: kernel-socket filter off" "$TMP/status.out"; then
	FILTER=off # the kernel refused the tracers: said at load and in status
	skip "${T}_status_on" "$(grep -o 'no kernel-socket filter.*' "$TMP/load.out")"
else
	FILTER=
	fail "${T}_status_on" "load: $(tr '\n' ' ' <"$TMP/load.out"); status: $(tr '\n' ' ' <"$TMP/status.out")"
fi

# Before the load: still the kernel's.
ko0=$(counter "$SRV_IF" pass_kernel_owns)
touch "$TMP/go"
wait "$BEFORE_PID"
ko1=$(counter "$SRV_IF" pass_kernel_owns)
if [ "$(cat "$TMP/before.out")" = "$(printf 'kernel 1\nkernel 2')" ] && [ "$ko1" -gt "$ko0" ]; then
	pass "${T}_conn_before_load_is_kernels"
else
	fail "${T}_conn_before_load_is_kernels" "client saw '$(tr '\n' ' ' <"$TMP/before.out")'; pass_kernel_owns $ko0 -> $ko1"
fi

# After the load: the kernel's own connect() from the service port. The
# server in the client namespace sends a line first; the kernel socket
# must receive it (XDP would otherwise take the segment as a client's).
$CLI timeout 20 "$PY" "$E2E_ROOT/tests/e2e/ksock_back_server.py" "$CLI_IP" "$BACK_PORT" >"$TMP/back_srv.out" 2>&1 &
BACK_PID=$!
on_exit "kill $BACK_PID"
for _ in $(seq 50); do # listening (a probe connect would be its one accept)
	$CLI ss -Hltn "sport = :$BACK_PORT" | grep -q . && break
	sleep 0.1
done
ko0=$(counter "$SRV_IF" pass_kernel_owns)
out=$($SRV timeout 15 "$PY" "$E2E_ROOT/tests/e2e/ksock_back_client.py" "$SRV_IP" "$PORT" "$CLI_IP" "$BACK_PORT" 2>&1)
wait "$BACK_PID"
ko1=$(counter "$SRV_IF" pass_kernel_owns)
if [ "$out" = "from the client side" ] &&
	[ "$(cat "$TMP/back_srv.out")" = "echo from the client side" ] && [ "$ko1" -gt "$ko0" ]; then
	pass "${T}_kernel_connect_after_load"
else
	fail "${T}_kernel_connect_after_load" "kernel socket got '$out', client side '$(cat "$TMP/back_srv.out")'; pass_kernel_owns $ko0 -> $ko1"
fi

# A new client: XDP answers, and the lookup was skipped for its tuple.
sk0=$(counter "$SRV_IF" ksock_skip)
rq0=$(counter "$SRV_IF" requests)
body=$($CLI curl -s --max-time 5 "http://$SRV_IP:$PORT/")
sk1=$(counter "$SRV_IF" ksock_skip)
rq1=$(counter "$SRV_IF" requests)
if [ "$FILTER" = off ]; then
	skip "${T}_new_client_lookup_skipped" "no filter here (above)"
elif [ "$body" = "Hello World!" ] && [ "$rq1" -gt "$rq0" ] && [ "$sk1" -ge $((sk0 + 3)) ]; then
	pass "${T}_new_client_lookup_skipped"
else
	fail "${T}_new_client_lookup_skipped" "body '$body'; requests $rq0 -> $rq1; ksock_skip $sk0 -> $sk1 (want +3: SYN, ACK, GET at least)"
fi

# A reload builds a fresh filter and swaps it in with the program.
if [ "$FILTER" = on ]; then
	$SRV "$BLITZ" reload "$SRV_IF" -p "$PORT" >"$TMP/reload.out" 2>&1
	$SRV "$BLITZ" status >"$TMP/status2.out" 2>&1
	pins=(/sys/fs/bpf/blitz/"$SRV_IF"/ksock_*)
	if grep -q "$SRV_IF: kernel-socket filter on (port $PORT" "$TMP/status2.out" &&
		[ "${#pins[@]}" = 2 ] && [ -e "${pins[0]}" ]; then
		pass "${T}_reload_keeps_filter"
	else
		fail "${T}_reload_keeps_filter" "reload: $(tr '\n' ' ' <"$TMP/reload.out"); status: $(tr '\n' ' ' <"$TMP/status2.out")"
	fi
fi
