#!/bin/bash
# tests/e2e/test_secret_file.sh - `--secret-file FILE` (issue 10 item 3):
# the cookie key from a root-only file. On a two-host fleet testbed
# (scripts/testbed.sh fleet 2): a file that is not root's alone, too
# short, or missing is refused in one line by load and serve with nothing
# attached; the same file on both hosts gives the same SYN-ACK ISN and
# TSval for the same 4-tuple, a load without it a different one; the key
# is in no output; the pins that hold it are root's alone (nobody can list,
# read or open them). Owns its fleet (prefix sk) and its temp dir.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

T=secret_file
need_root $T
need_blitz $T
need_cmds $T "$PY" setpriv || exit 0
TMP=$(mktemp -d)
chmod 700 "$TMP"
FP=sk
fleet_env=$(BUILD=$BUILD scripts/testbed.sh fleet 2 $FP 2>"$TMP/tb.log") || {
	fail "${T}_testbed" "testbed.sh fleet 2: $(tail -1 "$TMP/tb.log")"
	exit 1
}
eval "$fleet_env"
trap 'BUILD=$BUILD scripts/testbed.sh fleet-down $FP >/dev/null 2>&1; rm -rf "$TMP"' EXIT
read -r H1 H2 <<<"$FLEET_HOSTS"
read -r IF1 IF2 <<<"$FLEET_IFS"
read -r NH1 NH2 <<<"$FLEET_NEXTHOPS"
S1="nsenter --net=/run/netns/$H1"
S2="nsenter --net=/run/netns/$H2"

KEY=$TMP/fleet.key
(umask 077 && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KEY")
KEYHEX=$(cat "$KEY")

# refused VERB WHAT FILE PATTERN - VERB (load or serve) on host 1 with
# --secret-file FILE fails with one line matching PATTERN, and leaves no
# XDP program and no pins behind.
refused() {
	local verb=$1 what=$2 file=$3 pat=$4 rc lines
	# shellcheck disable=SC2086 # $S1 is a command prefix
	timeout 10 $S1 "$BLITZ" "$verb" "$IF1" -a "$FLEET_VIP" --secret-file "$file" \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	lines=$(wc -l <"$TMP/err")
	# shellcheck disable=SC2086
	if [ $rc -ne 0 ] && [ "$lines" -eq 1 ] && grep -qE "$pat" "$TMP/err" &&
		! $S1 ip link show dev "$IF1" | grep -q 'prog/xdp' &&
		[ ! -e "/sys/fs/bpf/blitz/$IF1" ]; then
		pass "${T}_${verb}_refuses_${what}"
	else
		fail "${T}_${verb}_refuses_${what}" "rc $rc, $lines line(s): $(head -2 "$TMP/err")"
	fi
}

BAD=$TMP/bad.key
cp "$KEY" "$BAD"
chmod 644 "$BAD"
refused load world_readable "$BAD" 'chmod 600'
refused serve world_readable "$BAD" 'chmod 600'
chmod 640 "$BAD"
refused load group_readable "$BAD" 'chmod 600'
chmod 600 "$BAD"
chown 65534 "$BAD"
refused load not_root_owned "$BAD" 'not root'
chown 0 "$BAD"
printf '%s\n' "${KEYHEX:0:31}" >"$BAD"
refused load too_short "$BAD" '31 hex digits'
refused serve too_short "$BAD" '31 hex digits'
refused load missing "$TMP/none.key" 'cannot open'

# ---- the same key on two hosts: the same cookies ----
load_host() { # NS_PREFIX IFNAME [KEYFILE]
	local ns=$1 ifn=$2 key=${3:-}
	# shellcheck disable=SC2086
	$ns "$BLITZ" unload "$ifn" >/dev/null 2>&1
	# shellcheck disable=SC2086
	if [ -n "$key" ]; then
		$ns "$BLITZ" load "$ifn" -a "$FLEET_VIP" -v --secret-file "$key" >>"$TMP/load.log" 2>&1
	else
		$ns "$BLITZ" load "$ifn" -a "$FLEET_VIP" -v >>"$TMP/load.log" 2>&1
	fi
}

# synack NEXTHOP - route the service address to that host alone and send
# one SYN (a fixed tuple and timestamp); prints "ISN TSVAL" of the SYN-ACK.
synack() {
	# shellcheck disable=SC2086
	$FLEET_RTR ip route replace "$FLEET_VIP/32" via "$1"
	# shellcheck disable=SC2086
	$FLEET_CLI "$PY" "$E2E_ROOT/tests/e2e/secret_file_probe.py" "$FLEET_CLI_IP" "$FLEET_VIP" 2>/dev/null
}

# synack_pair NEXTHOP_X NEXTHOP_Y - both hosts' SYN-ACKs back to back into
# SX and SY, once more if they differ: cookie v2's ISN and TSval change
# with the epoch (68.7 s), which may have turned between the two.
synack_pair() {
	SX=$(synack "$1")
	SY=$(synack "$2")
	if [ "$SX" != "$SY" ]; then
		SX=$(synack "$1")
		SY=$(synack "$2")
	fi
}

same() { [ "$1" != none ] && [ "$1" = "$2" ]; }
differ() { [ "$1" != none ] && [ "$2" != none ] && [ "$1" != "$2" ]; }

if load_host "$S1" "$IF1" "$KEY" && load_host "$S2" "$IF2" "$KEY"; then
	synack_pair "$NH1" "$NH2"
	a=$SX b=$SY
	check "${T}_same_key_same_cookie" "host 1 said '$a', host 2 '$b'" \
		same "$a" "$b"
	load_host "$S2" "$IF2"
	c=$(synack "$NH2")
	check "${T}_no_file_random_key" "with and without the file: '$a' and '$c'" \
		differ "$a" "$c"
	load_host "$S2" "$IF2" "$KEY"
	# Against host 1 (same key, not reloaded) at the same moment, not
	# against $a: the epoch may have turned since.
	synack_pair "$NH2" "$NH1"
	d=$SX a=$SY
	check "${T}_reload_same_cookie" "host 1 '$a', host 2 after a reload '$d'" \
		same "$a" "$d"
else
	fail "${T}_load" "blitz load --secret-file: $(tail -2 "$TMP/load.log")"
fi

# The key is in no output: not the file's digits, not its two words.
k0=$("$PY" -c "import sys; b=bytes.fromhex(sys.argv[1]); print('%x %x' % (int.from_bytes(b[:8],'little'), int.from_bytes(b[8:],'little')))" "$KEYHEX")
# shellcheck disable=SC2086
{
	cat "$TMP/load.log"
	$S1 "$BLITZ" status -v 2>&1
	$S1 "$BLITZ" stats "$IF1" 2>&1
	$S1 "$BLITZ" stats "$IF1" --json 2>&1
} >"$TMP/all.out"
leak=0
for w in "$KEYHEX" ${k0}; do
	grep -qi "$w" "$TMP/all.out" && leak=1
done
check "${T}_key_not_printed" "the key appears in load/status/stats output" [ $leak = 0 ]

# The pins (config holds the key) are root's alone.
PIN=/sys/fs/bpf/blitz/$IF1
modes=$(stat -c '%a' /sys/fs/bpf/blitz "$PIN" "$PIN"/* | sort -u | tr '\n' ' ')
check "${T}_pin_modes" "modes $modes (want 700 and 600 only)" \
	[ "$modes" = "600 700 " ]
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
ok=1
$NOBODY ls /sys/fs/bpf/blitz >/dev/null 2>&1 && ok=0
# (root's own read of a map pin is EIO: nobody's must be EACCES)
$NOBODY cat "$PIN/config" 2>&1 >/dev/null | grep -q 'Permission denied' || ok=0
$NOBODY bpftool map dump pinned "$PIN/config" >/dev/null 2>&1 && ok=0
$NOBODY cat "$KEY" >/dev/null 2>&1 && ok=0
# ...and the same commands as root do work (so the checks can fail).
bpftool map dump pinned "$PIN/config" >/dev/null 2>&1 || ok=0
check "${T}_pins_not_readable_by_nobody" \
	"a non-root user could list or read the pins or key, or root could not" [ $ok = 1 ]
# The afxdp engine's TCP core takes the same file: its cookies (a 64 s
# clock term) match across hosts for the same tuple, and differ without.
serve_afxdp() { # NS_PREFIX IFNAME LOG [KEYFILE]
	local ns=$1 ifn=$2 log=$3
	shift 3
	# shellcheck disable=SC2086
	$ns "$BLITZ" unload "$ifn" >/dev/null 2>&1
	# shellcheck disable=SC2086
	$ns "$BLITZ" serve "$ifn" --engine afxdp -a "$FLEET_VIP" -p 80 "$@" >"$log" 2>&1 &
	SERVED+=($!)
	wait_line "$log" "^afxdp: $ifn queue 0" $! 10
}
SERVED=()
stop_served() {
	local p
	for p in "${SERVED[@]}"; do stop_pid "$p" INT; done
	SERVED=()
}
if serve_afxdp "$S1" "$IF1" "$TMP/af1.log" --secret-file "$KEY" &&
	serve_afxdp "$S2" "$IF2" "$TMP/af2.log" --secret-file "$KEY"; then
	synack_pair "$NH1" "$NH2"
	a=$SX b=$SY
	stop_served
	serve_afxdp "$S2" "$IF2" "$TMP/af3.log"
	c=$(synack "$NH2")
	stop_served
	check "${T}_afxdp_same_key_same_cookie" "host 1 '$a', host 2 '$b'" same "$a" "$b"
	check "${T}_afxdp_no_file_random_key" "with and without: '$b', '$c'" differ "$b" "$c"
	leak=0
	for w in "$KEYHEX" ${k0}; do
		grep -qi "$w" "$TMP"/af[123].log && leak=1
	done
	check "${T}_afxdp_key_not_printed" "the key appears in serve's output" [ $leak = 0 ]
else
	skip "${T}_afxdp_same_key_same_cookie" "the afxdp engine did not start: $(tail -1 "$TMP/af1.log" "$TMP/af2.log" 2>/dev/null | tr '\n' ' ')"
	stop_served
fi


# blitz-dpdk (through serve, which hands it the path) takes the file too.
DPDK=$(dirname "$BLITZ")/blitz-dpdk
serve_dpdk() { # NS_PREFIX IFNAME LOG
	# shellcheck disable=SC2086
	$1 "$BLITZ" serve "$2" --engine dpdk -a "$FLEET_VIP" -p 80 --secret-file "$KEY" >"$3" 2>&1 &
	SERVED+=($!)
	wait_line "$3" '^blitz-dpdk: serving' $! 20
}
if [ ! -x "$DPDK" ] || [ ! -c /dev/net/tun ]; then
	skip "${T}_dpdk_same_key_same_cookie" "no blitz-dpdk or no /dev/net/tun"
elif serve_dpdk "$S1" "$IF1" "$TMP/dp1.log" && serve_dpdk "$S2" "$IF2" "$TMP/dp2.log"; then
	synack_pair "$NH1" "$NH2"
	a=$SX b=$SY
	stop_served
	check "${T}_dpdk_same_key_same_cookie" "host 1 '$a', host 2 '$b'" same "$a" "$b"
	grep -q -- "--secret-file $KEY" "$TMP/dp1.log" && ! grep -qi "$KEYHEX" "$TMP"/dp[12].log
	check "${T}_dpdk_gets_the_path_not_the_key" "serve's exec line: $(grep -m1 'exec' "$TMP/dp1.log")" \
		[ $? = 0 ]
else
	skip "${T}_dpdk_same_key_same_cookie" "blitz-dpdk did not start: $(grep -vE '^(EAL|  )' "$TMP/dp1.log" "$TMP/dp2.log" 2>/dev/null | tail -1)"
	stop_served
fi
e2e_status
