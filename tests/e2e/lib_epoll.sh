#!/bin/bash
# tests/e2e/lib_epoll.sh - helpers for the epoll engine and `blitz serve`
# tests, sourced after lib.sh: start and stop a `blitz serve` in the server
# namespace, count its open fds, and write the Python raw-socket clients
# the tests run in the client namespace.
#
# Owns: the serve process a test starts (killed in the EXIT trap). Must
# never touch an address outside the testbed's namespaces.

SERVE_PID=
SERVE_LOG=
SERVE_RC=

# serve_start LOG ARGS... - `blitz serve ARGS` in the server namespace, in
# the background; SERVE_PID is blitz itself (nsenter execs it). Killed on
# exit if still running.
serve_start() {
	SERVE_LOG=$1
	shift
	# shellcheck disable=SC2086 # $SRV is a command prefix
	$SRV "$BLITZ" serve "$@" >"$SERVE_LOG" 2>&1 &
	SERVE_PID=$!
	on_exit "kill -KILL $SERVE_PID"
}

# serve_wait_line PATTERN [SECONDS] - wait until the serve log has a line
# matching PATTERN; 1 if the process died or time ran out.
serve_wait_line() {
	local pat=$1 secs=${2:-5} i
	for ((i = 0; i < secs * 10; i++)); do
		grep -q -- "$pat" "$SERVE_LOG" 2>/dev/null && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# serve_stop [SIGNAL] [SECONDS] - signal the serve process and wait for it;
# sets SERVE_RC (its exit status, or 255 when it did not exit in time).
# shellcheck disable=SC2034 # SERVE_RC is read by the tests
serve_stop() {
	local sig=${1:-TERM} secs=${2:-10} i
	SERVE_RC=255
	[ -n "$SERVE_PID" ] || return 1
	kill "-$sig" "$SERVE_PID" 2>/dev/null
	for ((i = 0; i < secs * 10; i++)); do
		if ! kill -0 "$SERVE_PID" 2>/dev/null; then
			wait "$SERVE_PID" 2>/dev/null
			SERVE_RC=$?
			SERVE_PID=
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# serve_stop_ok NAME - SIGTERM: PASS NAME when serve exits 0 within 10 s,
# else FAIL NAME with its status and its log's last lines.
serve_stop_ok() {
	if serve_stop TERM 10 && [ "$SERVE_RC" -eq 0 ]; then
		pass "$1"
	else
		fail "$1" "rc $SERVE_RC: $(tail -3 "$SERVE_LOG" | tr '\n' ' ')"
	fi
}

# fd_count PID - open file descriptors of PID.
fd_count() {
	local n
	n=$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	echo "${n:-0}"
}
