#!/bin/bash
# lib_server.sh - sourced by the benchmark scripts (bench.sh, bench/loss.sh,
# bench/conns.sh):
# stopping the server under test, waiting until it answers and until its
# fast path is up.
#
# Sets tmp, server_pid and xdp_loaded (server_state_init).
# Uses the caller's variables: server_pid (the server's pid, or empty),
# xdp_loaded (set when `blitz load` put the xdp engine on SRV_IF), SRV (the
# server namespace's command prefix), BLITZ, SRV_IF, CLI (the client
# namespace's prefix), URL and READY_BODY (what the body begins with when
# the server is up; default "Hello World!").
# Owns: nothing but those steps; never touches another process.

# This run's scratch folder ($tmp, readable by the servers' users, named
# after $1) and no server yet.
server_state_init() {
	tmp=$(mktemp -d "/tmp/blitz-$1.XXXXXX")
	chmod 755 "$tmp"
	server_pid=
	xdp_loaded=
}

# The server process and its descendants (serve's engine is its child),
# one pid a line.
pid_tree() {
	local p=$1 c
	[ -d "/proc/$p" ] || return 0
	echo "$p"
	for c in $(pgrep -P "$p" 2>/dev/null || true); do
		pid_tree "$c"
	done
}

# Stop the server (TERM, then KILL after STOP_WAIT_S, default 5 s) and
# unload what load put on the interface; clears server_pid and xdp_loaded.
stop_server() {
	if [ -n "$server_pid" ]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq $((${STOP_WAIT_S:-5} * 10))); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=
	fi
	if [ -n "${xdp_loaded:-}" ]; then
		$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1 || true
		xdp_loaded=
	fi
}

# Wait (at most 5 s) until the server answers with a body that begins with
# READY_BODY; 0 when it does, 1 when it does not or the server died.
wait_ready() {
	local i body want=${READY_BODY:-Hello World!}
	for i in $(seq 50); do
		body=$($CLI curl -s -m 1 "$URL" 2>/dev/null | head -c "${#want}" || true)
		[ "$body" = "$want" ] && return 0
		if [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null; then
			return 1
		fi
		[ "$i" -lt 50 ] && sleep 0.1
	done
	return 1
}

# Wait (at most 30 s) until serve's fast path for ENGINE is up: its line in
# LOG (afxdp: the socket of queue 0 is in the XDP program's map; dpdk: the
# port serves); 0 at once for the other engines. Until then serve's kernel
# (epoll) listener answers, and a connection it accepts stays the kernel's
# for its life: a benchmark started at the first answer measures epoll.
wait_fast_path() { # engine log
	local pat
	case $1 in
	afxdp) pat="^afxdp: $SRV_IF queue 0" ;;
	dpdk) pat='^blitz-dpdk: serving' ;;
	*) return 0 ;;
	esac
	for _ in $(seq 300); do
		grep -q -- "$pat" "$2" 2>/dev/null && return 0
		[ -z "$server_pid" ] || kill -0 "$server_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
