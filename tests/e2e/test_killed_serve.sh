#!/bin/bash
# tests/e2e/test_killed_serve.sh - what a SIGKILLed `blitz serve` leaves:
# its bpf_link goes with it, its pins do not. After the interface is
# removed and re-created (the testbed rebuilt), status names them "stale
# pins of a serve that was killed", and `blitz load` (then `blitz serve`)
# on the new interface says so, reclaims them and serves. Testbed prefix:
# $KILLED_TB (default ks).
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=killed_serve
PORT=8080
BODY="Hello World!"
TB=${KILLED_TB:-ks}
e2e_begin "$T" "$TB"
PINS=/sys/fs/bpf/blitz/$SRV_IF

# kill_serve LOG ARGS... - start serve, wait for its tier line, SIGKILL it.
kill_serve() {
	local log=$1 pid
	shift
	$SRV "$BLITZ" serve "$SRV_IF" "$@" -p "$PORT" >"$log" 2>&1 &
	pid=$!
	on_exit "kill -9 $pid"
	if ! wait_line "$log" "tier xdp" "$pid" 20; then
		fail "${T}_serve_started" "$(tr '\n' ' ' <"$log")"
		return 1
	fi
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	KILLED_PID=$pid
}

# rebuild - the interface removed and re-created (both namespaces anew).
rebuild() {
	tb_up "$TB" >/dev/null || fail "${T}_rebuild" "scripts/testbed.sh up failed"
}

kill_serve "$TMP/serve1.log" --engine xdp || exit 1
check "${T}_pins_left" "no pins at $PINS after SIGKILL" test -e "$PINS/config"
rebuild
$SRV "$BLITZ" status "$SRV_IF" >"$TMP/st" 2>&1
check "${T}_status_says_killed" "$(tr '\n' '|' <"$TMP/st")" \
	grep -q "$SRV_IF: stale pins of a serve that was killed (pid $KILLED_PID).*blitz load $SRV_IF" "$TMP/st"

$SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load" 2>&1
rc=$?
check "${T}_load_reclaims" "rc $rc: $(tr '\n' '|' <"$TMP/load")" \
	test "$rc" -eq 0 -a -n "$(grep "stale pins of a serve that was killed.*reclaiming them" "$TMP/load")"
got=$($CLI timeout 5 curl -s "http://$SRV_IP:$PORT/")
check "${T}_load_serves" "curl got '$got'" test "$got" = "$BODY"
$SRV "$BLITZ" status "$SRV_IF" >"$TMP/st2" 2>&1
check "${T}_status_clean_after" "$(tr '\n' '|' <"$TMP/st2")" \
	bash -c "grep -qE '^$SRV_IF +native +xdp +[a-z/-]+ +load ' '$TMP/st2' && ! grep -q stale '$TMP/st2'"
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

# The same for serve: a killed one's pins on a re-created interface.
kill_serve "$TMP/serve2.log" --engine xdp || exit 1
rebuild
$SRV "$BLITZ" serve "$SRV_IF" --engine xdp -p "$PORT" >"$TMP/serve3.log" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
if wait_line "$TMP/serve3.log" "tier xdp" "$pid" 20 &&
	grep -q "stale pins of a serve that was killed.*reclaiming them" "$TMP/serve3.log" &&
	[ "$($CLI timeout 5 curl -s "http://$SRV_IP:$PORT/")" = "$BODY" ]; then
	pass "${T}_serve_reclaims"
else
	fail "${T}_serve_reclaims" "$(tr '\n' '|' <"$TMP/serve3.log")"
fi
stop_pid "$pid" TERM 10
check "${T}_serve_cleaned" "pins left after SIGTERM: $(ls "$PINS" 2>&1)" test ! -e "$PINS"

e2e_status
