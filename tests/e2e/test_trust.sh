#!/bin/bash
# tests/e2e/test_trust.sh - the xdp engine trusts nothing it cannot verify
# (issue 9), end to end:
#   - only what is ours: the server namespace is a router forwarding to a
#     web server behind it ($WEB_NS) through the loaded interface; a client
#     asking that web server on the service port gets the web server's
#     page, not blitz's, while a kernel listener on the port sits on the
#     router (the TC hand-off must leave forwarded segments alone too);
#     a service address on the router's lo is answered by XDP;
#   - blind spoofs from the client namespace with scapy (ACK+GET without
#     timestamps, with a random TSecr; GET, POST, half a request): none
#     answered, none handed off, every one counted.
# Testbed prefix: $TRUST_TB (default trst) plus a third namespace and veth
# of the same prefix; all go down in the trap.
# $SRV, $CLI and $WEB are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=trust
PORT=8080

e2e_begin "$T" "${TRUST_TB:-trst}"
need_cmds "$T" curl || exit 0

# ---- the web server behind the router ----
X=${SRV_IP#10.77.}
X=${X%.1}
WEB_NS=${SRV_NS%-srv}-web
RTR_IF=${SRV_IF}r WEB_IF=${SRV_IF}w
WEB_NET=10.78.$X RTR_WEB_IP=10.78.$X.1 WEB_IP=10.78.$X.2
LO_IP=10.79.$X.1 # a service address on the router's lo
WEB="nsenter --net=/run/netns/$WEB_NS"
ip netns add "$WEB_NS"
on_exit "ip netns del '$WEB_NS'"
ip link add "$RTR_IF" netns "$SRV_NS" type veth peer name "$WEB_IF" netns "$WEB_NS"
ip -n "$WEB_NS" link set lo up
ip -n "$SRV_NS" addr add "$RTR_WEB_IP/24" dev "$RTR_IF"
ip -n "$WEB_NS" addr add "$WEB_IP/24" dev "$WEB_IF"
ip -n "$SRV_NS" link set "$RTR_IF" up
ip -n "$WEB_NS" link set "$WEB_IF" up
ip -n "$WEB_NS" route add default via "$RTR_WEB_IP"
ip -n "$SRV_NS" addr add "$LO_IP/32" dev lo
ip -n "$CLI_NS" route add "$WEB_NET.0/24" via "$SRV_IP"
ip -n "$CLI_NS" route add "$LO_IP/32" via "$SRV_IP"
$SRV sysctl -qw net.ipv4.ip_forward=1

mkdir -p "$TMP/www"
echo "the real web server behind the router" >"$TMP/www/index.html"
(cd "$TMP/www" && exec $WEB "$PY" -m http.server "$PORT" --bind "$WEB_IP" >/dev/null 2>&1) &
WEB_PID=$!
on_exit "kill $WEB_PID"
# A kernel listener on the router's service port: the TC hand-off then
# finds a listener for every 4-tuple, forwarded ones included.
$SRV "$PY" -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", '"$PORT"')); s.listen(16); time.sleep(120)' &
HOLD_PID=$!
on_exit "kill $HOLD_PID"

if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load.out" 2>&1; then
	on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
else
	fail "${T}_load" "$(tr '\n' ' ' <"$TMP/load.out")"
	exit 1
fi
if ! wait_port "$CLI" "$WEB_IP" "$PORT" 10; then
	fail "${T}_forwarded" "the web server at $WEB_IP:$PORT never answered a connect"
	exit 1
fi

# ---- forwarded traffic is never answered ----
fwd0=$(counter "$SRV_IF" pass_not_local)
req0=$(counter "$SRV_IF" requests)
out=$($CLI timeout 10 curl -s "http://$WEB_IP:$PORT/" 2>&1)
fwd1=$(counter "$SRV_IF" pass_not_local)
req1=$(counter "$SRV_IF" requests)
if [ "$out" = "the real web server behind the router" ] &&
	[ "$fwd1" -gt "$fwd0" ] && [ "$req1" = "$req0" ]; then
	pass "${T}_forwarded_untouched"
else
	fail "${T}_forwarded_untouched" "got '$out'; pass_not_local $fwd0 -> $fwd1, requests $req0 -> $req1"
fi

# ---- a service address on lo is ours, answered by XDP ----
out=$($CLI timeout 10 curl -s "http://$LO_IP:$PORT/" 2>&1)
req2=$(counter "$SRV_IF" requests)
if [ "$out" = "Hello World!" ] && [ "$req2" -gt "$req1" ]; then
	pass "${T}_lo_address_served"
else
	fail "${T}_lo_address_served" "got '$out'; requests $req1 -> $req2"
fi
# and the router's own address on the loaded interface
out=$($CLI timeout 10 curl -s "http://$SRV_IP:$PORT/" 2>&1)
check "${T}_own_address_served" "got '$out'" [ "$out" = "Hello World!" ]

# ---- blind spoofs from the client namespace ----
if ! "$PY" -c 'import scapy.all' 2>/dev/null; then
	skip "${T}_spoofs" "scapy is not installed for $PY (scripts/install-deps.sh)"
	exit 0
fi
# spoof KIND N: N blind ACK+data segments, then one real SYN as the
# control that the sniffer sees what the server sends; prints "A S": the
# answers that carried data or FIN, and the SYN-ACKs seen (must be 1).
spoof() {
	$CLI timeout 60 "$PY" - "$CLI_IF" "$CLI_IP" "$SRV_IP" "$PORT" "$1" "$2" <<'EOF'
import random, sys, time
from scapy.all import AsyncSniffer, Ether, IP, TCP, conf, sendp, get_if_hwaddr
conf.verb = 0
ifc, src, dst, port, kind, n = sys.argv[1:]
port, n = int(port), int(n)
rnd = random.Random(9)
sn = AsyncSniffer(iface=ifc, filter="tcp and src host %s and src port %d" % (dst, port))
sn.start()
time.sleep(0.5)
bodies = [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
          b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
          b"GET / HTTP/1.1\r\nHost: x\r\n"]
frames = []
for i in range(n):
    opts = []
    if kind == "tsecr":
        opts = [("NOP", None), ("NOP", None), ("Timestamp", (rnd.getrandbits(32), rnd.getrandbits(32)))]
    frames.append(IP(src=src, dst=dst) / TCP(sport=rnd.randrange(20000, 60000), dport=port,
                  flags="PA", seq=rnd.getrandbits(32), ack=rnd.getrandbits(32),
                  options=opts) / bodies[i % 3])
frames.append(IP(src=src, dst=dst) / TCP(sport=19999, dport=port, flags="S", seq=1))
from scapy.all import send
send(frames, iface=ifc, inter=0)
time.sleep(1.5)
got = [p for p in sn.stop() if TCP in p]
bad = [p for p in got if len(p[TCP].payload) > 0 or p[TCP].flags & 0x01]
synack = [p for p in got if p[TCP].flags & 0x12 == 0x12 and p[TCP].dport == 19999]
print(len(bad), len(synack))
EOF
}
for kind in nots tsecr; do
	d0=$(counter "$SRV_IF" drop_no_ts)
	b0=$(counter "$SRV_IF" drop_bad_cookie)
	r0=$(counter "$SRV_IF" requests)
	h0=$(counter "$SRV_IF" handoff)
	got=$(spoof "$kind" 300 2>"$TMP/spoof.err")
	d1=$(counter "$SRV_IF" drop_no_ts)
	b1=$(counter "$SRV_IF" drop_bad_cookie)
	r1=$(counter "$SRV_IF" requests)
	h1=$(counter "$SRV_IF" handoff)
	dropped=$((d1 - d0 + b1 - b0))
	if [ "$got" = "0 1" ] && [ "$dropped" -ge 300 ] && [ "$r1" = "$r0" ] && [ "$h1" = "$h0" ]; then
		pass "${T}_spoofs_$kind"
	else
		fail "${T}_spoofs_$kind" "answers with data, SYN-ACKs: '$got' (want 0 1) ($(tail -1 "$TMP/spoof.err")); dropped $dropped of 300; requests $r0 -> $r1; handoff $h0 -> $h1"
	fi
done
e2e_status
