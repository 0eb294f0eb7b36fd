# SPDX-License-Identifier: GPL-2.0
"""tests/e2e/burst_reload.py - a TC burst re-sent across `blitz reload`:
IFACE SRC DST PORT SMAC DMAC RELOAD_CMD.

A raw client (SRC: an address the client namespace does not own, so its
kernel never resets the server's segments) sends 16 pipelined GETs in one
segment and keeps the burst TC answers with (two or more segments). Then
RELOAD_CMD runs (a reload that changes the body, keeping its length), and
the client asks for the burst's first segment again (a duplicate ACK at
its start, the TSecr the burst carries). The segment that comes back must
carry the bytes sent the first time at that sequence number, or nothing.
Prints "burst=N resent=0|1 same=0|1" (rc 0), or what went wrong (rc 1).
"""
import subprocess
import sys
import time

import tcp_wire as tw

REQ = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"


def from_server(s, a, secs):
    """The TCP segments from the server to our port in secs seconds."""
    out = []
    for d, _, _ in tw.received(s, secs):
        g = tw.parse_tcp4(d)
        if g and g.src == a["dst"] and g.dport == a["sport"]:
            out.append(g)
    return out


def main():
    if len(sys.argv) != 8:
        print("usage: burst_reload.py IFACE SRC DST PORT SMAC DMAC RELOAD")
        return 2
    iface, src, dst, port, smac, dmac, reload_cmd = sys.argv[1:]
    a = {"dst": dst, "sport": 40000 + int(time.time()) % 20000}
    port = int(port)
    s = tw.packet_socket(iface)
    eth = tw.eth_header(smac, dmac)
    isn, ts = 1000, 100

    def send(flags, seq, ack, data=b"", tsecr=0, extra=b""):
        opts = extra + tw.opt_timestamps(ts, tsecr)
        tw.send_frame(s, tw.tcp4_frame(eth, src, dst, a["sport"], port,
                                       flags, seq, ack, data, opts))

    send(tw.SYN, isn, 0, extra=tw.opt_mss(1460) + b"\x01\x01\x01\x01")
    sa = [g for g in from_server(s, a, 1.0) if g.flags & tw.SYN]
    if not sa:
        print("no SYN-ACK")
        return 1
    snd0 = sa[0].seq + 1
    ts += 1
    batch = REQ * 16
    send(tw.ACK | tw.PSH, isn + 1, snd0, batch, tsecr=sa[0].tsval)
    burst = [g for g in from_server(s, a, 1.0) if g.plen]
    if len(burst) < 2:
        print("burst=%d: no TC burst of two or more segments" % len(burst))
        return 1
    first = {g.seq: g.payload for g in burst}
    if snd0 not in first:
        print("burst=%d: no segment at the burst's start" % len(burst))
        return 1
    subprocess.run(reload_cmd, shell=True, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    # A duplicate ACK at the burst's start: its first segment "was lost".
    ts += 1
    send(tw.ACK, isn + 1 + len(batch), snd0, tsecr=burst[0].tsval)
    again = [g for g in from_server(s, a, 1.0) if g.plen and g.seq == snd0]
    same = all(g.payload == first[snd0][:g.plen] for g in again)
    for g in again:
        if g.payload != first[snd0][:g.plen]:
            i = next(i for i, (x, y) in enumerate(zip(g.payload, first[snd0]))
                     if x != y)
            sys.stderr.write("differs at %d of %d: %r, first %r\n" % (
                i, g.plen, g.payload[i:i + 40], first[snd0][i:i + 40]))
    send(tw.RST, isn + 1 + len(batch), 0)
    print("burst=%d resent=%d same=%d" % (len(burst), len(again) > 0,
                                         int(same)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
