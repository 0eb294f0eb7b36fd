#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""seq_diff.py - the same raw segment sequences to two servers on the
testbed, the xdp engine (PORT_A) and the kernel's TCP (PORT_B, the epoll
engine), from unconfigured addresses next to SRC_IP (so the client's own
kernel stays out; the server namespace has static neighbours for them).

Usage: seq_diff.py IFACE SRC_IP DST_IP PORT_A PORT_B DMAC N SEED

Each sequence is one script (two requests in separate segments, a
duplicate, a hole, request+FIN, close then FIN, data after the server's
FIN) played in lockstep on many connections, then a drain: the client
retransmits what is unacked from snd_una, as Linux's RTO would. Per
connection the outcome is (client bytes acked, responses in the stream,
server FIN, RST); the oracle checks no ack covers bytes never sent. Prints
"sequences=N segments=N mismatches=N bad_acks=N" and, per mismatch, a line
on stderr. Only the addresses given (testbed addresses) are ever sent to.
"""
import random
import socket
import sys

from tcp_wire import (ACK, FIN, IP_DF, PSH, RST, SYN, opt_mss,
                      opt_timestamps, packet_socket, parse_tcp4, received,
                      send_frame, tcp4_frame)


def frame(eth, src, dst, sport, dport, flags, seq, ack, tsval, tsecr,
          data=b"", syn=False):
    """A segment of a Linux-like client: MSS and timestamps on the SYN,
    timestamps after, DF, window 64240."""
    if syn:
        opts = opt_mss(1460) + opt_timestamps(tsval, 0)
    else:
        opts = opt_timestamps(tsval, tsecr)
    return tcp4_frame(eth, src, dst, sport, dport, flags, seq, ack, data,
                      opts, win=64240, frag=IP_DF)


def req(path, close=False):
    return ("GET /%s HTTP/1.1\r\nHost: h\r\n%s\r\n" %
            (path, "Connection: close\r\n" if close else "")).encode()


SCRIPTS = ["pipe2", "dup", "hole", "reqfin", "close_fin", "after_fin"]


class Conn:
    def __init__(self, src, port, script, seed):
        self.src, self.port, self.script = src, port, script
        r = random.Random(seed)
        self.sport = r.randrange(20000, 60000)
        self.iss = r.randrange(1 << 32)
        self.tsval = r.randrange(1 << 30)
        self.stream = b""  # client bytes
        self.snd_max = 0   # offsets from iss + 1
        self.snd_una = 0
        self.fin_sent = False
        self.siss = None
        self.rcv = {}      # server offset -> byte
        self.rcv_nxt = 0
        self.rcv_wup = 0
        self.ts_recent = 0
        self.srv_fin = False
        self.rst = False
        self.bad_ack = 0
        p = random.Random(seed >> 1).choice(["a", "bb", "ccc", "x" * 9])
        self.reqs = [req(p + "1", script in ("close_fin", "after_fin")),
                     req(p + "2")]


class Run:
    def __init__(self, a):
        (self.iface, self.src, self.dst, pa, pb, self.dmac, n,
         seed) = a
        self.ports = (int(pa), int(pb))
        self.n, self.seed = int(n), int(seed)
        self.s = packet_socket(self.iface)
        smac = self.s.getsockname()[4][:6]
        self.eth = bytes.fromhex(self.dmac.replace(":", "")) + smac + \
            b"\x08\x00"
        self.segs = 0
        self.conns = {}

    def send(self, c, flags, off, data=b"", fin=False):
        c.tsval += 1
        f = frame(self.eth, c.src, self.dst, c.sport, c.port,
                  flags | (FIN if fin else 0), c.iss + 1 + off,
                  (c.siss + 1 + c.rcv_nxt) if c.siss is not None else 0,
                  c.tsval, c.ts_recent, data, syn=flags == SYN)
        c.rcv_wup = c.rcv_nxt
        end = off + len(data) + (1 if fin else 0)
        if flags != SYN and end > c.snd_max:
            c.snd_max = end
        send_frame(self.s, f, 200)
        self.segs += 1

    def write(self, c, i, fin=False):
        off = len(c.stream)
        c.stream += c.reqs[i]
        self.send(c, PSH | ACK, off, c.reqs[i], fin)

    def collect(self, secs):
        for d, _, a in received(self.s, secs):
            g = parse_tcp4(d)
            if a[2] == socket.PACKET_OUTGOING or g is None:
                continue
            c = self.conns.get((g.dst, g.dport, g.sport))
            if c is not None:
                self.rx(c, g.seq, g.ack, g.flags, g.tsval, g.payload)

    def rx(self, c, seq, ack, fl, tsv, data):
        if fl & (SYN | ACK) == SYN | ACK:
            c.siss = seq
            c.ts_recent = tsv or 0
            return
        if c.siss is None:
            return
        so = (seq - c.siss - 1) & 0xffffffff
        if fl & RST:
            c.rst = True
            return
        aoff = (ack - c.iss - 1) & 0xffffffff
        if fl & ACK:
            if aoff > c.snd_max and aoff < 1 << 31:
                c.bad_ack += 1
            if c.snd_una < aoff <= c.snd_max:
                c.snd_una = aoff
        if tsv is not None and so <= c.rcv_wup:
            c.ts_recent = tsv
        for k, b in enumerate(data):
            c.rcv.setdefault(so + k, b)
        while c.rcv_nxt in c.rcv:
            c.rcv_nxt += 1
        if fl & FIN and so + len(data) == c.rcv_nxt and not c.srv_fin:
            c.srv_fin = True
            c.rcv_nxt += 1

    def outcome(self, c):
        body = bytes(c.rcv.get(i, 0) for i in range(c.rcv_nxt -
                                                   (1 if c.srv_fin else 0)))
        return (c.snd_una, body.count(b"HTTP/1.1 200"), c.srv_fin, c.rst)

    def batch(self, conns):
        for c in conns:
            self.conns[(c.src, c.sport, c.port)] = c
            self.send(c, SYN, -1)
        self.collect(0.15)
        live = [c for c in conns if c.siss is not None]
        for c in live:
            sc = c.script
            if sc == "pipe2":
                self.write(c, 0)
                self.write(c, 1)
            elif sc == "dup":
                self.write(c, 0)
                self.send(c, PSH | ACK, 0, c.stream)
            elif sc == "hole":
                c.stream = c.reqs[0] + c.reqs[1]
                self.send(c, PSH | ACK, len(c.reqs[0]), c.reqs[1])
                self.send(c, PSH | ACK, 0, c.reqs[0])
            elif sc == "reqfin":
                self.write(c, 0, fin=True)
                c.fin_sent = True
            else:
                self.write(c, 0)
        self.collect(0.1)
        for c in live:
            if c.script == "close_fin" and not c.rst:
                self.send(c, ACK, len(c.stream), fin=True)
                c.fin_sent = True
            elif c.script == "after_fin" and not c.rst:
                self.write(c, 1)
        self.collect(0.1)
        for _ in range(4):
            todo = [c for c in live if not c.rst and c.snd_una < c.snd_max]
            if not todo:
                break
            for c in todo:
                self.send(c, PSH | ACK if c.snd_una < len(c.stream) else ACK,
                          c.snd_una, c.stream[c.snd_una:], c.fin_sent)
            self.collect(0.25)
        for c in live:  # let the kernel's sockets go
            if not c.rst:
                self.send(c, RST, c.snd_max)
        return live

    def main(self):
        r = random.Random(self.seed)
        base = self.src.rsplit(".", 1)[0]
        done = mism = bad = 0
        per = 60
        for b in range(0, self.n, per):
            pairs = []
            for k in range(min(per, self.n - b)):
                sc = r.choice(SCRIPTS)
                src = "%s.%d" % (base, 150 + (k % 40))
                s = r.randrange(1 << 30) * 2  # same requests, other ports
                pairs.append((Conn(src, self.ports[0], sc, s),
                              Conn(src, self.ports[1], sc, s + 1)))
            self.batch([x for p in pairs for x in p])
            for a_, b_ in pairs:
                if a_.siss is None or b_.siss is None:
                    continue
                done += 1
                bad += a_.bad_ack + b_.bad_ack
                oa, ob = self.outcome(a_), self.outcome(b_)
                if oa != ob:
                    mism += 1
                    print("mismatch %s: xdp %s kernel %s" %
                          (a_.script, oa, ob), file=sys.stderr)
        print("sequences=%d segments=%d mismatches=%d bad_acks=%d" %
              (done, self.segs, mism, bad))
        return 0


if __name__ == "__main__":
    sys.exit(Run(sys.argv[1:9]).main())
