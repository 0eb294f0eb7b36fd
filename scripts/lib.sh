#!/bin/bash
# scripts/lib.sh - sourced by the scripts: how one stops when it cannot run.
# Defines functions only; a caller may set DIE_STATUS (default 1), its exit
# status for "cannot run".

# die MSG... - "NAME: MSG" on stderr, NAME the script's file name without
# .sh, and exit DIE_STATUS.
die() {
	local me=${0##*/}
	echo "${me%.sh}: $*" >&2
	exit "${DIE_STATUS:-1}"
}

# require_root - die unless root: the scripts make network namespaces and
# attach XDP programs.
require_root() {
	[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, XDP): run it with sudo"
}
