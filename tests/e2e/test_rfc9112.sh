#!/bin/bash
# tests/e2e/test_rfc9112.sh - RFC 9112 edge cases against `blitz load`
# ALONE (no kernel listener on the port: issue 12) and, in the same run,
# against nginx as the reference; one result line per case.
#
# The cases and what the contract answers are in rfc9112_cases.py (32
# cases, all at once, one connection each). Under `load` alone a case is
# either the fast path's to answer from one segment (then the statuses
# and the end, FIN or open, must be the contract's) or one only a kernel
# socket can complete (split requests, bodies, a header section over
# 8 KiB, batches whose replies do not fit the frame): then it must end in
# a RST, as the line `load` prints says ("nothing listens ... reset"),
# and the case is reported as still not answered alone. nginx's answers
# are printed beside blitz's (nginx answers every method 200 here: its
# config is `return 200`), and the cases where blitz alone and nginx give
# the same statuses are counted. Lean: about 20 s.
# Testbed prefix: $RFC_TB (default e2erfc).
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=rfc9112
PORT=8080
CASES=$E2E_ROOT/tests/e2e/rfc9112_cases.py

e2e_begin "$T" "${RFC_TB:-e2erfc}"

# ---- blitz load, nothing listening ----
e2e_load "$T" -p $PORT
NONE="nothing listens on port $PORT: requests the xdp engine passes (split requests, bodies) are reset"
check "${T}_load_says_nothing_listens" "load said: $(tr '\n' '|' <"$TMP/load.out")" \
	grep -qF "$NONE" "$TMP/load.out"
r0=$(counter "$SRV_IF" requests)
e0=$(counter "$SRV_IF" http_errors)
$CLI timeout 30 "$PY" "$CASES" "$SRV_IP" $PORT >"$TMP/blitz.txt" 2>"$TMP/blitz.err"
r1=$(counter "$SRV_IF" requests)
e1=$(counter "$SRV_IF" http_errors)
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

# ---- nginx on the same port, the reference ----
have_nginx=
if nginx_start $PORT 256; then
	$CLI timeout 30 "$PY" "$CASES" "$SRV_IP" $PORT >"$TMP/nginx.txt" 2>&1 && have_nginx=1
fi
nginx_stop
[ -n "$have_nginx" ] || skip "${T}_nginx_reference" "nginx did not run here: no reference column"

# ---- per case ----
n=0 alone=0 reset=0 same=0
resets=
while IFS='|' read -r name got end want mode; do
	[ -n "$name" ] || continue
	n=$((n + 1))
	wst=${want%/*} wend=${want#*/}
	ref=$(grep "^$name|" "$TMP/nginx.txt" 2>/dev/null | cut -d'|' -f2,3 | tr '|' '/')
	[ -n "$ref" ] || ref="n/a"
	[ "${ref%/*}" = "$got" ] && same=$((same + 1))
	ok=
	if [[ $mode = *xdp* ]] && [ "$got" = "$wst" ] && [ "$end" = "$wend" ]; then
		ok=answered
		alone=$((alone + 1))
	elif [[ $mode = *rst* ]] && [ "$end" = rst ] && [ "$got" = - ]; then
		ok=reset
		reset=$((reset + 1))
		resets="$resets $name"
	fi
	short=$got
	[ ${#short} -gt 24 ] && short="$(wc -w <<<"$got") statuses"
	nshort=$ref
	[ ${#nshort} -gt 30 ] && nshort="$(wc -w <<<"${ref%/*}") statuses/${ref#*/}"
	if [ "$ok" = answered ]; then
		pass "${T}_$name"
		echo "  $name: blitz alone $short/$end (contract), nginx $nshort"
	elif [ "$ok" = reset ]; then
		pass "${T}_$name"
		why="needs a kernel socket"
		[[ $mode = *xdp* ]] && why="the replies did not fit the frame"
		echo "  $name: blitz alone reset ($why; contract $(cut -c1-20 <<<"$wst")/$wend), nginx $nshort"
	else
		fail "${T}_$name" "blitz alone got '$short' end=$end, want '$want' (alone: $mode); nginx $nshort"
	fi
done <"$TMP/blitz.txt"
check "${T}_all_cases_ran" "$n cases (want 32): $(head -c 300 "$TMP/blitz.err")" [ "$n" -eq 32 ]
# The fast path itself answered: the counters moved by what it sent (XDP
# and the TC bursts of oversized batches both count in requests).
check "${T}_xdp_counted" "requests $r0 -> $r1, http_errors $e0 -> $e1 (want >= +$alone requests, >= +12 errors)" \
	test $((r1 - r0)) -ge "$alone" -a $((e1 - e0)) -ge 12
echo "  summary: $alone of $n answered by blitz load alone as the contract says; $reset reset (not answered alone:$resets); $same with nginx's statuses"
e2e_status
