#!/bin/bash
# tests/e2e/test_seq_diff.sh - issue 11's differential on the wire: the
# same raw segment sequences (tests/e2e/seq_diff.py: two requests in
# separate segments, a duplicate, a hole, request+FIN, close then FIN, data
# after the server's FIN, then the client's retransmissions) to the xdp
# engine (blitz load, no listener on its port) and to the kernel's TCP
# (the epoll engine on another port) from the client namespace; the
# outcome of every pair of connections must agree (bytes acked, responses,
# FIN, RST) and no ack may cover bytes never sent. Lean: ~5000 segments, ~10 s.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=seq_diff
need_root "$T"
e2e_begin "$T" "${SEQ_TB:-e2esq}"
PA=8080 PB=8081

e2e_load "$T" -p "$PA"
$SRV "$BLITZ" serve -p "$PB" -t 1 >"$TMP/serve.out" 2>&1 &
on_exit "kill $!"
if ! wait_port "$CLI" "$SRV_IP" "$PB" 10; then
	fail "${T}_serve" "$(tr '\n' ' ' <"$TMP/serve.out")"
	exit 1
fi
# The raw client's addresses (.150-.189, not configured anywhere): the
# kernel's replies reach them through static neighbours.
cmac=$($CLI cat "/sys/class/net/$CLI_IF/address" 2>/dev/null)
cmac=${cmac:-$($CLI ip -o link show "$CLI_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')}
smac=$($SRV ip -o link show "$SRV_IF" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
base=${CLI_IP%.*}
for i in $(seq 150 189); do
	$SRV ip neigh replace "$base.$i" lladdr "$cmac" dev "$SRV_IF"
done
seed=${SEQ_SEED:-$RANDOM}
out=$($CLI timeout 120 "$PY" tests/e2e/seq_diff.py "$CLI_IF" "$CLI_IP" "$SRV_IP" \
	"$PA" "$PB" "$smac" "${SEQ_N:-600}" "$seed" 2>"$TMP/diff.err" | tail -1)
echo "# $T: $out (SEQ_SEED=$seed reproduces it)"
head -5 "$TMP/diff.err"
n=$(echo "$out" | sed -n 's/.*sequences=\([0-9]*\).*/\1/p')
if [ "${n:-0}" -ge 400 ] && [[ $out = *"mismatches=0 bad_acks=0"* ]]; then
	pass "${T}_xdp_like_kernel"
else
	fail "${T}_xdp_like_kernel" "$out $(head -3 "$TMP/diff.err")"
fi
e2e_status
