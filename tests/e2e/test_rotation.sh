#!/bin/bash
# tests/e2e/test_rotation.sh - cookie v2 key rotation (docs/cookie-v2.md)
# with a real client: `blitz load IF --secret-file A`, a python http.client
# keep-alive connection (the kernel's TCP, timestamps and PAWS on) gets an
# answer, `blitz load IF --secret-file B` rotates the key in place, and the
# same connection's next requests are still answered (no RST, no timeout);
# a new connection is answered under B; loading B again changes nothing.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=rotation
PORT=8080
BODY="Hello World!"

e2e_begin "$T" "${ROT_TB:-e2erot}"
KA=$TMP/a.key
KB=$TMP/b.key
(umask 077 && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KA")
(umask 077 && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KB")

if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" --secret-file "$KA" >"$TMP/load.out" 2>&1 &&
	has_xdp "$SRV_IF"; then
	pass "${T}_load_key_a"
	on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
else
	fail "${T}_load_key_a" "$(tr '\n' ' ' <"$TMP/load.out")"
	exit 1
fi

# The client: one request, then waits for $TMP/rotated, then three more
# on the same connection (and the same source port: checked).
# shellcheck disable=SC2086 # $CLI is a command prefix
$CLI timeout 30 "$PY" "$E2E_ROOT/tests/e2e/rotation_client.py" "$SRV_IP" "$PORT" "$TMP" >"$TMP/client.out" 2>&1 &
CPID=$!
for _ in $(seq 100); do [ -e "$TMP/first" ] && break; sleep 0.1; done
rst0=$(counter "$SRV_IF" rst_expired)
if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" --secret-file "$KB" >"$TMP/rot.out" 2>&1 &&
	grep -q "new cookie key" "$TMP/rot.out" && has_xdp "$SRV_IF"; then
	pass "${T}_reload_rotates"
else
	fail "${T}_reload_rotates" "$(tr '\n' ' ' <"$TMP/rot.out")"
fi
touch "$TMP/rotated"
wait "$CPID"
if [ "$(grep -c "^after 200 b'$BODY'" "$TMP/client.out")" = 3 ] &&
	grep -q "^before 200" "$TMP/client.out" &&
	grep -q "^sameport True" "$TMP/client.out"; then
	pass "${T}_live_connection_kept"
else
	fail "${T}_live_connection_kept" "$(tr '\n' ' ' <"$TMP/client.out")"
fi
rst1=$(counter "$SRV_IF" rst_expired)
if [ "$rst1" = "$rst0" ]; then
	pass "${T}_no_rst"
else
	fail "${T}_no_rst" "rst_expired $rst0 -> $rst1"
fi
# shellcheck disable=SC2086
if [ "$($CLI curl -s -m 5 "http://$SRV_IP:$PORT/")" = "$BODY" ]; then
	pass "${T}_new_connection_key_b"
else
	fail "${T}_new_connection_key_b" "curl got no answer"
fi
if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" --secret-file "$KB" >"$TMP/rot2.out" 2>&1 &&
	grep -q "nothing to rotate" "$TMP/rot2.out"; then
	pass "${T}_same_key_nothing"
else
	fail "${T}_same_key_nothing" "$(tr '\n' ' ' <"$TMP/rot2.out")"
fi
if ! grep -qi "$(cat "$KB")" "$TMP/rot.out" "$TMP/rot2.out" "$TMP/load.out"; then
	pass "${T}_key_not_printed"
else
	fail "${T}_key_not_printed" "a key is in the output"
fi
