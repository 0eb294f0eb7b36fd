#!/bin/bash
# scripts/lint-docs.sh [FILE...] - fail when user-facing text (README.md and
# docs/*.md by default) carries lab-notebook references: "issue N" or a word
# of 7 to 40 hex digits with both a digit and a letter (a commit hash).
# `make lint` runs it; a file's history belongs in git, not in the manual.
set -u
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- README.md docs/*.md
rc=0
for f in "$@"; do
	while IFS= read -r hit; do
		echo "$f:$hit"
		rc=1
	done < <(grep -nioE '\bissues? #?[0-9]+' "$f"
		grep -noE '\b[0-9a-f]{7,40}\b' "$f" | grep -E ':[0-9]*[a-f][0-9a-f]*$' | grep -E ':[a-f]*[0-9]')
done
[ $rc -eq 0 ] || echo "lint-docs: issue numbers and commit hashes do not belong in README.md or docs/ (say what it does, not where it came from)"
exit $rc
