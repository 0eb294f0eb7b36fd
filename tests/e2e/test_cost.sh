#!/bin/bash
# test_cost.sh - the smoke test of `make cost` (a benchmark, so not run by
# `make test` in full): the harness loads the real xdp program and the
# ablation build with every BLITZ_COST_* switch at once (both built by
# `make all`), checks that every frame gets its verdict on each (PASS
# xdp_cost_<build>), and prints the table with a number in every row.
# Needs no testbed: the harness runs in a private network namespace.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=$BUILD/tests/perf/xdp_cost
if [ "$(id -u)" -ne 0 ]; then
	skip test_cost "needs root (BPF_PROG_TEST_RUN)"
	exit 0
fi
if [ ! -x "$TOOL" ] || [ ! -f "$BUILD/cost/blitz_xdp.all.bpf.o" ]; then
	fail test_cost "$TOOL or $BUILD/cost/blitz_xdp.all.bpf.o missing: make all"
	exit 1
fi
out=$("$TOOL" --check --rounds 3 --runs 200 "$BUILD/blitz_xdp.bpf.o" \
	"$BUILD/cost/blitz_xdp.all.bpf.o" 2>&1)
printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP) '
for row in 'host \(floor\)' 'SYN' 'GET cached' 'GET uncached'; do
	name=$(tr -dc 'a-zA-Z ' <<<"${row/ \\(floor\\)/}" | tr ' ' _)
	check "test_cost_row_$name" "no number in the '$row' row: $out" \
		grep -Eq "^# $row +[0-9]+\.[0-9] +[0-9.]+x" <<<"$out"
done
check test_cost_ablation "no 'all' row of ns saved: $out" \
	grep -Eq '^# all +all of the above .* -?[0-9]+\.[0-9]$' <<<"$out"
check test_cost_verifier "no verifier instruction count: $out" \
	grep -Eq '^# full +[1-9][0-9]+ +[1-9][0-9]+ +[0-9]+$' <<<"$out"
e2e_status
