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

need_root "$T"
if [ ! -x "$BLITZ" ]; then
	fail "${T}_build" "$BLITZ is missing: run make"
	exit 1
fi
if ! tb_up "${XDP_TB:-e2exdp}"; then
	fail "${T}_testbed" "scripts/testbed.sh up failed"
	exit 1
fi
TMP=$(mktemp -d)
on_exit "rm -rf '$TMP'"
URL="http://$SRV_IP:$PORT/"
URL6="http://[$SRV_IP6]:$PORT/"

# ---- load ----
if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load.out" 2>&1 &&
	grep -q "serving http on $SRV_IF port $PORT" "$TMP/load.out" &&
	has_xdp "$SRV_IF"; then
	pass "${T}_load"
	on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
else
	fail "${T}_load" "$(tr '\n' ' ' <"$TMP/load.out")"
	exit 1
fi

if [ -z "$($SRV ss -Hltn "sport = :$PORT")" ]; then
	pass "${T}_no_kernel_listener"
else
	fail "${T}_no_kernel_listener" "something listens on $PORT in $SRV_NS"
fi
req0=$(counter "$SRV_IF" requests)

# ---- real clients ----
# curl GET: body and the contract's headers, Date current to the second.
if $CLI timeout 10 curl -sS -D "$TMP/h" -o "$TMP/b" "$URL" 2>"$TMP/e"; then
	why=
	[ "$(cat "$TMP/b")" = "$BODY" ] || why="body '$(head -c 80 "$TMP/b")'"
	head -1 "$TMP/h" | grep -q '^HTTP/1.1 200 OK' || why="$why status '$(head -1 "$TMP/h")'"
	for hdr in Server Date Content-Type Content-Length; do
		grep -qi "^$hdr: " "$TMP/h" || why="$why no $hdr"
	done
	grep -qi '^Content-Length: 12' "$TMP/h" || why="$why bad Content-Length"
	date_hdr=$(grep -i '^Date: ' "$TMP/h" | cut -d' ' -f2- | tr -d '\r')
	skew=$("$PY" -c 'import sys,time,email.utils as e
print(abs(int(e.parsedate_to_datetime(sys.argv[1]).timestamp() - time.time())))' "$date_hdr" 2>/dev/null || echo 999)
	[ "$skew" -le 2 ] || why="$why Date '$date_hdr' off by ${skew}s"
	if [ -z "$why" ]; then pass "${T}_curl_get"; else fail "${T}_curl_get" "$why"; fi
else
	fail "${T}_curl_get" "curl: $(tr '\n' ' ' <"$TMP/e")"
fi

# curl -I: HEAD gets the headers, Content-Length of the GET, no body.
if $CLI timeout 10 curl -sS -I "$URL" >"$TMP/h" 2>"$TMP/e" &&
	head -1 "$TMP/h" | grep -q '^HTTP/1.1 200' &&
	grep -qi '^Content-Length: 12' "$TMP/h"; then
	pass "${T}_curl_head"
else
	fail "${T}_curl_head" "$(cat "$TMP/e"; head -c 200 "$TMP/h")"
fi

# HTTP/1.0 without keep-alive: Connection: close, and the server closes.
if $CLI timeout 10 curl -sS --http1.0 -D "$TMP/h" -o "$TMP/b" "$URL" 2>"$TMP/e" &&
	[ "$(cat "$TMP/b")" = "$BODY" ] && grep -qi '^Connection: close' "$TMP/h"; then
	pass "${T}_http10_close"
else
	fail "${T}_http10_close" "$(cat "$TMP/e"; head -c 200 "$TMP/h")"
fi

if [ "$($CLI timeout 10 curl -sS -g "$URL6" 2>"$TMP/e")" = "$BODY" ]; then
	pass "${T}_curl_ipv6"
else
	fail "${T}_curl_ipv6" "curl over IPv6: $(tr '\n' ' ' <"$TMP/e")"
fi

if need_cmds "${T}_wget" wget; then
	if [ "$($CLI timeout 10 wget -q -O - "$URL" 2>"$TMP/e")" = "$BODY" ]; then
		pass "${T}_wget"
	else
		fail "${T}_wget" "wget: $(tr '\n' ' ' <"$TMP/e")"
	fi
fi

# Three requests on one keep-alive connection: one local port seen by
# http.client (it reconnects silently if the server closed) and exactly
# one SYN-ACK sent for the three.
cat >"$TMP/ka.py" <<'PYEOF'
import http.client, sys
c = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=5)
ports = set()
for i in range(3):
    c.request("GET", "/ka%d" % i)
    r = c.getresponse()
    body = r.read()
    if r.status != 200 or body != b"Hello World!":
        print("response %d: %d %r" % (i, r.status, body[:60]))
        sys.exit(1)
    ports.add(c.sock.getsockname()[1])
c.close()
print(len(ports))
PYEOF
syn0=$(counter "$SRV_IF" synack)
out=$($CLI timeout 15 "$PY" "$TMP/ka.py" "$SRV_IP" "$PORT" 2>&1 | tail -1)
syn1=$(counter "$SRV_IF" synack)
if [ "$out" = 1 ] && [ $((syn1 - syn0)) -eq 1 ]; then
	pass "${T}_python_keepalive"
else
	fail "${T}_python_keepalive" "connections used: '$out', SYN-ACKs sent: $((syn1 - syn0))"
fi

if need_cmds "${T}_wrk" wrk; then
	$CLI timeout 20 wrk -t1 -c10 -d5s --timeout 2s "$URL" >"$TMP/wrk" 2>&1
	reqs=$(awk '/requests in/ {print $1}' "$TMP/wrk")
	if [ -n "$reqs" ] && [ "$reqs" -gt 0 ] &&
		! grep -qE 'Socket errors|Non-2xx' "$TMP/wrk"; then
		pass "${T}_wrk"
	else
		fail "${T}_wrk" "$(grep -E 'requests in|errors|Non-2xx' "$TMP/wrk" | tr '\n' ' ')"
	fi
fi

# ab_run NAME ARGS... - 1000 requests, all complete, none failed.
ab_run() {
	local name=$1
	shift
	$CLI timeout 30 ab -q "$@" -n 1000 -c 10 -s 5 "$URL" >"$TMP/ab" 2>&1
	if grep -qE '^Complete requests: +1000$' "$TMP/ab" &&
		grep -qE '^Failed requests: +0$' "$TMP/ab" &&
		! grep -q '^Non-2xx' "$TMP/ab"; then
		pass "$name"
	else
		fail "$name" "$(grep -E 'Complete|Failed|Non-2xx|apr_' "$TMP/ab" | tr '\n' ' ')"
	fi
}
if need_cmds "${T}_ab" ab; then
	ab_run "${T}_ab"
	ab_run "${T}_ab_keepalive" -k
fi

# ---- the answers came from XDP ----
req1=$(counter "$SRV_IF" requests)
synack=$(counter "$SRV_IF" synack)
if [ "$req1" -gt "$req0" ] && [ "$req1" -ge 2000 ] && [ "$synack" -gt 0 ]; then
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
cli_error() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$($SRV "$BLITZ" "$@" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
		printf '%s\n' "$out" | grep -q -- "$pat"; then
		pass "$name"
	else
		fail "$name" "rc $rc, said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
}
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

e2e_status
