#!/bin/bash
# tests/e2e/test_soak.sh - the short form of scripts/bench/soak.sh: h2load
# --h1 -c 64 -m 16 for SOAK_S (default 20) seconds against `blitz load`
# alone, on the script's own testbed (prefix soak + $BLITZ_TB_TAG): every
# request answered, none failed, errored or timed out, no connection
# stalled. The 10-minute soak is the same script with SOAK_S=600.
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=soak
need_root "$T"
need_blitz "$T"
need_cmds "$T" h2load jq || exit 0
out=$(SOAK_S=${SOAK_S:-20} BUILD=$BUILD "$E2E_ROOT"/scripts/bench/soak.sh 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  /'
case $rc in
0) pass "${T}_h2load_m16 ($(printf '%s\n' "$out" | sed -n 's/^  requests *\([0-9]*\) done.*/\1/p') requests, 0 stalled)" ;;
2) skip "${T}_h2load_m16" "$(printf '%s\n' "$out" | tail -1)" ;;
*) fail "${T}_h2load_m16" "$(printf '%s\n' "$out" | grep -E 'failed|errored|timed out|stalled' | tr '\n' ' ')" ;;
esac
e2e_status
