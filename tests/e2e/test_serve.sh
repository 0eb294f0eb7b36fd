#!/bin/bash
# tests/e2e/test_serve.sh - `blitz serve <ifname>`, the foreground command:
# the xdp tier with the epoll listener behind it (answers, counters,
# status, what the fast path passes reaching the kernel on the same
# connection), SIGTERM detaching everything, SIGKILL leaving only what
# `blitz status` reports and `blitz unload` removes, auto falling back to
# epoll alone when XDP cannot attach, and argument errors that attach
# nothing.
# SERVE_TB sets the testbed prefix (default h4av).
#
# Every client runs under `timeout`; the testbed goes down in a trap.
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_epoll.sh
source "$(dirname "$0")/lib_epoll.sh"

T=serve
PORT=8080
BODY="Hello World!"

need_root "$T"
if [ ! -x "$BLITZ" ]; then
	fail "${T}_build" "$BLITZ is missing: run make"
	exit 1
fi
if ! tb_up "${SERVE_TB:-h4av}"; then
	fail "${T}_testbed" "scripts/testbed.sh up failed"
	exit 1
fi
TMP=$(mktemp -d)
on_exit "rm -rf '$TMP'"
on_exit "$SRV '$BLITZ' unload '$SRV_IF'"
URL="http://$SRV_IP:$PORT/"
PINS=/sys/fs/bpf/blitz/$SRV_IF
write_raw_client "$TMP/raw.py"

nothing_left() { ! has_xdp "$SRV_IF" && [ ! -e "$PINS" ]; }
answered() { [ "$($CLI timeout 5 curl -sS -m 3 "$URL" 2>/dev/null)" = "$BODY" ]; }

# ---- engine xdp ----
serve_start "$TMP/xdp.log" "$SRV_IF" --engine xdp -p "$PORT"
if serve_wait_line "tier xdp (native) + epoll fallback" 20 && has_xdp "$SRV_IF"; then
	pass "${T}_xdp_tier_line"
else
	fail "${T}_xdp_tier_line" "$(tr '\n' ' ' <"$TMP/xdp.log")"
	serve_stop KILL 5
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
	exit 1
fi
if [ -n "$($SRV ss -Hltn "sport = :$PORT")" ]; then
	pass "${T}_xdp_epoll_listener"
else
	fail "${T}_xdp_epoll_listener" "nothing listens on $PORT behind XDP"
fi
req0=$(counter "$SRV_IF" requests)
ok=1
for i in 1 2 3; do answered || ok=; done
req1=$(counter "$SRV_IF" requests)
if [ -n "$ok" ] && [ "$req1" -gt "$req0" ]; then
	pass "${T}_xdp_answers"
else
	fail "${T}_xdp_answers" "curl ok='$ok', XDP requests $req0 -> $req1"
fi
$SRV "$BLITZ" status >"$TMP/st" 2>&1
if grep -E "^$SRV_IF " "$TMP/st" | grep -qE " native .* xdp .* serve .* $PORT "; then
	pass "${T}_xdp_status"
else
	fail "${T}_xdp_status" "$(tr '\n' '|' <"$TMP/st")"
fi

# What XDP does not answer reaches the epoll listener on the same
# connection through the TC hand-off (when this kernel has it).
if grep -q "no TC hand-off\|without the TC hand-off" "$TMP/xdp.log"; then
	skip "${T}_xdp_handoff" "$(grep -m1 "hand-off" "$TMP/xdp.log")"
else
	h0=$(counter "$SRV_IF" handoff)
	$CLI timeout 30 "$PY" "$TMP/raw.py" "$SRV_IP" "$PORT" "${T}_xdp" \
		post_405_close,post_after_two_gets,split_request,headers_5k,http2_preface_505 >"$TMP/raw" 2>&1
	cat "$TMP/raw"
	grep -q '^FAIL ' "$TMP/raw" && E2E_FAILED=1
	grep -qE '^(PASS|FAIL) ' "$TMP/raw" || fail "${T}_xdp_raw" "$(tr '\n' ' ' <"$TMP/raw")"
	h1=$(counter "$SRV_IF" handoff)
	if [ "$h1" -gt "$h0" ]; then
		pass "${T}_xdp_handoff_counter"
	else
		fail "${T}_xdp_handoff_counter" "handoff $h0 -> $h1"
	fi
fi

if serve_stop TERM 10 && [ "$SERVE_RC" -eq 0 ]; then
	pass "${T}_xdp_sigterm_exit0"
else
	fail "${T}_xdp_sigterm_exit0" "rc $SERVE_RC: $(tail -3 "$TMP/xdp.log" | tr '\n' ' ')"
fi
if nothing_left; then
	pass "${T}_xdp_sigterm_detached"
else
	fail "${T}_xdp_sigterm_detached" "XDP or pins left: $($SRV ip link show "$SRV_IF" | grep -o 'prog/xdp.*') $(ls "$PINS" 2>&1)"
fi
grep -E '^(xdp|epoll): ' "$TMP/xdp.log" | sed 's/^/  /'

# ---- auto (native expected on veth), then SIGKILL ----
serve_start "$TMP/auto.log" "$SRV_IF" -p "$PORT"
if serve_wait_line "tier xdp (native) + epoll fallback" 20 && answered; then
	pass "${T}_auto_xdp_native"
else
	fail "${T}_auto_xdp_native" "$(tr '\n' ' ' <"$TMP/auto.log")"
fi
serve_stop KILL 5
sleep 0.5
if ! has_xdp "$SRV_IF"; then
	pass "${T}_sigkill_xdp_gone_with_process"
else
	fail "${T}_sigkill_xdp_gone_with_process" "an XDP program is still attached"
fi
$SRV "$BLITZ" status >"$TMP/st" 2>&1
if [ ! -e "$PINS" ] || grep -q "blitz unload $SRV_IF" "$TMP/st"; then
	pass "${T}_sigkill_status_says_unload"
else
	fail "${T}_sigkill_status_says_unload" "$(tr '\n' '|' <"$TMP/st")"
fi
out=$($SRV "$BLITZ" unload "$SRV_IF" 2>&1)
if nothing_left; then
	pass "${T}_sigkill_unload_cleans"
else
	fail "${T}_sigkill_unload_cleans" "unload said '$out'; XDP or pins left"
fi

# ---- skb mode on request ----
serve_start "$TMP/skb.log" "$SRV_IF" --engine xdp -m skb -p "$PORT"
if serve_wait_line "tier xdp (skb) + epoll fallback" 20 && answered; then
	pass "${T}_xdp_skb"
else
	fail "${T}_xdp_skb" "$(tr '\n' ' ' <"$TMP/skb.log")"
fi
serve_stop TERM 10
nothing_left || fail "${T}_xdp_skb_detached" "XDP or pins left after SIGTERM"

# ---- afxdp: the XDP program redirects to AF_XDP sockets, epoll behind ----
# The engine runs in a child process of serve (its death leaves the kernel
# path answering); SIGTERM to serve stops it too.
serve_start "$TMP/afxdp.log" "$SRV_IF" --engine afxdp -p "$PORT"
child=
if serve_wait_line "not available" 1; then
	skip "${T}_afxdp" "$(head -1 "$TMP/afxdp.log")"
elif serve_wait_line "tier afxdp (native) + epoll fallback" 20 &&
	serve_wait_line "^afxdp: $SRV_IF queue 0" 10 && answered; then
	pass "${T}_afxdp"
	child=$(sed -n 's/^blitz: afxdp engine pid \([0-9]*\) .*/\1/p' "$TMP/afxdp.log")
	if [ -n "$child" ] && [ "$(ps -o ppid= -p "$child" | tr -d ' ')" = "$SERVE_PID" ]; then
		pass "${T}_afxdp_engine_child"
	else
		fail "${T}_afxdp_engine_child" "engine pid '$child' is not a child of serve $SERVE_PID: $(tr '\n' ' ' <"$TMP/afxdp.log")"
	fi
else
	fail "${T}_afxdp" "$(tr '\n' ' ' <"$TMP/afxdp.log")"
fi
serve_stop TERM 10
if nothing_left && [ "$SERVE_RC" = 0 ] && ! kill -0 "${child:-0}" 2>/dev/null; then
	pass "${T}_afxdp_sigterm_detached"
else
	fail "${T}_afxdp_sigterm_detached" "rc $SERVE_RC, engine ${child:-?} $(kill -0 "${child:-0}" 2>/dev/null && echo 'still runs' || echo gone), XDP or pins: $(nothing_left && echo none || echo left)"
fi

# ---- XDP cannot attach: auto falls back to epoll, xdp refuses ----
$SRV ip link set dev "$SRV_IF" xdpdrv obj "$(dirname "$BLITZ")/xdp_pass.bpf.o" sec xdp 2>"$TMP/e"
if has_xdp "$SRV_IF"; then
	on_exit "$SRV ip link set dev '$SRV_IF' xdp off"
	serve_start "$TMP/fb.log" "$SRV_IF" -p "$PORT"
	if serve_wait_line "tier epoll" 20 && answered; then
		pass "${T}_auto_falls_back_to_epoll"
	else
		fail "${T}_auto_falls_back_to_epoll" "$(tr '\n' ' ' <"$TMP/fb.log")"
	fi
	serve_stop TERM 10
	if has_xdp "$SRV_IF" && [ ! -e "$PINS" ]; then
		pass "${T}_foreign_xdp_untouched"
	else
		fail "${T}_foreign_xdp_untouched" "the other XDP program was removed or pins were left"
	fi
	out=$($SRV timeout 30 "$BLITZ" serve "$SRV_IF" --engine xdp -p "$PORT" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ -z "$($SRV ss -Hltn "sport = :$PORT")" ] &&
		[ ! -e "$PINS" ]; then
		pass "${T}_xdp_refuses_cleanly"
	else
		fail "${T}_xdp_refuses_cleanly" "rc $rc: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	$SRV ip link set dev "$SRV_IF" xdp off
else
	skip "${T}_auto_falls_back_to_epoll" "cannot attach xdp_pass.bpf.o: $(cat "$TMP/e")"
fi

# ---- behind a `blitz load`: serve adds the epoll listener only ----
if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >"$TMP/load.out" 2>&1; then
	serve_start "$TMP/behind.log" "$SRV_IF" -p "$PORT"
	if serve_wait_line "tier epoll .* behind the XDP program" 20 && answered; then
		pass "${T}_auto_behind_load"
	else
		fail "${T}_auto_behind_load" "$(tr '\n' ' ' <"$TMP/behind.log")"
	fi
	serve_stop TERM 10
	if has_xdp "$SRV_IF" && [ -e "$PINS" ]; then
		pass "${T}_load_left_alone"
	else
		fail "${T}_load_left_alone" "serve removed what \`blitz load\` attached"
	fi
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
else
	fail "${T}_auto_behind_load" "blitz load: $(tr '\n' ' ' <"$TMP/load.out")"
fi

# ---- argument errors: one line, nothing attached ----
serve_error() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$($SRV timeout 10 "$BLITZ" serve "$@" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
		printf '%s\n' "$out" | grep -q -- "$pat" && nothing_left; then
		pass "$name"
	else
		fail "$name" "rc $rc, said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
}
serve_error "${T}_err_bad_engine" "bad engine" "$SRV_IF" --engine turbo -p "$PORT"
serve_error "${T}_err_bad_port" "bad port" "$SRV_IF" --engine xdp -p 99999
serve_error "${T}_err_bad_mode" "bad mode" "$SRV_IF" -m fast -p "$PORT"
serve_error "${T}_err_unknown_if" "unknown interface" nosuchif0 -p "$PORT"
serve_error "${T}_err_extra_arg" "unexpected argument" "$SRV_IF" extra -p "$PORT"

e2e_status
