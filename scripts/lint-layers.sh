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

# rank and layer name of a file (path from ROOT), or nothing
layer_of() {
	case $1 in
	dpdk/main.c) echo "90 cli" ;;
	userspace/cli/* | userspace/cmd/*) echo "90 cli" ;;
	userspace/serve/*) echo "80 serve" ;;
	userspace/engines/*/*) echo "70 engine:$(basename "$(dirname "$1")")" ;;
	dpdk/*) echo "70 engine:dpdk" ;;
	userspace/bench/*) echo "70 bench" ;;
	userspace/net/*) echo "60 net" ;;
	userspace/obs/*) echo "50 obs" ;;
	userspace/bpfctl/*) echo "40 bpfctl" ;;
	userspace/host/*) echo "30 host" ;;
	userspace/service/*) echo "20 service" ;;
	userspace/base/*) echo "10 base" ;;
	bpf/progs/*) echo "3 bpf-progs" ;;
	bpf/kern/*) echo "2 bpf-kern" ;;
	bpf/*.h) echo "1 bpf" ;;
	esac
}

# where a quoted include of FROM resolves: its own folder first, then
# bpf/, then any userspace folder (every one is on the include path)
declare -A where=()
while IFS= read -r f; do
	where[$(basename "$f")]+="$f "
done < <(find userspace bpf dpdk -name '*.h' | sort)

resolve() { # from name
	local dir name=${2##*/}
	dir=$(dirname "$1")
	if [ -f "$dir/$2" ]; then
		realpath --relative-to=. "$dir/$2"
	elif [ -f "bpf/$name" ]; then
		echo "bpf/$name"
	else
		echo "${where[$name]:-}" | awk '{print $1}'
	fi
}

bad=0
while IFS= read -r f; do
	read -r rank lay <<<"$(layer_of "$f")"
	if [ -z "${rank:-}" ]; then
		echo "layers: $f is in no layer (add its folder to scripts/lint-layers.sh)"
		bad=1
		continue
	fi
	while IFS= read -r inc; do
		t=$(resolve "$f" "$inc")
		[ -n "$t" ] || continue # generated (skeletons, vmlinux.h)
		read -r trank tlay <<<"$(layer_of "$t")"
		[ -n "${trank:-}" ] || continue
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
