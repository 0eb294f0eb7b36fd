#!/bin/bash
# tests/e2e/lib_tcp_raw.sh - raw-segment checks of a server's TCP (scapy,
# tests/e2e/tcp_raw.py) from the client namespace, sourced by the afxdp and
# dpdk engine tests after lib.sh. The same checks against the epoll engine
# are the reference: the kernel's TCP answers them the way these expect.
# Needs $CLI, $CLI_IF, $CLI_IP from the testbed. Every run is bounded by
# `timeout`; the only addresses used are the testbed's (the flood's and the
# probe's sources are unconfigured neighbours of $CLI_IP in its /24).

TCP_RAW=$E2E_ROOT/tests/e2e/tcp_raw.py

# tcp_raw MODE IP PORT MAC [ARGS...] - the result line of one mode.
tcp_raw() {
	local mode=$1 ip=$2 port=$3 mac=$4
	shift 4
	$CLI timeout 60 "$PY" "$TCP_RAW" "$mode" "$CLI_IF" "$CLI_IP" "$ip" \
		"$port" --dmac "$mac" "$@" 2>"$TMP/tcp_raw.err" | tail -1
}

# raw_rfc5961 T IP PORT MAC - RFC 5961 on an established connection: a RST
# in the window (not at RCV.NXT) and a SYN with a new ISN each get a
# challenge ACK (no SYN-ACK), and the next request on the connection is
# answered, as Linux does.
raw_rfc5961() {
	local t=$1 ip=$2 port=$3 mac=$4 out want="challenge_ack=1 synack=0 answered=1"

	out=$(tcp_raw rst "$ip" "$port" "$mac")
	check "${t}_rfc5961_rst_in_window" "$out $(tail -1 "$TMP/tcp_raw.err")" [ "$out" = "$want" ]
	out=$(tcp_raw syn "$ip" "$port" "$mac")
	check "${t}_rfc5961_syn_established" "$out $(tail -1 "$TMP/tcp_raw.err")" [ "$out" = "$want" ]
}

# raw_partial_flood T IP PORT MAC - 2,000 connections from 20 addresses sit
# on partial headers with bare ACKs; a new client's request in three
# segments is still answered.
raw_partial_flood() {
	local t=$1 ip=$2 port=$3 mac=$4 out held

	out=$(tcp_raw flood "$ip" "$port" "$mac" --conns 2000 --srcs 20)
	held=$(echo "$out" | sed -n 's/.*held=\([0-9]*\).*/\1/p')
	# held: flood connections whose partial header the server took (ACKed);
	# more than the pool's 1024 buffers means the pool was fought over
	# (some of the 2,000 SYNs or segments may be lost to ring overruns).
	if [[ $out = *answered=1* ]] && [ "${held:-0}" -gt 1024 ]; then
		pass "${t}_partial_flood_2000"
	else
		fail "${t}_partial_flood_2000" "$out $(tail -1 "$TMP/tcp_raw.err")"
	fi
	echo "# ${t}_partial_flood_2000: $out"
}

# raw_tlp T IP PORT MAC - a large response whose ACKs stop after the first
# flight: once the flight has gone out, the next segment is a tail-loss
# probe (new data, or the last bytes again), well before the 200 ms RTO
# (RFC 8985: 2 SRTT + 2 ms); without TLP it is the RTO's resend.
raw_tlp() {
	local t=$1 ip=$2 port=$3 mac=$4 out ms

	out=$(tcp_raw tlp "$ip" "$port" "$mac")
	ms=$(echo "$out" | sed -n 's/.*probe_ms=\([0-9]*\).*/\1/p')
	if [[ $out = *probe=new* || $out = *probe=tail* ]] && [ -n "$ms" ] && [ "$ms" -lt 190 ]; then
		pass "${t}_tail_loss_probe (${ms} ms)"
	else
		fail "${t}_tail_loss_probe" "$out $(tail -1 "$TMP/tcp_raw.err")"
	fi
}

# core_counter ENGINE NAME - a TCP core counter from `blitz stats`'s table
# of that engine on $SRV_IF (-1 when absent).
core_counter() {
	$SRV "$BLITZ" stats "$SRV_IF" 2>/dev/null | sed -n "/engine $1\$/,/^\$/p" |
		awk -v k="$2" '$1 == k {print $2; f = 1} END {if (!f) print -1}'
}

# raw_csum T IP PORT MAC IP6 COUNTER_CMD... - segments whose checksum does
# not verify (a SYN's option, a GET's payload, over IPv4 the IP header; IPv4
# and IPv6) get nothing back, and the same GET intact is answered from its
# first byte; COUNTER_CMD prints the engine's bad_csum, which must move by
# the 5 segments (run before and after).
raw_csum() {
	local t=$1 ip=$2 port=$3 mac=$4 ip6=$5 out c0 c1
	local want="v4: synack_bad=0 bad_tcp=0 bad_ip=0 answered=1 v6: synack_bad=0 bad_tcp=0 answered=1"
	shift 5
	c0=$("$@")
	# A counter source that did not answer at once gets a second try.
	[ "${c0:--1}" -ge 0 ] || c0=$("$@")
	out=$(tcp_raw csum "$ip" "$port" "$mac" --src6 "$CLI_IP6" --dst6 "$ip6")
	sleep 0.6
	c1=$("$@")
	if [ "$out" = "$want" ] && [ "${c0:--1}" -ge 0 ] && [ "$((c1 - c0))" -ge 5 ]; then
		pass "${t}_csum_corrupt_dropped"
	else
		fail "${t}_csum_corrupt_dropped" "$out; bad_csum $c0 -> $c1 $(tail -1 "$TMP/tcp_raw.err")"
	fi
}

# raw_dsack T IP PORT MAC - a SACK peer's GET that comes again after its
# answer was acked: a copy with a payload byte flipped gets nothing, the
# intact copy an ACK whose first SACK block names exactly its bytes (RFC
# 2883), as Linux sends (the epoll engine's reference run). The source is
# .99 of the client's /24; a server on kernel sockets needs a static
# neighbour for it (raw_dsack_neigh).
raw_dsack() {
	local t=$1 ip=$2 port=$3 mac=$4 out want

	want="dup_bad=0 dsack=0-$(printf 'GET / HTTP/1.1\r\nHost: %s\r\n\r\n' "$ip" | wc -c)"
	out=$(tcp_raw dsack "$ip" "$port" "$mac")
	check "${t}_dsack_duplicate" "$out (want $want) $(tail -1 "$TMP/tcp_raw.err")" [ "$out" = "$want" ]
}

# raw_dsack_neigh - the server's static neighbour for raw_dsack's source.
raw_dsack_neigh() {
	local cmac

	cmac=$($CLI ip -br link show dev "$CLI_IF" | awk '{print $3}')
	$SRV ip neigh replace "${CLI_IP%.*}.99" lladdr "$cmac" dev "$SRV_IF" nud permanent
}

# curl_times N URL OUT [CURL ARGS...] - N GETs, CURL_LANES (default 4)
# sequential streams at once (under loss most of a GET's time is a
# retransmission timer, so the streams overlap it); their times in ms, one
# a line, into OUT; returns how many got the expected status 200.
curl_times() {
	local n=$1 url=$2 out=$3 lanes=${CURL_LANES:-4} l
	shift 3
	for ((l = 0; l < lanes; l++)); do
		curl_lane $(((n + l) / lanes)) "$url" "$out.$l" "$@" &
	done
	wait
	for ((l = 0; l < lanes; l++)); do cat "$out.$l"; done >"$out.all"
	awk '{print $2}' "$out.all" >"$out"
	awk '$1 == 200' "$out.all" | wc -l
	for ((l = 0; l < lanes; l++)); do rm -f "$out.$l"; done
	rm -f "$out.all"
}

# curl_lane N URL FILE [CURL ARGS...] - N sequential GETs: "status ms" a line.
curl_lane() {
	local n=$1 url=$2 f=$3 i r
	shift 3
	: >"$f"
	for ((i = 0; i < n; i++)); do
		r=$($CLI timeout 20 curl -sS -o /dev/null --max-time 15 -w '%{http_code} %{time_total}' "$@" "$url" 2>/dev/null)
		awk -v r="$r" 'BEGIN {n = split(r, a, " "); printf "%s %d\n", (n ? a[1] : "-"), a[2] * 1000}' >>"$f"
	done
}

# pctl FILE - "p50 X ms p99 Y ms" of the numbers in FILE.
pctl() {
	sort -n "$1" | awk '{v[NR] = $1} END {
		if (!NR) { print "no samples"; exit }
		i50 = int((NR - 1) * 0.50) + 1; i99 = int((NR - 1) * 0.99) + 1
		printf "p50 %d ms p99 %d ms (n=%d)", v[i50], v[i99], NR }'
}
