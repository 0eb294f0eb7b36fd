#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""ts_watch.py - watch the TSvals a server sends, as a Linux client's PAWS
check would (tcp_paws_check: a segment whose TSval is below ts_recent is
dropped).

Usage: ts_watch.py IFACE SERVER_IP PORT SECS   (IPv4: tests/e2e/tcp_wire.py)

Reads every frame on IFACE (an AF_PACKET socket, so it sees what the
client's stack receives) for SECS seconds, or until the connection ends
(0.5 s after the server's FIN or RST, for what it sends after its FIN).
For each connection from SERVER_IP:PORT it keeps the highest TSval seen
(serial arithmetic mod 2^32, RFC 7323) and counts segments whose TSval is
below it. Says "ready" on stderr once it reads. Prints one line:
  conns=N segs=N data=N ts=N back=N [worst=D]
(data: segments with payload; ts: segments with a timestamp option;
back: segments whose TSval went backwards, worst: the largest step back).
Only reads; sends nothing.
"""
import socket
import sys
import time

import tcp_wire as tw


ended = [None]  # when the server's FIN or RST came


def frames(s, secs):
    """(frame, address) of what s receives for up to secs, or until 0.5 s
    after the connection ended."""
    end = time.monotonic() + secs
    while True:
        now = time.monotonic()
        stop = min(end, ended[0] + 0.5) if ended[0] else end
        if now >= stop:
            return
        for frame, _, addr in tw.received(s, min(0.1, stop - now)):
            yield frame, addr


def main():
    iface, server, port, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    s = tw.packet_socket(iface, 4 << 20)
    print("ready", file=sys.stderr, flush=True)
    high = {}
    segs = data = ts = back = worst = 0
    for frame, addr in frames(s, secs):
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        g = tw.parse_tcp4(frame)
        if g is None or g.src != server or g.sport != port:
            continue
        if g.flags & (tw.FIN | tw.RST):
            ended[0] = ended[0] or time.monotonic()
        segs += 1
        if g.plen:
            data += 1
        tsv = g.tsval
        if tsv is None:
            continue
        ts += 1
        key = (g.dst, g.dport)
        if key not in high:
            high[key] = tsv
            continue
        d = (tsv - high[key]) & 0xFFFFFFFF
        if d >= 1 << 31:
            back += 1
            worst = max(worst, (1 << 32) - d)
        else:
            high[key] = tsv
    line = "conns=%d segs=%d data=%d ts=%d back=%d" % (len(high), segs, data, ts, back)
    if back:
        line += " worst=%d" % worst
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
