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
	if ! env=$(BUILD=$BUILD "$E2E_ROOT"/scripts/testbed.sh up "$E2E_PREFIX" 2>&1); then
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

# counter IFNAME NAME - one counter's total from `blitz stats --json`.
counter() {
	# shellcheck disable=SC2086 # $SRV is a command prefix
	$SRV "$BLITZ" stats "$1" --json 2>/dev/null |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin)["counters"]["'"$2"'"])' 2>/dev/null ||
		echo -1
}

# has_xdp IFNAME - the interface (in the server namespace) has an XDP program.
has_xdp() {
	# shellcheck disable=SC2086 # $SRV is a command prefix
	$SRV ip link show dev "$1" 2>/dev/null | grep -q 'prog/xdp'
}
