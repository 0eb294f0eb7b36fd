#!/bin/bash
# tests/e2e/test_afxdp_engine.sh - the afxdp engine end to end: `blitz serve
# <if> --engine afxdp` on the server veth of a two-namespace testbed; real
# clients (curl over IPv4 and IPv6, wget, python http.client keep-alive,
# wrk, ab, wrk pipelining 16 requests per segment) in the client namespace;
# a 64 KiB --body-file that must arrive intact (sha256); every request of a
# bounded batch answered with 5% loss on the client veth (lib_loss.sh);
# raw segments (tests/e2e/tcp_raw.py, scapy): RFC 5961 challenge ACKs for
# an in-window RST and a SYN on an established connection, 2,000
# connections holding partial headers that must not stop a new client, a
# tail-loss probe on a 64 KiB response; p50/p99 latency under 5% loss
# beside the epoll engine (the kernel's TCP, which also answers the RFC 5961
# checks as the reference);
# SIGINT stopping the engine child and detaching; and SIGKILL of the engine
# child, after which serve's own epoll listener answers (the XDP program
# passes service traffic once the socket's xsks entry is gone) until serve
# restarts the engine and AF_XDP answers again; SIGKILL of serve takes the
# XDP program and the engine child with it.
# AFXDP_TB sets the testbed prefix (default h5e2e).
#
# Every client runs under `timeout`; the testbed goes down in a trap.
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_tcp_raw.sh
source "$(dirname "$0")/lib_tcp_raw.sh"

T=afxdp
PORT=8080
BODY="Hello World!"

e2e_begin "$T" "${AFXDP_TB:-h5e2e}"

# userspace/loader.c (as of this writing) finds an XDP link by ifindex
# alone, and every fresh testbed's veth is ifindex 2 in its netns: another
# test's `blitz unload` running at the same time would detach our program.
# Move the server veth off ifindex 2 (out to a scratch netns whose 2 and 3
# are taken, and back) so concurrent runs cannot collide.
shift_ifindex() {
	local tmp=$SRV_NS-ix
	ip netns add "$tmp" || return 1
	ip -n "$tmp" link add "${SRV_IF}x" type veth peer name "${SRV_IF}y" &&
		ip -n "$SRV_NS" link set "$SRV_IF" netns "$tmp" &&
		ip -n "$tmp" link set "$SRV_IF" netns "$SRV_NS"
	ip netns del "$tmp"
	ip -n "$SRV_NS" addr add "$SRV_IP/24" dev "$SRV_IF" 2>/dev/null
	ip -n "$SRV_NS" addr add "$SRV_IP6/64" dev "$SRV_IF" nodad 2>/dev/null
	ip -n "$SRV_NS" link set "$SRV_IF" up
	$CLI ping -c1 -W2 "$SRV_IP" >/dev/null 2>&1
}
shift_ifindex
# Pins a killed run left behind. Not `blitz unload`: it finds XDP links by
# ifindex alone, and ifindex 2 is every testbed's veth in every netns.
PINS=/sys/fs/bpf/blitz/$SRV_IF
rm -rf "$PINS"
on_exit "rm -rf '$PINS'"
URL="http://$SRV_IP:$PORT/"
URL6="http://[$SRV_IP6]:$PORT/"
SERVE_PID=

# start_serve LOG [ARGS...] - blitz serve --engine afxdp in the background;
# waits for its "serving" line. 0 when it is up.
start_serve() {
	local log=$1
	shift
	$SRV "$BLITZ" serve "$SRV_IF" --engine afxdp -p "$PORT" "$@" >"$log" 2>&1 &
	SERVE_PID=$!
	on_exit "kill -9 $SERVE_PID"
	wait_line "$log" "^afxdp: $SRV_IF queue 0" "$SERVE_PID" 5
}

# stop_serve - SIGINT, up to 5 s, then SIGKILL; SERVE_RC is its status.
stop_serve() {
	SERVE_RC=
	[ -n "$SERVE_PID" ] || return 0
	stop_pid "$SERVE_PID" INT 5
	SERVE_RC=$STOP_RC
	SERVE_PID=
}

if start_serve "$TMP/serve.log"; then
	pass "${T}_serve"
else
	fail "${T}_serve" "$(tr '\n' ' ' <"$TMP/serve.log")"
	exit 1
fi
mode=$(grep -o 'queue 0: [a-z-]* mode' "$TMP/serve.log")
echo "# $mode"

# ---- real clients (lib.sh): curl GET over IPv4 and IPv6, HEAD,
# HTTP/1.0 close, wget, 50 keep-alive requests for one SYN-ACK, wrk -c50,
# ab and ab -k. The engine publishes its counters every 250 ms.
COUNTER_SETTLE=0.6 RC_SYNACK_IF=$SRV_IF RC_WRK_CONNS=50 \
	real_clients "$T" "$SRV_IP" "$PORT" "$SRV_IP6"

# The answers came from the engine, not the epoll fallback behind it: ab
# alone made 4000 requests.
req=$(wait_counter "$SRV_IF" requests 4000)
redir=$(wait_counter "$SRV_IF" redirect 10)
if ! has_xdp "$SRV_IF"; then
	fail "${T}_counters" "the XDP program is no longer attached to $SRV_IF"
elif [ "$req" -ge 4000 ] && [ "$redir" -ge 10 ]; then
	pass "${T}_counters"
else
	fail "${T}_counters" "requests $req redirect $redir"
fi

# ---- raw segments: RFC 5961, and 2,000 partial requests ----
SRV_MAC=$($SRV ip -br link show dev "$SRV_IF" | awk '{print $3}')
raw_rfc5961 "$T" "$SRV_IP" "$PORT" "$SRV_MAC"
raw_partial_flood "$T" "$SRV_IP" "$PORT" "$SRV_MAC"
# Corrupted segments dropped and counted; curl (whose frames carry veth's
# partial sums) still answered. The XDP program in front passes a bad IPv4
# header to the kernel (pass_malformed) before the core sees it, and counts
# what it drops for a bad TCP sum (bad_csum).
csum_drops() {
	local core xdp bad
	core=$(core_counter afxdp bad_csum)
	xdp=$(counter "$SRV_IF" pass_malformed)
	bad=$(counter "$SRV_IF" bad_csum)
	if [ "$core" -ge 0 ] && [ "$xdp" -ge 0 ] && [ "$bad" -ge 0 ]; then
		echo $((core + xdp + bad))
	else
		echo -1
	fi
}
raw_csum "$T" "$SRV_IP" "$PORT" "$SRV_MAC" "$SRV_IP6" csum_drops
rc_curl_get "${T}_csum_curl_after" "$URL"
raw_dsack "$T" "$SRV_IP" "$PORT" "$SRV_MAC"

# ---- an error with close; wrk pipelining 16 requests per segment ----
code=$($CLI timeout 10 curl -s -o /dev/null -w '%{http_code}' -X POST "$URL")
check "${T}_post_405" "POST answered $code" [ "$code" = 405 ]
cat >"$TMP/pipe.lua" <<'EOF'
init = function(args)
	local r = {}
	for i = 1, 16 do r[i] = wrk.format(nil, "/") end
	req = table.concat(r)
end
request = function() return req end
EOF
rc_wrk "${T}_wrk_pipeline16" "$URL" 1000 -d3s -s "$TMP/pipe.lua"

# ---- with 5% loss on the client's veth: every request answered ----
# This kernel has no sch_netem: the loss comes from tests/loss/loss.bpf.c
# (tests/e2e/lib_loss.sh), dropping 5% of the frames in both directions.
# shellcheck source=tests/e2e/lib_loss.sh
. "$E2E_ROOT/tests/e2e/lib_loss.sh"
# 5% of the frames in both directions of the client veth.
lossy() { loss_on "$CLI" "$CLI_IF" 50 both; }
unlossy() { loss_off "$CLI" "$CLI_IF"; }
LOSS=
if lossy 2>"$TMP/e"; then
	LOSS=bpf
	echo "# 5% loss on $CLI_IF (tests/loss/loss.bpf.c, both directions)"
	ok=$(curl_times 200 "$URL" "$TMP/lat_afxdp")
	LAT_AFXDP=$(pctl "$TMP/lat_afxdp")
	echo "# ${T}_loss_latency hello, 200 curls: $LAT_AFXDP"
	why="$ok of 200 answered"
	has_xdp "$SRV_IF" || why="$why (the XDP program was detached from $SRV_IF by another process)"
	check "${T}_loss_curl" "$why" [ "$ok" = 200 ]
	rc_wrk "${T}_loss_wrk" "$URL" 100 -c20 --timeout 4s -d5s
	unlossy
else
	skip "${T}_loss" "no way to drop 5% here: $(tr '\n' ' ' <"$TMP/e")"
fi
# SIGINT: serve stops its engine child, detaches and exits 0.
child=$(sed -n 's/^blitz: afxdp engine pid \([0-9]*\) .*/\1/p' "$TMP/serve.log" | tail -1)
stop_serve
if [ "$SERVE_RC" = 0 ] && [ -n "$child" ] && ! kill -0 "$child" 2>/dev/null &&
	! has_xdp "$SRV_IF" && [ ! -e "$PINS" ]; then
	pass "${T}_sigint_stops_engine"
else
	fail "${T}_sigint_stops_engine" "rc '$SERVE_RC', engine '$child' $(kill -0 "${child:-0}" 2>/dev/null && echo 'still runs' || echo gone), xdp $(has_xdp "$SRV_IF" && echo attached || echo gone), pins $([ -e "$PINS" ] && echo left || echo none)"
fi
grep '^afxdp: ' "$TMP/serve.log" | sed 's/^/# /'

# ---- a 64 KiB body, also under loss ----
# `blitz serve --body-file` needs the loader and the epoll fallback to accept
# a body larger than one XDP template; where they do not (yet), a small
# driver (tests/helpers/afxdp_driver.c) attaches the program through the same
# loader (its templates are unused in afxdp mode) and runs the engine with
# the 64 KiB body: the engine and its TCP core are what this checks.
head -c 65536 /dev/urandom >"$TMP/body64k"
want=$(sha256sum <"$TMP/body64k" | cut -d' ' -f1)
body_serve() { # LOG: start whatever serves the 64 KiB body
	if start_serve "$1" --body-file "$TMP/body64k" --content-type application/octet-stream; then
		return 0
	fi
	echo "# blitz serve --body-file 64k: $(grep -v '^blitz: serving' "$1" | head -1)"
	drv=$(helper afxdp_driver 2>"$1") || return 1
	echo "# using the test driver (loader + afxdp_engine_run) instead"
	$SRV "$drv" "$SRV_IF" "$PORT" "$TMP/body64k" >"$1" 2>&1 &
	SERVE_PID=$!
	on_exit "kill -9 $SERVE_PID"
	wait_line "$1" "^afxdp: $SRV_IF queue 0" "$SERVE_PID" 5
}
if body_serve "$TMP/serve64.log"; then
	bad=0
	for ((i = 0; i < 6; i++)); do
		u=$URL
		[ $((i % 2)) = 1 ] && u=$URL6
		got=$($CLI timeout 10 curl -sS "$u" | sha256sum | cut -d' ' -f1)
		[ "$got" = "$want" ] || bad=$((bad + 1))
	done
	check "${T}_body_64k" "$bad of 6 bodies (IPv4 and IPv6) differ" [ "$bad" = 0 ]
	raw_tlp "$T" "$SRV_IP" "$PORT" "$SRV_MAC"
	if [ -n "$LOSS" ] && lossy; then
		ok=$(curl_times 20 "$URL" "$TMP/lat64_afxdp")
		LAT64_AFXDP=$(pctl "$TMP/lat64_afxdp")
		echo "# ${T}_loss_latency 64 KiB, 20 curls: $LAT64_AFXDP ($ok answered)"
		bad=0
		for ((i = 0; i < 20; i++)); do
			got=$($CLI timeout 20 curl -sS --max-time 15 "$URL" | sha256sum | cut -d' ' -f1)
			[ "$got" = "$want" ] || bad=$((bad + 1))
		done
		why="$bad of 20 bodies differ"
		has_xdp "$SRV_IF" || why="$why (the XDP program was detached from $SRV_IF by another process)"
		check "${T}_body_64k_loss" "$why" [ "$bad" = 0 ]
		unlossy
	fi
	stop_serve
	grep '^afxdp: ' "$TMP/serve64.log" | sed 's/^/# /'
else
	fail "${T}_body_64k" "serve: $(tr '\n' ' ' <"$TMP/serve64.log")"
	stop_serve
fi

# ---- the reference: the epoll engine (the kernel's TCP) ----
# The same raw RFC 5961 checks, and the same loss runs, beside the numbers
# above: the latency of the kernel under the same 5% loss, in the same run.
start_epoll() { # LOG [ARGS...]
	local log=$1
	shift
	$SRV "$BLITZ" serve "$SRV_IF" --engine epoll -p "$PORT" "$@" >"$log" 2>&1 &
	SERVE_PID=$!
	on_exit "kill -9 $SERVE_PID"
	wait_line "$log" "^blitz: serving" "$SERVE_PID" 5 && wait_port "$SRV" "$SRV_IP" "$PORT" 5
}
if start_epoll "$TMP/epoll.log"; then
	raw_rfc5961 epoll_ref "$SRV_IP" "$PORT" "$SRV_MAC"
	raw_dsack_neigh
	raw_dsack epoll_ref "$SRV_IP" "$PORT" "$SRV_MAC"
	if [ -n "$LOSS" ] && lossy; then
		ok=$(curl_times 200 "$URL" "$TMP/lat_epoll")
		echo "# epoll_ref_loss_latency hello, 200 curls: $(pctl "$TMP/lat_epoll") ($ok answered); afxdp: $LAT_AFXDP"
		unlossy
	fi
	stop_serve
	if [ -n "$LOSS" ] && start_epoll "$TMP/epoll64.log" --body-file "$TMP/body64k" \
		--content-type application/octet-stream && lossy; then
		ok=$(curl_times 20 "$URL" "$TMP/lat64_epoll")
		echo "# epoll_ref_loss_latency 64 KiB, 20 curls: $(pctl "$TMP/lat64_epoll") ($ok answered); afxdp: $LAT64_AFXDP"
		unlossy
	fi
	stop_serve
else
	fail "epoll_ref" "serve --engine epoll: $(tr '\n' ' ' <"$TMP/epoll.log")"
	stop_serve
fi
rm -rf "$PINS"

# ---- SIGKILL of the engine: the kernel path answers, then it restarts ----
# `blitz serve --engine afxdp` runs the engine in a child process and the
# epoll listener in itself. Killing the child closes its AF_XDP sockets:
# the XDP program (a link of the parent, still attached) passes service
# traffic to the kernel (pass_no_xsk) and the parent's listener answers;
# the parent restarts the engine after a back-off and AF_XDP answers again.
# Killing the parent takes the XDP program and the child with it.
engine_pids() { sed -n 's/^blitz: afxdp engine pid \([0-9]*\) .*/\1/p' "$1"; }
if start_serve "$TMP/serve_kill.log"; then
	b=$($CLI timeout 10 curl -sS "$URL" 2>&1)
	[ "$b" = "$BODY" ] || fail "${T}_sigkill_before" "engine answered '$b'"
	child=$(engine_pids "$TMP/serve_kill.log" | tail -1)
	ppid=$(ps -o ppid= -p "${child:-0}" 2>/dev/null | tr -d ' ')
	if [ -n "$child" ] && [ "$ppid" = "$SERVE_PID" ]; then
		pass "${T}_engine_child"
	else
		fail "${T}_engine_child" "engine pid '$child' (parent '$ppid', serve $SERVE_PID): $(tr '\n' ' ' <"$TMP/serve_kill.log")"
	fi
	req_before_kill=$(wait_counter "$SRV_IF" requests 1)
	nx0=$(counter "$SRV_IF" pass_no_xsk)
	kill -9 "${child:-0}" 2>/dev/null
	for ((i = 0; i < 30; i++)); do
		grep -q 'afxdp engine exited (signal 9): serving from the kernel path' \
			"$TMP/serve_kill.log" && break
		sleep 0.1
	done
	# Answered by the epoll listener of the serve process: the frames went
	# to the kernel (pass_no_xsk), and the engine is not running.
	b=$($CLI timeout 10 curl -sS --max-time 5 "$URL" 2>&1)
	nx1=$(counter "$SRV_IF" pass_no_xsk)
	n=$(engine_pids "$TMP/serve_kill.log" | wc -l)
	if [ "$b" = "$BODY" ] && [ "$nx1" -gt "$nx0" ] && [ "$n" = 1 ] &&
		kill -0 "$SERVE_PID" 2>/dev/null && has_xdp "$SRV_IF"; then
		pass "${T}_sigkill_kernel_answers"
	else
		fail "${T}_sigkill_kernel_answers" "after SIGKILL: '$b', pass_no_xsk $nx0 -> $nx1, engines started $n, serve $(kill -0 "$SERVE_PID" 2>/dev/null && echo alive || echo dead), xdp $(has_xdp "$SRV_IF" && echo attached || echo gone): $(tail -2 "$TMP/serve_kill.log" | tr '\n' ' ')"
	fi
	# The restart: a second engine pid and its queue line, then AF_XDP
	# answers (the engine's request counter moves; it publishes every 250 ms).
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "^afxdp: $SRV_IF queue 0" "$TMP/serve_kill.log")" -ge 2 ] && break
		sleep 0.1
	done
	child2=$(engine_pids "$TMP/serve_kill.log" | tail -1)
	req0=$(wait_counter "$SRV_IF" requests "$req_before_kill")
	nx0=$(counter "$SRV_IF" pass_no_xsk)
	# The restarted engine carries on from the counters the killed one
	# published: `blitz stats` never goes back to zero.
	if [ "$req_before_kill" -ge 1 ] && [ "$req0" -ge "$req_before_kill" ]; then
		pass "${T}_sigkill_counters_monotonic"
	else
		fail "${T}_sigkill_counters_monotonic" "requests $req_before_kill before the kill, $req0 after the restart"
	fi
	ok=0
	for ((i = 0; i < 3; i++)); do
		[ "$($CLI timeout 10 curl -sS --max-time 5 "$URL" 2>/dev/null)" = "$BODY" ] && ok=$((ok + 1))
	done
	req1=$(wait_counter "$SRV_IF" requests $((req0 + 3)))
	nx1=$(counter "$SRV_IF" pass_no_xsk)
	if [ "$child2" != "$child" ] && kill -0 "${child2:-0}" 2>/dev/null && [ "$ok" = 3 ] &&
		[ $((req1 - req0)) -ge 3 ] && [ "$nx1" = "$nx0" ]; then
		pass "${T}_sigkill_restarted_afxdp_answers"
	else
		fail "${T}_sigkill_restarted_afxdp_answers" "engine '$child' -> '$child2', $ok of 3 answered, afxdp requests $req0 -> $req1, pass_no_xsk $nx0 -> $nx1: $(tail -3 "$TMP/serve_kill.log" | tr '\n' ' ')"
	fi
	# SIGKILL of the serve process: its XDP link goes, and the engine
	# child must not linger (PR_SET_PDEATHSIG).
	kill -9 "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null
	SERVE_PID=
	for ((i = 0; i < 50; i++)); do
		kill -0 "${child2:-0}" 2>/dev/null || break
		sleep 0.1
	done
	if ! kill -0 "${child2:-0}" 2>/dev/null && ! has_xdp "$SRV_IF"; then
		pass "${T}_sigkill_serve_takes_engine"
	else
		fail "${T}_sigkill_serve_takes_engine" "engine $child2 $(kill -0 "${child2:-0}" 2>/dev/null && echo 'still runs' || echo gone), xdp $(has_xdp "$SRV_IF" && echo attached || echo gone)"
		kill -9 "${child2:-0}" 2>/dev/null
	fi
	rm -rf "$PINS"
else
	fail "${T}_sigkill" "serve: $(tr '\n' ' ' <"$TMP/serve_kill.log")"
fi

e2e_status
