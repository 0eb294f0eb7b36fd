#!/bin/bash
# tests/e2e/test_vlan.sh - VLAN-tagged frames on the xdp engine (issue 11
# part 5), end to end on the veth testbed:
#   - tagged SYNs from the client namespace (scapy: 802.1Q VID 100,
#     802.1ad+802.1Q QinQ, a VID-0 priority tag) to the service on the
#     interface blitz is loaded on: XDP passes every one untouched
#     (pass_vlan), sends no SYN-ACK (synack unchanged), and the TC hand-off
#     leaves them to the kernel (the stack untags them before TC: no drop,
#     no hand-off). The kernel, with no VLAN device for VID 100, drops
#     those; a priority-tagged SYN it takes as untagged, and its listener
#     answers: the frame reached the kernel intact; a priority-tagged
#     request with a TSecr that is no cookie gets the kernel's RST (TC did
#     not drop it as a bad cookie);
#   - blitz loaded on a VLAN sub-interface (eth.100 over the veth): where
#     the kernel has 802.1Q (CONFIG_VLAN_8021Q) a curl over the VLAN is
#     answered by XDP; SKIP otherwise.
# Only the testbed's namespaces and addresses are used.
# shellcheck disable=SC2086 # $SRV and $CLI are command prefixes
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=vlan
PORT=8080

e2e_begin "$T" "${VLAN_TB:-vlan}"
need_cmds "$T" curl || exit 0
if ! "$PY" -c 'import scapy.all' 2>/dev/null; then
	skip "${T}_tagged" "scapy is not installed for $PY (scripts/install-deps.sh)"
else
	# A kernel listener on the port: what the kernel gets, it answers.
	$SRV "$PY" -c 'import socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", '$PORT'))
s.listen(64)
time.sleep(60)' &
	LPID=$!
	on_exit "kill $LPID"
	if ! $SRV "$BLITZ" load "$SRV_IF" -p $PORT >"$TMP/load.log" 2>&1; then
		fail "${T}_load" "$(tail -1 "$TMP/load.log")"
		exit 1
	fi
	on_exit "$SRV $BLITZ unload $SRV_IF"
	SRV_MAC=$($SRV cat /sys/class/net/"$SRV_IF"/address 2>/dev/null ||
		ip -n "$SRV_NS" -o link show "$SRV_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	# tagged KIND: send 5 tagged SYNs (prio0ack: requests on no
	# connection, with a TSecr that is no cookie), print what came back:
	# "<tagged SYN-ACKs> <untagged SYN-ACKs> <RSTs>".
	tagged() {
		$CLI timeout 30 "$PY" "$E2E_ROOT/tests/e2e/vlan_probe.py" "$CLI_IF" "$CLI_IP" "$SRV_IP" "$PORT" "$SRV_MAC" "$1"
	}
	for kind in q100 qinq prio0 prio0ack; do
		v0=$(counter "$SRV_IF" pass_vlan)
		s0=$(counter "$SRV_IF" synack)
		b0=$(($(counter "$SRV_IF" drop_bad_cookie) + $(counter "$SRV_IF" drop_no_ts)))
		h0=$(($(counter "$SRV_IF" handoff) + $(counter "$SRV_IF" handoff_fail)))
		got=$(tagged $kind 2>"$TMP/tagged.err")
		v1=$(counter "$SRV_IF" pass_vlan)
		s1=$(counter "$SRV_IF" synack)
		b1=$(($(counter "$SRV_IF" drop_bad_cookie) + $(counter "$SRV_IF" drop_no_ts)))
		h1=$(($(counter "$SRV_IF" handoff) + $(counter "$SRV_IF" handoff_fail)))
		# VID 100: nobody answers (no VLAN device); VID 0: the kernel
		# (its listener, or its RST for no connection: TC left the
		# segments to it instead of dropping them as bad cookies).
		want="0 0 0"
		[ $kind = prio0 ] && want="0 5 0"
		[ $kind = prio0ack ] && want="0 0 5"
		if [ "$got" = "$want" ] && [ $((v1 - v0)) -eq 5 ] && [ "$s1" = "$s0" ] &&
			[ "$b1" = "$b0" ] && [ "$h1" = "$h0" ]; then
			pass "${T}_tagged_$kind"
		else
			fail "${T}_tagged_$kind" "SYN-ACKs tagged/untagged, RSTs '$got' (want $want) $(tail -1 "$TMP/tagged.err"); pass_vlan $v0 -> $v1 (want +5); synack $s0 -> $s1; TC drops $b0 -> $b1, hand-offs $h0 -> $h1"
		fi
	done
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
	kill $LPID 2>/dev/null
	wait $LPID 2>/dev/null
fi

# ---- blitz on a VLAN sub-interface ----
VID=100
X=${SRV_IP#10.77.}
X=${X%.1}
VS_IF=${SRV_IF}.$VID VC_IF=${CLI_IF}.$VID
VS_IP=10.76.$X.1 VC_IP=10.76.$X.2
if ! ip -n "$SRV_NS" link add link "$SRV_IF" name "$VS_IF" type vlan id $VID 2>"$TMP/vlan.err"; then
	skip "${T}_subinterface" "cannot make a VLAN device here (kernel without CONFIG_VLAN_8021Q?): $(head -1 "$TMP/vlan.err")"
	e2e_status
	exit
fi
ip -n "$CLI_NS" link add link "$CLI_IF" name "$VC_IF" type vlan id $VID
ip -n "$SRV_NS" addr add "$VS_IP/24" dev "$VS_IF"
ip -n "$CLI_NS" addr add "$VC_IP/24" dev "$VC_IF"
ip -n "$SRV_NS" link set "$VS_IF" up
ip -n "$CLI_NS" link set "$VC_IF" up
if ! $SRV "$BLITZ" load "$VS_IF" -p $PORT >"$TMP/load.log" 2>&1; then
	fail "${T}_subinterface" "blitz load $VS_IF: $(tail -1 "$TMP/load.log")"
	e2e_status
	exit
fi
on_exit "$SRV $BLITZ unload $VS_IF"
r0=$(counter "$VS_IF" requests)
body=$($CLI curl -s -m 5 "http://$VS_IP:$PORT/" 2>&1)
r1=$(counter "$VS_IF" requests)
ok=0
[ "$body" = "Hello World!" ] && [ $((r1 - r0)) -ge 1 ] && ok=1
check "${T}_subinterface" "curl over VLAN $VID: '$body', XDP requests $r0 -> $r1" [ $ok = 1 ]
e2e_status
