#!/bin/bash
# scripts/gen-usage.sh [BLITZ] - write the usage texts generated from the
# option tables: docs/usage.md (`blitz help --markdown`) and the synopsis
# block of README.md's CLI section (`blitz help --synopsis`, between the
# "usage:begin" and "usage:end" markers). `make docs` runs it;
# tests/unit/test_usage.c fails when either is out of date.
set -eu
cd "$(dirname "$0")/.."
BLITZ=${1:-build/blitz}
"$BLITZ" help --markdown >docs/usage.md.tmp
mv docs/usage.md.tmp docs/usage.md
syn=$(mktemp)
trap 'rm -f "$syn"' EXIT
"$BLITZ" help --synopsis >"$syn"
awk -v syn="$syn" '
	/^<!-- usage:begin/ { print; print "```"; while ((getline l < syn) > 0) print l; print "```"; skip = 1; next }
	/^<!-- usage:end/ { skip = 0 }
	!skip { print }
' README.md >README.md.tmp
mv README.md.tmp README.md
