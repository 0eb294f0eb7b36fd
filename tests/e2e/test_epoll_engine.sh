#!/bin/bash
# tests/e2e/test_epoll_engine.sh - the epoll engine alone end to end:
# `blitz serve --engine epoll` in the server namespace of the testbed, real
# clients (curl, wget, python http.client, wrk, ab) and raw-socket checks
# (exact bytes, pipelining, split requests, bodies, every error row of the
# contract, FIN not RST) from the client namespace, then a clean SIGTERM.
#
# No XDP program is attached: every answer comes from kernel sockets.
# Every client runs under `timeout`; the testbed goes down in a trap.
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/e2e/lib_epoll.sh
source "$(dirname "$0")/lib_epoll.sh"

T=epoll_engine
PORT=8080
BODY="Hello World!"

e2e_begin "$T" "${EPOLL_TB:-h4ae}"
URL="http://$SRV_IP:$PORT/"
URL6="http://[$SRV_IP6]:$PORT/"

serve_start "$TMP/serve.log" --engine epoll -p "$PORT"
if serve_wait_line "tier epoll" 5 && wait_port "$CLI" "$SRV_IP" "$PORT" 5; then
	pass "${T}_start"
else
	fail "${T}_start" "$(tr '\n' ' ' <"$TMP/serve.log")"
	exit 1
fi
if has_xdp "$SRV_IF"; then
	fail "${T}_no_xdp" "an XDP program is attached to $SRV_IF"
else
	pass "${T}_no_xdp"
fi

# ---- real clients (lib.sh) ----
real_clients "$T" "$SRV_IP" "$PORT" "$SRV_IP6"

# ---- raw sockets: exact bytes and every contract row ----
$CLI timeout 60 "$PY" "$E2E_ROOT/tests/e2e/raw_http.py" "$SRV_IP" "$PORT" "$T" >"$TMP/raw" 2>&1
cat "$TMP/raw"
grep -qE '^(PASS|FAIL) ' "$TMP/raw" || fail "${T}_raw" "the raw client printed nothing"
grep -q '^FAIL ' "$TMP/raw" && E2E_FAILED=1
# Over IPv6 too (dual-stack listener), just the first check.
$CLI timeout 20 "$PY" "$E2E_ROOT/tests/e2e/raw_http.py" "$SRV_IP6" "$PORT" "${T}_ipv6" exact_bytes_get_head >"$TMP/raw6" 2>&1
cat "$TMP/raw6"
grep -q '^FAIL ' "$TMP/raw6" && E2E_FAILED=1
grep -qE '^(PASS|FAIL) ' "$TMP/raw6" || fail "${T}_ipv6_raw" "$(tr '\n' ' ' <"$TMP/raw6")"

# ---- SIGTERM: exits 0 with the summary, port closed ----
if serve_stop TERM 10 && [ "$SERVE_RC" -eq 0 ] && grep -q '^epoll: .* requests' "$TMP/serve.log"; then
	pass "${T}_sigterm"
else
	fail "${T}_sigterm" "rc $SERVE_RC: $(tail -3 "$TMP/serve.log" | tr '\n' ' ')"
fi
if [ -z "$($SRV ss -Hltn "sport = :$PORT")" ]; then
	pass "${T}_port_released"
else
	fail "${T}_port_released" "something still listens on $PORT"
fi

# ---- -a: only the given address is served ----
serve_start "$TMP/addr.log" --engine epoll -p "$PORT" -a "$SRV_IP" -t 1
if serve_wait_line "tier epoll" 5 && wait_port "$CLI" "$SRV_IP" "$PORT" 5 &&
	[ "$($CLI timeout 5 curl -sS "$URL" 2>&1)" = "$BODY" ] &&
	! $CLI timeout 5 curl -sS -m 2 -g "$URL6" >/dev/null 2>&1; then
	pass "${T}_addr_only"
else
	fail "${T}_addr_only" "$(tr '\n' ' ' <"$TMP/addr.log")"
fi
serve_stop TERM 10

# ---- large bodies: headers from the template, the body behind them ----
# A 64 KiB and a 1 MiB --body-file: curl's sha256 equals the file's; HEAD
# has the same Content-Length and no body (the next pipelined response
# starts right after its headers).
for size in 65536 1048576; do
	head -c "$size" /dev/urandom >"$TMP/body.$size"
	sum=$(sha256sum "$TMP/body.$size" | cut -d' ' -f1)
	serve_start "$TMP/big.log" --engine epoll -p "$PORT" -t 1 --body-file "$TMP/body.$size" \
		--content-type application/octet-stream
	if ! serve_wait_line "tier epoll" 5 || ! wait_port "$CLI" "$SRV_IP" "$PORT" 5; then
		fail "${T}_body_file_$size" "serve: $(tr '\n' ' ' <"$TMP/big.log")"
		serve_stop KILL 5
		continue
	fi
	got=$($CLI timeout 20 curl -sS -D "$TMP/bh" "$URL" 2>"$TMP/e" | sha256sum | cut -d' ' -f1)
	if [ "$got" = "$sum" ] && grep -qi "^Content-Length: $size" "$TMP/bh" &&
		grep -qi '^Content-Type: application/octet-stream' "$TMP/bh"; then
		pass "${T}_body_file_${size}_curl_sha256"
	else
		fail "${T}_body_file_${size}_curl_sha256" "sha256 $got, want $sum; $(head -c 300 "$TMP/bh" "$TMP/e")"
	fi
	if $CLI timeout 10 curl -sS -I "$URL" >"$TMP/bh" 2>"$TMP/e" &&
		head -1 "$TMP/bh" | grep -q '^HTTP/1.1 200' &&
		grep -qi "^Content-Length: $size" "$TMP/bh"; then
		pass "${T}_body_file_${size}_curl_head"
	else
		fail "${T}_body_file_${size}_curl_head" "$(head -c 300 "$TMP/bh" "$TMP/e")"
	fi
	out=$($CLI timeout 30 "$PY" "$E2E_ROOT/tests/e2e/big_body.py" "$SRV_IP" "$PORT" "$size" "$sum" 2>&1 | tail -1)
	if [ "$out" = ok ]; then
		pass "${T}_body_file_${size}_head_no_body_then_get"
	else
		fail "${T}_body_file_${size}_head_no_body_then_get" "$out"
	fi
	serve_stop_ok "${T}_body_file_${size}_sigterm"
done

# ---- argument errors: one line, non-zero ----
serve_error() { # NAME PATTERN ARGS...
	cli_error "$1" "$2" serve "${@:3}"
}
serve_error "${T}_err_bad_engine" "bad engine" --engine warp -p "$PORT"
serve_error "${T}_err_bad_port" "bad port" --engine epoll -p 0
serve_error "${T}_err_bad_threads" "bad thread count" --engine epoll -t 0 -p "$PORT"
serve_error "${T}_err_engine_needs_if" "needs an interface" --engine xdp -p "$PORT"
# A body file over 16 MiB (sparse: costs no disk) is refused before it is read.
truncate -s $((16 * 1024 * 1024 + 1)) "$TMP/huge"
serve_error "${T}_err_body_file_over_16m" "larger than 16777216 bytes" --engine epoll -p "$PORT" --body-file "$TMP/huge"
# Port taken by another server: refused, not silently shared.
$SRV "$PY" -c 'import socket,time
s=socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", int(__import__("sys").argv[1]))); s.listen(); time.sleep(30)' "$PORT" &
holder=$!
on_exit "kill $holder"
if wait_port "$SRV" 127.0.0.1 "$PORT" 5; then
	serve_error "${T}_err_port_in_use" "already in use" --engine epoll -p "$PORT"
else
	fail "${T}_err_port_in_use" "could not start the port holder"
fi
kill "$holder" 2>/dev/null

e2e_status
