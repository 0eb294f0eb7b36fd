#!/bin/bash
# tests/e2e/test_serve.sh - `blitz serve <ifname>`, the foreground command:
# the xdp tier with the epoll listener behind it (answers, counters,
# status, what the fast path passes reaching the kernel on the same
# connection), SIGTERM detaching everything, SIGKILL leaving only what
# `blitz status` reports and `blitz unload` removes, auto falling back to
# epoll alone when XDP cannot attach, and argument errors that attach
# nothing; the dpdk engine in a child of serve, the interface it takes
# over given back when it dies (SIGKILL too) and when serve stops. For
# every tier (epoll alone, xdp, afxdp, dpdk) `blitz status` shows the
# serve's pid and tier from its state file under /run/blitz, not in
# another network namespace; a SIGKILLed serve shows as stale until
# `blitz unload` removes it; SIGTERM leaves no state file.
# SERVE_TB sets the testbed prefix (default h4av).
#
# Every client runs under `timeout`; the testbed goes down in a trap.
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_epoll.sh
source "$(dirname "$0")/lib_epoll.sh"

T=serve
PORT=8080
BODY="Hello World!"

e2e_begin "$T" "${SERVE_TB:-h4av}"
on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
URL="http://$SRV_IP:$PORT/"
PINS=/sys/fs/bpf/blitz/$SRV_IF

nothing_left() { ! has_xdp "$SRV_IF" && [ ! -e "$PINS" ]; }
# serves NAME LINE LOG ARGS... - serve ARGS (its log in LOG): PASS NAME
# once LINE is in the log and the service answers, else FAIL NAME.
serves() {
	local name=$1 line=$2 log=$3
	shift 3
	serve_start "$log" "$@"
	if serve_wait_line "$line" 20 && answered; then
		pass "$name"
	else
		fail "$name" "$(tr '\n' ' ' <"$log")"
	fi
}
answered() { [ "$($CLI timeout 5 curl -sS -m 3 "$URL" 2>/dev/null)" = "$BODY" ]; }

# state_file PID - the state file of serve PID on $SRV_IF port $PORT.
state_file() { echo "/run/blitz/serve-$SRV_IF-$PORT-$1.state"; }
# states - the state files there are, on one line.
states() { find /run/blitz -name 'serve-*' 2>/dev/null | tr '\n' ' '; }
# serve_row PID TIER [ENGINE_PID] - wait (3 s at most) until `blitz status`
# in the server namespace has the row of serve PID with TIER on $SRV_IF
# port $PORT (and ENGINE_PID in its column); $TMP/sst holds the output.
serve_row() {
	local tier i re
	tier=$(printf '%s' "$2" | sed 's/[+()]/\\&/g')
	re="^$1 +$tier +$SRV_IF +$PORT +[^ ]+ +${3:-[-0-9]+} "
	for ((i = 0; i < 30; i++)); do
		$SRV "$BLITZ" status >"$TMP/sst" 2>&1
		grep -qE -- "$re" "$TMP/sst" && return 0
		sleep 0.1
	done
	return 1
}
# check_serve_row NAME PID TIER [ENGINE_PID] - PASS/FAIL on serve_row.
check_serve_row() {
	local name=$1
	shift
	if serve_row "$@"; then
		pass "$name"
	else
		fail "$name" "want pid $1 tier '$2': $(tr '\n' '|' <"$TMP/sst")"
	fi
}

# ---- engine epoll alone: nothing in BPF, status shows it from its state ----
serve_start "$TMP/ep.log" "$SRV_IF" --engine epoll -p "$PORT"
if serve_wait_line "tier epoll" 20 && answered; then
	check_serve_row "${T}_epoll_status" "$SERVE_PID" epoll -
	# Another namespace's status does not show it as its own.
	$CLI "$BLITZ" status >"$TMP/cst" 2>&1
	if ! grep -qE "^$SERVE_PID " "$TMP/cst" && grep -q "in another network namespace not shown" "$TMP/cst"; then
		pass "${T}_epoll_status_other_netns"
	else
		fail "${T}_epoll_status_other_netns" "$(tr '\n' '|' <"$TMP/cst")"
	fi
else
	fail "${T}_epoll_status" "$(tr '\n' ' ' <"$TMP/ep.log")"
fi
pid=$SERVE_PID
if serve_stop TERM 10 && [ "$SERVE_RC" = 0 ] && [ ! -e "$(state_file "$pid")" ]; then
	pass "${T}_epoll_sigterm_no_state"
else
	fail "${T}_epoll_sigterm_no_state" "rc $SERVE_RC: $(states)"
fi
# SIGKILL: the state file stays, status calls it stale, unload removes it.
serve_start "$TMP/ep2.log" "$SRV_IF" --engine epoll -p "$PORT"
if serve_wait_line "tier epoll" 20 && serve_row "$SERVE_PID" epoll; then
	pid=$SERVE_PID
	serve_stop KILL 5
	$SRV "$BLITZ" status >"$TMP/st" 2>&1
	if [ -e "$(state_file "$pid")" ] && grep -qE "^$pid \(gone\) +epoll " "$TMP/st" &&
		grep -q "stale: serve pid $pid is gone: .*blitz unload $SRV_IF" "$TMP/st"; then
		pass "${T}_epoll_sigkill_status_stale"
	else
		fail "${T}_epoll_sigkill_status_stale" "$(tr '\n' '|' <"$TMP/st")"
	fi
	out=$($SRV "$BLITZ" unload "$SRV_IF" 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && [ ! -e "$(state_file "$pid")" ]; then
		pass "${T}_epoll_sigkill_unload_state"
	else
		fail "${T}_epoll_sigkill_unload_state" "rc $rc: $out; $(states)"
	fi
else
	fail "${T}_epoll_sigkill_status_stale" "$(tr '\n' ' ' <"$TMP/ep2.log") $(tr '\n' '|' <"$TMP/sst")"
	serve_stop KILL 5
fi

# ---- engine xdp ----
serve_start "$TMP/xdp.log" "$SRV_IF" --engine xdp -p "$PORT"
if serve_wait_line "tier xdp (native) + epoll fallback" 20 && has_xdp "$SRV_IF"; then
	pass "${T}_xdp_tier_line"
else
	fail "${T}_xdp_tier_line" "$(tr '\n' ' ' <"$TMP/xdp.log")"
	serve_stop KILL 5
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
	exit 1
fi
if [ -n "$($SRV ss -Hltn "sport = :$PORT")" ]; then
	pass "${T}_xdp_epoll_listener"
else
	fail "${T}_xdp_epoll_listener" "nothing listens on $PORT behind XDP"
fi
req0=$(counter "$SRV_IF" requests)
ok=1
for i in 1 2 3; do answered || ok=; done
req1=$(counter "$SRV_IF" requests)
if [ -n "$ok" ] && [ "$req1" -gt "$req0" ]; then
	pass "${T}_xdp_answers"
else
	fail "${T}_xdp_answers" "curl ok='$ok', XDP requests $req0 -> $req1"
fi
$SRV "$BLITZ" status >"$TMP/st" 2>&1
if grep -E "^$SRV_IF " "$TMP/st" | grep -qE " native .* xdp .* serve .* $PORT "; then
	pass "${T}_xdp_status"
else
	fail "${T}_xdp_status" "$(tr '\n' '|' <"$TMP/st")"
fi
check_serve_row "${T}_xdp_status_tier" "$SERVE_PID" "xdp-native+epoll" -
xdp_pid=$SERVE_PID

# What XDP does not answer reaches the epoll listener on the same
# connection through the TC hand-off (when this kernel has it).
if grep -q "no TC hand-off\|without the TC hand-off" "$TMP/xdp.log"; then
	skip "${T}_xdp_handoff" "$(grep -m1 "hand-off" "$TMP/xdp.log")"
else
	h0=$(counter "$SRV_IF" handoff)
	$CLI timeout 30 "$PY" "$E2E_ROOT/tests/e2e/raw_http.py" "$SRV_IP" "$PORT" "${T}_xdp" \
		post_405_close,post_after_two_gets,split_request,headers_5k,http2_preface_505 >"$TMP/raw" 2>&1
	cat "$TMP/raw"
	grep -q '^FAIL ' "$TMP/raw" && E2E_FAILED=1
	grep -qE '^(PASS|FAIL) ' "$TMP/raw" || fail "${T}_xdp_raw" "$(tr '\n' ' ' <"$TMP/raw")"
	h1=$(counter "$SRV_IF" handoff)
	if [ "$h1" -gt "$h0" ]; then
		pass "${T}_xdp_handoff_counter"
	else
		fail "${T}_xdp_handoff_counter" "handoff $h0 -> $h1"
	fi
fi

serve_stop_ok "${T}_xdp_sigterm_exit0"
if nothing_left && [ ! -e "$(state_file "$xdp_pid")" ]; then
	pass "${T}_xdp_sigterm_detached"
else
	fail "${T}_xdp_sigterm_detached" "XDP, pins or state left: $(states) $($SRV ip link show "$SRV_IF" | grep -o 'prog/xdp.*') $(ls "$PINS" 2>&1)"
fi
grep -E '^(xdp|epoll): ' "$TMP/xdp.log" | sed 's/^/  /'

# ---- auto (native expected on veth), then SIGKILL ----
serves "${T}_auto_xdp_native" "tier xdp (native) + epoll fallback" "$TMP/auto.log" "$SRV_IF" -p "$PORT"
auto_pid=$SERVE_PID
serve_row "$auto_pid" "xdp-native+epoll"
serve_stop KILL 5
sleep 0.5
if ! has_xdp "$SRV_IF"; then
	pass "${T}_sigkill_xdp_gone_with_process"
else
	fail "${T}_sigkill_xdp_gone_with_process" "an XDP program is still attached"
fi
$SRV "$BLITZ" status >"$TMP/st" 2>&1
if [ ! -e "$PINS" ] || grep -q "blitz unload $SRV_IF" "$TMP/st"; then
	pass "${T}_sigkill_status_says_unload"
else
	fail "${T}_sigkill_status_says_unload" "$(tr '\n' '|' <"$TMP/st")"
fi
if grep -qE "^$auto_pid \(gone\) +xdp-native\+epoll " "$TMP/st" &&
	grep -q "serve pid $auto_pid is gone: its XDP link went with it" "$TMP/st"; then
	pass "${T}_sigkill_status_stale_serve"
else
	fail "${T}_sigkill_status_stale_serve" "$(tr '\n' '|' <"$TMP/st")"
fi
out=$($SRV "$BLITZ" unload "$SRV_IF" 2>&1)
if nothing_left && [ ! -e "$(state_file "$auto_pid")" ]; then
	pass "${T}_sigkill_unload_cleans"
else
	fail "${T}_sigkill_unload_cleans" "unload said '$out'; XDP or pins left"
fi

# ---- skb mode on request ----
serves "${T}_xdp_skb" "tier xdp (skb) + epoll fallback" "$TMP/skb.log" "$SRV_IF" --engine xdp -m skb -p "$PORT"
serve_stop TERM 10
nothing_left || fail "${T}_xdp_skb_detached" "XDP or pins left after SIGTERM"

# ---- afxdp: the XDP program redirects to AF_XDP sockets, epoll behind ----
# The engine runs in a child process of serve (its death leaves the kernel
# path answering); SIGTERM to serve stops it too.
serve_start "$TMP/afxdp.log" "$SRV_IF" --engine afxdp -p "$PORT"
child=
if serve_wait_line "not available" 1; then
	skip "${T}_afxdp" "$(head -1 "$TMP/afxdp.log")"
elif serve_wait_line "tier afxdp (native) + epoll fallback" 20 &&
	serve_wait_line "^afxdp: $SRV_IF queue 0" 10 && answered; then
	pass "${T}_afxdp"
	child=$(sed -n 's/^blitz: afxdp engine pid \([0-9]*\) .*/\1/p' "$TMP/afxdp.log")
	if [ -n "$child" ] && [ "$(ps -o ppid= -p "$child" | tr -d ' ')" = "$SERVE_PID" ]; then
		pass "${T}_afxdp_engine_child"
	else
		fail "${T}_afxdp_engine_child" "engine pid '$child' is not a child of serve $SERVE_PID: $(tr '\n' ' ' <"$TMP/afxdp.log")"
	fi
	check_serve_row "${T}_afxdp_status_tier" "$SERVE_PID" "afxdp+epoll" "${child:-x}"
else
	fail "${T}_afxdp" "$(tr '\n' ' ' <"$TMP/afxdp.log")"
fi
afxdp_pid=$SERVE_PID
serve_stop TERM 10
if nothing_left && [ "$SERVE_RC" = 0 ] && ! kill -0 "${child:-0}" 2>/dev/null &&
	[ ! -e "$(state_file "$afxdp_pid")" ]; then
	pass "${T}_afxdp_sigterm_detached"
else
	fail "${T}_afxdp_sigterm_detached" "rc $SERVE_RC, engine ${child:-?} $(kill -0 "${child:-0}" 2>/dev/null && echo 'still runs' || echo gone), XDP or pins: $(nothing_left && echo none || echo left)"
fi

# ---- XDP cannot attach: auto falls back to epoll, xdp refuses ----
$SRV ip link set dev "$SRV_IF" xdpdrv obj "$(dirname "$BLITZ")/xdp_pass.bpf.o" sec xdp 2>"$TMP/e"
if has_xdp "$SRV_IF"; then
	on_exit "$SRV ip link set dev '$SRV_IF' xdp off"
	serves "${T}_auto_falls_back_to_epoll" "tier epoll" "$TMP/fb.log" "$SRV_IF" -p "$PORT"
	serve_stop TERM 10
	if has_xdp "$SRV_IF" && [ ! -e "$PINS" ]; then
		pass "${T}_foreign_xdp_untouched"
	else
		fail "${T}_foreign_xdp_untouched" "the other XDP program was removed or pins were left"
	fi
	out=$($SRV timeout 30 "$BLITZ" serve "$SRV_IF" --engine xdp -p "$PORT" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ -z "$($SRV ss -Hltn "sport = :$PORT")" ] &&
		[ ! -e "$PINS" ]; then
		pass "${T}_xdp_refuses_cleanly"
	else
		fail "${T}_xdp_refuses_cleanly" "rc $rc: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	$SRV ip link set dev "$SRV_IF" xdp off
else
	skip "${T}_auto_falls_back_to_epoll" "cannot attach xdp_pass.bpf.o: $(cat "$TMP/e")"
fi

# ---- behind a `blitz load`: serve adds the epoll listener only ----
if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load.out" 2>&1; then
	serves "${T}_auto_behind_load" "tier epoll .* behind the XDP program" "$TMP/behind.log" "$SRV_IF" -p "$PORT"
	serve_stop TERM 10
	# The fallback is said once, by serve: not preceded by the loader's
	# refusal, whose advice (`blitz reload`) is for `blitz load`.
	if ! grep -q "already loaded\|blitz reload" "$TMP/behind.log"; then
		pass "${T}_auto_behind_load_one_story"
	else
		fail "${T}_auto_behind_load_one_story" "$(tr '\n' '|' <"$TMP/behind.log")"
	fi
	if has_xdp "$SRV_IF" && [ -e "$PINS" ]; then
		pass "${T}_load_left_alone"
	else
		fail "${T}_load_left_alone" "serve removed what \`blitz load\` attached"
	fi
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
else
	fail "${T}_auto_behind_load" "blitz load: $(tr '\n' ' ' <"$TMP/load.out")"
fi

# ---- argument errors: one line, nothing attached ----
serve_error() { # NAME PATTERN ARGS...
	CLI_ERROR_AFTER=nothing_left cli_error "$1" "$2" serve "${@:3}"
}
serve_error "${T}_err_bad_engine" "bad engine" "$SRV_IF" --engine turbo -p "$PORT"
serve_error "${T}_err_bad_port" "bad port" "$SRV_IF" --engine xdp -p 99999
serve_error "${T}_err_bad_mode" "bad mode" "$SRV_IF" -m fast -p "$PORT"
serve_error "${T}_err_unknown_if" "unknown interface" nosuchif0 -p "$PORT"
serve_error "${T}_err_extra_arg" "unexpected argument" "$SRV_IF" extra -p "$PORT"

# ---- dpdk: blitz-dpdk in a child of serve, the interface given back ----
# serve forks blitz-dpdk, which takes the veth over (its addresses move to
# a TAP; IPv6 off, arp_ignore=8, rp_filter=1 on the veth). serve recorded
# the veth first and keeps its epoll listener: when the child dies, even
# by SIGKILL (no clean exit to restore anything), serve puts the veth back
# as it was and the kernel path answers; the engine is then restarted.
# SIGTERM to serve stops the child and leaves the veth as it was at start.
veth_state() {
	local s
	for s in net.ipv6.conf.$SRV_IF.disable_ipv6 net.ipv4.conf.$SRV_IF.rp_filter \
		net.ipv4.conf.$SRV_IF.arp_ignore net.ipv6.conf.$SRV_IF.accept_ra; do
		printf '%s=%s ' "$s" "$($SRV sysctl -n "$s" 2>/dev/null)"
	done
	# addresses as a sorted set (their order may differ once put back)
	$SRV ip -br addr show dev "$SRV_IF" | awk '{for (i = 3; i <= NF; i++) print $i}' | sort | tr '\n' ' '
	$SRV ip route show dev "$SRV_IF" | sort | tr '\n' ' '
	# the local table too: a broadcast put back wrong shows there
	$SRV ip route show table local dev "$SRV_IF" | sort | tr '\n' ' '
	$SRV ip -4 -o addr show dev "$SRV_IF" | grep -o 'brd [0-9.]*' | sort | tr '\n' ' '
	$SRV ip -6 route show dev "$SRV_IF" | grep -v '^fe80\|^multicast' | sort | tr '\n' ' '
}
# veth_state_is STATE SECONDS - wait until the veth is in STATE (IPv6
# link-local addresses come back a moment after disable_ipv6=0).
veth_state_is() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(veth_state)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
has_srv_ip() { $SRV ip -br addr show dev "$SRV_IF" | grep -q " $SRV_IP/"; }
dpdk_pids() { sed -n 's/^blitz: dpdk engine pid \([0-9]*\) .*/\1/p' "$SERVE_LOG"; }
DPDK_BIN=$(dirname "$BLITZ")/blitz-dpdk
if [ ! -x "$DPDK_BIN" ]; then
	skip "${T}_dpdk" "$DPDK_BIN is missing (DPDK not installed, or not built)"
elif [ ! -c /dev/net/tun ]; then
	skip "${T}_dpdk" "no /dev/net/tun: blitz-dpdk's exception path (TAP) cannot exist"
else
	# The client keeps its default TSO/GSO: blitz-dpdk's XDP program on
	# the veth makes the client segment to the MSS (dpdk/veth_mss.c), and
	# then shows the client's TSO off: read it before.
	tso=$($CLI ethtool -k "$CLI_IF" | awk '/^tcp-segmentation-offload:/ {print $2}')
	before=$(veth_state)
	serve_start "$TMP/dpdk.log" "$SRV_IF" --engine dpdk -p "$PORT"
	if ! serve_wait_line "^blitz-dpdk: serving" 30; then
		serve_stop TERM 15
		if grep -q "dpdk engine could not start" "$TMP/dpdk.log" && [ "$SERVE_RC" = 1 ]; then
			skip "${T}_dpdk" "blitz-dpdk cannot start here: $(grep -vE '^(blitz: |epoll: )' "$TMP/dpdk.log" | tail -2 | tr '\n' ' ')"
		else
			fail "${T}_dpdk" "rc $SERVE_RC: $(tail -4 "$TMP/dpdk.log" | tr '\n' ' ')"
		fi
		if veth_state_is "$before" 3; then
			pass "${T}_dpdk_nostart_restored"
		else
			fail "${T}_dpdk_nostart_restored" "before: $before after: $(veth_state)"
		fi
	else
		child=$(dpdk_pids | tail -1)
		if serve_wait_line "tier dpdk + epoll fallback" 1 && [ -n "$child" ] &&
			[ "$(ps -o ppid= -p "$child" | tr -d ' ')" = "$SERVE_PID" ] &&
			[ "$(ps -o comm= -p "$child")" = blitz-dpdk ]; then
			pass "${T}_dpdk_engine_child"
		else
			fail "${T}_dpdk_engine_child" "engine pid '$child' is not a blitz-dpdk child of serve $SERVE_PID: $(tr '\n' ' ' <"$TMP/dpdk.log")"
		fi
		check_serve_row "${T}_dpdk_status_tier" "$SERVE_PID" "dpdk+epoll" "${child:-x}"
		# Answered by blitz-dpdk: the veth has no address (the kernel
		# cannot answer on it) and the engine counted the requests.
		ok=1
		for i in 1 2 3; do answered || ok=; done
		kill -USR1 "${child:-0}" 2>/dev/null
		for ((i = 0; i < 20; i++)); do
			grep -q '^stats:.* tcp\.requests=' "$TMP/dpdk.log" && break
			sleep 0.1
		done
		n=$(grep '^stats:' "$TMP/dpdk.log" | tail -1 | grep -oE 'tcp\.requests=[0-9]+' | cut -d= -f2)
		if [ -n "$ok" ] && ! has_srv_ip && [ "${n:-0}" -ge 3 ]; then
			pass "${T}_dpdk_answers"
		else
			fail "${T}_dpdk_answers" "curl ok='$ok', veth $($SRV ip -br addr show dev "$SRV_IF"), engine tcp.requests '${n}'"
		fi
		# A 7 KB request from the client with TSO on (one 7 KB frame on
		# the veth, were it not for the XDP program): answered.
		big=$(head -c 7000 /dev/zero | tr '\0' b)
		got=$($CLI timeout 5 curl -sS -m 3 -H "X-Big: $big" "$URL" 2>&1)
		if [ "$got" = "$BODY" ] && [ "$tso" = on ]; then
			pass "${T}_dpdk_7k_request_client_tso"
		else
			fail "${T}_dpdk_7k_request_client_tso" "client TSO '$tso', got '$got'"
		fi
		# SIGKILL: no clean exit; serve restores the veth, the kernel
		# path answers until the engine is back.
		kill -9 "${child:-0}" 2>/dev/null
		if serve_wait_line "dpdk engine exited (signal 9): interface restored, serving from the kernel path" 10 &&
			has_srv_ip; then
			pass "${T}_dpdk_sigkill_restored"
		else
			fail "${T}_dpdk_sigkill_restored" "veth $($SRV ip -br addr show dev "$SRV_IF"): $(tail -3 "$TMP/dpdk.log" | tr '\n' ' ')"
		fi
		# The state says so until the engine is back (1 s back-off).
		check_serve_row "${T}_dpdk_status_restarting" "$SERVE_PID" "epoll (dpdk restarting)" -
		# Before the restart (1 s back-off) the kernel's listener, in
		# serve, answers on the veth: counted in serve's epoll summary.
		ok=
		for ((i = 0; i < 10; i++)); do
			answered && ok=1 && break
			sleep 0.2
		done
		if [ -n "$ok" ]; then
			pass "${T}_dpdk_sigkill_kernel_answers"
		else
			fail "${T}_dpdk_sigkill_kernel_answers" "no answer after the engine died: $(tail -3 "$TMP/dpdk.log" | tr '\n' ' ')"
		fi
		# The restart: a second blitz-dpdk takes the veth again and
		# answers.
		for ((i = 0; i < 150; i++)); do
			[ "$(grep -c '^blitz-dpdk: serving' "$TMP/dpdk.log")" -ge 2 ] && break
			sleep 0.1
		done
		child2=$(dpdk_pids | tail -1)
		ok=1
		for i in 1 2 3; do answered || ok=; done
		if [ "$child2" != "$child" ] && kill -0 "${child2:-0}" 2>/dev/null && [ -n "$ok" ] && ! has_srv_ip; then
			pass "${T}_dpdk_restarted"
		else
			fail "${T}_dpdk_restarted" "engine '$child' -> '$child2', curl ok='$ok', veth $($SRV ip -br addr show dev "$SRV_IF"): $(tail -3 "$TMP/dpdk.log" | tr '\n' ' ')"
		fi
		# SIGTERM to serve: the child stops (restoring the veth itself),
		# serve checks, exits 0; the veth is as it was at start.
		dpdk_pid=$SERVE_PID
		serve_stop TERM 20
		epoll_req=$(sed -n 's/^epoll: .* \([0-9]*\) requests .*/\1/p' "$TMP/dpdk.log" | tail -1)
		if [ "$SERVE_RC" = 0 ] && ! kill -0 "${child2:-0}" 2>/dev/null &&
			veth_state_is "$before" 5 && ! $SRV ip link show "bz$SRV_IF" >/dev/null 2>&1 &&
			[ ! -e "$(state_file "$dpdk_pid")" ]; then
			pass "${T}_dpdk_sigterm_restored"
		else
			fail "${T}_dpdk_sigterm_restored" "rc $SERVE_RC, engine ${child2:-?} $(kill -0 "${child2:-0}" 2>/dev/null && echo 'still runs' || echo gone); before: $before after: $(veth_state)"
		fi
		if [ "${epoll_req:-0}" -ge 1 ]; then
			pass "${T}_dpdk_kernel_path_counted"
		else
			fail "${T}_dpdk_kernel_path_counted" "serve's epoll summary: '$(grep '^epoll: .*requests' "$TMP/dpdk.log" | tail -1)'"
		fi
		# SIGKILL of serve: nobody is left to restore the veth but the
		# engine, which its parent's death stops (SIGTERM) cleanly.
		serve_start "$TMP/dpdk_kill.log" "$SRV_IF" --engine dpdk -p "$PORT"
		if serve_wait_line "^blitz-dpdk: serving" 30; then
			child=$(dpdk_pids | tail -1)
			serve_stop KILL 5
			for ((i = 0; i < 100; i++)); do
				kill -0 "${child:-0}" 2>/dev/null || break
				sleep 0.1
			done
			if ! kill -0 "${child:-0}" 2>/dev/null && veth_state_is "$before" 5 &&
				grep -q '^totals:' "$TMP/dpdk_kill.log"; then
				pass "${T}_dpdk_serve_sigkill_engine_restores"
			else
				fail "${T}_dpdk_serve_sigkill_engine_restores" "engine ${child:-?} $(kill -0 "${child:-0}" 2>/dev/null && echo 'still runs' || echo gone); before: $before after: $(veth_state)"
				kill -9 "${child:-0}" 2>/dev/null
			fi
		else
			fail "${T}_dpdk_serve_sigkill_engine_restores" "did not start: $(tail -3 "$TMP/dpdk_kill.log" | tr '\n' ' ')"
			serve_stop KILL 5
		fi
	fi
	# A TAP of that name: another dpdk engine has the veth. serve must
	# refuse before recording or touching anything (and not remove it).
	# (a bridge: every kernel has one; dummy may be a missing module)
	if $SRV ip link add "bz$SRV_IF" type bridge 2>"$TMP/e"; then
		out=$($SRV timeout 20 "$BLITZ" serve "$SRV_IF" --engine dpdk -p "$PORT" 2>&1)
		rc=$?
		if [ "$rc" = 1 ] && printf '%s\n' "$out" | grep -q "bz$SRV_IF already exists" &&
			$SRV ip link show "bz$SRV_IF" >/dev/null 2>&1 && veth_state_is "$before" 1; then
			pass "${T}_dpdk_refuses_second"
		else
			fail "${T}_dpdk_refuses_second" "rc $rc: $(printf '%s' "$out" | tr '\n' '|')"
		fi
		$SRV ip link del "bz$SRV_IF" 2>/dev/null
	else
		skip "${T}_dpdk_refuses_second" "cannot make an interface bz$SRV_IF: $(cat "$TMP/e")"
	fi
fi

e2e_status
