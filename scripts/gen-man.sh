#!/bin/bash
# gen-man.sh BLITZ - write the blitz(8) man page on stdout. The synopsis
# and every command's options come from the binary's option tables
# (`blitz help --synopsis`, `blitz help --man`), so the page cannot drift
# from the CLI; this script adds the header and the sections around them.
set -euo pipefail
bin=${1:?usage: gen-man.sh path/to/blitz}
version=$("$bin" --version | awk '{ print $2 }')

# roff-escape plain text: backslashes, and lines starting with . or '.
esc() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

cat <<ROFF
.TH BLITZ 8 "" "blitz $version" "System Administration"
.SH NAME
blitz \- answer HTTP/1.1 hello-world requests before the kernel's TCP stack
.SH SYNOPSIS
.nf
ROFF
"$bin" help --synopsis | esc
cat <<ROFF
.fi
.SH DESCRIPTION
blitz answers HTTP/1.1 "hello" requests in the NIC driver (XDP), on AF_XDP
sockets or a DPDK port, and passes whatever the fast path does not answer
to the kernel's TCP stack on the same connection. Start with
.B blitz doctor
.IR ifname ,
then
.B blitz load
(no process stays) or
.B blitz serve
(in the foreground, or as the systemd unit blitz@<ifname>.service).
.SH COMMANDS
ROFF
"$bin" help --man
cat <<ROFF
.SH FILES
.TP
.I /sys/fs/bpf/blitz/<ifname>/
the maps of blitz on an interface (config, responses, counters_block, xsks)
.TP
.I /run/blitz/serve-*.state
one file per running serve, read by status
.TP
.I /etc/blitz/<ifname>.conf
settings of the systemd units blitz@<ifname>.service (BLITZ_SERVE_OPTS) and
blitz-load@<ifname>.service (BLITZ_LOAD_OPTS)
.SH EXIT STATUS
0 on success; 1 on error, with one line saying what is wrong and what to do.
doctor: 1 when any check fails.
.SH SEE ALSO
.BR ethtool (8),
.BR ip (8),
.BR systemctl (1),
.BR xdp-loader (8)
ROFF
