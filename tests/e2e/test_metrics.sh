#!/bin/bash
# tests/e2e/test_metrics.sh - one counter registry for every engine, in
# the Prometheus text format: `blitz serve --engine E --metrics
# 127.0.0.1:PORT` for the epoll, xdp, afxdp and dpdk engines; N curl
# requests from the client namespace move blitz_requests_total{engine=E}
# by exactly N, read with a real parser (python3-prometheus-client) both
# from /metrics and from `blitz stats IFNAME --prometheus`; for the engines
# on the userspace TCP core (afxdp, dpdk) blitz_connections_opened_total moves by N
# too (one connection per curl) and `blitz stats` lists the core's own
# counters (challenge_acks, tlp_probes, ...); /metrics is bound to
# loopback only. dpdk says SKIP where blitz-dpdk cannot start.
# Each event under one engine: summed over every engine label,
# blitz_requests_total moves by exactly N (and blitz_synack_total by N
# for the engines that make SYN-ACKs), no sample appears twice, and under
# afxdp the XDP program's counters are engine="afxdp" under the names
# every engine uses (blitz_redirect_total) while engine="xdp" counts
# nothing; the text of `blitz stats IF` shows the requests once (the
# engine's table) and --json keeps the interface's total.
# One name per event: under the xdp engine, N GETs and M POSTs that xdp
# answers (405) and M GETs with a body (the kernel path's: epoll answers
# them) move blitz_requests_total by N+M under xdp, M under epoll and
# N+2M summed over engines, blitz_http_errors_total by M summed; no
# family carries a name retired before 1.0 (blitz_xdp_*, conn_open, ...).
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=metrics
PORT=8080
MPORT=9109
N=7
BODY="Hello World!"

need_root "$T"
if ! /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null; then
	skip "${T}_all" "python3-prometheus-client is not installed (scripts/install-deps.sh)"
	exit 0
fi
e2e_up "$T" "${METRICS_TB:-mtr}"
on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
PV="$(dirname "$0")/prom_value.py"

# value SOURCE ENGINE [FAMILY] - blitz_FAMILY_total (default requests) of
# ENGINE from /metrics (SOURCE metrics) or from blitz stats --prometheus
# (SOURCE stats).
value() {
	if [ "$1" = metrics ]; then
		$SRV timeout 5 curl -sS "http://127.0.0.1:$MPORT/metrics"
	else
		$SRV "$BLITZ" stats "$SRV_IF" --prometheus
	fi 2>/dev/null | /usr/bin/python3 "$PV" "$2" "blitz_${3:-requests}_total"
}

# ready ENGINE LOG PID - the engine answers on the service port: 0, 1
# failed, 2 cannot run here (dpdk without a usable EAL).
ready() {
	local what="serving on" secs=10
	case $1 in
	afxdp) what="^afxdp: $SRV_IF queue 0" ;;
	dpdk) what="^blitz-dpdk: serving" secs=30 ;;
	esac
	if ! wait_line "$2" "$what" "$3" "$secs"; then
		[ "$1" = dpdk ] && grep -qiE "not available|cannot start|did not start" "$2" && return 2
		return 1
	fi
	wait_port "$CLI" "$SRV_IP" "$PORT" 5 || return 1
}

# Names used before 1.0 for events that now have one name in every engine.
RETIRED='xdp_[a-z_]+|frames|service|conn_open|conn_close|conn_reset|errors|idle_timeout|header_timeout|accepted|closed|conn_errors|tcp_in|tcp_out|rx|tx'

# sum_xdp_epoll - under serve --engine xdp: N GETs and M POSTs (405) that
# XDP answers, M GETs with a body that it passes to the kernel, where
# epoll answers them. One event, one name: requests add up over the
# engine label, and so do http_errors.
sum_xdp_epoll() {
	local m=3 x0 e0 a0 h0 x1 e1 a1 h1 i ok=0 got=0 kern=0
	x0=$(value metrics xdp)
	e0=$(value metrics epoll)
	a0=$(value metrics '*')
	h0=$(value metrics '*' http_errors)
	for ((i = 0; i < N; i++)); do
		[ "$($CLI timeout 5 curl -sS -m 3 "http://$SRV_IP:$PORT/")" = "$BODY" ] && ok=$((ok + 1))
	done
	for ((i = 0; i < m; i++)); do
		[ "$($CLI timeout 5 curl -sS -m 3 -o /dev/null -w '%{http_code}' -d hello "http://$SRV_IP:$PORT/")" = 405 ] && got=$((got + 1))
		[ "$($CLI timeout 5 curl -sS -m 3 -X GET -d hello "http://$SRV_IP:$PORT/")" = "$BODY" ] && kern=$((kern + 1))
	done
	sleep 0.7
	x1=$(value metrics xdp)
	e1=$(value metrics epoll)
	a1=$(value metrics '*')
	h1=$(value metrics '*' http_errors)
	if [ "$ok" = "$N" ] && [ "$got" = "$m" ] && [ "$kern" = "$m" ] &&
		[[ $x0$x1$e0$e1$a0$a1$h0$h1 =~ ^[0-9]+$ ]] && [ $((x1 - x0)) = $((N + m)) ] &&
		[ $((e1 - e0)) = "$m" ] && [ $((a1 - a0)) = $((N + 2 * m)) ] && [ $((h1 - h0)) = "$m" ]; then
		pass "${T}_xdp_epoll_one_family"
	else
		fail "${T}_xdp_epoll_one_family" "$ok/$N GETs, $got/$m POSTs answered 405, $kern/$m GETs with a body; requests xdp $x0 -> $x1, epoll $e0 -> $e1, all $a0 -> $a1; http_errors all $h0 -> $h1"
	fi
}

for engine in epoll xdp afxdp dpdk; do
	log=$TMP/serve-$engine.log
	$SRV "$BLITZ" serve "$SRV_IF" --engine "$engine" -p "$PORT" -t 1 \
		--metrics "127.0.0.1:$MPORT" >"$log" 2>&1 &
	pid=$!
	on_exit "kill -9 $pid 2>/dev/null"
	ready "$engine" "$log" "$pid"
	rc=$?
	if [ "$rc" != 0 ]; then
		if [ "$rc" = 2 ]; then
			skip "${T}_${engine}_start" "blitz-dpdk cannot start here: $(tail -2 "$log" | tr '\n' ' ')"
		else
			fail "${T}_${engine}_start" "$(tr '\n' ' ' <"$log")"
		fi
		stop_pid "$pid" TERM 5
		continue
	fi
	sleep 0.3
	m0=$(value metrics "$engine")
	s0=$(value stats "$engine")
	c0=$(value stats "$engine" connections_opened)
	am0=$(value metrics '*')
	as0=$(value stats '*')
	ay0=$(value stats '*' synack)
	x0=$(value stats xdp)
	rd0=$(value stats afxdp redirect)
	j0=$(counter "$SRV_IF" requests)
	ok=0
	for ((i = 0; i < N; i++)); do
		[ "$($CLI timeout 5 curl -sS -m 3 "http://$SRV_IP:$PORT/")" = "$BODY" ] && ok=$((ok + 1))
	done
	# epoll and dpdk publish every 100 ms, afxdp every 250 ms
	sleep 0.7
	m1=$(value metrics "$engine")
	s1=$(value stats "$engine")
	if [ "$ok" = "$N" ] && [[ $m0 =~ ^[0-9]+$ ]] && [[ $m1 =~ ^[0-9]+$ ]] &&
		[ $((m1 - m0)) = "$N" ]; then
		pass "${T}_${engine}_metrics_requests"
	else
		fail "${T}_${engine}_metrics_requests" "$ok of $N answered; /metrics requests $m0 -> $m1"
	fi
	if [[ $s0 =~ ^[0-9]+$ ]] && [[ $s1 =~ ^[0-9]+$ ]] && [ $((s1 - s0)) = "$N" ]; then
		pass "${T}_${engine}_stats_prometheus_requests"
	else
		fail "${T}_${engine}_stats_prometheus_requests" "blitz stats --prometheus requests $s0 -> $s1"
	fi
	# Summed over the engine label: every request once, whichever engine.
	am1=$(value metrics '*')
	as1=$(value stats '*')
	if [[ $am0$am1$as0$as1 =~ ^[0-9]+$ ]] && [ $((am1 - am0)) = "$N" ] && [ $((as1 - as0)) = "$N" ]; then
		pass "${T}_${engine}_sum_over_engines_requests"
	else
		fail "${T}_${engine}_sum_over_engines_requests" "$N curls; sum of blitz_requests_total over engines: /metrics $am0 -> $am1, stats $as0 -> $as1"
	fi
	if [ "$engine" != epoll ]; then
		ay1=$(value stats '*' synack)
		if [[ $ay0$ay1 =~ ^[0-9]+$ ]] && [ $((ay1 - ay0)) = "$N" ]; then
			pass "${T}_${engine}_sum_over_engines_synack"
		else
			fail "${T}_${engine}_sum_over_engines_synack" "$N connections; sum of blitz_synack_total over engines $ay0 -> $ay1"
		fi
	fi
	u1=$($SRV timeout 5 curl -sS "http://127.0.0.1:$MPORT/metrics" 2>/dev/null | /usr/bin/python3 "$PV" --unique)
	u2=$($SRV "$BLITZ" stats "$SRV_IF" --prometheus 2>/dev/null | /usr/bin/python3 "$PV" --unique)
	if [ "$u1" = unique ] && [ "$u2" = unique ]; then
		pass "${T}_${engine}_series_unique"
	else
		fail "${T}_${engine}_series_unique" "/metrics: $u1; blitz stats --prometheus: $u2"
	fi
	if [ "$engine" = xdp ] || [ "$engine" = afxdp ]; then
		j1=$(counter "$SRV_IF" requests)
		if [[ $j0$j1 =~ ^[0-9]+$ ]] && [ $((j1 - j0)) = "$N" ]; then
			pass "${T}_${engine}_stats_json_requests"
		else
			fail "${T}_${engine}_stats_json_requests" "blitz stats $SRV_IF --json requests $j0 -> $j1"
		fi
	fi
	if [ "$engine" = afxdp ]; then
		x1=$(value stats xdp)
		rd1=$(value stats afxdp redirect)
		if [[ $x0$x1$rd0$rd1 =~ ^[0-9]+$ ]] && [ "$x1" = "$x0" ] && [ $((rd1 - rd0)) -ge $((3 * N)) ]; then
			pass "${T}_afxdp_xdp_program_under_afxdp"
		else
			fail "${T}_afxdp_xdp_program_under_afxdp" "blitz_requests_total{engine=xdp} $x0 -> $x1 (want no change), blitz_redirect_total{engine=afxdp} $rd0 -> $rd1 (want +$((3 * N)) or more)"
		fi
		first=$($SRV "$BLITZ" stats "$SRV_IF" 2>&1 | sed -n '1,/^$/p')
		if grep -q "^afxdp on $SRV_IF: its XDP program" <<<"$first" &&
			grep -qE '^redirect +[0-9]+' <<<"$first" && ! grep -qE '^requests ' <<<"$first"; then
			pass "${T}_afxdp_stats_text_counts_once"
		else
			fail "${T}_afxdp_stats_text_counts_once" "$(head -c 300 <<<"$first" | tr '\n' ' ')"
		fi
	fi
	# The userspace TCP core's counters, all of them, under its engine.
	if [ "$engine" = afxdp ] || [ "$engine" = dpdk ]; then
		c1=$(value stats "$engine" connections_opened)
		if [[ $c0 =~ ^[0-9]+$ ]] && [[ $c1 =~ ^[0-9]+$ ]] && [ $((c1 - c0)) = "$N" ]; then
			pass "${T}_${engine}_connections_opened_equals_clients"
		else
			fail "${T}_${engine}_connections_opened_equals_clients" "$N curls, blitz_connections_opened_total{engine=$engine} $c0 -> $c1"
		fi
		text=$($SRV "$BLITZ" stats "$SRV_IF" 2>&1)
		missing=
		for k in requests challenge_acks tlp_probes header_timeouts rx_evicted persist_giveup; do
			grep -qE "^$k +[0-9]+" <<<"$(sed -n "/engine $engine\$/,/^\$/p" <<<"$text")" || missing="$missing $k"
		done
		if grep -q "engine $engine\$" <<<"$text" && [ -z "$missing" ]; then
			pass "${T}_${engine}_stats_shows_core_counters"
		else
			fail "${T}_${engine}_stats_shows_core_counters" "missing:${missing:- the engine $engine table}: $(head -c 300 <<<"$text" | tr '\n' ' ')"
		fi
	fi
	if [ "$engine" = xdp ]; then
		sum_xdp_epoll
	fi
	old=$($SRV timeout 5 curl -sS "http://127.0.0.1:$MPORT/metrics" 2>/dev/null |
		grep -oE "^blitz_($RETIRED)_total" | sort -u | tr '\n' ' ')
	if [ -z "$old" ]; then
		pass "${T}_${engine}_no_retired_names"
	else
		fail "${T}_${engine}_no_retired_names" "$old"
	fi
	# Loopback only: the client cannot reach it on the service address.
	if $CLI timeout 3 curl -sS -m 2 "http://$SRV_IP:$MPORT/metrics" >/dev/null 2>&1; then
		fail "${T}_${engine}_metrics_loopback_only" "/metrics answered on $SRV_IP"
	else
		pass "${T}_${engine}_metrics_loopback_only"
	fi
	# The text view names the engine too.
	if $SRV "$BLITZ" stats "$SRV_IF" 2>&1 | grep -q "engine epoll"; then
		pass "${T}_${engine}_stats_shows_epoll"
	else
		fail "${T}_${engine}_stats_shows_epoll" "$($SRV "$BLITZ" stats "$SRV_IF" 2>&1 | head -3 | tr '\n' ' ')"
	fi
	stop_pid "$pid" TERM 5
	if ls /run/blitz/counters-"$pid"-* >/dev/null 2>&1; then
		fail "${T}_${engine}_area_removed" "$(ls /run/blitz/counters-"$pid"-*)"
	else
		pass "${T}_${engine}_area_removed"
	fi
done
