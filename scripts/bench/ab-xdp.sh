#!/bin/bash
# ab-xdp.sh - the xdp engine's cost per request under load, several builds
# A/B interleaved in one run (issue 13 item 3: before and after), with nginx
# in the same rounds for the ratio. Fair placement (scripts/placement.sh).
#
#   scripts/bench/ab-xdp.sh LABEL=BLITZ_BINARY... [ROUNDS=3 DURATION=3 CONNS=100 RT=0 PIPELINE=1]
#
# e.g. for c in 845cd0b 786f3a4; do mkdir -p /tmp/ab-$c && git archive $c |
#      tar -x -C /tmp/ab-$c && make -C /tmp/ab-$c build/blitz; done
#      scripts/bench/ab-xdp.sh before=/tmp/ab-845cd0b/build/blitz \
#        mid=/tmp/ab-786f3a4/build/blitz now=build/blitz
#
# Each round loads every build in turn with its own binary (the XDP object
# is built into it) and runs this tree's `blitz bench -c CONNS` at it, then
# at nginx with the xdp engine unloaded. Per row: req/s, server CPU busy ns / request (/proc/stat, as
# make bench), the server NAPI thread's own ns / request (all of the xdp
# engine runs there; other processes on the CPU do not count in it), the
# generator's busy %. RT=1 also runs the generator and nginx SCHED_FIFO 1
# (NAPI threads FIFO 2): on a shared machine it keeps other load off both.
# Owns: its testbed (prefix bzab + BLITZ_TB_TAG), its nginx; undone in a trap.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-3} CONNS=${CONNS:-100} RT=${RT:-0}
PIPELINE=${PIPELINE:-1} # requests in flight per connection (blitz bench -P)
BLITZ=${BLITZ:-$here/build/blitz}
[ "$(id -u)" -eq 0 ] || { echo "ab-xdp: run as root" >&2; exit 1; }
[ $# -ge 1 ] || { echo "ab-xdp: give LABEL=BLITZ_BINARY for each build" >&2; exit 1; }
for a in "$@"; do
	if ! [[ $a == *=* ]] || ! [ -x "${a#*=}" ]; then
		echo "ab-xdp: '$a' is not LABEL=an executable blitz" >&2
		exit 1
	fi
done
tmp=$(mktemp -d /tmp/blitz-ab.XXXXXX)
chmod 755 "$tmp"
ng=
loaded=
cleanup() {
	[ -z "$loaded" ] || $SRV "$loaded" unload "$SRV_IF" >/dev/null 2>&1 || true
	[ -z "$ng" ] || kill "$ng" 2>/dev/null || true
	scripts/testbed.sh down bzab >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
eval "$(scripts/testbed.sh up bzab)"
# shellcheck source=scripts/placement.sh
source scripts/placement.sh
SRV_CPUS=1 CLI_CPUS=0
FIFO=()
if [ "$RT" = 1 ]; then
	NAPI_RT_PRIO=2 SRV_NAPI_RT_PRIO=2 FIFO=(chrt -f 1)
fi
sed "s|@TMP@|$tmp|g;s|@IP@|$SRV_IP|g;s|@PORT@|8081|g;s|@CONNS@|4096|g;/worker_rlimit_nofile/d" \
	scripts/bench/nginx.conf.in >"$tmp/nginx.conf"
$SRV taskset -c 1 "${FIFO[@]}" nginx -c "$tmp/nginx.conf" >"$tmp/nginx.log" 2>&1 &
ng=$!
sleep 1
napi_ticks() { # IF: utime+stime of its NAPI kthread
	local pat pid
	pat="napi/$1-"
	pat=${pat:0:15}
	pid=$(ps -eo pid=,comm= | awk -v p="$pat" 'index($2, p) == 1 {print $1; exit}')
	awk '{print $14 + $15}' "/proc/$pid/stat"
}
row() { # LABEL PORT
	local a0 a1 j0 j1 hz
	hz=$(getconf CLK_TCK)
	a0=$(napi_ticks "$SRV_IF")
	j0=$(cpu_snapshot)
	$CLI taskset -c 0 "${FIFO[@]}" "$BLITZ" bench "$SRV_IP:$2" -i "$CLI_IF" --json \
		-c "$CONNS" -P "$PIPELINE" -d "$DURATION" >"$tmp/r.json" 2>/dev/null || true
	j1=$(cpu_snapshot)
	a1=$(napi_ticks "$SRV_IF")
	jq -r --arg l "$1" --argjson sns "$(cpu_busy_ns "$j0" "$j1" 1)" \
		--argjson nap "$(((a1 - a0) * 1000000000 / hz))" --arg sb "$(cpu_busy_pct "$j0" "$j1" 1)" \
		'if .requests > 0 then "\($l)\t\(.rps | floor)\t\($sns / .requests | floor)\t\($nap / .requests | floor)\t\(.client_busy_pct)\t\($sb)\t\(.errors)" else "\($l)\tfailed" end' "$tmp/r.json"
}
echo -e "label\treq/s\tcpu_ns/req\tnapi_ns/req\tgen_busy%\tcpu1_busy%\terrors" | tee "$tmp/rows"
for _ in $(seq "$ROUNDS"); do
	for a in "$@"; do
		[ -z "$loaded" ] || $SRV "$loaded" unload "$SRV_IF" >/dev/null 2>&1 || true
		loaded=${a#*=}
		$SRV "$loaded" load "$SRV_IF" -p 8080 >/dev/null
		placement_quiet || true
		row "${a%%=*}" 8080 | tee -a "$tmp/rows"
	done
	# nginx with no XDP program on the server's veth: one there (even
	# passing nginx's frames) makes veth copy every skb for it, which
	# cost nginx 2.4x its RPS here.
	$SRV "$loaded" unload "$SRV_IF" >/dev/null 2>&1 || true
	loaded=
	placement_quiet || true
	row nginx 8081 | tee -a "$tmp/rows"
done
echo "medians over $ROUNDS rounds (ratio = nginx's median cost / the build's):"
awk -F'\t' 'NR > 1 && $2 != "failed" { n[$1]++; v[$1, n[$1]] = $3; w[$1, n[$1]] = $4; q[$1, n[$1]] = $2; if (!($1 in o)) { o[$1] = ++k; l[k] = $1 } }
	function med(a, x, m,   i, j, t, s) { for (i = 1; i <= m; i++) s[i] = a[x, i]; for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }; return s[int((m + 1) / 2)] }
	END { nc = med(v, "nginx", n["nginx"]); for (i = 1; i <= k; i++) { x = l[i]; c = med(v, x, n[x]); printf "%s: %d req/s, %d ns/req (NAPI thread %d), %.2fx nginx cost\n", x, med(q, x, n[x]), c, med(w, x, n[x]), nc / c } }' "$tmp/rows"
