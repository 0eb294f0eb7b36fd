#!/bin/bash
# tests/e2e/test_dpdk_idle.sh - the dpdk engine's lcore sleeps when it has
# nothing to do on a port whose frames come through kernel sockets
# (af_packet on a veth), and a frame wakes it (dpdk/idle.c):
# - the start line says so, with at least two descriptors to wake it (the
#   port's packet socket and the TAP's queue);
# - over 2 s without traffic blitz-dpdk uses under 10% of a CPU (spinning,
#   it uses all of the CPU it gets);
# - after an idle second a GET and a 64 KiB body are answered (the body
#   intact), and a TCP connection to another port reaches a kernel server
#   through the TAP; the totals count sleeps (idle_sleeps) and sleeps ended
#   by a frame (idle_woken);
# - control: with --busy-poll the same 2 s idle take at least 25% of a CPU
#   (SKIP when other load leaves the spinning lcore less than that).
# Bounded: two starts, a few curls, about 20 s. $SRV/$CLI must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=dpdk_idle
PORT=80
OTHER_PORT=8080
DPDK=$E2E_ROOT/$BUILD/blitz-dpdk
[[ $BUILD = /* ]] && DPDK=$BUILD/blitz-dpdk
PREFIX=${DPDK_IDLE_TB:-e2edi}
TAP=${PREFIX}tap
CPU=$(($(nproc) - 1))
HZ=$(getconf CLK_TCK)

need_root "$T"
need_dpdk_tap "$T" "$DPDK"
e2e_up "$T" "$PREFIX"
URL="http://$SRV_IP:$PORT/"

start_dpdk() { # ARGS... ; sets DPDK_PID
	dpdk_start "$CPU" "net_af_packet0,iface=$SRV_IF,qdisc_bypass=1" 15 "$@"
}

# cpu_ticks PID - user + system clock ticks of all its threads so far.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# idle_cpu_pct PID - its CPU use over 2 s without traffic, % of one CPU.
idle_cpu_pct() {
	local a b
	sleep 0.5 # after the start's own work
	a=$(cpu_ticks "$1")
	sleep 2
	b=$(cpu_ticks "$1")
	echo $(((b - a) * 100 / (2 * HZ)))
}

tot() { grep '^totals:' "$TMP/dpdk.log" | grep -oE "(^| )$1=[0-9]+" | cut -d= -f2; }

head -c 65536 /dev/urandom >"$TMP/body.bin"
start_dpdk --body-file "$TMP/body.bin" --content-type application/octet-stream ||
	dpdk_start_failed "$T"
line=$(grep 'sleeps in poll()' "$TMP/dpdk.log")
n=$(echo "$line" | sed -n 's/.*(\([0-9]*\) kernel descriptor.*/\1/p')
if [ "${n:-0}" -ge 2 ]; then
	pass "${T}_sleeps ($n descriptors)"
else
	fail "${T}_sleeps" "want 'sleeps in poll()' with >= 2 descriptors: $(grep '^blitz-dpdk' "$TMP/dpdk.log" | tr '\n' ' ')"
fi

pct=$(idle_cpu_pct "$DPDK_PID")
if [ "$pct" -lt 10 ]; then
	pass "${T}_idle_cpu (${pct}% of CPU $CPU over 2 s)"
else
	fail "${T}_idle_cpu" "${pct}% of a CPU over 2 s without traffic (want < 10%)"
fi

# A frame wakes it: a GET, then a 64 KiB body, each after an idle second.
sleep 1
got=$($CLI timeout 10 curl -sS --max-time 5 -o "$TMP/got.bin" -w '%{http_code} %{time_total}' "$URL" 2>"$TMP/e")
sleep 1
got2=$($CLI timeout 10 curl -sS --max-time 5 -o "$TMP/got2.bin" -w '%{http_code} %{time_total}' "$URL" 2>>"$TMP/e")
if [ "${got%% *}" = 200 ] && [ "${got2%% *}" = 200 ] && cmp -s "$TMP/body.bin" "$TMP/got.bin" &&
	cmp -s "$TMP/body.bin" "$TMP/got2.bin"; then
	pass "${T}_woken_by_frame (64 KiB in ${got##* } s and ${got2##* } s)"
else
	fail "${T}_woken_by_frame" "curl: '$got' '$got2' $(tr '\n' ' ' <"$TMP/e")"
fi

# The kernel's frames (through the TAP) wake it too.
mkdir -p "$TMP/www"
echo "kernel behind the TAP" >"$TMP/www/k.txt"
(cd "$TMP/www" && exec $SRV timeout 30 "$PY" -m http.server "$OTHER_PORT" --bind 0.0.0.0 >/dev/null 2>&1) &
on_exit "kill $!"
if wait_port "$SRV" 127.0.0.1 "$OTHER_PORT" 5 && sleep 1 &&
	[ "$($CLI timeout 10 curl -sS --max-time 5 "http://$SRV_IP:$OTHER_PORT/k.txt" 2>"$TMP/e")" = "kernel behind the TAP" ]; then
	pass "${T}_exception_path"
else
	fail "${T}_exception_path" "curl to port $OTHER_PORT: $(tr '\n' ' ' <"$TMP/e")"
fi

stop_pid "$DPDK_PID" TERM 5
sleeps=$(tot idle_sleeps) woken=$(tot idle_woken)
if [ "${sleeps:-0}" -ge 1 ] && [ "${woken:-0}" -ge 1 ]; then
	pass "${T}_counters (idle_sleeps=$sleeps idle_woken=$woken)"
else
	fail "${T}_counters" "idle_sleeps=${sleeps:-0} idle_woken=${woken:-0}: $(grep '^totals:' "$TMP/dpdk.log")"
fi

# Control: --busy-poll spins.
if start_dpdk --busy-poll; then
	pct=$(idle_cpu_pct "$DPDK_PID")
	if ! grep -q 'busy-poll (--busy-poll)' "$TMP/dpdk.log"; then
		fail "${T}_busy_poll_control" "no 'busy-poll' start line: $(grep '^blitz-dpdk' "$TMP/dpdk.log" | tr '\n' ' ')"
	elif [ "$pct" -ge 25 ]; then
		pass "${T}_busy_poll_control (${pct}% of a CPU over 2 s)"
	else
		skip "${T}_busy_poll_control" "the spinning lcore got ${pct}% of a CPU (load $(cut -d' ' -f1 /proc/loadavg)): too loaded to tell"
	fi
	stop_pid "$DPDK_PID" TERM 5
else
	fail "${T}_busy_poll_control" "$(tail -3 "$TMP/dpdk.log" | tr '\n' ' ')"
fi

e2e_status
