#!/bin/bash
# scripts/gen-results.sh WHAT [BENCH_JSON] - the README's result table and
# headline from a `make bench` JSON (default docs/bench.json), through
# scripts/bench/readme.jq, the one place they are formatted:
#   table     print the block (run, machine, table, headline)
#   headline  print the headline (make demo's reference line)
#   readme    write the block into README.md between the results markers,
#             and docs/bench.md (every row, scripts/bench/table-md.jq)
#   check     exit 1 when README.md's block, or a ratio written elsewhere in
#             README.md, is not what BENCH_JSON gives
# `make docs` runs `readme`; tests/e2e/test_readme_results.sh runs `check`.
set -eu
cd "$(dirname "$0")/.."
what=${1:-}
json=${2:-docs/bench.json}
README=${README:-README.md}
begin='<!-- results:begin'
end='<!-- results:end'

gen() { jq -r --arg what "$1" -f scripts/bench/readme.jq "$json"; }

# README.md with its results block replaced by the file $1.
splice() {
	awk -v blk="$1" -v b="$begin" -v e="$end" '
		index($0, b) == 1 { print; while ((getline l < blk) > 0) print l; skip = 1; next }
		index($0, e) == 1 { skip = 0 }
		!skip { print }
	' "$README"
}

# The ratios (3.9×, 3.9x) written in $1, one a line.
ratios() { grep -oE '(^|[^0-9.])[0-9]+\.[0-9]+ ?[×x]([^0-9a-z]|$)' "$1" | grep -oE '[0-9]+\.[0-9]+' | sort -u; }

case $what in
table | headline) gen "$what" ;;
readme | check)
	[ -f "$json" ] || { echo "gen-results: no $json (make bench writes bench-results/latest.json)" >&2; exit 1; }
	if ! { grep -q "^$begin" "$README" && grep -q "^$end" "$README"; }; then
		echo "gen-results: $README has no '$begin' / '$end' markers" >&2
		exit 1
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	gen table >"$tmp/block"
	splice "$tmp/block" >"$tmp/readme"
	if [ "$what" = readme ]; then
		cat "$tmp/readme" >"$README"
		jq -r -f scripts/bench/table-md.jq "$json" >docs/bench.md
		exit 0
	fi
	rc=0
	if ! cmp -s "$tmp/readme" "$README"; then
		echo "gen-results: $README's results block is not what $json gives (make docs):"
		diff "$README" "$tmp/readme" | head -20
		rc=1
	fi
	# Every ratio outside the block must be one the block shows.
	awk -v b="$begin" -v e="$end" 'index($0, b) == 1 { skip = 1 } !skip { print } index($0, e) == 1 { skip = 0 }' \
		"$README" >"$tmp/outside"
	ratios "$tmp/block" >"$tmp/known"
	for r in $(ratios "$tmp/outside"); do
		if ! grep -qx "$r" "$tmp/known"; then
			echo "gen-results: $README says ${r}x outside the results block; $json gives no such ratio: $(grep -nE "(^|[^0-9.])${r//./\\.} ?[×x]" "$tmp/outside" | head -1 | cut -c1-100)"
			rc=1
		fi
	done
	exit $rc
	;;
*)
	echo "usage: scripts/gen-results.sh table|headline|readme|check [BENCH_JSON]" >&2
	exit 2
	;;
esac
