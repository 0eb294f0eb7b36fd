#!/bin/bash
# tests/e2e/test_qa3.sh - a second new user's and attacker's pass over the
# CLI: an interface name that is a path, unload and load next to a live
# serve, the advice given about another XDP program, an all-zero --mac.
# Each wrong argument gets one line, exits 1 and changes nothing; each
# piece of advice, when followed, does what it says.
# $SRV is a command prefix: it must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=qa3
PORT=8080
e2e_begin "$T" qa
PINS=/sys/fs/bpf/blitz/$SRV_IF
PASS_OBJ=$(dirname "$BLITZ")/xdp_pass.bpf.o

# one_line_rc1 OUT RC PATTERN - OUT is one line matching PATTERN, RC is 1.
one_line_rc1() {
	[ "$2" -eq 1 ] && [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ] &&
		printf '%s\n' "$1" | grep -q -- "$3"
}

# ---- unload of a name that is a path ----
# The name went into /sys/fs/bpf/blitz/<name> unchecked: `blitz unload
# ../../../../DIR` took DIR for stale pins, unlinked every file in it and
# said "removed its stale pins" (rc 0). An interface name has no '/' and
# is not "." or "..": now one line, rc 1, nothing removed.
if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >/dev/null 2>&1; then
	mkdir -p "$TMP/victim"
	echo keep >"$TMP/victim/config"
	echo keep >"$TMP/victim/file"
	for case in "up:../../../..$TMP/victim" "via_if:$SRV_IF/../../../..$TMP/victim" dot:.; do
		name=${case#*:}
		out=$($SRV timeout 10 "$BLITZ" unload "$name" 2>&1)
		rc=$?
		if one_line_rc1 "$out" "$rc" "no interface" &&
			[ -f "$TMP/victim/file" ] && [ -f "$TMP/victim/config" ] &&
			[ -e "$PINS/config" ] && has_xdp "$SRV_IF"; then
			pass "${T}_unload_path_name_${case%%:*}"
		else
			fail "${T}_unload_path_name_${case%%:*}" "rc $rc, victim: $(echo "$TMP"/victim/*), said: $(printf '%s' "$out" | tr '\n' '|')"
		fi
	done
	# ".." names /sys/fs/bpf itself: tried only when "." was refused.
	if ! $SRV "$BLITZ" unload . >/dev/null 2>&1; then
		out=$($SRV timeout 10 "$BLITZ" unload .. 2>&1)
		rc=$?
		check "${T}_unload_path_name_dotdot" "rc $rc, said: $out" one_line_rc1 "$out" "$rc" "no interface"
	fi
	# The read-only verbs take the same names: one line, rc 1.
	for verb in status stats doctor; do
		out=$($SRV timeout 10 "$BLITZ" "$verb" "../../../..$TMP/victim" 2>&1)
		rc=$?
		if [ "$rc" -ne 0 ] && [ -f "$TMP/victim/file" ] &&
			printf '%s\n' "$out" | grep -q "no interface\|not loaded"; then
			pass "${T}_${verb}_path_name"
		else
			fail "${T}_${verb}_path_name" "rc $rc, said: $(printf '%s' "$out" | tr '\n' '|')"
		fi
	done
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
else
	fail "${T}_unload_path_name" "blitz load $SRV_IF failed"
fi

# ---- unload and load next to a live serve ----
# unload detached a live serve's XDP program and hand-off: the serve ran
# on, `status` still called its tier xdp-native+epoll with nothing
# attached. And load told the user to `blitz reload`, which refuses a
# serve. Both now name the serve and how to stop it, and change nothing.
$SRV "$BLITZ" serve "$SRV_IF" -p "$PORT" >"$TMP/serve.log" 2>&1 &
spid=$!
on_exit "kill -9 $spid"
if wait_line "$TMP/serve.log" "tier xdp" "$spid" 20; then
	prog=$($SRV ip link show dev "$SRV_IF" | grep -o 'prog/xdp id [0-9]*')
	out=$($SRV timeout 10 "$BLITZ" unload "$SRV_IF" 2>&1)
	rc=$?
	now=$($SRV ip link show dev "$SRV_IF" | grep -o 'prog/xdp id [0-9]*')
	code=$($CLI timeout 10 curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$SRV_IP:$PORT/")
	if one_line_rc1 "$out" "$rc" "blitz serve.*$spid" && [ -n "$prog" ] &&
		[ "$now" = "$prog" ] && [ -e "$PINS" ] && [ "$code" = 200 ]; then
		pass "${T}_unload_live_serve"
	else
		fail "${T}_unload_live_serve" "rc $rc, xdp '$prog' -> '$now', curl $code, said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	out=$($SRV timeout 10 "$BLITZ" load "$SRV_IF" -p "$PORT" 2>&1)
	rc=$?
	now=$($SRV ip link show dev "$SRV_IF" | grep -o 'prog/xdp id [0-9]*')
	if one_line_rc1 "$out" "$rc" "blitz serve" && ! printf '%s' "$out" | grep -q "blitz reload" &&
		[ "$now" = "$prog" ]; then
		pass "${T}_load_live_serve"
	else
		fail "${T}_load_live_serve" "rc $rc, xdp '$prog' -> '$now', said: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	# A second serve on the interface: the same refusal, worded for serve.
	$SRV timeout 20 "$BLITZ" serve "$SRV_IF" -e xdp -p $((PORT + 1)) >/dev/null 2>"$TMP/err2"
	rc=$?
	now=$($SRV ip link show dev "$SRV_IF" | grep -o 'prog/xdp id [0-9]*')
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/err2")" -eq 1 ] &&
		grep -q "run by another \`blitz serve\`" "$TMP/err2" &&
		! grep -q "blitz load\|blitz reload" "$TMP/err2" && [ "$now" = "$prog" ]; then
		pass "${T}_second_serve"
	else
		fail "${T}_second_serve" "rc $rc, xdp '$prog' -> '$now', said: $(tr '\n' '|' <"$TMP/err2")"
	fi
	# A second serve with -e auto falls back to epoll behind the first
	# serve's program (it passes the other port): said as such, not as
	# "the program `blitz load` left there".
	$SRV "$BLITZ" serve "$SRV_IF" -p $((PORT + 1)) >"$TMP/auto2" 2>&1 &
	apid=$!
	wait_line "$TMP/auto2" "tier epoll" "$apid" 10
	code=$($CLI timeout 10 curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$SRV_IP:$((PORT + 1))/")
	if grep -q "behind the XDP program of another .blitz serve." "$TMP/auto2" &&
		! grep -q "blitz load\|stop that serve" "$TMP/auto2" && [ "$code" = 200 ]; then
		pass "${T}_second_serve_auto"
	else
		fail "${T}_second_serve_auto" "curl $code, said: $(tr '\n' '|' <"$TMP/auto2")"
	fi
	stop_pid "$apid" TERM 10
	stop_pid "$spid" TERM 10
	if [ "$STOP_RC" -eq 0 ] && ! has_xdp "$SRV_IF" && [ ! -e "$PINS" ]; then
		pass "${T}_serve_stops_clean"
	else
		fail "${T}_serve_stops_clean" "rc $STOP_RC, xdp: $(has_xdp "$SRV_IF" && echo yes), pins: $(echo "$PINS"/*)"
	fi
else
	fail "${T}_unload_live_serve" "serve did not start: $(tr '\n' '|' <"$TMP/serve.log")"
	stop_pid "$spid" TERM 5
fi

# ---- another XDP program: the advice removes it ----
# load, serve and doctor said `ip link set dev IF xdp off` whatever the
# mode; for a program attached in generic (skb) mode that command exits 0
# and leaves it there. The command they print must remove it.
for mode in xdpdrv xdpgeneric; do
	if ! $SRV ip link set dev "$SRV_IF" "$mode" obj "$PASS_OBJ" sec xdp 2>"$TMP/e"; then
		skip "${T}_foreign_${mode}_advice" "cannot attach xdp_pass.bpf.o: $(cat "$TMP/e")"
		continue
	fi
	out=$($SRV timeout 10 "$BLITZ" load "$SRV_IF" -p "$PORT" 2>&1)
	rc=$?
	doc=$($SRV timeout 20 "$BLITZ" doctor "$SRV_IF" 2>&1 | grep '^xdp-attached')
	# shellcheck disable=SC2016 # backquotes, not an expansion
	advice=$(printf '%s' "$out" | grep -o '`ip link set dev [^`]*`' | tr -d '`')
	dadvice=$(printf '%s' "$doc" | grep -o 'ip link set dev .*')
	if one_line_rc1 "$out" "$rc" "not blitz's" && [ -n "$advice" ] &&
		[ "$advice" = "$dadvice" ] && [ ! -e "$PINS" ] &&
		$SRV $advice 2>/dev/null && ! has_xdp "$SRV_IF"; then
		pass "${T}_foreign_${mode}_advice"
	else
		fail "${T}_foreign_${mode}_advice" "rc $rc, advice '$advice' (doctor '$dadvice') left: $($SRV ip link show dev "$SRV_IF" | grep -o 'prog/xdp.*')"
	fi
	$SRV ip link set dev "$SRV_IF" "$mode" off 2>/dev/null
done

# ---- reload puts back a hand-off that went ----
# With its pinned TCX link removed (by hand, or a cleanup script), the XDP
# program answered on and whatever it passes (a GET with a body here) was
# reset even with a kernel listener; `blitz reload` said "hand-off 0 -> 0"
# and "... go to it on the same connection". Now reload attaches a new one.
(cd "$TMP" && exec $SRV "$PY" -m http.server "$PORT" --bind "$SRV_IP" >/dev/null 2>&1) &
ks_pid=$!
on_exit "kill $ks_pid"
if ! wait_port "$CLI" "$SRV_IP" "$PORT" 5; then
	skip "${T}_reload_restores_handoff" "python http.server did not listen on $SRV_IP:$PORT"
elif $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >/dev/null 2>&1; then
	body_get() { $CLI timeout 10 curl -s -m 5 -o /dev/null -w '%{http_code}' -X GET -d x "http://$SRV_IP:$PORT/"; }
	before=$(body_get)
	rm -f "$PINS/tc_link"
	gone=$(body_get)
	out=$($SRV timeout 20 "$BLITZ" reload "$SRV_IF" 2>&1)
	rc=$?
	after=$(body_get)
	hand=$($SRV "$BLITZ" status "$SRV_IF" 2>/dev/null | awk 'NR == 2 { print $4 }')
	if [ "$before" = 200 ] && [ "$rc" -eq 0 ] && [ "$after" = 200 ] && [ "$hand" = tc ] &&
		printf '%s' "$out" | grep -q "hand-off 0 -> [1-9]"; then
		pass "${T}_reload_restores_handoff"
	else
		fail "${T}_reload_restores_handoff" "GET with a body: $before, without the hand-off $gone, after reload $after (status hand-off '$hand'), reload rc $rc: $(printf '%s' "$out" | tr '\n' '|')"
	fi
	$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
	if [ -z "$($SRV "$BLITZ" status "$SRV_IF" 2>/dev/null | awk 'NR == 2')" ] && ! has_xdp "$SRV_IF"; then
		pass "${T}_reload_restored_handoff_unloads"
	else
		fail "${T}_reload_restored_handoff_unloads" "$($SRV "$BLITZ" status "$SRV_IF" 2>&1 | tr '\n' '|')"
	fi
else
	fail "${T}_reload_restores_handoff" "blitz load $SRV_IF failed"
fi
kill "$ks_pid" 2>/dev/null
wait "$ks_pid" 2>/dev/null

# ---- -a with an address this host does not have ----
# It loaded "serving http" and status listed it like any other: the xdp
# engine answers complete GETs to it, but what it passes to the kernel
# (bodies, split requests) is never answered. load and status now say so,
# and say nothing for the host's own addresses.
fake=${SRV_IP%.*}.77
out=$($SRV timeout 20 "$BLITZ" load "$SRV_IF" -p "$PORT" -a "$fake" -a "$SRV_IP" 2>&1)
rc=$?
st=$($SRV "$BLITZ" status "$SRV_IF" 2>&1)
if [ "$rc" -eq 0 ] && printf '%s' "$out" | grep -q "^blitz: not an address of this host: $fake: " &&
	printf '%s' "$st" | grep -q "^$SRV_IF: not an address of this host: $fake: "; then
	pass "${T}_load_a_not_local"
else
	fail "${T}_load_a_not_local" "rc $rc, load: $(printf '%s' "$out" | tr '\n' '|') status: $(printf '%s' "$st" | tr '\n' '|')"
fi
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1
out=$($SRV timeout 20 "$BLITZ" load "$SRV_IF" -p "$PORT" -a "$SRV_IP" -a "$SRV_IP6" 2>&1)
rc=$?
st=$($SRV "$BLITZ" status "$SRV_IF" 2>&1)
if [ "$rc" -eq 0 ] && ! printf '%s\n%s' "$out" "$st" | grep -q "not an address of this host"; then
	pass "${T}_load_a_local_no_line"
else
	fail "${T}_load_a_local_no_line" "rc $rc, load: $(printf '%s' "$out" | tr '\n' '|') status: $(printf '%s' "$st" | tr '\n' '|')"
fi
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

# ---- --mac 00:00:00:00:00:00 ----
# Taken as "frames to this MAC are ours"; no frame is sent to it.
CLI_ERROR_AFTER="eval ! has_xdp $SRV_IF && [ ! -e $PINS ]" \
	cli_error "${T}_mac_zero" "bad --mac '00:00:00:00:00:00'" \
	load "$SRV_IF" -p "$PORT" --mac 00:00:00:00:00:00
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

# ---- bench against a port nothing listens on ----
# Every handshake was refused, and bench printed "0 req/s" and exited 0:
# a script took the zeros for a measurement. Now rc 1 and a line saying why
# (the summary, and --json's object, still come first).
$CLI timeout 30 "$BLITZ" bench "$SRV_IP:$((PORT + 9))" -i "$CLI_IF" -c 2 -d 1 --json \
	>"$TMP/b.json" 2>"$TMP/b.err"
rc=$?
if [ "$rc" -eq 1 ] && tail -1 "$TMP/b.err" | grep -q "no connection to $SRV_IP:$((PORT + 9)) was established" &&
	grep -q '"connects":0' "$TMP/b.json"; then
	pass "${T}_bench_nothing_listens"
else
	fail "${T}_bench_nothing_listens" "rc $rc, stderr: $(tail -2 "$TMP/b.err" | tr '\n' '|')"
fi

# ---- an interface renamed while loaded ----
# Pins keep the name of load time. status said the old name's pins were
# "loaded in another network namespace ..., run status there": it is this
# one. It now names the interface the program runs on, and its advice,
# followed, leaves nothing.
NEW_IF=${SRV_IF}r
# rename FROM TO - down, renamed, up again (a live rename may be refused).
rename() {
	$SRV ip link set dev "$1" down && $SRV ip link set dev "$1" name "$2" &&
		$SRV ip link set dev "$2" up
}
if $SRV "$BLITZ" load "$SRV_IF" -p "$PORT" >/dev/null 2>&1 && rename "$SRV_IF" "$NEW_IF"; then
	on_exit "rename '$NEW_IF' '$SRV_IF'"
	st=$($SRV "$BLITZ" status 2>&1 | grep "^$SRV_IF: ")
	# shellcheck disable=SC2016 # backquotes, not an expansion
	advice=$(printf '%s' "$st" | grep -o '`blitz unload [^`]*`' | tr -d '`' | sed 's/^blitz //')
	ok=1
	while read -r verb name; do
		[ "$verb" = unload ] && $SRV "$BLITZ" unload "$name" >/dev/null 2>&1 || ok=0
		# Between the two: the old name's pins are stale and no
		# interface has that name, so no `blitz load` can reclaim them.
		if [ "$name" = "$NEW_IF" ] && $SRV "$BLITZ" status 2>&1 | grep "^$SRV_IF: " |
			grep -q "blitz load"; then
			ok=0
			st="$st / then: $($SRV "$BLITZ" status 2>&1 | grep "^$SRV_IF: ")"
		fi
	done <<<"$advice"
	if [ "$ok" = 1 ] && printf '%s' "$st" | grep -q "runs on $NEW_IF in this namespace" &&
		! printf '%s' "$st" | grep -q "another network namespace" &&
		[ "$(printf '%s\n' "$advice" | wc -l)" -eq 2 ] &&
		! $SRV ip link show dev "$NEW_IF" | grep -q prog/xdp && [ ! -e "$PINS" ]; then
		pass "${T}_renamed_if_status"
	else
		fail "${T}_renamed_if_status" "status: '$st', advice '$advice' ok=$ok, left: $($SRV ip link show dev "$NEW_IF" | grep -o 'prog/xdp.*') $(echo "$PINS"/*)"
	fi
	$SRV "$BLITZ" unload "$NEW_IF" >/dev/null 2>&1
	rename "$NEW_IF" "$SRV_IF"
else
	fail "${T}_renamed_if_status" "load or rename failed"
fi
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

# ---- a killed blitz bench and the client's XDP program ----
# A SIGKILLed bench left its program on the client interface, and the
# program it had displaced (the testbed's xdp_pass) was lost for good: the
# next bench even took the stale one as the program to put back. Now the
# displaced program is pinned for the run, and the next run puts it back;
# on an interface without a program the run's program is a bpf_link and
# goes with the process.
# xdp_id - the id of the client interface's XDP program, or empty.
xdp_id() { $CLI ip -d link show dev "$CLI_IF" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -1; }
# killed_bench - a bench run SIGKILLed once its program is attached.
killed_bench() {
	local pid i
	$CLI "$BLITZ" bench "$SRV_IP:$PORT" -i "$CLI_IF" -c 2 -d 20 >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		[ "$(xdp_id)" != "$1" ] && break
		sleep 0.1
	done
	sleep 0.5
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
$SRV "$BLITZ" serve "$SRV_IF" --engine epoll -p "$PORT" >"$TMP/kb.serve" 2>&1 &
kb_serve=$!
on_exit "kill $kb_serve"
wait_port "$CLI" "$SRV_IP" "$PORT" 10
orig=$(xdp_id)
if [ -n "$orig" ]; then
	killed_bench "$orig"
	left=$(xdp_id)
	out=$($CLI timeout 30 "$BLITZ" bench "$SRV_IP:$PORT" -i "$CLI_IF" -c 2 -d 1 2>&1)
	after=$(xdp_id)
	if [ -n "$left" ] && [ "$left" != "$orig" ] && [ "$after" = "$orig" ] &&
		printf '%s' "$out" | grep -q "a killed .blitz bench. left its XDP program" &&
		[ ! -e "/sys/fs/bpf/blitz-bench/$CLI_IF" ]; then
		pass "${T}_bench_killed_restores (xdp_pass $orig, left $left, back to $after)"
	else
		fail "${T}_bench_killed_restores" "xdp_pass $orig, after the kill '$left', after the next run '$after': $out"
	fi
	$CLI ip link set dev "$CLI_IF" xdpdrv off
	killed_bench ""
	check "${T}_bench_killed_no_prog" "the killed run's program is still on $CLI_IF: $(xdp_id)" [ -z "$(xdp_id)" ]
	$CLI ip link set dev "$CLI_IF" xdpdrv obj "$PASS_OBJ" sec xdp
else
	fail "${T}_bench_killed_restores" "the testbed's client interface has no XDP program"
fi
kill "$kb_serve" 2>/dev/null
wait "$kb_serve" 2>/dev/null

e2e_status
