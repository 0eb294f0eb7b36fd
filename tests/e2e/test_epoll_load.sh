#!/bin/bash
# tests/e2e/test_epoll_load.sh - the epoll engine under bad input and load:
# 10,000 idle connections plus a one-byte-per-second sender while wrk runs
# (other clients keep being answered, the slow sender is closed at the
# header timeout, the server's open fds return to where they started),
# and the connection cap (one log line, refused beyond the cap, served
# again once connections close).
#
# Bounded: the idle holder releases after at most 120 s, the slow sender
# after 10 s, every client runs under `timeout`. Testbed prefix:
# $EPOLL_LOAD_TB (default h4al).
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_epoll.sh
source "$(dirname "$0")/lib_epoll.sh"

T=epoll_load
PORT=8080
IDLE=${IDLE_CONNS:-10000}
BODY="Hello World!"

need_root "$T"
need_blitz "$T"
need_cmds "${T}_wrk" wrk || exit 0
# Client and server each need an fd per idle connection.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt $((IDLE + 200)) ]; then
	skip "${T}_idle" "open files hard limit $hard is below $((IDLE + 200)) (ulimit -Hn)"
	exit 0
fi
e2e_up "$T" "${EPOLL_LOAD_TB:-h4al}"
URL="http://$SRV_IP:$PORT/"

# wait_fds PID WANT SECONDS - until PID has at most WANT open fds.
wait_fds() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(fd_count "$1")" -le "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# hold N RELEASE OUT - open N idle connections in the background.
hold() {
	rm -f "$2"
	$CLI bash -c "ulimit -n $(($1 + 100)) && exec '$PY' '$E2E_ROOT/tests/e2e/epoll_holder.py' '$SRV_IP' '$PORT' '$1' '$2'" >"$3" 2>&1 &
	HOLD_PID=$!
	on_exit "touch '$2'; kill $HOLD_PID"
}

wait_line() { # FILE PATTERN SECONDS
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ---- 10,000 idle + slowloris + wrk ----
serve_start "$TMP/serve.log" --engine epoll -p "$PORT" --header-timeout 5
if ! serve_wait_line "tier epoll" 5 || ! wait_port "$CLI" "$SRV_IP" "$PORT" 5; then
	fail "${T}_start" "$(tr '\n' ' ' <"$TMP/serve.log")"
	exit 1
fi
sleep 0.3
fd0=$(fd_count "$SERVE_PID")

hold "$IDLE" "$TMP/release" "$TMP/hold.out"
if wait_line "$TMP/hold.out" "^OPEN $IDLE\$" 60; then
	pass "${T}_idle_${IDLE}_open"
else
	fail "${T}_idle_${IDLE}_open" "$(tr '\n' ' ' <"$TMP/hold.out")"
fi
# The server accepted them all (a connection in the backlog costs no fd).
for ((i = 0; i < 50; i++)); do
	fds=$(fd_count "$SERVE_PID")
	[ "$fds" -ge $((fd0 + IDLE)) ] && break
	sleep 0.1
done
if [ "$fds" -ge $((fd0 + IDLE)) ]; then
	pass "${T}_idle_accepted"
else
	fail "${T}_idle_accepted" "server has $fds fds, started with $fd0"
fi

$CLI timeout 20 "$PY" "$E2E_ROOT/tests/e2e/slow_sender.py" "$SRV_IP" "$PORT" 10 >"$TMP/slow.out" 2>&1 &
slow_pid=$!
on_exit "kill $slow_pid"
sleep 0.5
$CLI timeout 20 wrk -t1 -c10 -d5s --timeout 2s "$URL" >"$TMP/wrk" 2>&1
reqs=$(awk '/requests in/ {print $1}' "$TMP/wrk")
rps=$(awk '/^Requests\/sec/ {print int($2)}' "$TMP/wrk")
if [ -n "$reqs" ] && [ "$reqs" -gt 0 ] && ! grep -qE 'Socket errors|Non-2xx' "$TMP/wrk"; then
	pass "${T}_wrk_with_idle_and_slow"
	echo "  wrk with $IDLE idle connections and a slow sender: $rps requests/s"
else
	fail "${T}_wrk_with_idle_and_slow" "$(grep -E 'requests in|errors|Non-2xx' "$TMP/wrk" | tr '\n' ' ')"
fi
if [ "$($CLI timeout 5 curl -sS "$URL" 2>&1)" = "$BODY" ]; then
	pass "${T}_curl_while_loaded"
else
	fail "${T}_curl_while_loaded" "curl was not answered"
fi

wait "$slow_pid"
slow=$(cat "$TMP/slow.out")
case $slow in
closed*)
	t=${slow#closed }
	if [ "${t%.*}" -ge 4 ] && [ "${t%.*}" -le 8 ]; then
		pass "${T}_slow_sender_closed_at_header_timeout"
	else
		fail "${T}_slow_sender_closed_at_header_timeout" "closed after ${t}s, want ~5"
	fi
	;;
*) fail "${T}_slow_sender_closed_at_header_timeout" "slow sender: '$slow'" ;;
esac

touch "$TMP/release"
wait_line "$TMP/hold.out" "^CLOSED" 30
if wait_fds "$SERVE_PID" "$fd0" 10; then
	pass "${T}_fds_back_to_start"
else
	fail "${T}_fds_back_to_start" "server has $(fd_count "$SERVE_PID") fds, started with $fd0"
fi
serve_stop_ok "${T}_sigterm_after_load"
grep '^epoll: ' "$TMP/serve.log" | sed 's/^/  /'

# ---- the connection cap ----
CAP=100
serve_start "$TMP/cap.log" --engine epoll -p "$PORT" --max-conns "$CAP"
if ! serve_wait_line "tier epoll" 5 || ! wait_port "$CLI" "$SRV_IP" "$PORT" 5; then
	fail "${T}_cap_start" "$(tr '\n' ' ' <"$TMP/cap.log")"
	exit 1
fi
sleep 0.3
fd0=$(fd_count "$SERVE_PID")
hold 150 "$TMP/release2" "$TMP/hold2.out"
wait_line "$TMP/hold2.out" "^OPEN" 30
sleep 1
fds=$(fd_count "$SERVE_PID")
lines=$(grep -c "connection cap reached" "$TMP/cap.log")
if [ "$fds" -le $((fd0 + CAP)) ] && [ "$fds" -ge $((fd0 + CAP * 8 / 10)) ]; then
	pass "${T}_cap_holds"
else
	fail "${T}_cap_holds" "server has $fds fds with 150 clients, started with $fd0, cap $CAP"
fi
if [ "$lines" -eq 1 ]; then
	pass "${T}_cap_one_log_line"
else
	fail "${T}_cap_one_log_line" "$lines lines: $(grep "cap" "$TMP/cap.log" | head -3 | tr '\n' '|')"
fi
touch "$TMP/release2"
wait_line "$TMP/hold2.out" "^CLOSED" 30
ok=
for ((i = 0; i < 10; i++)); do
	if [ "$($CLI timeout 3 curl -sS -m 2 "$URL" 2>/dev/null)" = "$BODY" ]; then
		ok=1
		break
	fi
	sleep 0.5
done
if [ -n "$ok" ]; then
	pass "${T}_cap_served_after_close"
else
	fail "${T}_cap_served_after_close" "no answer after the idle clients closed"
fi
if wait_fds "$SERVE_PID" "$fd0" 10; then
	pass "${T}_cap_fds_back"
else
	fail "${T}_cap_fds_back" "server has $(fd_count "$SERVE_PID") fds, started with $fd0"
fi
serve_stop TERM 10

e2e_status
