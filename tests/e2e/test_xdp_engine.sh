#!/bin/bash
# tests/e2e/test_xdp_engine.sh - the xdp engine end to end: `blitz load` on
# the server veth of a two-namespace testbed, real clients (curl, wget,
# python http.client, wrk, ab) in the client namespace, the host traffic
# that must keep working while it is loaded (ping, ARP, another TCP port),
# the counters, status, the CLI's errors, and an unload that leaves nothing.
#
# Nothing listens on the service port in the server namespace, so every
# answer comes from the XDP program (and the counters must say so).
# Testbed prefix: $XDP_TB (default e2exdp). Every client runs under
# `timeout`; the testbed goes down in a trap.
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=xdp_engine
PORT=8080
OTHER_PORT=9090
BODY="Hello World!"

e2e_begin "$T" "${XDP_TB:-e2exdp}"
URL="http://$SRV_IP:$PORT/"
URL6="http://[$SRV_IP6]:$PORT/"

# ---- load ----
e2e_load "$T" -p "$PORT"
check "${T}_load_line" "$(tr '\n' ' ' <"$TMP/load.out")" grep -q "serving http on $SRV_IF port $PORT" "$TMP/load.out"

if [ -z "$($SRV ss -Hltn "sport = :$PORT")" ]; then
	pass "${T}_no_kernel_listener"
else
	fail "${T}_no_kernel_listener" "something listens on $PORT in $SRV_NS"
fi
req0=$(counter "$SRV_IF" requests)

# ---- real clients (lib.sh) ----
# Keep-alive: exactly one SYN-ACK sent for all its requests.
RC_SYNACK_IF=$SRV_IF real_clients "$T" "$SRV_IP" "$PORT" "$SRV_IP6"

# ---- the answers came from XDP (ab alone made 4000 requests) ----
req1=$(counter "$SRV_IF" requests)
synack=$(counter "$SRV_IF" synack)
if [ $((req1 - req0)) -ge 4000 ] && [ "$synack" -gt 0 ]; then
	pass "${T}_counters"
else
	fail "${T}_counters" "requests $req0 -> $req1, synack $synack"
fi

$SRV "$BLITZ" status >"$TMP/st" 2>&1
if grep -qE "^$SRV_IF +(native|skb) +xdp +[^ ]+ +load +[0-9]+ +$PORT " "$TMP/st"; then
	pass "${T}_status"
else
	fail "${T}_status" "$(tr '\n' '|' <"$TMP/st")"
fi

# ---- host traffic while loaded ----
if $CLI timeout 10 ping -c 2 -W 2 -q "$SRV_IP" >/dev/null 2>&1; then
	pass "${T}_ping"
else
	fail "${T}_ping" "no echo reply from $SRV_IP"
fi

$CLI ip neigh flush dev "$CLI_IF" >/dev/null 2>&1
$CLI timeout 10 ping -c 1 -W 2 -q "$SRV_IP" >/dev/null 2>&1
if $CLI ip neigh show "$SRV_IP" dev "$CLI_IF" | grep -q lladdr; then
	pass "${T}_arp"
else
	fail "${T}_arp" "no ARP entry for $SRV_IP after a flush: $($CLI ip neigh show dev "$CLI_IF")"
fi

mkdir -p "$TMP/www" && echo other-port >"$TMP/www/index.txt"
(cd "$TMP/www" && exec $SRV "$PY" -m http.server "$OTHER_PORT" --bind "$SRV_IP" >/dev/null 2>&1) &
other_pid=$!
on_exit "kill $other_pid"
if wait_port "$CLI" "$SRV_IP" "$OTHER_PORT" 5 &&
	[ "$($CLI timeout 10 curl -sS "http://$SRV_IP:$OTHER_PORT/index.txt" 2>&1)" = other-port ]; then
	pass "${T}_other_tcp_port"
else
	fail "${T}_other_tcp_port" "the kernel's server on $OTHER_PORT did not answer"
fi
kill "$other_pid" 2>/dev/null
wait "$other_pid" 2>/dev/null

# ---- CLI errors: one line, non-zero, nothing changed ----
# cli_error NAME PATTERN ARGS... - blitz ARGS fails with one line matching.
cli_error "${T}_err_unknown_if" "no interface 'nosuchif0'" load nosuchif0
cli_error "${T}_err_bad_port" "bad port" load "$SRV_IF" -p 70000
cli_error "${T}_err_bad_addr" "bad address" load "$SRV_IF" -a 10.1.2
cli_error "${T}_err_unknown_opt" "unknown option" load "$SRV_IF" --frobnicate
cli_error "${T}_err_no_ifname" "missing <ifname>" load
cli_error "${T}_err_already_loaded" "already loaded on $SRV_IF" load "$SRV_IF" -p "$PORT"

# ---- unload leaves nothing ----
out=$($SRV "$BLITZ" unload "$SRV_IF" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && ! has_xdp "$SRV_IF" && [ ! -e "/sys/fs/bpf/blitz/$SRV_IF" ]; then
	pass "${T}_unload"
else
	fail "${T}_unload" "rc $rc ($out); xdp still attached or pins left"
fi
if [ "$($CLI timeout 5 curl -sS -m 3 "$URL" 2>&1)" != "$BODY" ]; then
	pass "${T}_unload_stops_serving"
else
	fail "${T}_unload_stops_serving" "still answered after unload"
fi
cli_error "${T}_err_unload_twice" "nothing loaded on $SRV_IF" unload "$SRV_IF"

# skb (generic) mode, one address, another body: the config reaches the
# program (the IPv6 address is not served, and nothing else listens).
if $SRV "$BLITZ" load "$SRV_IF" -m skb -p "$PORT" -a "$SRV_IP" --body "skb mode" \
	>"$TMP/load.out" 2>&1; then
	b4=$($CLI timeout 10 curl -sS "$URL" 2>&1)
	b6=$($CLI timeout 10 curl -sS -m 3 -g "$URL6" 2>&1)
	$SRV "$BLITZ" status "$SRV_IF" >"$TMP/st" 2>&1
	if [ "$b4" = "skb mode" ] && [ "$b6" != "skb mode" ] &&
		grep -qE "^$SRV_IF +skb +xdp .* $SRV_IP " "$TMP/st"; then
		pass "${T}_skb_mode_addr_body"
	else
		fail "${T}_skb_mode_addr_body" "v4 '$b4', v6 '$b6', status $(tail -1 "$TMP/st")"
	fi
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
else
	fail "${T}_skb_mode_addr_body" "$(cat "$TMP/load.out")"
fi

# A body that cannot fit one segment: refused, nothing attached or pinned.
big=$(head -c 2000 /dev/zero | tr '\0' x)
cli_error "${T}_err_body_too_big" "at most [0-9]* bytes" load "$SRV_IF" -p "$PORT" --body "$big"
if ! has_xdp "$SRV_IF" && [ ! -e "/sys/fs/bpf/blitz/$SRV_IF" ]; then
	pass "${T}_failed_load_leaves_nothing"
else
	fail "${T}_failed_load_leaves_nothing" "an XDP program or pins were left behind"
fi

# A counters map pinned in the older layout (an entry per counter, value 8
# bytes, as an older blitz pinned it): stats refuses it with a line that
# says so and prints no counter read from it; Prometheus leaves it out.
refused_old() { [ "$1" -ne 0 ] && grep -q "another layout" <<<"$2" && ! grep -q "^rx_frames" <<<"$2"; }
left_out() { ! grep -q "interface=\"$SRV_IF\"" <<<"$1"; }
pin=/sys/fs/bpf/blitz/$SRV_IF
mkdir -p "$pin" && on_exit "rm -rf '$pin'"
if bpftool map create "$pin/counters" type percpu_array key 4 value 8 \
	entries 64 name counters 2>/dev/null; then
	# shellcheck disable=SC2086 # $SRV is a command prefix
	out=$($SRV "$BLITZ" stats "$SRV_IF" 2>&1)
	rc=$?
	check "${T}_stats_refuses_old_layout" "rc $rc, said: $(printf '%s' "$out" | tr '\n' '|')" \
		refused_old "$rc" "$out"
	# shellcheck disable=SC2086
	out=$($SRV "$BLITZ" stats --prometheus 2>&1)
	check "${T}_prometheus_skips_old_layout" "said: $(grep "$SRV_IF" <<<"$out" | head -3 | tr '\n' '|')" \
		left_out "$out"
else
	skip "${T}_stats_refuses_old_layout" "bpftool could not create a per-CPU array map"
fi
rm -rf "$pin"

e2e_status
