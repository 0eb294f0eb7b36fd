#!/bin/bash
# tests/e2e/test_netns_isolation.sh - blitz in one network namespace never
# touches blitz in another. Two testbeds, A and B: each server veth is
# ifindex 2 in its own namespace, the collision that once let `blitz
# unload` in A detach B's XDP link and TC hand-off (link info carries a bare
# ifindex). Checked: unload in A leaves B's XDP program and hand-off
# attached and answering; load + unload in A leave B's `blitz serve`
# alone; and pins, which are per interface NAME and shared by every
# namespace, are neither removed nor reused from a namespace with an
# interface of the same name (unload, load and status all say "another
# network namespace"). Last, `blitz serve --engine afxdp` with a 64 KiB
# body: the loader must not require it to fit an XDP template.
#
# Prefix: $NETNS_TB (default h8n); the testbeds are ${NETNS_TB}a and
# ${NETNS_TB}b. Every client runs under `timeout`; both testbeds go down
# in a trap. $A_SRV etc. are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=netns
PORT=8080
BODY="Hello World!"
P=${NETNS_TB:-h8n}

need_root "$T"
need_blitz "$T"
TMP=$(mktemp -d)
# B by hand (lib.sh's tb_up keeps one testbed), A through tb_up.
if ! BUILD=$BUILD scripts/testbed.sh up "${P}b" >"$TMP/b.env" 2>&1; then
	fail "${T}_testbed" "scripts/testbed.sh up ${P}b: $(tr '\n' ' ' <"$TMP/b.env")"
	rm -rf "$TMP"
	exit 1
fi
eval "$(cat "$TMP/b.env")"
B_SRV=$SRV B_CLI=$CLI B_IF=$SRV_IF B_IP=$SRV_IP
if ! tb_up "${P}a"; then
	fail "${T}_testbed" "scripts/testbed.sh up ${P}a failed"
	scripts/testbed.sh down "${P}b"
	rm -rf "$TMP"
	exit 1
fi
A_SRV=$SRV A_CLI=$CLI A_IF=$SRV_IF A_IP=$SRV_IP
on_exit "rm -rf '$TMP'"
on_exit "'$E2E_ROOT/scripts/testbed.sh' down '${P}b'"
on_exit "$A_SRV '$BLITZ' unload '$A_IF'"
on_exit "$B_SRV '$BLITZ' unload '$B_IF'"
# Pins are global: a killed earlier run's must not be taken for ours.
rm -rf "/sys/fs/bpf/blitz/$A_IF" "/sys/fs/bpf/blitz/$B_IF"

# (nsenter --net keeps the host's /sys: ask netlink.)
ifindex() { $1 ip -o link show dev "$2" 2>/dev/null | cut -d: -f1; }
xdp_id() { # NS_PREFIX IFNAME: the XDP program id attached there, or ""
	$1 ip -d link show dev "$2" 2>/dev/null |
		sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -1
}
answered() { # CLI_PREFIX IP
	[ "$($1 timeout 5 curl -sS -m 3 "http://$2:$PORT/" 2>/dev/null)" = "$BODY" ]
}
# status_row NS_PREFIX IFNAME: that interface's row of `blitz status`.
status_row() { $1 "$BLITZ" status 2>&1 | grep -E "^$2 "; }
handoff_on() { # NS_PREFIX IFNAME: status there says the hand-off is on
	status_row "$1" "$2" | awk '{ exit !($4 == "tc" || $4 == "n/a") }'
}
# The kernel has the hand-off (then a loaded one is pinned as tc_link).
tc_ok() { [ -e "/sys/kernel/btf/vmlinux" ] && grep -qa bpf_sk_assign_tcp_reqsk /sys/kernel/btf/vmlinux; }

ia=$(ifindex "$A_SRV" "$A_IF") ib=$(ifindex "$B_SRV" "$B_IF")
if [ -n "$ia" ] && [ "$ia" = "$ib" ]; then
	pass "${T}_same_ifindex"
else
	# Still worth running, but the collision is not exercised.
	fail "${T}_same_ifindex" "ifindex $ia in A, $ib in B: the test needs them equal"
fi

# ---- load in both, unload in A ----
if ! $A_SRV "$BLITZ" load "$A_IF" -p "$PORT" >"$TMP/la" 2>&1 ||
	! $B_SRV "$BLITZ" load "$B_IF" -p "$PORT" >"$TMP/lb" 2>&1; then
	fail "${T}_load_both" "A: $(cat "$TMP/la") B: $(cat "$TMP/lb")"
	exit 1
fi
b_prog=$(xdp_id "$B_SRV" "$B_IF")
if answered "$A_CLI" "$A_IP" && answered "$B_CLI" "$B_IP" &&
	handoff_on "$A_SRV" "$A_IF" && handoff_on "$B_SRV" "$B_IF"; then
	pass "${T}_load_both"
else
	fail "${T}_load_both" "A: $(status_row "$A_SRV" "$A_IF") B: $(status_row "$B_SRV" "$B_IF")"
fi

out=$($A_SRV "$BLITZ" unload "$A_IF" 2>&1)
if [ -z "$(xdp_id "$A_SRV" "$A_IF")" ] && [ ! -e "/sys/fs/bpf/blitz/$A_IF" ]; then
	pass "${T}_unload_a"
else
	fail "${T}_unload_a" "unload said '$out'; A still has XDP or pins"
fi
if [ -n "$b_prog" ] && [ "$(xdp_id "$B_SRV" "$B_IF")" = "$b_prog" ] &&
	[ -e "/sys/fs/bpf/blitz/$B_IF/config" ] && answered "$B_CLI" "$B_IP"; then
	pass "${T}_unload_a_leaves_b_xdp"
else
	fail "${T}_unload_a_leaves_b_xdp" "B's prog was '$b_prog', now '$(xdp_id "$B_SRV" "$B_IF")'"
fi
if handoff_on "$B_SRV" "$B_IF" && { ! tc_ok || [ -e "/sys/fs/bpf/blitz/$B_IF/tc_link" ]; }; then
	pass "${T}_unload_a_leaves_b_handoff"
else
	fail "${T}_unload_a_leaves_b_handoff" "B: $(status_row "$B_SRV" "$B_IF")"
fi
# A's second unload finds nothing in A (B's ifindex 2 is not A's).
out=$($A_SRV "$BLITZ" unload "$A_IF" 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && printf '%s' "$out" | grep -q "nothing loaded on $A_IF" &&
	[ "$(xdp_id "$B_SRV" "$B_IF")" = "$b_prog" ] && handoff_on "$B_SRV" "$B_IF"; then
	pass "${T}_unload_a_twice"
else
	fail "${T}_unload_a_twice" "rc $rc, said '$out'"
fi
# A load in A while B has its hand-off on ifindex 2 too.
if $A_SRV "$BLITZ" load "$A_IF" -p "$PORT" >"$TMP/la" 2>&1 && answered "$A_CLI" "$A_IP" &&
	handoff_on "$A_SRV" "$A_IF"; then
	pass "${T}_load_a_beside_b"
else
	fail "${T}_load_a_beside_b" "$(cat "$TMP/la")"
fi
$B_SRV "$BLITZ" unload "$B_IF" >/dev/null 2>&1
if [ -n "$(xdp_id "$A_SRV" "$A_IF")" ] && answered "$A_CLI" "$A_IP" && handoff_on "$A_SRV" "$A_IF"; then
	pass "${T}_unload_b_leaves_a"
else
	fail "${T}_unload_b_leaves_a" "A: $(status_row "$A_SRV" "$A_IF")"
fi

# ---- an interface of the same name in B ----
# Pins live at /sys/fs/bpf/blitz/<name>, seen from every namespace.
$B_SRV ip link add "$A_IF" type veth peer name "${A_IF}x" &&
	$B_SRV ip link set "$A_IF" up
out=$($B_SRV "$BLITZ" unload "$A_IF" 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && printf '%s' "$out" | grep -q "another network namespace" &&
	[ -e "/sys/fs/bpf/blitz/$A_IF/config" ] && answered "$A_CLI" "$A_IP" &&
	handoff_on "$A_SRV" "$A_IF"; then
	pass "${T}_same_name_unload_refused"
else
	fail "${T}_same_name_unload_refused" "rc $rc, said '$out'; A: $(status_row "$A_SRV" "$A_IF")"
fi
out=$($B_SRV "$BLITZ" load "$A_IF" -p "$PORT" 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && printf '%s' "$out" | grep -q "already loaded on $A_IF in another network namespace" &&
	[ -z "$(xdp_id "$B_SRV" "$A_IF")" ] && answered "$A_CLI" "$A_IP"; then
	pass "${T}_same_name_load_refused"
else
	fail "${T}_same_name_load_refused" "rc $rc, said '$out'"
fi
$B_SRV "$BLITZ" status "$A_IF" >"$TMP/st" 2>&1
if grep -q "$A_IF: loaded in another network namespace" "$TMP/st" &&
	status_row "$A_SRV" "$A_IF" | grep -qE " load +[0-9]+ +$PORT "; then
	pass "${T}_same_name_status"
else
	fail "${T}_same_name_status" "$(tr '\n' '|' <"$TMP/st")"
fi
$B_SRV ip link del "$A_IF" 2>/dev/null
$A_SRV "$BLITZ" unload "$A_IF" >/dev/null 2>&1

# ---- blitz serve in B, load + unload in A ----
: >"$TMP/serve.log"
$B_SRV "$BLITZ" serve "$B_IF" --engine xdp -p "$PORT" >"$TMP/serve.log" 2>&1 &
serve_pid=$!
on_exit "kill -9 $serve_pid"
wait_line "$TMP/serve.log" "tier xdp" "$serve_pid" 10
s_prog=$(xdp_id "$B_SRV" "$B_IF")
if [ -n "$s_prog" ] && answered "$B_CLI" "$B_IP"; then
	$A_SRV "$BLITZ" load "$A_IF" -p "$PORT" >"$TMP/la" 2>&1
	a_ok=$?
	answered "$A_CLI" "$A_IP" || a_ok=1
	$A_SRV "$BLITZ" unload "$A_IF" >"$TMP/ua" 2>&1 || a_ok=1
	if [ "$a_ok" -eq 0 ] && [ "$(xdp_id "$B_SRV" "$B_IF")" = "$s_prog" ] &&
		answered "$B_CLI" "$B_IP" &&
		status_row "$B_SRV" "$B_IF" | grep -qE " serve +$s_prog " &&
		handoff_on "$B_SRV" "$B_IF"; then
		pass "${T}_serve_b_survives_a"
	else
		fail "${T}_serve_b_survives_a" "A: $(cat "$TMP/la" "$TMP/ua"); B: $(status_row "$B_SRV" "$B_IF")"
	fi
else
	fail "${T}_serve_b_survives_a" "serve did not start: $(tr '\n' ' ' <"$TMP/serve.log")"
fi
stop_pid "$serve_pid" INT 5

# ---- afxdp: the body need not fit an XDP template ----
head -c 65536 /dev/urandom >"$TMP/body64k"
want=$(sha256sum <"$TMP/body64k" | cut -d' ' -f1)
# The loader alone, through its API (tests/helpers/loader_attach.c): afxdp
# mode takes the 64 KiB body and leaves the (unused) templates empty (mode
# 1 is BLITZ_MODE_AFXDP); xdp mode still refuses it.
if ! attach=$(helper loader_attach 2>"$TMP/cc.log"); then
	fail "${T}_afxdp_loader_big_body" "$(head -3 "$TMP/cc.log")"
else
	afx=$($A_SRV "$attach" "$A_IF" 1 "$TMP/body64k" 2>&1)
	afx_rc=$?
	xdp=$($A_SRV "$attach" "$A_IF" 0 "$TMP/body64k" 2>&1)
	xdp_rc=$?
	if [ "$afx_rc" -eq 0 ] && [ "$afx" = "mode 1 body 65536 template 0" ] &&
		[ "$xdp_rc" -eq 1 ] && printf '%s' "$xdp" | grep -q "does not fit one segment" &&
		[ -z "$(xdp_id "$A_SRV" "$A_IF")" ] && [ ! -e "/sys/fs/bpf/blitz/$A_IF" ]; then
		pass "${T}_afxdp_loader_big_body"
	else
		fail "${T}_afxdp_loader_big_body" "afxdp: rc $afx_rc '$afx'; xdp: rc $xdp_rc '$xdp'"
	fi
fi
: >"$TMP/afxdp.log"
$A_SRV "$BLITZ" serve "$A_IF" --engine afxdp -p "$PORT" --body-file "$TMP/body64k" \
	--content-type application/octet-stream >"$TMP/afxdp.log" 2>&1 &
serve_pid=$!
on_exit "kill -9 $serve_pid"
wait_line "$TMP/afxdp.log" "^afxdp: $A_IF" "$serve_pid" 10
if grep -q "does not fit one segment" "$TMP/afxdp.log"; then
	fail "${T}_afxdp_big_body" "the loader refused it: $(head -1 "$TMP/afxdp.log")"
elif grep -q "^afxdp: $A_IF" "$TMP/afxdp.log"; then
	got=$($A_CLI timeout 10 curl -sS -m 8 "http://$A_IP:$PORT/" 2>/dev/null | sha256sum | cut -d' ' -f1)
	if [ "$got" = "$want" ]; then
		pass "${T}_afxdp_big_body"
	else
		fail "${T}_afxdp_big_body" "the 64 KiB body did not arrive intact"
	fi
elif grep -q "response template" "$TMP/afxdp.log"; then
	# userspace/http.c's limit (another part), not the loader's.
	skip "${T}_afxdp_big_body" "the response builder still refuses it: $(head -1 "$TMP/afxdp.log")"
else
	fail "${T}_afxdp_big_body" "$(tr '\n' ' ' <"$TMP/afxdp.log" | cut -c1-200)"
fi
stop_pid "$serve_pid" INT 5

e2e_status
