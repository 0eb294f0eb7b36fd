#!/bin/sh
# Install every Debian package that building, testing and benchmarking blitz
# needs. Safe to run twice: apt-get skips what is already installed.
set -eu

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root (apt-get needs it)" >&2
	exit 1
fi

PKGS="
	build-essential make pkg-config clang llvm lld
	libbpf-dev libxdp-dev xdp-tools bpftool
	libelf-dev zlib1g-dev libpcap-dev linux-libc-dev gcc-multilib
	libclang-rt-14-dev
	libdpdk-dev dpdk
	iproute2 iputils-ping iputils-arping ethtool procps psmisc
	curl wget wrk apache2-utils nghttp2-client netcat-openbsd
	python3 python3-scapy python3-prometheus-client
	nginx-light h2o
	gnuplot-nox jq
	clang-format cppcheck shellcheck
	systemd man-db groff-base
"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "install-deps: everything already installed"
	exit 0
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
# The Debian nginx and h2o packages start a system service on port 80/8080;
# blitz's tests and benchmarks start their own instances in namespaces.
for svc in nginx h2o; do
	if command -v systemctl >/dev/null 2>&1; then
		systemctl stop "$svc" >/dev/null 2>&1 || true
		systemctl disable "$svc" >/dev/null 2>&1 || true
	fi
	if [ -x "/etc/init.d/$svc" ]; then
		"/etc/init.d/$svc" stop >/dev/null 2>&1 || true
	fi
done
echo "install-deps: done"
