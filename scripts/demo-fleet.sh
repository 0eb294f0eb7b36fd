#!/bin/bash
# scripts/demo-fleet.sh - `make demo-fleet`: a fleet of FLEET_N blitz hosts
# behind a Linux ECMP router (scripts/testbed.sh fleet), one key file for
# all, and keep-alive clients that stay connected while the router
# rehashes and every host reloads with a new body; then the client's
# figures and every host's counters.
# Every command that matters is printed ("[netns]$ ...").
#
#   client ─ router (ECMP, L4 hash) ─┬─ host 1 ─ VIP on lo, blitz load
#                                    ├─ host 2 ─ VIP on lo, blitz load
#                                    └─ ...
#
# Owns: its fleet (prefix demof) and its key, undone in the EXIT trap.
# Env: BUILD, FLEET_N (default 3), CONNS (default 100), DURATION (12 s),
#      BLITZ_TB_TAG (as every testbed).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
BUILD=${BUILD:-build}
BLITZ=$here/$BUILD/blitz
[[ $BUILD = /* ]] && BLITZ=$BUILD/blitz
PY=/usr/bin/python3
N=${FLEET_N:-3}
CONNS=${CONNS:-100}
DURATION=${DURATION:-12}
FP=demof
# shellcheck source=scripts/lib.sh
source "$here/scripts/lib.sh"
require_root
TMP=$(mktemp -d)
chmod 700 "$TMP"
trap 'BUILD=$BUILD scripts/testbed.sh fleet-down $FP >/dev/null 2>&1; rm -rf "$TMP"' EXIT
KEY=$TMP/fleet.key
printf '%s\n' "$ umask 077; head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n' >fleet.key"
(umask 077 && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KEY")
echo "\$ scripts/testbed.sh fleet $N $FP fleet.key   # runs on every host:"
echo "  [host]\$ blitz load <veth> -a <VIP> --secret-file fleet.key"
env=$(BUILD=$BUILD scripts/testbed.sh fleet "$N" $FP "$KEY") ||
	die "the fleet testbed could not be built"
eval "$env"
read -ra HOSTS <<<"$FLEET_HOSTS"
read -ra IFS_ <<<"$FLEET_IFS"
read -ra NHS <<<"$FLEET_NEXTHOPS"
read -ra RIFS <<<"$FLEET_RTR_IFS"
route() { # the multipath route through hosts in this order (0-based)
	local i nh=""
	for i in "$@"; do nh+=" nexthop via ${NHS[$i]} dev ${RIFS[$i]}"; done
	echo "[router]\$ ip route replace $FLEET_VIP/32$nh"
	# shellcheck disable=SC2086
	$FLEET_RTR ip route replace "$FLEET_VIP/32" $nh
}
echo "[router]\$ ip route show $FLEET_VIP"
$FLEET_RTR ip route show "$FLEET_VIP" | sed 's/^/  /'

echo "[client]\$ fleet_client.py $FLEET_VIP 80 $CONNS $DURATION 250   # $CONNS keep-alive connections, never reconnecting"
# shellcheck disable=SC2086
$FLEET_CLI "$PY" tests/e2e/fleet_client.py "$FLEET_VIP" 80 "$CONNS" "$DURATION" 250 >"$TMP/client.json" &
pid=$!
sleep 2
for k in 1 2 3; do
	order=()
	for ((i = 0; i < N; i++)); do order+=($(((i + k) % N))); done
	route "${order[@]}"
	if [ "$k" = 2 ]; then
		# A reload under load: new program instances with a new body,
		# swapped in on every host one after the other.
		for ((i = 0; i < N; i++)); do
			echo "[host $((i + 1))]\$ blitz reload ${IFS_[$i]} --body 'Hello again!'"
			nsenter --net="/run/netns/${HOSTS[$i]}" "$BLITZ" reload "${IFS_[$i]}" \
				--body 'Hello again!' | sed 's/^/  /'
		done
	fi
	sleep 2
done
wait $pid
echo
echo "client: $(cat "$TMP/client.json")"
echo
printf '%-10s %-10s %10s %10s %16s\n' host interface synacks requests drop_bad_cookie
for ((i = 0; i < N; i++)); do
	nsenter --net="/run/netns/${HOSTS[$i]}" "$BLITZ" stats "${IFS_[$i]}" --json |
		"$PY" -c 'import json,sys
c = json.load(sys.stdin)["counters"]
print("%-10s %-10s %10d %10d %16d" % (sys.argv[1], sys.argv[2], c["synack"], c["requests"], c["drop_bad_cookie"]))' \
			"$((i + 1))" "${IFS_[$i]}"
done
echo
echo "Each host answered part of the requests, and connections kept working as"
echo "the router moved them: every host holds the same key (--secret-file)."
echo "The reload swapped each host's program under load: the client saw both"
echo "bodies (\"bodies\" above) and no connection failed."
