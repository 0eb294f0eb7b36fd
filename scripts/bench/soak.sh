#!/bin/bash
# scripts/bench/soak.sh - a pipelining soak against `blitz load` alone (no
# kernel listener on the port): h2load --h1 -m SOAK_M -c SOAK_C for SOAK_S
# seconds on a testbed of its own (scripts/testbed.sh, prefix soak +
# $BLITZ_TB_TAG), then one line per figure: requests done, succeeded,
# failed, errored, timed out, and the stalled connections. A connection
# counts as stalled when h2load saw no byte on it for SOAK_IDLE seconds
# (its -N inactivity timeout: its unfinished requests are the "timeout"
# ones) or when it ended the run with requests unanswered.
#
#   SOAK_S=600 scripts/bench/soak.sh         # the 10-minute soak
#   SOAK_S=20 scripts/bench/soak.sh          # what tests/e2e/test_soak.sh runs
#
# Exit 0 when nothing failed, errored, timed out or stalled, 1 otherwise,
# 2 when it cannot run (not root, no h2load, no build). Bounded: h2load runs
# under `timeout` (SOAK_S + 60 s); the testbed goes down on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$here/build}
BLITZ=$BUILD/blitz
SOAK_S=${SOAK_S:-600}
SOAK_C=${SOAK_C:-64}
SOAK_M=${SOAK_M:-16}
SOAK_IDLE=${SOAK_IDLE:-10}
PORT=${SOAK_PORT:-8080}
PREFIX=soak

# shellcheck source=scripts/lib.sh
source "$here/scripts/lib.sh"
DIE_STATUS=2
require_root
for c in h2load nsenter; do
	command -v "$c" >/dev/null || die "$c is not installed (scripts/install-deps.sh)"
done
[ -x "$BLITZ" ] || die "no $BLITZ (make first)"

TMP=$(mktemp -d)
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "${SRV:-}" ]; then
		$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1 || true
	fi
	BUILD=$BUILD "$here"/scripts/testbed.sh down "$PREFIX" >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

env=$(BUILD=$BUILD "$here"/scripts/testbed.sh up "$PREFIX")
eval "$env"
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
$SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load.out" 2>&1 ||
	die "blitz load failed: $(tr '\n' ' ' <"$TMP/load.out")"

# cnt NAME: one of the server's counters
cnt() {
	# shellcheck disable=SC2086
	$SRV "$BLITZ" stats "$SRV_IF" --json 2>/dev/null |
		jq -r ".counters.$1 // -1" 2>/dev/null || echo -1
}
# paws: the client's TCP segments dropped by PAWS
paws() {
	# shellcheck disable=SC2086
	$CLI nstat -az TcpExtPAWSEstab 2>/dev/null |
		awk '/TcpExtPAWSEstab/ {print $2; f=1} END {if (!f) print 0}'
}

p0=$(paws)
start=$(date +%s)
# shellcheck disable=SC2086
$CLI timeout $((SOAK_S + 60)) h2load --h1 -c "$SOAK_C" -m "$SOAK_M" \
	-D "$SOAK_S" -N "$SOAK_IDLE" "http://$SRV_IP:$PORT/" >"$TMP/h2load.out" 2>&1 || true
secs=$(($(date +%s) - start))

# "requests: T total, S started, D done, OK succeeded, F failed, E errored, TO timeout"
line=$(grep -m1 '^requests:' "$TMP/h2load.out" || true)
num() { sed -n "s/.* \([0-9][0-9]*\) $1.*/\1/p" <<<"$line"; }
total=$(num total) started=$(num started) ndone=$(num "done") ok=$(num succeeded)
failed=$(num failed) errored=$(num errored) timedout=$(num timeout)
total=${total:--1} started=${started:--1} ndone=${ndone:--1} ok=${ok:--1}
failed=${failed:--1} errored=${errored:--1} timedout=${timedout:--1}
# Connections h2load had to close for inactivity, as it says so.
idle=$(grep -c -i 'inactivity\|timed out' "$TMP/h2load.out" || true)
rps=$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' "$TMP/h2load.out")
# A connection still waiting at the end holds started - done requests;
# more than the pipeline depth per connection left means a stall.
inflight=$((started - ndone))
stalled=$idle
if [ "$started" -ge 0 ] && [ "$inflight" -gt $((SOAK_C * SOAK_M)) ]; then
	stalled=$((stalled + (inflight - SOAK_C * SOAK_M + SOAK_M - 1) / SOAK_M))
fi

echo "soak: h2load --h1 -c $SOAK_C -m $SOAK_M -D $SOAK_S -N $SOAK_IDLE against blitz load alone, ${secs} s"
echo "  requests      $ndone done of $started started ($ok succeeded), ${rps:-?} req/s"
echo "  failed        $failed"
echo "  errored       $errored"
echo "  timed out     $timedout"
echo "  stalled conns $stalled (no byte for ${SOAK_IDLE} s, or requests left past the pipeline depth: $inflight in flight at the end)"
echo "  client PAWS drops $(($(paws) - p0))"
echo "  server: requests $(cnt requests), tc_requests $(cnt tc_requests), retransmits $(cnt retransmits), drop_off_point $(cnt drop_off_point), drop_bad_cookie $(cnt drop_bad_cookie), pass_burst $(cnt pass_burst)"
if [ "$ok" -le 0 ] || [ "$failed" -ne 0 ] || [ "$errored" -ne 0 ] ||
	[ "$timedout" -ne 0 ] || [ "$stalled" -ne 0 ]; then
	grep -E '^(requests|status|traffic|finished)' "$TMP/h2load.out" | sed 's/^/  h2load: /'
	exit 1
fi
exit 0
