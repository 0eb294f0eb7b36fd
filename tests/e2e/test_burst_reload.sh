#!/bin/bash
# tests/e2e/test_burst_reload.sh - a TC burst's lost segment re-sent across
# `blitz reload` (docs/tcp-security.md, "Pipelined batches": never two byte
# strings at one range). A raw client (tests/e2e/burst_reload.py) gets a
# burst of 16 GETs from `blitz load`, then asks for its first segment again
# after: no reload (re-sent, the same bytes); a reload with the same body
# (the record survives it: re-sent, the same bytes); a reload to another
# body of the same length (nothing, or the same bytes: never the new body
# at the old range); then a batch of 16 GETs answered in full. The reloads
# failed when the reloaded hand-off had an empty responses map (zeros in
# place of every response but its Date) and when every process numbered
# its templates from 1 (a reload reused the load's generation).
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=burst_reload
PORT=8080
e2e_begin "$T" "${BURSTRL_TB:-e2ebr}"
RAW="$(dirname "$0")/burst_reload.py"
SRV_MAC=$($SRV ip -br link show dev "$SRV_IF" | awk '{print $3}')
CLI_MAC=$($CLI ip -br link show dev "$CLI_IF" | awk '{print $3}')
# An address of the client's /24 that its namespace does not own: its
# kernel never resets the server's segments to the raw client.
RAW_IP=${CLI_IP%.*}.150

e2e_load "$T" -p $PORT --body "Hello World!"

# raw NAME RELOAD_CMD WANT: one burst, RELOAD_CMD, the duplicate ACK.
raw() {
	local out
	out=$($CLI timeout 30 "$PY" "$RAW" "$CLI_IF" "$RAW_IP" "$SRV_IP" $PORT \
		"$CLI_MAC" "$SRV_MAC" "$2" 2>&1 | tail -1)
	check "${T}_$1" "$out" [ "$out" = "$3" ]
}

RELOAD="$SRV $BLITZ reload $SRV_IF --body"
raw no_reload true "burst=2 resent=1 same=1"
raw reload_same_body "$RELOAD 'Hello World!'" "burst=2 resent=1 same=1"
raw reload_new_body "$RELOAD 'HELLO WORLD!'" "burst=2 resent=0 same=1"
got=$($CLI timeout 5 curl -s "http://$SRV_IP:$PORT/")
check "${T}_new_body_served" "body '$got'" [ "$got" = "HELLO WORLD!" ]
# A batch after the reloads: TC's templates are the new program's.
out=$($CLI timeout 30 "$PY" "$(dirname "$0")/pipe_stream.py" "$SRV_IP" $PORT 2 16 10 2>&1 | tail -1)
check "${T}_batch_after_reload" "$out; tc_requests $(counter "$SRV_IF" tc_requests)" \
	[ "$out" = "ok 32 responses" ]
e2e_status
