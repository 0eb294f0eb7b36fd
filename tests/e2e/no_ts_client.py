#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""no_ts_client.py - a raw TCP client without timestamps (as Windows by
default) against the xdp engine, past its handshake (issue 10 part 2).

Usage: no_ts_client.py MODE IFACE SRC_IP DST_IP PORT DMAC SPORT

SRC_IP is an address nobody configured (the server namespace has a
static neighbour for it), so the client's own kernel stays out. Every
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

from scapy.all import IP, TCP, Ether, raw  # noqa: E402 (Debian's scapy)

ETH_P_ALL = 3


class Wire:
    def __init__(self, iface, src, dst, port, dmac, sport):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                               socket.htons(ETH_P_ALL))
        self.s.setsockopt(socket.SOL_SOCKET, 33, 4 << 20)  # RCVBUFFORCE
        self.s.bind((iface, 0))
        self.s.setblocking(False)
        smac = ":".join("%02x" % b for b in self.s.getsockname()[4][:6])
        self.eth = Ether(src=smac, dst=dmac)
        self.src, self.dst, self.port, self.sport = src, dst, port, sport

    def send(self, flags, seq, ack, data=b"", opts=None):
        t = TCP(sport=self.sport, dport=self.port, flags=flags, seq=seq,
                ack=ack, window=64240, options=opts or [])
        self.s.send(raw(self.eth / IP(src=self.src, dst=self.dst) / t / data))

    def recv(self, secs, want=None):
        """Segments from the server to us for secs seconds (or until want
        returns true for one); returns the list of TCP layers."""
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
            p = Ether(f)
            if IP not in p or TCP not in p or p[IP].src != self.dst or \
                    p[IP].dst != self.src or p[TCP].dport != self.sport:
                continue
            got.append(p[TCP])
            if want and want(p[TCP]):
                break
        return got


def http_of(segs):
    return [t for t in segs if bytes(t.payload).startswith(b"HTTP/1.1 ")]


def rst_of(segs):
    return [t for t in segs if t.flags & 0x04]


def main():
    mode, iface, src, dst, port, dmac, sport = sys.argv[1:8]
    port, sport = int(port), int(sport)
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[0]})
    w = Wire(iface, src, dst, port, dmac, sport)
    out = []
    isn = 1000000 + sport * 7
    w.send("S", isn, 0, opts=[("MSS", 1460)])
    sa = [t for t in w.recv(3, lambda t: t.flags & 0x12 == 0x12)
          if t.flags & 0x12 == 0x12]
    out.append("synack=%d" % len(sa))
    if not sa:
        print(" ".join(out))
        return 1
    seq, ack = isn + 1, sa[0].seq + 1
    get = b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"
    w.send("PA", seq, ack, get)
    first = http_of(w.recv(3, lambda t: len(t.payload) > 0))
    out.append("first=%d" % (len(first[0].payload) if first else 0))
    if not first:
        print(" ".join(out))
        return 1
    seq += len(get)
    ack = first[0].seq + len(first[0].payload)
    if mode == "body":
        body = b"GET /b HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nbody"
        w.send("PA", seq, ack, body)
        got = w.recv(3, lambda t: (t.flags & 0x04) or len(t.payload) > 0)
        h, r = http_of(got), rst_of(got)
        out.append("reply=%s" % ("http" if h else "rst" if r else "none"))
        if r:
            out.append("rst_seq_ok=%d" % (r[0].seq == ack))
        if h:
            out.append("http_seq_ok=%d" % (h[0].seq == ack))
            # the kernel's connection now: ack its answer, close politely
            end = h[0].seq + len(h[0].payload)
            w.send("A", seq + len(body), end)
            w.send("R", seq + len(body), 0)
    elif mode == "moved":
        nxt = b"GET /2 HTTP/1.1\r\nHost: h\r\n\r\n"
        os.sched_setaffinity(0, {cpus[-1]})
        w.send("PA", seq, ack, nxt)
        got = w.recv(1.5, lambda t: (t.flags & 0x04) or len(t.payload) > 0)
        out.append("other_cpu=%s" % ("http" if http_of(got) else
                                     "rst" if rst_of(got) else "none"))
        os.sched_setaffinity(0, {cpus[0]})
        w.send("PA", seq, ack, nxt)
        got = w.recv(3, lambda t: (t.flags & 0x04) or len(t.payload) > 0)
        out.append("back=%s" % ("http" if http_of(got) else
                                "rst" if rst_of(got) else "none"))
    out.append("cpus=%d" % len(cpus))
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
