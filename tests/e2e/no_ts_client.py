#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""no_ts_client.py - a raw TCP client without timestamps (as Windows by
default) against the xdp engine, past its handshake (issue 10 part 2).

Usage: no_ts_client.py MODE IFACE SRC_IP DST_IP PORT DMAC SPORT

Frames through tests/e2e/tcp_wire.py (IPv4). SRC_IP is an address nobody
configured (the server namespace has a static neighbour for it), so the
client's own kernel stays out. Every
connection: SYN with only an MSS option, then the ACK with a GET (the
handshake-completing segment, proved by the ISN cookie: XDP answers it and
makes a flow entry). Then, by MODE:
  body   a GET with a body at the next point (seq after the GET, ack after
         the reply): proved by the flow entry, not answerable by XDP.
  moved  the next GET sent from another CPU (the flow entry is per CPU:
         there it has none), then the same GET again from the first CPU.
Prints one line "key=value ...": synack, first (bytes of the first reply),
then for body: reply=http|rst|none, rst_seq_ok (the RST's seq is the ack we
sent), http_seq_ok (the answer starts where our ack said); for moved:
other_cpu=none|http|rst, back=http|rst|none.
Only the addresses given (testbed addresses) are ever sent to.
"""
import os
import select
import socket
import sys
import time

import tcp_wire as tw

ACK, PSH, RST, SYN = tw.ACK, tw.PSH, tw.RST, tw.SYN


class Wire:
    def __init__(self, iface, src, dst, port, dmac, sport):
        self.s = tw.packet_socket(iface, 4 << 20)
        smac = ":".join("%02x" % b for b in self.s.getsockname()[4][:6])
        self.eth = tw.eth_header(smac, dmac)
        self.src, self.dst, self.port, self.sport = src, dst, port, sport

    def send(self, flags, seq, ack, data=b"", opts=b""):
        tw.send_frame(self.s, tw.tcp4_frame(
            self.eth, self.src, self.dst, self.sport, self.port, flags, seq,
            ack, data, opts, win=64240))

    def recv(self, secs, want=None):
        """Segments from the server to us for secs seconds (or until want
        returns true for one): a list of tcp_wire.Seg."""
        got = []
        end = time.monotonic() + secs
        while time.monotonic() < end:
            r, _, _ = select.select([self.s], [], [], end - time.monotonic())
            if not r:
                break
            try:
                f, addr = self.s.recvfrom(65536)
            except BlockingIOError:
                continue
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            g = tw.parse_tcp4(f)
            if not g or g.src != self.dst or g.dst != self.src or \
                    g.dport != self.sport:
                continue
            got.append(g)
            if want and want(g):
                break
        return got


def http_of(segs):
    return [g for g in segs if g.payload.startswith(b"HTTP/1.1 ")]


def rst_of(segs):
    return [g for g in segs if g.flags & RST]


def answer(g):
    return (g.flags & RST) or g.plen > 0


def main():
    mode, iface, src, dst, port, dmac, sport = sys.argv[1:8]
    port, sport = int(port), int(sport)
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[0]})
    w = Wire(iface, src, dst, port, dmac, sport)
    out = []
    isn = 1000000 + sport * 7
    w.send(SYN, isn, 0, opts=tw.opt_mss(1460))
    sa = [g for g in w.recv(3, lambda g: g.flags & (SYN | ACK) == SYN | ACK)
          if g.flags & (SYN | ACK) == SYN | ACK]
    out.append("synack=%d" % len(sa))
    if not sa:
        print(" ".join(out))
        return 1
    seq, ack = isn + 1, sa[0].seq + 1
    get = b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"
    w.send(PSH | ACK, seq, ack, get)
    first = http_of(w.recv(3, lambda g: g.plen > 0))
    out.append("first=%d" % (first[0].plen if first else 0))
    if not first:
        print(" ".join(out))
        return 1
    seq += len(get)
    ack = first[0].seq + first[0].plen
    if mode == "body":
        body = b"GET /b HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nbody"
        w.send(PSH | ACK, seq, ack, body)
        got = w.recv(3, answer)
        h, r = http_of(got), rst_of(got)
        out.append("reply=%s" % ("http" if h else "rst" if r else "none"))
        if r:
            out.append("rst_seq_ok=%d" % (r[0].seq == ack))
        if h:
            out.append("http_seq_ok=%d" % (h[0].seq == ack))
            # the kernel's connection now: ack its answer, close politely
            end = h[0].seq + h[0].plen
            w.send(ACK, seq + len(body), end)
            w.send(RST, seq + len(body), 0)
    elif mode == "moved":
        nxt = b"GET /2 HTTP/1.1\r\nHost: h\r\n\r\n"
        os.sched_setaffinity(0, {cpus[-1]})
        w.send(PSH | ACK, seq, ack, nxt)
        got = w.recv(1.5, answer)
        out.append("other_cpu=%s" % ("http" if http_of(got) else
                                     "rst" if rst_of(got) else "none"))
        os.sched_setaffinity(0, {cpus[0]})
        w.send(PSH | ACK, seq, ack, nxt)
        got = w.recv(3, answer)
        out.append("back=%s" % ("http" if http_of(got) else
                                "rst" if rst_of(got) else "none"))
    out.append("cpus=%d" % len(cpus))
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
