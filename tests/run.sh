#!/bin/bash
# tests/run.sh - run every suite and count the results.
#
# Each test program or script prints "PASS name", "FAIL name: why" or
# "SKIP name: why" lines; this runner shows them, counts them and ends on
# "N passed, N failed, N skipped". A program that exits non-zero without
# printing a FAIL counts as one failure, so a crash is never silent.
# Usage: tests/run.sh [suite...]   suites: unit bpf fuzz e2e (default all)
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
passed=0 failed=0 skipped=0

run_one() { # name timeout cmd...
	local name=$1 tmo=$2 out rc p f s t0=$SECONDS
	shift 2
	echo "== $name"
	out=$(mktemp)
	timeout --kill-after=10 "$tmo" "$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(grep -c '^PASS ' "$out")
	f=$(grep -c '^FAIL ' "$out")
	s=$(grep -c '^SKIP ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		if [ "$rc" -eq 124 ]; then
			echo "FAIL $name: timed out after ${tmo}s"
		else
			echo "FAIL $name: exited $rc"
		fi
		f=$((f + 1))
	fi
	if [ "$rc" -eq 0 ] && [ $((p + f + s)) -eq 0 ]; then
		echo "FAIL $name: printed no result"
		f=$((f + 1))
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	echo "-- $name: $((SECONDS - t0)) s" # where a whole run's time goes
	rm -f "$out"
}

suites=${*:-unit bpf fuzz e2e}
for suite in $suites; do
	case $suite in
	unit | bpf)
		for t in "$BUILD"/tests/"$suite"/test_*; do
			[ -x "$t" ] || continue
			run_one "$suite/$(basename "$t")" 300 "$t"
		done
		;;
	fuzz)
		for t in "$BUILD"/tests/fuzz/fuzz_*; do
			[ -x "$t" ] || continue
			run_one "fuzz/$(basename "$t")" $((FUZZ_SECONDS + 120)) \
				tests/fuzz/run-fuzzer.sh "$t" "$FUZZ_SECONDS"
		done
		;;
	e2e)
		for t in tests/e2e/test_*.sh; do
			[ -f "$t" ] || continue
			run_one "e2e/$(basename "$t" .sh)" 600 bash "$t"
		done
		;;
	*)
		echo "run.sh: unknown suite '$suite' (use unit, bpf, fuzz or e2e)"
		failed=$((failed + 1))
		;;
	esac
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
