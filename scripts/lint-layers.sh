#!/bin/bash
# lint-layers.sh - fail when a lower layer includes a higher one.
#
# The layers of blitz, lowest first. A file may include headers of its
# own layer and of the layers below it, never one above; two layers on
# the same line (engines and the load generator) do not include each
# other. docs/architecture.md explains each layer.
#
#   1 base      userspace/base           log, checksum helpers
#   2 service   userspace/service        the service contract: what to answer
#   3 host      userspace/host           NICs, kernel listeners, interface
#                                        settings, running serves' records
#   4 bpfctl    userspace/bpfctl         loading, attaching, pinning the
#                                        BPF programs
#   5 obs       userspace/obs            counters, Prometheus, /metrics
#   6 net       userspace/net            the TCP core, frames, AF_XDP rings
#   7 engines   userspace/engines/<e>,   one folder per engine (dpdk/ is
#               dpdk/, userspace/bench   one), the load generator
#   8 serve     userspace/serve          the serve runtime and engine table
#   9 cli       userspace/cli,           the command line and its verbs
#               userspace/cmd, dpdk/main.c
#
# bpf/*.h are the headers the programs share with userspace and tests:
# below every layer. bpf/kern/*.h, the programs' own, sit above them and
# below bpf/progs; nothing outside bpf/ includes them. A file in a folder
# not named here is an error: give it a layer.
#
# Usage: scripts/lint-layers.sh [ROOT]  (default: the repository)
# Prints "layers: FILE includes X (LAYER above LAYER)" per violation and
# exits 1 when there is one.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

# RANK and LAY: the rank and layer name of a file (path from ROOT), or
# empty. Globals, not output: the loop below runs this per include, and a
# command substitution per call made the lint take 20 s.
layer_of() {
	RANK='' LAY=''
	case $1 in
	dpdk/main.c) RANK=90 LAY=cli ;;
	userspace/cli/* | userspace/cmd/*) RANK=90 LAY=cli ;;
	userspace/serve/*) RANK=80 LAY=serve ;;
	userspace/engines/*/*)
		LAY=${1#userspace/engines/}
		RANK=70 LAY=engine:${LAY%%/*}
		;;
	dpdk/*) RANK=70 LAY=engine:dpdk ;;
	userspace/bench/*) RANK=70 LAY=bench ;;
	userspace/net/*) RANK=60 LAY=net ;;
	userspace/obs/*) RANK=50 LAY=obs ;;
	userspace/bpfctl/*) RANK=40 LAY=bpfctl ;;
	userspace/host/*) RANK=30 LAY=host ;;
	userspace/service/*) RANK=20 LAY=service ;;
	userspace/base/*) RANK=10 LAY=base ;;
	bpf/progs/*) RANK=3 LAY=bpf-progs ;;
	bpf/kern/*) RANK=2 LAY=bpf-kern ;;
	bpf/*.h) RANK=1 LAY=bpf ;;
	esac
}

# where a quoted include of FROM resolves: its own folder first, then
# bpf/, then any userspace folder (every one is on the include path)
declare -A where=()
while IFS= read -r f; do
	b=${f##*/}
	[ -n "${where[$b]:-}" ] || where[$b]=$f
done < <(find userspace bpf dpdk -name '*.h' | sort)

resolve() { # FROM NAME: sets T to the header's path from ROOT, or empty
	local p
	p=${1%/*}/$2
	if [ -f "$p" ]; then
		while [[ $p =~ ^(.*/)?[^/.][^/]*/\.\./(.*)$ ]]; do
			p=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
		done
		T=$p
	elif [ -f "bpf/${2##*/}" ]; then
		T=bpf/${2##*/}
	else
		T=${where[${2##*/}]:-}
	fi
}

bad=0
while IFS= read -r f; do
	layer_of "$f"
	rank=$RANK lay=$LAY
	if [ -z "$rank" ]; then
		echo "layers: $f is in no layer (add its folder to scripts/lint-layers.sh)"
		bad=1
		continue
	fi
	while IFS= read -r inc; do
		resolve "$f" "$inc"
		[ -n "$T" ] || continue # generated (skeletons, vmlinux.h)
		layer_of "$T"
		trank=$RANK tlay=$LAY
		[ -n "$trank" ] || continue
		if [ "$trank" -gt "$rank" ] ||
			{ [ "$trank" -eq "$rank" ] && [ "$tlay" != "$lay" ]; } ||
			{ [ "$trank" -ge 2 ] && [ "$trank" -lt 10 ] && [ "$rank" -ge 10 ]; }; then
			echo "layers: $f includes $inc ($tlay, not below $lay)"
			bad=1
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find userspace dpdk bpf -name '*.[ch]' | sort)

# The serve runtime is not a CLI verb: a function declared outside the
# CLI (an engine or the runtime calls it) is never defined in cmd/.
mapfile -t low_hdrs < <(find userspace -name '*.h' -not -path 'userspace/cli/*' \
	-not -path 'userspace/cmd/*' | sort)
while IFS= read -r f; do
	while IFS= read -r fn; do
		decl=$(grep -lE "^[a-z].*[ *]$fn\(" "${low_hdrs[@]}" | head -1)
		if [ -n "$decl" ]; then
			echo "layers: $f defines $fn(), declared in $decl (a verb defines only the CLI's)"
			bad=1
		fi
	done < <(grep -v '^static' "$f" |
		sed -n 's/^[a-z][a-z0-9_ *]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p')
done < <(find userspace/cmd -name '*.c' | sort)

exit "$bad"
