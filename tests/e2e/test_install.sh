#!/bin/bash
# tests/e2e/test_install.sh - `make install` into a DESTDIR: every file
# where it belongs; the systemd units pass `systemd-analyze verify` with
# no complaint; blitz(8) renders without a warning and carries every
# verb's usage; and the installed binary, run the way the units run it
# (their ExecStart/ExecStop with the example settings), serves on the
# testbed and cleans up. Testbed prefix: $INSTALL_TB (default in).
# $SRV and $CLI are command prefixes: they must split.
# shellcheck disable=SC2086
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/lib.sh"

T=install
PORT=8080
BODY="Hello World!"
e2e_begin "$T" "${INSTALL_TB:-in}"
D=$TMP/root
UNITS=$D/usr/lib/systemd/system

if ! make -s install DESTDIR="$D" PREFIX=/usr BUILD="$BUILD" >"$TMP/make" 2>&1; then
	fail "${T}_make_install" "$(tail -3 "$TMP/make")"
	exit 1
fi
missing=
for f in usr/sbin/blitz usr/share/man/man8/blitz.8 usr/share/blitz/xdp_pass.bpf.o \
	usr/lib/systemd/system/blitz@.service usr/lib/systemd/system/blitz-load@.service \
	etc/blitz/example.conf; do
	[ -s "$D/$f" ] || missing="$missing $f"
done
[ -x "$BUILD/blitz-dpdk" ] && { [ -x "$D/usr/sbin/blitz-dpdk" ] || missing="$missing usr/sbin/blitz-dpdk"; }
check "${T}_files" "missing:$missing" test -z "$missing"
leaked=$(grep -l '@[A-Z]*@' "$UNITS"/*.service "$D/etc/blitz/example.conf")
check "${T}_substituted" "unsubstituted @VAR@ in $leaked" test -z "$leaked"

# systemd-analyze verify: an instance of each template, the binary paths
# pointed into the DESTDIR (it checks they are executable).
if ! command -v systemd-analyze >/dev/null; then
	skip "${T}_units_verify" "systemd-analyze is not installed (scripts/install-deps.sh)"
else
	mkdir -p "$TMP/units"
	for u in blitz@ blitz-load@; do
		sed "s|/usr/sbin/|$D/usr/sbin/|g" "$UNITS/${u}.service" >"$TMP/units/${u}eth0.service"
	done
	systemd-analyze verify --man=no "$TMP/units/blitz@eth0.service" \
		"$TMP/units/blitz-load@eth0.service" >"$TMP/verify" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qiE 'not booted|Failed to (connect|initialize)' "$TMP/verify"; then
		skip "${T}_units_verify" "systemd-analyze cannot run here: $(head -1 "$TMP/verify")"
	else
		check "${T}_units_verify" "rc $rc: $(head -c 300 "$TMP/verify")" test "$rc" -eq 0 -a ! -s "$TMP/verify"
	fi
fi
# What the issue asks of the units, directive by directive.
why=
s=$UNITS/blitz@.service l=$UNITS/blitz-load@.service
# shellcheck disable=SC2016 # the literal $BLITZ_SERVE_OPTS of the unit
grep -qx 'ExecStart=/usr/sbin/blitz serve %I $BLITZ_SERVE_OPTS' "$s" || why="$why serve-ExecStart"
grep -qx 'Restart=on-failure' "$s" || why="$why Restart"
grep -qx 'EnvironmentFile=-/etc/blitz/%I.conf' "$s" || why="$why EnvironmentFile"
grep -qx 'Type=oneshot' "$l" || why="$why oneshot"
grep -qx 'RemainAfterExit=yes' "$l" || why="$why RemainAfterExit"
grep -qx 'ExecStop=/usr/sbin/blitz unload %I' "$l" || why="$why ExecStop"
for u in "$s" "$l"; do
	grep -q '^AmbientCapabilities=.*CAP_BPF.*CAP_NET_ADMIN' "$u" || why="$why Ambient($u)"
	grep -q '^CapabilityBoundingSet=.*CAP_BPF.*CAP_NET_ADMIN' "$u" || why="$why Bounding($u)"
	grep -qx 'LimitMEMLOCK=infinity' "$u" || why="$why MEMLOCK($u)"
done
check "${T}_units_directives" "missing:$why" test -z "$why"

# blitz(8): renders cleanly and holds every verb and every option of its
# -h (both come from the option tables: blitz help --man).
MAN=$D/usr/share/man/man8/blitz.8
if command -v groff >/dev/null; then
	groff -man -ww -z "$MAN" >"$TMP/groff" 2>&1
	check "${T}_man_lint" "groff: $(head -c 300 "$TMP/groff")" test ! -s "$TMP/groff"
else
	skip "${T}_man_lint" "groff is not installed (scripts/install-deps.sh)"
fi
if command -v man >/dev/null; then
	LC_ALL=C MANWIDTH=200 man -l "$MAN" 2>/dev/null >"$TMP/man.txt"
	: >"$TMP/man_missing"
	verbs=$("$D/usr/sbin/blitz" -h | awk '/^commands:/ { on = 1; next } on && NF && $1 !~ /^-/ { print $1 }')
	for v in $verbs; do
		[ "$v" = help ] && continue
		grep -qE "^ +blitz $v( |$)" "$TMP/man.txt" || echo "no section for $v" >>"$TMP/man_missing"
		for o in $("$D/usr/sbin/blitz" "$v" -h | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
			grep -qF -- "$o" "$TMP/man.txt" || echo "$v $o" >>"$TMP/man_missing"
		done
	done
	check "${T}_man_from_usage" "verbs '${verbs//$'\n'/ }'; not in the man page: $(head -3 "$TMP/man_missing" | tr '\n' ' ')" \
		test -n "$verbs" -a ! -s "$TMP/man_missing"
else
	skip "${T}_man_from_usage" "man is not installed (scripts/install-deps.sh)"
fi

# The installed binary on the testbed, run as the units run it.
IB=$D/usr/sbin/blitz
exec_line() { # UNIT KEY - the command of KEY= with %I and the settings filled in
	sed -n "s/^$2=//p" "$1" | sed "s|%I|$SRV_IF|g; s|/usr/sbin/|$D/usr/sbin/|"
}
# The example settings with the test's port.
sed 's/-p 80"/-p '"$PORT"'"/' "$D/etc/blitz/example.conf" >"$TMP/$SRV_IF.conf"
# shellcheck disable=SC1090
. "$TMP/$SRV_IF.conf"
start=$(exec_line "$UNITS/blitz-load@.service" ExecStart)
stop=$(exec_line "$UNITS/blitz-load@.service" ExecStop)
$SRV bash -c "BLITZ_LOAD_OPTS='$BLITZ_LOAD_OPTS'; exec ${start/\$BLITZ_LOAD_OPTS/\$BLITZ_LOAD_OPTS}" >"$TMP/load" 2>&1
rc=$?
got=$($CLI timeout 5 curl -s "http://$SRV_IP:$PORT/")
check "${T}_load_unit_serves" "rc $rc '$(cat "$TMP/load")', curl '$got'" test "$rc" -eq 0 -a "$got" = "$BODY"
$SRV $stop >"$TMP/unload" 2>&1
rc=$?
check "${T}_load_unit_stop" "rc $rc '$(cat "$TMP/unload")'" bash -c "[ $rc -eq 0 ] && ! $SRV ip link show dev $SRV_IF | grep -q prog/xdp && [ ! -e /sys/fs/bpf/blitz/$SRV_IF ]"

start=$(exec_line "$UNITS/blitz@.service" ExecStart)
$SRV bash -c "BLITZ_SERVE_OPTS='$BLITZ_SERVE_OPTS'; exec ${start/\$BLITZ_SERVE_OPTS/\$BLITZ_SERVE_OPTS}" >"$TMP/serve" 2>&1 &
pid=$!
on_exit "kill -9 $pid"
if wait_line "$TMP/serve" "tier xdp \(native\)" "$pid" 20 &&
	[ "$($CLI timeout 5 curl -s "http://$SRV_IP:$PORT/")" = "$BODY" ]; then
	pass "${T}_serve_unit_serves"
else
	fail "${T}_serve_unit_serves" "$(tr '\n' '|' <"$TMP/serve")"
fi
stop_pid "$pid" TERM 10 # what systemctl stop sends
check "${T}_serve_unit_stop" "exit $STOP_RC: $(tail -2 "$TMP/serve" | tr '\n' '|')" \
	bash -c "[ $STOP_RC -eq 0 ] && ! $SRV ip link show dev $SRV_IF | grep -q prog/xdp"

$SRV "$IB" doctor "$SRV_IF" >"$TMP/doctor" 2>&1
rc=$?
r=$(awk '$1 == "dpdk-engine" { print $2, $3 }' "$TMP/doctor")
if [ -x "$D/usr/sbin/blitz-dpdk" ]; then
	check "${T}_doctor_installed" "rc $rc, $r" test "$rc" -eq 0 -a "$r" = "ok $D/usr/sbin/blitz-dpdk"
else
	check "${T}_doctor_installed" "rc $rc" test "$rc" -eq 0
fi

e2e_status
