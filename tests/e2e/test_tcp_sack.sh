#!/bin/bash
# tests/e2e/test_tcp_sack.sh - SACK (RFC 2018) and RACK-TLP (RFC 8985) of
# the userspace TCP core with the kernel's TCP as the peer. `blitz serve
# --engine afxdp` (then dpdk, where blitz-dpdk can start) serves a 64 KiB
# body; curl in the client namespace fetches it 20 times with 5% of the
# frames the client receives dropped (tests/loss/loss.bpf.c on its veth's
# ingress), first with net.ipv4.tcp_sack=1 in the client namespace, then
# with 0. Checks, per engine and setting:
#   *_sack{1,0}_bodies   every body arrives intact (sha256)
#   *_sack{1,0}_tcp_info the client socket's TCP_INFO options (what
#                        `ss -ti` prints) list SACK exactly when on
#   *_sack1_recovery     the core's sack_recoveries and rack_retransmits
#                        moved (RACK resent what the client's SACKs showed
#                        missing); *_sack0_recovery: neither moved, the
#                        dropper dropped and the core resent all the same
# RACK compares send times on the clock's low 32 bits in microseconds, so
# where CLOCK_MONOTONIC is in its 72-minute lap matters; the unit test
# test_tcp_core test_sack_clock_laps covers both halves and the wrap.
# The client's nstat TcpExtTCPOFOQueue (segments it held out of order and
# SACKed) is printed as a comment.
#
# Every client runs under `timeout`; the testbed goes down in a trap.
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_loss.sh
source "$(dirname "$0")/lib_loss.sh"

T=tcp_sack
PORT=8080
e2e_begin "$T" "${SACK_TB:-sackb}"
need_cmds "$T" curl nstat sha256sum "$PY" || exit 0
URL="http://$SRV_IP:$PORT/"
PV="$(dirname "$0")/prom_value.py"
PINS=/sys/fs/bpf/blitz/$SRV_IF
on_exit "rm -rf '$PINS'"
head -c 49152 /dev/urandom | base64 -w0 >"$TMP/body" # 65536 bytes
chmod 644 "$TMP/body"
chmod 755 "$TMP"
WANT=$(sha256sum <"$TMP/body" | cut -d' ' -f1)
SERVE_PID=

# snap - the engines' counters as `blitz stats` publishes them, into
# $TMP/snap (why stats could not be read goes to $TMP/core.err).
snap() {
	if ! $SRV "$BLITZ" stats "$SRV_IF" --prometheus >"$TMP/snap" 2>"$TMP/stats.err"; then
		echo "blitz stats failed: $(head -c 200 "$TMP/stats.err" | tr '\n' ' ')" >"$TMP/core.err"
		: >"$TMP/snap"
	fi
}
# core ENGINE COUNTER - a TCP core counter's value in the last snap.
core() { "$PY" "$PV" "$1" "blitz_${2}_total" <"$TMP/snap"; }

# settled ENGINE REQUESTS - snap until the published counters hold
# REQUESTS requests and every connection closed (at most 15 s): what was
# resent for them was sent before they closed, so it is counted too. The
# engines publish every 250 ms, later on a loaded machine.
settled() {
	local i
	for ((i = 0; i < 150; i++)); do
		snap
		[ -s "$TMP/core.err" ] && return 1
		[ "$(core "$1" requests)" -ge "$2" ] &&
			[ "$(core "$1" connections_opened)" = "$(core "$1" connections_closed)" ] && return 0
		sleep 0.1
	done
	return 1
}

start() { # ENGINE LOG: 0 up, 1 failed, 2 cannot run here
	local e=$1 log=$2 what="^afxdp: $SRV_IF queue 0" secs=10
	[ "$e" = dpdk ] && what="^blitz-dpdk: serving" secs=30
	$SRV "$BLITZ" serve "$SRV_IF" --engine "$e" -p "$PORT" --body-file "$TMP/body" \
		--content-type application/octet-stream >"$log" 2>&1 &
	SERVE_PID=$!
	on_exit "kill -9 $SERVE_PID"
	if ! wait_line "$log" "$what" "$SERVE_PID" "$secs"; then
		[ "$e" = dpdk ] && grep -qiE "not available|cannot start|did not start" "$log" && return 2
		return 1
	fi
	wait_port "$CLI" "$SRV_IP" "$PORT" 5
}

# sack_seen - "sack" when the client socket's TCP_INFO (what `ss -ti` shows)
# says SACK was negotiated, else "none".
sack_seen() {
	$CLI timeout 10 "$PY" "$(dirname "$0")/tcp_info_sack.py" "$SRV_IP" "$PORT" \
		>"$TMP/ti.txt" 2>&1
	cut -d' ' -f1 "$TMP/ti.txt"
}

run_setting() { # ENGINE SACK(0|1)
	local e=$1 s=$2 name bad=0 i got r0 r1 x0 x1 a0 a1 p0 p1 ofo0 ofo1 ss seen dropped
	name=${e}_sack$s
	$CLI sysctl -qw net.ipv4.tcp_sack="$s"
	ss=$(sack_seen)
	if [ "$s" = 1 ]; then
		check "${name}_tcp_info" "TCP_INFO: $(tr '\n' ' ' <"$TMP/ti.txt")" [ "$ss" = sack ]
	else
		check "${name}_tcp_info" "TCP_INFO: $(tr '\n' ' ' <"$TMP/ti.txt") with tcp_sack=0" [ "$ss" = none ]
	fi
	REQS=$((REQS + 1))
	settled "$e" "$REQS"
	r0=$(core "$e" sack_recoveries)
	x0=$(core "$e" rack_retransmits)
	a0=$(core "$e" retransmits)
	p0=$(core "$e" tlp_probes)
	ofo0=$($CLI nstat -az TcpExtTCPOFOQueue 2>/dev/null | awk '/TCPOFOQueue/ {print $2}')
	if ! loss_on "$CLI" "$CLI_IF" 50 ingress 2>"$TMP/e"; then
		skip "$name" "no dropper here: $(tr '\n' ' ' <"$TMP/e")"
		return
	fi
	for ((i = 0; i < 20; i++)); do
		got=$($CLI timeout 20 curl -sS --max-time 15 "$URL" | sha256sum | cut -d' ' -f1)
		[ "$got" = "$WANT" ] || bad=$((bad + 1))
	done
	read -r seen dropped <<<"$(loss_stats "$CLI" "$CLI_IF")"
	echo "# $name: ${dropped:-?} of ${seen:-?} client frames dropped"
	loss_off "$CLI" "$CLI_IF"
	REQS=$((REQS + 20))
	settled "$e" "$REQS" || echo "# $name: the counters did not settle at $REQS requests, every connection closed, within 15 s"
	r1=$(core "$e" sack_recoveries)
	x1=$(core "$e" rack_retransmits)
	a1=$(core "$e" retransmits)
	p1=$(core "$e" tlp_probes)
	ofo1=$($CLI nstat -az TcpExtTCPOFOQueue 2>/dev/null | awk '/TCPOFOQueue/ {print $2}')
	echo "# $name: sack_recoveries +$((r1 - r0)), rack_retransmits +$((x1 - x0)) of retransmits +$((a1 - a0)) (tail-loss probes +$((p1 - p0))), client TCPOFOQueue +$((${ofo1:-0} - ${ofo0:-0}))"
	check "${name}_bodies" "$bad of 20 bodies differ" [ "$bad" = 0 ]
	if [ -s "$TMP/core.err" ]; then
		skip "${name}_recovery" "the engine's counters could not be read ($(cat "$TMP/core.err"))"
		rm -f "$TMP/core.err"
	elif [ "$s" = 1 ]; then
		check "${name}_recovery" "sack_recoveries $r0 -> $r1, rack_retransmits $x0 -> $x1" \
			test "$r1" -gt "$r0" -a "$x1" -gt "$x0"
	else
		check "${name}_recovery" "without SACK: sack_recoveries $r0 -> $r1, rack_retransmits $x0 -> $x1, retransmits $a0 -> $a1 after ${dropped:-?} frames dropped" \
			test "$r1" = "$r0" -a "$x1" = "$x0" -a "$a1" -gt "$a0" -a "${dropped:-0}" -gt 0
	fi
}

for e in ${SACK_ENGINES:-afxdp dpdk}; do
	rm -rf "$PINS"
	REQS=0 # requests this engine's serve was sent (its counters start at 0)
	start "$e" "$TMP/$e.log"
	rc=$?
	if [ "$rc" = 2 ]; then
		skip "${T}_$e" "blitz-dpdk cannot start here: $(tail -2 "$TMP/$e.log" | tr '\n' ' ')"
		stop_pid "$SERVE_PID" INT 5
		continue
	fi
	if [ "$rc" != 0 ]; then
		fail "${T}_${e}_start" "$(tail -3 "$TMP/$e.log" | tr '\n' ' ')"
		stop_pid "$SERVE_PID" INT 5
		continue
	fi
	run_setting "$e" 1
	run_setting "$e" 0
	$CLI sysctl -qw net.ipv4.tcp_sack=1
	stop_pid "$SERVE_PID" INT 5
done
e2e_status
