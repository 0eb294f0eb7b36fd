#!/bin/bash
# run-fuzzer.sh BIN SECONDS - run one libFuzzer target for a bounded time
# from its seed corpus (tests/fuzz/corpus/<name>/), print PASS or FAIL.
# The per-input timeout is generous: a loaded 2-CPU machine under ASan is
# slow, and only a real hang should fail the run.
set -u
bin=$1 secs=$2
name=$(basename "$bin")
seeds="$(dirname "$0")/corpus/$name"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -d "$seeds" ] && cp -r "$seeds"/. "$work"/
if "$bin" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
	-artifact_prefix="$work/" "$work" >"$work/log" 2>&1; then
	runs=$(grep -o 'Done [0-9]* runs' "$work/log" | tail -1)
	echo "PASS $name (${runs:-ran} in ${secs}s)"
else
	tail -40 "$work/log"
	echo "FAIL $name: the fuzzer found a crash (log above)"
	exit 1
fi
