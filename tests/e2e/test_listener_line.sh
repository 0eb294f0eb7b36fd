#!/bin/bash
# tests/e2e/test_listener_line.sh - `blitz load` and `blitz status` say in
# one line whether a kernel listener is on the service port (issue 12,
# item 3), and the line tells the truth: without a listener a split
# request (which the xdp engine passes to the kernel) is reset; with one
# (python's http.server in the server namespace) it is answered on the
# same connection.
# Testbed prefix: $LISTENER_TB (default e2elsn). Clients run under
# `timeout`; the testbed goes down in a trap.
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=listener_line
PORT=8080
SEND=$E2E_ROOT/tests/e2e/send_raw.py

e2e_begin "$T" "${LISTENER_TB:-e2elsn}"
printf 'GET /split HTTP/1.1\r\nHost: t\r\nUser-Agent: listener-line\r\nAccept: */*\r\n\r\n' >"$TMP/split.req"

# split NAME: one split request; prints how the connection ended.
split() {
	$CLI timeout 10 "$PY" "$SEND" "$SRV_IP" $PORT "$TMP/split.req" \
		--split 20 --pause 0.3 --quiet 0.7 --timeout 5 \
		--out "$TMP/$1.out" 2>"$TMP/$1.err"
	sed -n 's/^end=\([a-z]*\).*/\1/p' "$TMP/$1.err"
}

NONE="nothing listens on port $PORT: requests the xdp engine passes (split requests, bodies) are reset"
e2e_load "$T" -p $PORT
if [ "$(grep -cF "$NONE" "$TMP/load.out")" -eq 1 ]; then
	pass "${T}_load_none"
else
	fail "${T}_load_none" "load said: $(tr '\n' '|' <"$TMP/load.out")"
fi
$SRV "$BLITZ" status >"$TMP/st0" 2>&1
if [ "$(grep -cF "$SRV_IF: $NONE" "$TMP/st0")" -eq 1 ]; then
	pass "${T}_status_none"
else
	fail "${T}_status_none" "status said: $(tr '\n' '|' <"$TMP/st0")"
fi
end=$(split none)
check "${T}_none_resets" "a split request without a listener ended '$end', want rst" \
	[ "$end" = rst ]

# A kernel listener on every address of the port.
mkdir -p "$TMP/www"
(cd "$TMP/www" && exec $SRV "$PY" -m http.server $PORT --bind 0.0.0.0 >/dev/null 2>&1) &
lpid=$!
on_exit "kill $lpid"
for ((i = 0; i < 50; i++)); do
	[ -n "$($SRV ss -Hltn "sport = :$PORT")" ] && break
	sleep 0.1
done
LISTENS="a kernel listener is on port $PORT (0.0.0.0): requests the xdp engine passes (split requests, bodies) go to it on the same connection"
$SRV "$BLITZ" status "$SRV_IF" >"$TMP/st1" 2>&1
if [ "$(grep -cF "$SRV_IF: $LISTENS" "$TMP/st1")" -eq 1 ] && ! grep -qF "nothing listens" "$TMP/st1"; then
	pass "${T}_status_listens"
else
	fail "${T}_status_listens" "status said: $(tr '\n' '|' <"$TMP/st1")"
fi
end=$(split listens)
if [ "$end" != rst ] && head -c 12 "$TMP/listens.out" | grep -q '^HTTP/1\.[01] '; then
	pass "${T}_listens_answers"
else
	fail "${T}_listens_answers" "ended '$end', got '$(head -c 40 "$TMP/listens.out")'"
fi
# load says it too: reload while the listener runs.
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
if $SRV "$BLITZ" load "$SRV_IF" -p $PORT >"$TMP/load1.out" 2>&1 &&
	[ "$(grep -cF "$LISTENS" "$TMP/load1.out")" -eq 1 ]; then
	pass "${T}_load_listens"
else
	fail "${T}_load_listens" "load said: $(tr '\n' '|' <"$TMP/load1.out")"
fi
kill $lpid 2>/dev/null
wait $lpid 2>/dev/null

e2e_status
