#!/bin/bash
# tests/e2e/test_no_ts.sh - issue 10 part 2: clients without timestamps
# past the handshake (docs/tcp-security.md, "Clients without timestamps").
# A raw client (tests/e2e/no_ts_client.py on tcp_wire.py, an unconfigured source
# address with a static neighbour on the server) opens connections without
# the timestamp option; the first GET, in the handshake-completing segment,
# is answered by XDP and makes the flow entry. Then:
#   body  a GET with a body at the next point, which XDP cannot answer:
#         no kernel listener: a RST from XDP whose seq is the client's ack
#         (rst_no_listener +1); a listener (nginx): the kernel's answer on
#         the same connection at that ack (handoff_from_flow +1);
#   moved the next GET from another CPU, where the per-CPU entry is not:
#         nothing proves it, so no answer, no RST, no hand-off, drop_no_ts
#         moves; the same GET again from the first CPU is answered by XDP.
# Testbed prefix: $NOTS_TB (default e2ents).
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck disable=SC2154 # d_NAME: set by raw() with printf -v
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=no_ts
PORT=8080
RAW=$E2E_ROOT/tests/e2e/no_ts_client.py

e2e_begin "$T" "${NOTS_TB:-e2ents}"
e2e_load "$T" -p $PORT
cmac=$($CLI ip -o link show "$CLI_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
smac=$($SRV ip -o link show "$SRV_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
SRC=${CLI_IP%.*}.177
$SRV ip neigh replace "$SRC" lladdr "$cmac" dev "$SRV_IF"

# raw MODE SPORT COUNTER...: the client's line in $out, each counter's
# change in $d_NAME.
raw() {
	local mode=$1 sport=$2 c
	shift 2
	declare -gA before
	for c in "$@"; do before[$c]=$(counter "$SRV_IF" "$c"); done
	out=$($CLI timeout 30 "$PY" "$RAW" "$mode" "$CLI_IF" "$SRC" "$SRV_IP" $PORT \
		"$smac" "$sport" 2>"$TMP/raw.err" | tail -1)
	for c in "$@"; do
		printf -v "d_$c" '%s' $(($(counter "$SRV_IF" "$c") - before[$c]))
	done
}

# ---- no kernel listener on the port ----
raw body 41001 rst_no_listener replies
if [[ $out = *"reply=rst rst_seq_ok=1"* ]] && [ "$d_rst_no_listener" = 1 ]; then
	pass "${T}_body_no_listener_rst ($out)"
else
	fail "${T}_body_no_listener_rst" "$out; rst_no_listener +$d_rst_no_listener $(tail -1 "$TMP/raw.err")"
fi
cpus=$(sed -n 's/.*cpus=\([0-9]*\).*/\1/p' <<<"$out")
moved_check() { # NAME WANT_HANDOFFS
	raw moved "$2" drop_no_ts handoff rst_no_listener answered_from_flow
	if [ "${cpus:-1}" -lt 2 ]; then
		skip "${T}_$1" "one CPU: no other CPU to move the flow to"
	elif [[ $out = *"other_cpu=none back=http"* ]] && [ "$d_drop_no_ts" -ge 1 ] &&
		[ "$d_handoff" = 0 ] && [ "$d_rst_no_listener" = 0 ] &&
		[ "$d_answered_from_flow" -ge 1 ]; then
		pass "${T}_$1 ($out; drop_no_ts +$d_drop_no_ts)"
	else
		fail "${T}_$1" "$out; drop_no_ts +$d_drop_no_ts handoff +$d_handoff rst_no_listener +$d_rst_no_listener from_flow +$d_answered_from_flow $(tail -1 "$TMP/raw.err")"
	fi
}
moved_check moved_no_listener 41002

# ---- a kernel listener (nginx) on the port ----
if ! command -v nginx >/dev/null; then
	skip "${T}_listener" "nginx is not installed: no kernel listener"
	e2e_status
	exit
fi
if ! nginx_start $PORT 64; then
	fail "${T}_nginx" "nginx did not start: $(tail -1 "$TMP/ngx/out.log")"
	e2e_status
	exit
fi
raw body 41003 handoff handoff_from_flow rst_no_listener
if [[ $out = *"reply=http http_seq_ok=1"* ]] && [ "$d_handoff_from_flow" = 1 ] &&
	[ "$d_handoff" = 1 ] && [ "$d_rst_no_listener" = 0 ]; then
	pass "${T}_body_handed_off ($out)"
else
	fail "${T}_body_handed_off" "$out; handoff +$d_handoff from_flow +$d_handoff_from_flow rst_no_listener +$d_rst_no_listener $(tail -1 "$TMP/raw.err")"
fi
moved_check moved_with_listener 41004
e2e_status
