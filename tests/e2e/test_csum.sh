#!/bin/bash
# tests/e2e/test_csum.sh - checksums on the wire (docs/tcp-security.md,
# "Checksums"): a GET whose payload byte a link changed after the TCP
# checksum was filled (scapy, tests/e2e/qa_csum.py) gets no answer
# over IPv4 and IPv6, alone or as a pipelined batch (the TC burst path),
# and bad_csum counts it; the same segments unchanged are answered (the
# controls). The kernel's own client (curl) over veth still works: its
# segments carry the partial form (CHECKSUM_PARTIAL), which the load
# accepted because the driver is veth, as `blitz status` says.
# Testbed prefix: $CSUM_TB (default csum).
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=csum
PORT=8080
BODY="Hello World!"
e2e_begin "$T" "${CSUM_TB:-csum}"
# Unconfigured client addresses (scapy_peer: static neighbours).
SRC4=${SRV_IP%.*}.50
SRC6=${SRV_IP6%::*}::50
scapy_peer "${T}_wire" "$SRC4" "$SRC6" || exit 0

e2e_load "$T" -p "$PORT"

# status says which forms are accepted, by the driver
$SRV "$BLITZ" status "$SRV_IF" >"$TMP/status" 2>&1
check "${T}_status_line" "status: $(tr '\n' '|' <"$TMP/status")" \
	grep -qxF "$SRV_IF: checksums: full, or a local stack's partial sum (driver veth)" "$TMP/status"

# wire NAME SRC DST NREQ: the control answered, the corrupted one not,
# bad_csum +1.
wire() {
	local name=$1 src=$2 dst=$3 n=$4 good bad b0 b1
	b0=$(counter "$SRV_IF" bad_csum)
	good=$($CLI timeout 20 "$PY" tests/e2e/qa_csum.py "$CLI_IF" "$SMAC" "$DMAC" "$src" "$dst" "$PORT" good "$n" 2>&1)
	bad=$($CLI timeout 20 "$PY" tests/e2e/qa_csum.py "$CLI_IF" "$SMAC" "$DMAC" "$src" "$dst" "$PORT" badpay "$n" 2>&1)
	b1=$(counter "$SRV_IF" bad_csum)
	if [[ $good = "data "[1-9]* ]] && [[ $bad = "data 0 acks []" ]] &&
		[ "$b1" -eq $((b0 + 1)) ]; then
		pass "${T}_$name"
	else
		fail "${T}_$name" "right checksum: '$good', payload byte changed: '$bad' (Linux: no answer), bad_csum $b0 -> $b1"
	fi
}
wire get_v4 "$SRC4" "$SRV_IP" 1
wire get_v6 "$SRC6" "$SRV_IP6" 1
wire batch16_v4 "$SRC4" "$SRV_IP" 16
wire batch16_v6 "$SRC6" "$SRV_IP6" 16

# the kernel's client over veth: the partial form, answered by XDP
b0=$(counter "$SRV_IF" bad_csum)
r0=$(counter "$SRV_IF" requests)
out4=$($CLI timeout 10 curl -sS "http://$SRV_IP:$PORT/" 2>&1)
out6=$($CLI timeout 10 curl -sS -g "http://[$SRV_IP6]:$PORT/" 2>&1)
b1=$(counter "$SRV_IF" bad_csum)
r1=$(counter "$SRV_IF" requests)
if [ "$out4" = "$BODY" ] && [ "$out6" = "$BODY" ] && [ "$b1" -eq "$b0" ] &&
	[ "$r1" -ge $((r0 + 2)) ]; then
	pass "${T}_curl_partial_form"
else
	fail "${T}_curl_partial_form" "curl v4 '$out4' v6 '$out6', bad_csum $b0 -> $b1, requests $r0 -> $r1"
fi

e2e_status
