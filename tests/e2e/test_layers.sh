#!/bin/bash
# test_layers.sh - scripts/lint-layers.sh passes on the tree and fails on
# each kind of wrong include, planted in a copy of the sources: a layer
# including a higher one, an engine including another, userspace
# including a BPF-only header, a file in no layer, and a CLI verb
# defining a function the runtime declares. Needs no root.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LINT=$ROOT/scripts/lint-layers.sh
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Every lint run is independent (a tree of its own): they run at once,
# their result lines printed in order at the end.
n=0
tree() {
	local out
	if out=$("$LINT" "$ROOT" 2>&1); then
		echo "PASS layers_tree"
	else
		echo "FAIL layers_tree: $(echo "$out" | head -3 | tr '\n' ' ')"
	fi
}
tree >"$TMP/res.$n" &

# plant NAME FILE LINE EXPECT: a fresh copy with LINE appended to FILE
# must fail, with EXPECT in what the lint says (in the background: its
# line goes to the next result file).
plant() {
	n=$((n + 1))
	plant1 "$@" >"$TMP/res.$n" &
}
plant1() {
	local name=$1 file=$2 line=$3 expect=$4 out rc t=$TMP/tree.$n
	mkdir -p "$t"
	cp -r "$ROOT/userspace" "$ROOT/bpf" "$ROOT/dpdk" "$t/"
	mkdir -p "$(dirname "$t/$file")"
	printf '%s\n' "$line" >>"$t/$file"
	out=$("$LINT" "$t" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qF -- "$expect" <<<"$out"; then
		echo "PASS layers_$name"
	else
		echo "FAIL layers_$name: rc $rc, '$(echo "$out" | head -2 | tr '\n' ' ')'"
	fi
}

plant net_includes_cli userspace/net/wire.c '#include "cli.h"' \
	"userspace/net/wire.c includes cli.h"
plant service_includes_serve userspace/service/http.h '#include "engine.h"' \
	"userspace/service/http.h includes engine.h"
plant engine_includes_engine userspace/engines/epoll/epoll_engine.c \
	'#include "afxdp_engine.h"' "epoll_engine.c includes afxdp_engine.h"
plant base_includes_obs userspace/base/log.c '#  include "counters.h"' \
	"userspace/base/log.c includes counters.h"
plant userspace_includes_bpf_kern userspace/bpfctl/loader.c \
	'#include "blitz_maps.h"' "loader.c includes blitz_maps.h"
plant shared_includes_bpf_kern bpf/blitz_shared.h '#include "blitz_seg.h"' \
	"bpf/blitz_shared.h includes blitz_seg.h"
plant folder_in_no_layer userspace/misc/extra.c '#include "log.h"' \
	"userspace/misc/extra.c is in no layer"
plant verb_defines_runtime userspace/cmd/cmd_unload.c \
	'int counters_sweep(void) { return 0; }' \
	"cmd_unload.c defines counters_sweep()"
wait
for ((i = 0; i <= n; i++)); do
	cat "$TMP/res.$i"
	[ -s "$TMP/res.$i" ] || echo "FAIL layers_check$i: printed no result"
done
