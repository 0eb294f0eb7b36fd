#!/bin/bash
# gen-man.sh BLITZ - write the blitz(8) man page on stdout, generated from
# the binary's own usage texts (`blitz -h` and `blitz <verb> -h` for each
# verb it lists), so the page cannot drift from the CLI.
set -euo pipefail
bin=${1:?usage: gen-man.sh path/to/blitz}
version=$("$bin" --version | awk '{ print $2 }')

# roff-escape text: backslashes, and lines starting with . or '.
esc() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

verbs=$("$bin" -h | awk '/^commands:/ { on = 1; next } on && NF && $1 !~ /^-/ { print $1 }')

cat <<ROFF
.TH BLITZ 8 "" "blitz $version" "System Administration"
.SH NAME
blitz \- answer HTTP/1.1 hello-world requests before the kernel's TCP stack
.SH SYNOPSIS
ROFF
for v in $verbs; do
	printf '.B blitz %s\n' "$v"
	"$bin" "$v" -h | head -1 | sed -e 's/^usage: blitz [a-z]* *//' | esc
	printf '.br\n'
done
cat <<ROFF
.SH DESCRIPTION
ROFF
"$bin" -h | awk 'NR > 2 && /^commands:/ { exit } NR > 2' | esc
printf '.SH COMMANDS\n'
for v in $verbs; do
	printf '.SS %s\n' "$v"
	printf '.nf\n'
	"$bin" "$v" -h | tail -n +2 | esc
	printf '.fi\n'
done
cat <<ROFF
.SH FILES
.TP
.I /sys/fs/bpf/blitz/<ifname>/
the maps of blitz on an interface (config, responses, counters, xsks)
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
