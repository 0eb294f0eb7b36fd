#!/bin/bash
# tests/e2e/test_qa_wire.sh - an attacker's (or a bad link's) segments from
# the client namespace (scapy), found by the QA pass: what blitz does must
# be what Linux does, or passed to it. Testbed prefix: $QA_WIRE_TB
# (default qwire).
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=qa_wire
PORT=8080
e2e_begin "$T" "${QA_WIRE_TB:-qwire}"
# An unconfigured client address (scapy_peer: a static neighbour).
SRC=${SRV_IP%.*}.50
scapy_peer "${T}_ip_csum" "$SRC" || exit 0

# ---- a GET whose IPv4 header checksum is wrong ----
# Linux drops it in ip_rcv(); the XDP program answered it (200, acking the
# GET), and with the check in XDP alone the TC program's burst answered it
# (no listener). Now passed (pass_malformed), and the kernel drops it.
# The same GET with the right checksum is the control: answered.
if ! $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load" 2>&1; then
	fail "${T}_ip_csum" "blitz load: $(tr '\n' ' ' <"$TMP/load")"
	exit 1
fi
on_exit "$SRV $BLITZ unload $SRV_IF"
m0=$(counter "$SRV_IF" pass_malformed)
good=$($CLI timeout 20 "$PY" tests/e2e/qa_csum.py "$CLI_IF" "$SMAC" "$DMAC" "$SRC" "$SRV_IP" "$PORT" good 2>&1)
bad=$($CLI timeout 20 "$PY" tests/e2e/qa_csum.py "$CLI_IF" "$SMAC" "$DMAC" "$SRC" "$SRV_IP" "$PORT" badip 2>&1)
m1=$(counter "$SRV_IF" pass_malformed)
if [[ $good = "data 1 acks [27]"* ]] && [[ $bad = "data 0 acks []" ]] &&
	[ "$m1" -eq $((m0 + 1)) ]; then
	pass "${T}_ip_csum"
else
	fail "${T}_ip_csum" "right checksum: '$good', wrong one: '$bad' (Linux: no answer), pass_malformed $m0 -> $m1"
fi

e2e_status
