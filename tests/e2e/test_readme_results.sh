#!/bin/bash
# tests/e2e/test_readme_results.sh - the README's result table, its ratios
# and make demo's closing line come from docs/bench.json through one
# generator (scripts/gen-results.sh, scripts/bench/readme.jq): README.md's
# block is what the JSON gives; a ratio written anywhere else in README.md
# is one of the table's; the table has xdp, afxdp, dpdk, epoll and nginx at
# 10, 100 and 300 connections and at their peak; the headline's ratio is the
# table's peak rows divided. Negative controls: a changed figure in the
# block, a ratio outside it and an "issue N" line must each be caught
# (gen-results check, scripts/lint-docs.sh). Needs no root and no testbed.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=readme_results
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
JSON=docs/bench.json

if ! command -v jq >/dev/null; then
	skip "$T" "no jq (scripts/install-deps.sh installs it)"
	exit 0
fi

out=$(scripts/gen-results.sh check "$JSON" 2>&1)
check "${T}_in_sync" "$out" test -z "$out"

# The table's rows: engine x (peak, 10, 100, 300), wherever the JSON has them.
scripts/gen-results.sh table "$JSON" >"$TMP/block"
missing=
for e in xdp afxdp dpdk epoll nginx; do
	jq -e --arg e "$e" '.summary | any(.engine == $e)' "$JSON" >/dev/null || continue
	grep -qE "^\| $e \| \*\*peak\*\* \|" "$TMP/block" ||
		! jq -e --arg e "$e" '.headline | any(.engine == $e)' "$JSON" >/dev/null || missing="$missing $e/peak"
	for c in 10 100 300; do
		# A row wherever the run measured one (wrk or blitz bench, unpipelined).
		jq -e --arg e "$e" --argjson c "$c" '.summary | any(.engine == $e and .conns == $c and .pipeline == 1 and .rps > 0 and (.client == "wrk" or .client == "blitz-bench"))' "$JSON" >/dev/null || continue
		grep -qE "^\| $e \| $c \|" "$TMP/block" || missing="$missing $e/$c"
	done
done
check "${T}_rows" "missing rows:$missing" test -z "$missing"
# Columns: RPS, p50, p99, CPU ns / request, memory.
check "${T}_columns" "header: $(grep '^| engine' "$TMP/block")" \
	grep -q '^| engine | connections | client | req/s | × nginx | p50 | p99 | CPU ns / request | × nginx | memory | bound by |$' "$TMP/block"

# The headline's RPS ratio is the peak rows' req/s divided (not a stored
# figure), and the same in the table's xdp peak row.
x=$(jq '.headline[] | select(.engine == "xdp") | .rps' "$JSON")
n=$(jq '.headline[] | select(.engine == "nginx") | .rps' "$JSON")
want=$(awk -v x="$x" -v n="$n" 'BEGIN { printf "%.1f×", x / n }')
head=$(scripts/gen-results.sh headline "$JSON")
row=$(grep -E '^\| xdp \| \*\*peak\*\* \|' "$TMP/block" | awk -F' \\| ' '{ print $5 }')
check "${T}_headline_ratio" "want $want; headline '$head', table '$row'" \
	test -n "$x" -a "$row" = "$want" -a -n "$(echo "$head" | grep -F "$want nginx's peak")"

# make demo's closing line is that headline.
check "${T}_demo_line" "scripts/demo.sh does not end on gen-results.sh headline" \
	grep -q 'scripts/gen-results.sh headline' scripts/demo.sh

# Negative controls on copies of the README.
cp README.md "$TMP/r1"
sed -i -E '/^<!-- results:begin/,/^<!-- results:end/ s/^(\| xdp \| \*\*peak\*\* \| [^|]*\| )[0-9,]+/\11,234/' "$TMP/r1"
README=$TMP/r1 scripts/gen-results.sh check "$JSON" >"$TMP/o1" 2>&1
rc=$?
check "${T}_catches_figure" "rc $rc: $(head -c 200 "$TMP/o1")" test "$rc" -ne 0 -a -n "$(grep 'not what' "$TMP/o1")"
cp README.md "$TMP/r2"
echo "The xdp engine answers 97.3× nginx." >>"$TMP/r2"
README=$TMP/r2 scripts/gen-results.sh check "$JSON" >"$TMP/o2" 2>&1
rc=$?
check "${T}_catches_ratio" "rc $rc: $(head -c 200 "$TMP/o2")" test "$rc" -ne 0 -a -n "$(grep '97.3x outside' "$TMP/o2")"
printf 'Fixed in issue 27 at 3ca908a.\n' >"$TMP/r3.md"
scripts/lint-docs.sh "$TMP/r3.md" >"$TMP/o3" 2>&1
rc=$?
check "${T}_lint_catches" "rc $rc: $(cat "$TMP/o3")" test "$rc" -ne 0 -a "$(grep -c ':1:' "$TMP/o3")" -eq 2
out=$(scripts/lint-docs.sh 2>&1)
check "${T}_lint_docs" "$out" test -z "$out"

e2e_status
