#!/bin/bash
# tests/e2e/lib.sh - shared helpers for the end-to-end tests, sourced by
# tests/e2e/test_*.sh. Speaks tests/run.sh's protocol: every check prints
# exactly one "PASS name", "FAIL name: why" or "SKIP name: why" line.
#
# Owns: the result lines, the testbed's life (up, and down in an EXIT trap
# together with any cleanup a test registers), and small waits. Must never
# touch an address outside the namespaces scripts/testbed.sh creates.

E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$E2E_ROOT" || exit 1
BUILD=${BUILD:-build}
BLITZ=$E2E_ROOT/$BUILD/blitz
[[ $BUILD = /* ]] && BLITZ=$BUILD/blitz
# The C helper programs of the tests (tests/helpers/, built by make).
HELPERS=$E2E_ROOT/$BUILD/tests/helpers
[[ $BUILD = /* ]] && HELPERS=$BUILD/tests/helpers
# Debian's Python with its modules (python3 on PATH may be another one).
PY=/usr/bin/python3
E2E_FAILED=0
E2E_CLEANUP=()
E2E_PREFIX=

pass() { echo "PASS $1"; }
fail() { # one line, whatever the reason holds
	local why
	why=$(printf '%s' "$2" | tr '\r\n' '  ' | cut -c1-300)
	echo "FAIL $1: ${why:-no detail}"
	E2E_FAILED=1
}
skip() { echo "SKIP $1: $2"; }

# check NAME WHY CMD... - PASS when CMD succeeds, else FAIL with WHY.
check() {
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

# The exit status a test script should end with.
e2e_status() { return "$E2E_FAILED"; }

# Skip the whole script (one SKIP line) unless we are root.
need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		skip "$1" "needs root (network namespaces, XDP)"
		exit 0
	fi
}

# need_dpdk_tap NAME BIN - exit the script unless blitz-dpdk (BIN) and a TAP
# can run: a FAIL when DPDK is installed but BIN was not built, a SKIP when
# DPDK or /dev/net/tun is missing.
need_dpdk_tap() {
	if [ ! -x "$2" ]; then
		if pkg-config --exists libdpdk 2>/dev/null; then
			fail "${1}_build" "$2 is missing: run make"
			exit 1
		fi
		skip "$1" "DPDK is not installed (pkg-config libdpdk): no blitz-dpdk"
		exit 0
	fi
	if [ ! -c /dev/net/tun ]; then
		skip "$1" "no /dev/net/tun: no TAP exception path"
		exit 0
	fi
}

# cli_error NAME PATTERN ARGS... - `blitz ARGS` in the server namespace
# fails (within 10 s) with one line matching PATTERN: PASS NAME, else FAIL
# NAME with what it said. CLI_ERROR_AFTER, when set, is a command that must
# succeed afterwards too (e.g. that nothing was left attached).
cli_error() {
	local name=$1 pat=$2 out rc
	shift 2
	# shellcheck disable=SC2086 # $SRV is a command prefix
	out=$($SRV timeout 10 "$BLITZ" "$@" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
		printf '%s\n' "$out" | grep -q -- "$pat" && ${CLI_ERROR_AFTER:-true}; then
		pass "$name"
	else
		fail "$name" "rc $rc, said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
}

# dpdk_start LCORES VDEV SECONDS ARGS... - blitz-dpdk ($DPDK) on LCORES
# and the port VDEV, taking $SRV_IF over (--takeover: it serves the veth's
# addresses on $PORT and moves them to the TAP $TAP until it exits); its
# log in $TMP/dpdk.log, killed when the script ends. Waits SECONDS for its
# "serving" line. Sets DPDK_PID.
dpdk_start() {
	local lcores=$1 vdev=$2 secs=$3
	shift 3
	: >"$TMP/dpdk.log"
	# shellcheck disable=SC2086,SC2153 # $SRV is a command prefix; PORT is the script's
	$SRV "$DPDK" --no-huge -m 512 --no-pci --no-shconf --no-telemetry \
		--file-prefix "blitz-$PREFIX" -l "$lcores" --vdev="$vdev" -- \
		-p "$PORT" --takeover "$SRV_IF" --tap "$TAP" "$@" \
		>"$TMP/dpdk.log" 2>&1 &
	DPDK_PID=$!
	on_exit "kill $DPDK_PID"
	wait_line "$TMP/dpdk.log" '^blitz-dpdk: serving' "$DPDK_PID" "$secs"
}

# dpdk_start_failed NAME - end the script after a dpdk_start that failed:
# SKIP NAME when DPDK cannot start on this machine, else FAIL NAME_start.
dpdk_start_failed() {
	local why
	why=$(grep -v '^ ' "$TMP/dpdk.log" | tail -3 | tr '\n' ' ')
	if grep -q 'rte_eal_init failed' "$TMP/dpdk.log"; then
		skip "$1" "DPDK cannot start here: $why"
		exit 0
	fi
	fail "${1}_start" "$why"
	exit 1
}

# need_cmds NAME cmd... - 0 when every command exists, else SKIP NAME.
need_cmds() {
	local name=$1 c
	shift
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1 && [ ! -x "$c" ]; then
			skip "$name" "$c is not installed (scripts/install-deps.sh)"
			return 1
		fi
	done
	return 0
}

# on_exit CMD - run CMD (a string, eval'd) when the script ends, newest
# first, before the testbed goes down.
on_exit() { E2E_CLEANUP+=("$1"); }

e2e_teardown() {
	local i
	for ((i = ${#E2E_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${E2E_CLEANUP[$i]}" >/dev/null 2>&1 || true
	done
	E2E_CLEANUP=()
	if [ -n "$E2E_PREFIX" ]; then
		"$E2E_ROOT"/scripts/testbed.sh down "$E2E_PREFIX" >/dev/null 2>&1 || true
		E2E_PREFIX=
	fi
}

# tb_up PREFIX - build the two-namespace testbed, export its variables
# (SRV_NS CLI_NS SRV_IF CLI_IF SRV_IP CLI_IP SRV_IP6 CLI_IP6 SRV CLI) and
# tear it down on exit. Returns non-zero (with the error shown) on failure.
tb_up() {
	local env
	E2E_PREFIX=$1
	trap e2e_teardown EXIT
	trap 'exit 130' INT TERM
	# Its warnings go to stderr, not into the eval'd variables.
	if ! env=$(BUILD=$BUILD "$E2E_ROOT"/scripts/testbed.sh up "$E2E_PREFIX"); then
		printf '%s\n' "$env"
		return 1
	fi
	eval "$env"
	export SRV_NS CLI_NS SRV_IF CLI_IF SRV_IP CLI_IP SRV_IP6 CLI_IP6 SRV CLI
}

# wait_port NS_PREFIX IP PORT [SECONDS] - wait until a TCP connect to
# IP:PORT from the namespace of NS_PREFIX ("$CLI" or "$SRV") succeeds.
wait_port() {
	local ns=$1 ip=$2 port=$3 secs=${4:-5} i
	for ((i = 0; i < secs * 10; i++)); do
		# shellcheck disable=SC2086 # $ns is a command prefix
		if $ns timeout 1 bash -c "exec 3<>/dev/tcp/$ip/$port" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# nginx_start PORT CONNS [HTTP_LINES [SERVER_LINES]] - nginx in the server
# namespace, the reference server of the tests: one worker, CONNS
# connections each, "Hello World!" on every path, listening on PORT;
# HTTP_LINES and SERVER_LINES (directives, one a line) go into its http and
# server blocks. Its files are under $TMP/ngx. Sets NGX_PID (killed on
# exit); returns 1 when nginx is missing or does not listen within 3 s
# ($TMP/ngx/out.log says why).
nginx_start() {
	local port=$1 conns=$2 http_lines=${3:-} server_lines=${4:-}
	NGX_PID=
	command -v nginx >/dev/null || return 1
	mkdir -p "$TMP/ngx"
	cat >"$TMP/ngx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $TMP/ngx/nginx.pid;
error_log $TMP/ngx/error.log;
events { worker_connections $conns; }
http {
	access_log off;
	client_body_temp_path $TMP/ngx;
	proxy_temp_path $TMP/ngx;
	fastcgi_temp_path $TMP/ngx;
	uwsgi_temp_path $TMP/ngx;
	scgi_temp_path $TMP/ngx;
$http_lines
	server {
		listen $port;
$server_lines
		location / { return 200 "Hello World!"; }
	}
}
EOF
	# shellcheck disable=SC2086 # $SRV is a command prefix
	$SRV nginx -p "$TMP/ngx" -c "$TMP/ngx/nginx.conf" >"$TMP/ngx/out.log" 2>&1 &
	NGX_PID=$!
	on_exit "kill $NGX_PID 2>/dev/null"
	wait_port "$CLI" "$SRV_IP" "$port" 3
}

# nginx_stop - stop the nginx nginx_start started, if any.
nginx_stop() {
	[ -n "${NGX_PID:-}" ] || return 0
	kill "$NGX_PID" 2>/dev/null
	wait "$NGX_PID" 2>/dev/null
	NGX_PID=
}

# counter IFNAME NAME - one counter's total from `blitz stats --json`.
counter() {
	# shellcheck disable=SC2086 # $SRV is a command prefix
	$SRV "$BLITZ" stats "$1" --json 2>/dev/null |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["counters"]["'"$2"'"])' 2>/dev/null ||
		echo -1
}

# wait_counter IFNAME NAME MIN [SECONDS] - `counter` until NAME reaches MIN,
# at most SECONDS (default 5): the userspace engines publish their counters
# every 100-250 ms, later on a loaded machine. Prints the last value read.
wait_counter() {
	local v i
	for ((i = 0; i < ${4:-5} * 10; i++)); do
		v=$(counter "$1" "$2")
		[ "$v" -ge "$3" ] 2>/dev/null && break
		sleep 0.1
	done
	echo "$v"
}

# has_xdp IFNAME - the interface (in the server namespace) has an XDP program.
has_xdp() {
	# shellcheck disable=SC2086 # $SRV is a command prefix
	$SRV ip link show dev "$1" 2>/dev/null | grep -q 'prog/xdp'
}

# wait_line LOG PATTERN PID [SECONDS] - wait until LOG has a line matching
# PATTERN (grep -E) while PID lives. 0 when the line came.
wait_line() {
	local log=$1 pat=$2 pid=$3 secs=${4:-10} i
	for ((i = 0; i < secs * 10; i++)); do
		grep -qE -- "$pat" "$log" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -qE -- "$pat" "$log" 2>/dev/null
}

# stop_pid PID [SIGNAL] [SECONDS] - send SIGNAL (default TERM), wait up to
# SECONDS (default 5) for PID to end, then SIGKILL it. STOP_RC is its exit
# status (137 when it had to be killed); returns 0 when it ended by itself.
stop_pid() {
	local pid=$1 sig=${2:-TERM} secs=${3:-5} i
	kill -"$sig" "$pid" 2>/dev/null
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	local alive=0
	kill -0 "$pid" 2>/dev/null && alive=1
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# shellcheck disable=SC2034 # read by the scripts
	STOP_RC=$?
	return "$alive"
}

# helper NAME - the path of tests/helpers/NAME.c's program, built by make;
# fails (with a line on stderr) when it is not built.
helper() {
	[ -x "$HELPERS/$1" ] && echo "$HELPERS/$1" && return 0
	echo "$HELPERS/$1 is not built: make" >&2
	return 1
}

# ---- the preamble of an engine's script ----

# need_blitz NAME [BINARY] - end the script with FAIL NAME_build unless
# BINARY (default $BLITZ) is built.
need_blitz() {
	local bin=${2:-$BLITZ}
	[ -x "$bin" ] && return 0
	fail "${1}_build" "$bin is missing: run make"
	exit 1
}

# e2e_up NAME PREFIX - the testbed (tb_up) and a scratch directory $TMP,
# both gone when the script ends; FAIL NAME_testbed and end the script
# when the testbed cannot be built.
e2e_up() {
	if ! tb_up "$2"; then
		fail "${1}_testbed" "scripts/testbed.sh up failed"
		exit 1
	fi
	TMP=$(mktemp -d)
	on_exit "rm -rf '$TMP'"
}

# e2e_load NAME ARGS... - `blitz load $SRV_IF ARGS` (its output in
# $TMP/load.out) with the program attached: PASS NAME_load, and an unload
# when the script ends; else FAIL NAME_load and end the script.
e2e_load() {
	local name=$1
	shift
	# shellcheck disable=SC2086 # $SRV is a command prefix
	if $SRV "$BLITZ" load "$SRV_IF" "$@" >"$TMP/load.out" 2>&1 && has_xdp "$SRV_IF"; then
		pass "${name}_load"
		on_exit "$SRV '$BLITZ' unload '$SRV_IF' >/dev/null 2>&1"
	else
		fail "${name}_load" "$(tr '\n' ' ' <"$TMP/load.out")"
		exit 1
	fi
}

# e2e_begin NAME PREFIX - root, a built blitz, then e2e_up.
e2e_begin() {
	need_root "$1"
	need_blitz "$1"
	e2e_up "$1" "$2"
}

# ---- real clients: what every engine must answer the same way ----
# Each rc_* check prints one result line and returns 0 on PASS (1 on FAIL
# or SKIP). Clients run in the client namespace ($CLI) under `timeout`,
# expect the default answer ($BODY, text/plain) and write under $TMP.
# Knobs (set by an engine's script, e.g. `RC_SYNACK_IF=$SRV_IF real_clients ...`):
#   RC_SYNACK_IF    keep-alive must cost exactly one SYN-ACK on this
#                   interface's blitz counters (engines that count them)
#   COUNTER_SETTLE  seconds to wait for counters an engine publishes late
#   RC_WRK_CONNS    wrk connections (default 10)

# rc_headers_ok FILE - the headers curl saved in FILE (CR stripped into
# FILE.lf) have Server, Date, Content-Type text/plain and the Content-Length
# of $BODY; prints what is wrong.
rc_headers_ok() {
	local h=$1 hdr why=
	tr -d '\r' <"$h" >"$h.lf"
	for hdr in Server Date Content-Type Content-Length; do
		grep -qi "^$hdr: " "$h.lf" || why="$why no $hdr"
	done
	grep -qix "Content-Length: $(printf '%s' "$BODY" | wc -c)" "$h.lf" ||
		why="$why bad Content-Length"
	grep -qi '^Content-Type: text/plain' "$h.lf" || why="$why bad Content-Type"
	printf '%s' "$why"
	[ -z "$why" ]
}

# rc_curl_get NAME URL - GET: 200 OK, the body, the contract's headers, and
# a Date current to the second (2 s of slack).
rc_curl_get() {
	local name=$1 url=$2 why date_hdr skew
	if ! $CLI timeout 10 curl -sS -g -D "$TMP/rc_h" -o "$TMP/rc_b" "$url" 2>"$TMP/rc_e"; then
		fail "$name" "curl: $(cat "$TMP/rc_e")"
		return 1
	fi
	why=$(rc_headers_ok "$TMP/rc_h")
	[ "$(cat "$TMP/rc_b")" = "$BODY" ] || why="$why body '$(head -c 80 "$TMP/rc_b")'"
	head -1 "$TMP/rc_h.lf" | grep -qx 'HTTP/1.1 200 OK' ||
		why="$why status '$(head -1 "$TMP/rc_h.lf")'"
	date_hdr=$(grep -i '^Date: ' "$TMP/rc_h.lf" | cut -d' ' -f2-)
	skew=$("$PY" -c 'import sys,time,email.utils as e
print(abs(int(e.parsedate_to_datetime(sys.argv[1]).timestamp() - time.time())))' "$date_hdr" 2>/dev/null || echo 999)
	[ "$skew" -le 2 ] || why="$why Date '$date_hdr' off by ${skew}s"
	[ -z "$why" ] && pass "$name" && return 0
	fail "$name" "$why"
	return 1
}

# rc_curl_head NAME URL - HEAD (curl -I): 200 OK and the GET's headers,
# Content-Length included.
rc_curl_head() {
	local name=$1 url=$2 why
	if ! $CLI timeout 10 curl -sS -g -I "$url" >"$TMP/rc_h" 2>"$TMP/rc_e"; then
		fail "$name" "curl -I: $(cat "$TMP/rc_e")"
		return 1
	fi
	why=$(rc_headers_ok "$TMP/rc_h")
	head -1 "$TMP/rc_h.lf" | grep -qx 'HTTP/1.1 200 OK' ||
		why="$why status '$(head -1 "$TMP/rc_h.lf")'"
	[ -z "$why" ] && pass "$name" && return 0
	fail "$name" "$why: $(head -c 200 "$TMP/rc_h")"
	return 1
}

# rc_http10_close NAME URL - HTTP/1.0 without keep-alive: 200, the body,
# and Connection: close.
rc_http10_close() {
	local name=$1 url=$2
	if $CLI timeout 10 curl -sS -g --http1.0 -D "$TMP/rc_h" -o "$TMP/rc_b" "$url" 2>"$TMP/rc_e" &&
		[ "$(cat "$TMP/rc_b")" = "$BODY" ] &&
		head -1 "$TMP/rc_h" | grep -q '^HTTP/1\.[01] 200 ' &&
		grep -qi '^Connection: close' "$TMP/rc_h"; then
		pass "$name"
		return 0
	fi
	fail "$name" "$(cat "$TMP/rc_e"; head -c 200 "$TMP/rc_h")"
	return 1
}

# rc_wget NAME URL - wget fetches the body.
rc_wget() {
	local name=$1 url=$2
	need_cmds "$name" wget || return 1
	if [ "$($CLI timeout 10 wget -q -O - "$url" 2>"$TMP/rc_e")" = "$BODY" ]; then
		pass "$name"
		return 0
	fi
	fail "$name" "wget: $(cat "$TMP/rc_e")"
	return 1
}

# rc_python_keepalive NAME IP PORT [N] - N (default 3) GETs on one
# keep-alive connection with python's http.client, every one 200 with the
# body, all from one local port (http.client reconnects silently when the
# server closed). With RC_SYNACK_IF: exactly one SYN-ACK sent for them.
rc_python_keepalive() {
	local name=$1 ip=$2 port=$3 n=${4:-3} out syn0 syn1 why=
	if [ -n "${RC_SYNACK_IF:-}" ]; then
		sleep "${COUNTER_SETTLE:-0}"
		syn0=$(counter "$RC_SYNACK_IF" synack)
	fi
	out=$($CLI timeout 20 "$PY" "$E2E_ROOT/tests/e2e/keepalive_get.py" "$ip" "$port" "$n" "$BODY" 2>&1 | tail -1)
	[ "$out" = 1 ] || why="connections used: '$out'"
	if [ -n "${RC_SYNACK_IF:-}" ]; then
		sleep "${COUNTER_SETTLE:-0}"
		syn1=$(counter "$RC_SYNACK_IF" synack)
		[ $((syn1 - syn0)) -eq 1 ] || why="$why SYN-ACKs sent: $((syn1 - syn0))"
	fi
	[ -z "$why" ] && pass "$name" && return 0
	fail "$name" "$n requests: $why"
	return 1
}

# rc_wrk NAME URL MIN_REQUESTS [WRK_OPTIONS...] - wrk -t1 -c10 -d2s
# --timeout 2s (WRK_OPTIONS come after, and win): more than MIN_REQUESTS
# answered, no socket error (timeouts included), no non-2xx. Two seconds
# are tens of thousands of requests here, the minimum is 1000 or less.
rc_wrk() {
	local name=$1 url=$2 min=$3 reqs
	shift 3
	need_cmds "$name" wrk || return 1
	$CLI timeout 30 wrk -t1 -c10 -d2s --timeout 2s "$@" "$url" >"$TMP/rc_wrk" 2>&1
	reqs=$(awk '/requests in/ {print $1}' "$TMP/rc_wrk")
	if [ "${reqs:-0}" -gt "$min" ] && ! grep -qE 'Socket errors|Non-2xx' "$TMP/rc_wrk"; then
		pass "$name"
		echo "# $name $*: $(grep Requests/sec "$TMP/rc_wrk")"
		return 0
	fi
	fail "$name" "want more than $min: $(grep -E 'requests in|errors|Non-2xx' "$TMP/rc_wrk")"
	return 1
}

# rc_ab NAME URL N [AB_ARGS...] - ab, N requests 10 at a time (HTTP/1.0; -k
# for keep-alive): all complete, none failed, none non-2xx.
rc_ab() {
	local name=$1 url=$2 n=$3
	shift 3
	need_cmds "$name" ab || return 1
	$CLI timeout 60 ab -q "$@" -n "$n" -c 10 -s 5 "$url" >"$TMP/rc_ab" 2>&1
	if grep -qE "^Complete requests: +$n\$" "$TMP/rc_ab" &&
		grep -qE '^Failed requests: +0$' "$TMP/rc_ab" &&
		! grep -q '^Non-2xx' "$TMP/rc_ab"; then
		pass "$name"
		return 0
	fi
	fail "$name" "$(grep -E 'Complete|Failed|Non-2xx|apr_' "$TMP/rc_ab")"
	return 1
}

# real_clients NAME IP PORT [IP6] - every real-client check against
# http://IP:PORT/: NAME_curl_get, NAME_curl_head, NAME_http10_close,
# NAME_curl_ipv6 (with IP6: the same checks as curl_get), NAME_wget,
# NAME_python_keepalive (50 requests), NAME_wrk (over 1000 answered), NAME_ab and
# NAME_ab_keepalive (2000 requests each).
real_clients() {
	local t=$1 ip=$2 port=$3 ip6=${4:-}
	local url="http://$ip:$port/"
	rc_curl_get "${t}_curl_get" "$url"
	rc_curl_head "${t}_curl_head" "$url"
	rc_http10_close "${t}_http10_close" "$url"
	[ -z "$ip6" ] || rc_curl_get "${t}_curl_ipv6" "http://[$ip6]:$port/"
	rc_wget "${t}_wget" "$url"
	rc_python_keepalive "${t}_python_keepalive" "$ip" "$port" 50
	rc_wrk "${t}_wrk" "$url" 1000 -c"${RC_WRK_CONNS:-10}"
	rc_ab "${t}_ab" "$url" 2000
	rc_ab "${t}_ab_keepalive" "$url" 2000 -k
	return 0
}

# A scapy client in the client namespace that sends from unconfigured
# addresses (each SRC: the server reaches it by a static neighbour, so the
# client's kernel drops the replies, not its address, and never RSTs).
# Sets SMAC and DMAC; returns 1 after a SKIP line for NAME when scapy is
# missing.
scapy_peer() { # name src...
	local name=$1 src
	shift
	if ! "$PY" -c 'import scapy' 2>/dev/null; then
		skip "$name" "scapy is not installed for $PY (scripts/install-deps.sh)"
		return 1
	fi
	SMAC=$($CLI ip -br link show dev "$CLI_IF" | awk '{print $3}')
	# shellcheck disable=SC2034 # the caller's
	DMAC=$($SRV ip -br link show dev "$SRV_IF" | awk '{print $3}')
	for src in "$@"; do
		$SRV ip neigh replace "$src" lladdr "$SMAC" dev "$SRV_IF" nud permanent
	done
}
