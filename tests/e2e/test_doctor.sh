#!/bin/bash
# tests/e2e/test_doctor.sh - `blitz doctor` on the veth testbed: every row
# present, the driver's report read right for veth (native XDP yes,
# zero-copy no), --json the same rows, --probe agreeing with the report and
# leaving nothing attached; then with faults injected, each turning its
# row into fail and the exit status into 1: bpffs unmounted (in a private
# mount namespace, so nobody else's pins are touched), tcp_syncookies off
# in the server's namespace, an MTU too large for the program (checked
# against a real native attach by --probe). Testbed prefix: $DOCTOR_TB
# (default dr).
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=doctor
e2e_begin "$T" "${DOCTOR_TB:-dr}"

# The rows doctor prints for an interface, in order.
ROWS="kernel xdp-link tcx handoff-kfunc ktime-tai privileges tcp_syncookies
tcp_timestamps bpffs interface driver native-xdp xdp-tx-redirect multi-buffer
afxdp-zerocopy queues memlock conn-memory mtu body lro xdp-attached pins engine-auto
hugepages vfio-iommu dpdk-engine"

# doctor OUT [args...] - run doctor in the server namespace; DOC_RC its status.
doctor() {
	local out=$1
	shift
	$SRV "$BLITZ" doctor "$@" >"$out" 2>&1
	DOC_RC=$?
}

# row FILE CHECK - "STATUS VALUE..." of that row of the table.
row() { awk -v c="$2" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }' "$1"; }

doctor "$TMP/ok" "$SRV_IF"
missing=
for r in $ROWS; do
	[ -n "$(row "$TMP/ok" "$r")" ] || missing="$missing $r"
done
n_rows=$(($(wc -l <"$TMP/ok") - 1))
if [ -z "$missing" ] && [ "$n_rows" -eq "$(echo $ROWS | wc -w)" ] && [ "$DOC_RC" -eq 0 ]; then
	pass "${T}_rows"
else
	fail "${T}_rows" "rc $DOC_RC, $n_rows rows, missing:${missing:-none}: $(head -c 300 "$TMP/ok")"
fi
# Aligned: every row's STATUS starts in the header's STATUS column.
col=$(head -1 "$TMP/ok" | awk '{ print index($0, "STATUS") }')
bad=$(awk -v c="$col" 'NR > 1 && substr($0, c, 2) !~ /^(ok|wa|fa)$/' "$TMP/ok" | head -1)
check "${T}_aligned" "misaligned row: $bad" test -z "$bad"

# veth reports native XDP (and multi-buffer), but no AF_XDP zero-copy.
r=$(row "$TMP/ok" native-xdp)
check "${T}_veth_native" "native-xdp row: '$r'" test "${r%% *}" = ok -a "$(echo "$r" | awk '{print $2}')" = yes
r=$(row "$TMP/ok" afxdp-zerocopy)
check "${T}_veth_zerocopy" "afxdp-zerocopy row: '$r'" test "$(echo "$r" | awk '{print $1, $2}')" = "warn no"
r=$(row "$TMP/ok" driver)
check "${T}_veth_driver" "driver row: '$r'" test "$(echo "$r" | awk '{print $1, $2}')" = "ok veth"
# The testbed's veth has 1 RX queue of 2 allowed; CPUs from nproc.
r=$(row "$TMP/ok" queues)
case "$(nproc)" in
1) want=ok ;;
*) want=warn ;;
esac
check "${T}_queues" "queues row with $(nproc) CPUs: '$r'" test "${r%% *}" = "$want" -a -n "$(echo "$r" | grep -F 'rx 1 ')"

# --json: one object, the same checks with the same verdicts.
doctor "$TMP/json" "$SRV_IF" --json
if "$PY" "$E2E_ROOT/tests/e2e/doctor_json.py" "$TMP/json" "$TMP/ok" "$SRV_IF"; then pass "${T}_json"; else fail "${T}_json" "$(head -c 300 "$TMP/json")"; fi

# --probe: the native attach works where the report says native XDP, the
# zero-copy bind is refused where it says no, and nothing is left attached.
doctor "$TMP/probe" "$SRV_IF" --probe
r=$(row "$TMP/probe" probe-native)
check "${T}_probe_native" "rc $DOC_RC, probe-native: '$r'" test "${r%% *}" = ok -a "$DOC_RC" -eq 0
r=$(row "$TMP/probe" probe-zerocopy)
check "${T}_probe_zerocopy" "probe-zerocopy: '$r'" test -n "$(echo "$r" | grep '^warn *copy mode only')"
check "${T}_probe_undone" "an XDP program is left on $SRV_IF" bash -c "! $SRV ip link show dev $SRV_IF | grep -q prog/xdp"

# Bad arguments: one line, status 1.
$SRV "$BLITZ" doctor a b >"$TMP/bad" 2>&1
rc=$?
check "${T}_bad_args" "rc $rc: $(cat "$TMP/bad")" test "$rc" -eq 1 -a "$(wc -l <"$TMP/bad")" -eq 1
$SRV "$BLITZ" doctor --probe >"$TMP/bad" 2>&1
rc=$?
check "${T}_probe_needs_if" "rc $rc: $(cat "$TMP/bad")" test "$rc" -eq 1 -a "$(wc -l <"$TMP/bad")" -eq 1
doctor "$TMP/noif" nosuchif0
r=$(row "$TMP/noif" interface)
check "${T}_no_interface" "rc $DOC_RC, interface row: '$r'" test "${r%% *}" = fail -a "$DOC_RC" -eq 1

# The README's requirements table names doctor's rows in its first column:
# each must be a row doctor prints here, or one it adds only on failure
# (kernel-btf: no /sys/kernel/btf/vmlinux).
# shellcheck disable=SC2016 # backquotes of Markdown, not a shell expansion
readme_rows=$(sed -n '/^## Requirements and limits/,/^## /p' README.md |
	awk -F'|' 'NF > 3 && $2 ~ /`/ { print $2 }' | grep -o '`[a-z_-]*`' | tr -d '`')
unknown=
for r in $readme_rows; do
	[ -n "$(row "$TMP/ok" "$r")" ] || [ "$r" = kernel-btf ] || unknown="$unknown $r"
done
check "${T}_readme_table" "README names rows doctor does not print:${unknown} (of: $readme_rows)" \
	test -z "$unknown" -a "$(echo $readme_rows | wc -w)" -ge 10

# An older kernel, pretended through BLITZ_TEST_KERNEL_RELEASE (read by
# nothing but these messages' tests): doctor names the Linux each missing
# feature needs and says the kernel is pretended; load refuses in one line
# naming the kfunc and the version, and attaches nothing.
OLD=6.1.0-28-amd64
$SRV env BLITZ_TEST_KERNEL_RELEASE=$OLD "$BLITZ" doctor "$SRV_IF" >"$TMP/old" 2>&1
rc=$?
r=$(row "$TMP/old" handoff-kfunc)
check "${T}_old_kernel_kfunc" "rc $rc, handoff-kfunc row: '$r'" \
	test "${r%% *}" = warn -a "$rc" -eq 0 -a -n "$(echo "$r" | grep -F "bpf_sk_assign_tcp_reqsk needs Linux 6.9 or later; this kernel is $OLD")"
r=$(row "$TMP/old" tcx)
check "${T}_old_kernel_tcx" "tcx row: '$r'" test -n "$(echo "$r" | grep -F "TCX ingress needs Linux 6.6 or later; this kernel is $OLD")"
r=$(row "$TMP/old" kernel)
check "${T}_old_kernel_said" "kernel row: '$r'" test -n "$(echo "$r" | grep -F "$OLD (pretended by a test")"
r=$(row "$TMP/ok" kernel)
check "${T}_real_kernel" "kernel row without the override: '$r'" test -z "$(echo "$r" | grep pretended)" -a "$(echo "$r" | awk '{print $2}')" = "$(uname -r)"
$SRV env BLITZ_TEST_KERNEL_RELEASE=$OLD "$BLITZ" load "$SRV_IF" -p 8080 >"$TMP/oldload" 2>&1
rc=$?
attached=$($SRV ip link show dev "$SRV_IF" | grep -c 'prog/xdp')
check "${T}_old_kernel_load" "rc $rc, xdp attached $attached: $(cat "$TMP/oldload")" \
	test "$rc" -ne 0 -a "$attached" -eq 0 -a -n "$(grep -F "bpf_sk_assign_tcp_reqsk() needs Linux 6.9 or later; this kernel is $OLD" "$TMP/oldload")"
$SRV "$BLITZ" unload "$SRV_IF" >/dev/null 2>&1

# Fault: bpffs unmounted, in a private mount namespace (unshare -m makes
# its mounts private: the host's /sys/fs/bpf and everyone's pins stay).
# shellcheck disable=SC2016 # expanded by the inner bash
$SRV unshare -m bash -c 'while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 9; done
	exec "$0" doctor "$1"' "$BLITZ" "$SRV_IF" >"$TMP/nobpffs" 2>&1
rc=$?
r=$(row "$TMP/nobpffs" bpffs)
check "${T}_fault_bpffs" "rc $rc, bpffs row: '$r'" test "${r%% *}" = fail -a "$rc" -eq 1
check "${T}_bpffs_untouched" "/sys/fs/bpf is no longer bpffs here" mountpoint -q /sys/fs/bpf

# Fault: syncookies off in the server's namespace only.
host_sc=$(cat /proc/sys/net/ipv4/tcp_syncookies)
$SRV sysctl -qw net.ipv4.tcp_syncookies=0
doctor "$TMP/nosc" "$SRV_IF"
$SRV sysctl -qw net.ipv4.tcp_syncookies=1
r=$(row "$TMP/nosc" tcp_syncookies)
check "${T}_fault_syncookies" "rc $DOC_RC, tcp_syncookies row: '$r'" test "${r%% *}" = fail -a "$DOC_RC" -eq 1
check "${T}_syncookies_per_netns" "host tcp_syncookies changed" test "$(cat /proc/sys/net/ipv4/tcp_syncookies)" = "$host_sc"

# Fault: a body too big for one segment at this MTU (the xdp engine
# cannot answer it), then an MTU below what the engine needs.
doctor "$TMP/bigbody" "$SRV_IF" --body "$(head -c 1800 /dev/zero | tr '\0' b)"
r=$(row "$TMP/bigbody" body)
check "${T}_fault_body" "rc $DOC_RC, body row: '$r'" test "${r%% *}" = fail -a "$DOC_RC" -eq 1
r=$(row "$TMP/bigbody" engine-auto)
check "${T}_fault_body_auto" "engine-auto: '$r'" test -n "$(echo "$r" | grep 'epoll (the body')"
$SRV ip link set dev "$SRV_IF" mtu 500
doctor "$TMP/smallmtu" "$SRV_IF"
$SRV ip link set dev "$SRV_IF" mtu 1500
r=$(row "$TMP/smallmtu" mtu)
check "${T}_fault_mtu_small" "rc $DOC_RC, mtu row: '$r'" test "${r%% *}" = fail -a "$DOC_RC" -eq 1

# MTU 9000 on both veths (the client's pass program comes off: a
# single-buffer program caps its peer's MTU). doctor's mtu verdict must
# agree with a real native attach (--probe): ok and attached for blitz's
# multi-buffer program on veth (which has multi-buffer XDP); fail and
# ERANGE for a build without xdp.frags.
$CLI ip link set dev "$CLI_IF" xdp off
$SRV ip link set dev "$SRV_IF" mtu 9000 && $CLI ip link set dev "$CLI_IF" mtu 9000
doctor "$TMP/jumbo" "$SRV_IF" --probe
r=$(row "$TMP/jumbo" mtu)
p=$(row "$TMP/jumbo" probe-native)
if echo "$r" | grep -q multi-buffer; then
	check "${T}_mtu_9000" "rc $DOC_RC, mtu '$r', probe '$p'" test "${r%% *}" = ok -a "${p%% *}" = ok
else
	check "${T}_fault_mtu" "rc $DOC_RC, mtu '$r', probe '$p'" \
		test "${r%% *}" = fail -a "$DOC_RC" -eq 1 -a -n "$(echo "$p" | grep 'fail.*out of range')"
	r=$(row "$TMP/jumbo" engine-auto)
	check "${T}_fault_mtu_auto" "engine-auto: '$r'" test -n "$(echo "$r" | grep 'xdp (skb')"
fi

e2e_status
