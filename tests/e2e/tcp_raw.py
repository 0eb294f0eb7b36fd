#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tcp_raw.py - raw TCP segments (scapy) against a server on the testbed,
for the RFC 5961, tail-loss and partial-request checks of the userspace TCP
core, with the kernel (the epoll engine) as the reference.

Usage: tcp_raw.py MODE IFACE SRC_IP DST_IP PORT [options]

Modes (each prints one result line "key=value ..." on stdout):
  rst    a kernel socket connects from SRC_IP and gets an answer; then a RST
         in the window but not at RCV.NXT is injected on its 4-tuple. Prints
         challenge_ack=0|1 and answered=0|1 (the next request on the socket).
  syn    the same with a SYN carrying a new ISN on the established tuple.
         Prints challenge_ack, synack (a SYN-ACK came back) and answered.
  flood  --conns N connections from --srcs addresses next to SRC_IP (not
         configured here, so this host's kernel stays out of them) each
         send a partial header and then bare ACKs; meanwhile a kernel socket
         from SRC_IP sends a request in three segments. Prints held=N (the
         flood connections the server ACKed) and answered=0|1.
  tlp    one raw connection from an unconfigured address next to SRC_IP
         asks for a large body, ACKs what came first and then nothing.
         Prints probe_ms (the quiet gap before the next segment, by the
         kernel's arrival times) and probe=new|tail|rto: new data or the
         last bytes sent again (a tail-loss probe), or a go-back-N resend
         from the first unacknowledged byte (the RTO).
  csum   a raw connection from an unconfigured address next to SRC_IP
         (and, with --dst6, next to --src6 over IPv6) gets nothing for
         segments whose checksum does not verify: a SYN with an option
         byte flipped, a GET with a payload byte flipped, over IPv4 a GET
         whose IPv4 header was changed; then the same GET intact is
         answered from the first byte. Prints per family synack_bad=0|1
         bad_tcp=0|1 bad_ip=0|1 (segments that came back) and answered=0|1.
  dsack  a raw connection with SACK from the unconfigured address .99 next
         to SRC_IP (a server on kernel sockets needs a static neighbour
         for it) gets its GET answered and ACKs the answer; then the GET
         comes again, first with a payload byte flipped (nothing may come
         back), then intact: a duplicate, which Linux answers at once with
         an ACK whose first SACK block names it (RFC 2883, D-SACK). Prints
         dup_bad=0|1 (segments for the corrupted copy) and dsack=S-E (the
         first SACK block of the ACK for the intact copy, relative to the
         GET's first byte; "none" without one).
Only the addresses given (testbed addresses) are ever sent to.
"""
import argparse
import os
import random
import socket
import struct
import sys
import time

from scapy.all import IP, TCP, Ether, IPv6, raw  # noqa: E402 (Debian's scapy)
from tcp_wire import (ACK, PSH, RST, SO_TIMESTAMPNS, SYN, eth_header,
                      opt_mss, packet_socket, parse_tcp4, received,
                      send_frame, tcp4_frame)


def mac_of(w):
    """The MAC of the interface the packet socket is bound to (not from
    /sys: under nsenter it shows the host's interfaces)."""
    return ":".join("%02x" % b for b in w.s.getsockname()[4][:6])


class Wire:
    """An AF_PACKET socket on IFACE: send frames, read TCP segments."""

    def __init__(self, iface):
        self.s = packet_socket(iface)
        # SO_TIMESTAMPNS: the kernel's arrival time of each frame, so a
        # busy interpreter does not blur the gaps the tlp mode measures.
        self.s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.iface = iface

    def send(self, frame):
        send_frame(self.s, frame)

    def segments(self, secs):
        """Yield (outgoing, src, sport, dst, dport, seq, ack, flags, win,
        payload_len, t) of IPv4 TCP frames seen for up to secs."""
        for d, anc, a in received(self.s, secs, 64):
            t = time.monotonic()
            for lvl, typ, v in anc:
                if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                    sec, ns = struct.unpack("qq", v[:16])
                    t = sec + ns / 1e9  # CLOCK_REALTIME
            g = parse_tcp4(d)
            if g is None:
                continue
            yield (a[2] == socket.PACKET_OUTGOING, g.src, g.sport, g.dst,
                   g.dport, g.seq, g.ack, g.flags, g.win, g.plen, t)


def frame(smac, dmac, src, dst, sport, dport, flags, seq, ack, data=b"",
          win=65535, opts=None):
    """A segment built by scapy (the crafted ones)."""
    t = TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack,
            window=win, options=opts or [])
    return raw(Ether(src=smac, dst=dmac) / IP(src=src, dst=dst) / t / data)


class FastFrames:
    """The flood's thousands of plain segments, built by hand (scapy takes
    about a millisecond each), with correct checksums; the first one of
    each kind is compared with scapy's bytes."""

    FL = {"S": SYN, "A": ACK, "PA": PSH | ACK, "R": RST}

    def __init__(self, smac, dmac):
        self.eth = eth_header(smac, dmac)
        self.checked = set()

    def __call__(self, src, dst, sport, dport, flags, seq, ack, data=b"",
                 mss=None):
        f = tcp4_frame(self.eth, src, dst, sport, dport, self.FL[flags],
                       seq, ack, data, opt_mss(mss) if mss else b"")
        if flags not in self.checked:
            self.checked.add(flags)
            ref = raw(Ether(
                src=":".join("%02x" % x for x in self.eth[6:12]),
                dst=":".join("%02x" % x for x in self.eth[:6])) / IP(
                    src=src, dst=dst, id=1, flags=0) / TCP(
                        sport=sport, dport=dport, flags=flags, seq=seq,
                        ack=ack, window=65535,
                        options=[("MSS", mss)] if mss else []) / data)
            if ref != f:
                raise SystemExit("error=fast_frame_differs_from_scapy")
        return f


def http_get(host, path="/", close=False):
    return ("GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" %
            (path, host, "Connection: close\r\n" if close else "")).encode()


def read_response(sock, secs):
    """One HTTP response (headers + Content-Length body) or b""."""
    sock.settimeout(secs)
    got = b""
    end = time.monotonic() + secs
    try:
        while time.monotonic() < end:
            if b"\r\n\r\n" in got:
                head, _, body = got.partition(b"\r\n\r\n")
                cl = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        cl = int(line.split(b":")[1])
                if len(body) >= cl:
                    return got
            d = sock.recv(65536)
            if not d:
                break
            got += d
    except (socket.timeout, ConnectionError):
        pass
    return got if b"\r\n\r\n" in got else b""


def kernel_conn(a, w):
    """A kernel socket from SRC_IP with one request answered; returns it
    and the tuple's next sequence numbers (client's, server's) as seen on
    the wire."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.bind((a.src, 0))
    s.settimeout(5)
    s.connect((a.dst, a.port))
    sport = s.getsockname()[1]
    s.sendall(http_get(a.dst))
    ok = bool(read_response(s, 5))
    cli_nxt = srv_nxt = None
    for (out, src, sp, dst, dp, seq, ack, fl, win, plen,
         _) in w.segments(0.5):
        if out and sp == sport and dp == a.port:
            cli_nxt = seq + plen + (1 if fl & 3 else 0)
            srv_nxt = ack
        elif not out and dp == sport and sp == a.port:
            srv_nxt = seq + plen + (1 if fl & 3 else 0)
    return s, sport, ok, cli_nxt, srv_nxt


def watch_answer(a, w, sport, cli_nxt, secs):
    """After an injected segment: (challenge ACK seen, SYN-ACK seen)."""
    chal = synack = False
    for (out, src, sp, dst, dp, seq, ack, fl, win, plen,
         _) in w.segments(secs):
        if out or dp != sport or sp != a.port:
            continue
        if fl & 0x12 == 0x12:
            synack = True
        elif fl & 0x10 and not fl & 0x04 and not plen and ack == cli_nxt:
            chal = True
    return chal, synack


def mode_inject(a, w, kind):
    smac, dmac = mac_of(w), a.dmac
    s, sport, ok, cli_nxt, srv_nxt = kernel_conn(a, w)
    if not ok or cli_nxt is None:
        print("error=first_request_failed")
        return 1
    if kind == "rst":
        f = frame(smac, dmac, a.src, a.dst, sport, a.port, "R",
                  cli_nxt + 1000, 0)
    else:
        f = frame(smac, dmac, a.src, a.dst, sport, a.port, "S",
                  random.randrange(1 << 32), 0,
                  opts=[("MSS", 1460)])
    w.send(f)
    chal, synack = watch_answer(a, w, sport, cli_nxt, 0.5)
    # The next request on the same connection.
    try:
        s.sendall(http_get(a.dst, "/after"))
        answered = bool(read_response(s, 3))
    except OSError:
        answered = False
    s.close()
    print("challenge_ack=%d synack=%d answered=%d" %
          (int(chal), int(synack), int(answered)))
    return 0


def neighbours(src, n):
    """n addresses next to src in its /24 (.100 on), never src itself."""
    base = src.rsplit(".", 1)[0]
    return ["%s.%d" % (base, 100 + i) for i in range(n)]


def mode_flood(a, w):
    smac, dmac = mac_of(w), a.dmac
    srcs = neighbours(a.src, a.srcs)
    per = (a.conns + len(srcs) - 1) // len(srcs)
    conns = [(ip, 20000 + k) for ip in srcs for k in range(per)][:a.conns]
    iss = {c: random.randrange(1 << 32) for c in conns}
    ff = FastFrames(smac, dmac)
    for (ip, p) in conns:
        w.send(ff(ip, a.dst, p, a.port, "S", iss[(ip, p)], 0, mss=1460))
    srv = {}
    for (out, src, sp, dst, dp, seq, ack, fl, win, plen,
         _) in w.segments(3):
        if not out and fl & 0x12 == 0x12 and (dst, dp) in iss:
            srv[(dst, dp)] = seq + 1
        if len(srv) == len(conns):
            break
    part = b"GET /flood HTTP/1.1\r\nHost: x\r\nX-Slow: "
    for c, s_isn in srv.items():
        w.send(ff(c[0], a.dst, c[1], a.port, "PA", iss[c] + 1, s_isn,
                  part))
    held = set()
    for (out, src, sp, dst, dp, seq, ack, fl, win, plen,
         _) in w.segments(1):
        if not out and (dst, dp) in srv and ack == iss[(dst, dp)] + 1 + \
                len(part) and not fl & 0x04:
            held.add((dst, dp))

    acks = [ff(c[0], a.dst, c[1], a.port, "A", iss[c] + 1 + len(part),
               s_isn) for c, s_isn in srv.items()]

    def bare_acks():
        for f in acks:
            w.send(f)
    t0 = time.monotonic()
    bare_acks()
    # The new client: a request in three segments, the flood going on.
    answered = False
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.bind((a.src, 0))
        s.settimeout(5)
        s.connect((a.dst, a.port))
        req = http_get(a.dst, "/victim")
        for k, piece in enumerate((req[:12], req[12:30], req[30:])):
            s.sendall(piece)
            if k < 2:
                bare_acks()
                time.sleep(0.05)
        answered = bool(read_response(s, 5))
        s.close()
    except OSError as e:
        print("# victim: %s" % e, file=sys.stderr)
    print("synacks=%d held=%d answered=%d victim_s=%.1f" %
          (len(srv), len(held), int(answered), time.monotonic() - t0))
    return 0


def mode_tlp(a, w):
    smac, dmac = mac_of(w), a.dmac
    ip = neighbours(a.src, 1)[0]
    sport = random.randrange(30000, 60000)
    iss = random.randrange(1 << 32)
    w.send(frame(smac, dmac, ip, a.dst, sport, a.port, "S", iss, 0,
                 opts=[("MSS", 1460), ("WScale", 7)]))
    s_isn = None
    for (out, src, sp, dst, dp, seq, ack, fl, win, plen,
         _) in w.segments(2):
        if not out and dst == ip and dp == sport and fl & 0x12 == 0x12:
            s_isn = seq
            break
    if s_isn is None:
        print("error=no_synack")
        return 1
    req = http_get(a.dst, "/big")
    cseq = iss + 1
    w.send(frame(smac, dmac, ip, a.dst, sport, a.port, "PA", cseq, s_isn + 1,
                 req))
    cseq += len(req)
    base = s_isn + 1
    hi = base        # highest end sent by the server
    acked = False
    last = None      # arrival of the last segment (kernel timestamp)
    probe_ms, kind = -1.0, "none"
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and kind == "none":
        for (out, src, sp, dst, dp, seq, ack, fl, win, plen,
             t) in w.segments(0.02):
            if out or dst != ip or dp != sport or not plen:
                continue
            end = seq + plen
            # last is None right after our ACK: the flight it opens
            # starts a new measurement (its gap is our ACK's delay).
            gap = (t - last) * 1000 if last is not None else 0
            new = (end - hi) & 0x80000000 == 0 and end != hi
            if acked and gap >= 5:
                # The first segment after the flight went quiet: a probe
                # (new data or the tail again) or the RTO's go-back-N.
                probe_ms = gap
                kind = "new" if new else ("tail" if end == hi else "rto")
                break
            if new:
                hi = end
            last = t
        if not acked and hi != base:
            # ACK what came (an RTT sample), then go silent.
            w.send(frame(smac, dmac, ip, a.dst, sport, a.port, "A", cseq, hi,
                         win=65535))
            acked = True
            last = None
    # Let the server go: RST at its next sequence number.
    w.send(frame(smac, dmac, ip, a.dst, sport, a.port, "R", cseq, 0))
    print("probe_ms=%.1f probe=%s bytes=%d" %
          (probe_ms, kind, (hi - base) & 0xffffffff))
    return 0


class RawConn:
    """One raw connection from src to the server's dst:port (IPv4 or, with
    l3=IPv6, IPv6): its segments as bytes, and what the server sends to
    its port."""

    def __init__(self, a, w, src, dst, l3=IP):
        self.w, self.smac, self.dmac, self.port = w, mac_of(w), a.dmac, a.port
        self.src, self.dst, self.l3 = src, dst, l3
        self.sport = random.randrange(30000, 60000)
        self.iss = random.randrange(1 << 32)

    def seg(self, flags, seq, ack, data=b"", opts=None):
        return bytearray(raw(
            Ether(src=self.smac, dst=self.dmac) /
            self.l3(src=self.src, dst=self.dst) /
            TCP(sport=self.sport, dport=self.port, flags=flags, seq=seq,
                ack=ack, window=65535, options=opts or []) / data))

    def answers(self, secs, until=None):
        """The server's segments to our port within secs: (flags, seq,
        len, first SACK block or None); with until, stops at the first
        segment it holds for (a wait for an answer; a check that nothing
        came keeps its whole window)."""
        got = []
        for d, _, pa in received(self.w.s, secs):
            if pa[2] == socket.PACKET_OUTGOING:
                continue
            p = Ether(d)
            if TCP not in p or p[TCP].dport != self.sport:
                continue
            blk = next((o[1][:2] for o in p[TCP].options
                        if o[0] == "SAck" and len(o[1]) >= 2), None)
            got.append((int(p[TCP].flags), p[TCP].seq,
                        len(p[TCP].payload), blk))
            if until and until(got[-1]):
                break
        return got


def csum_family(a, w, v6):
    """One family of the csum mode: its result words."""
    if v6:
        src, dst, l3, hlen = a.src6.rsplit(":", 1)[0] + ":160", a.dst6, IPv6, 40
    else:
        src, dst, l3, hlen = neighbours(a.src, 61)[60], a.dst, IP, 20
    l4 = 14 + hlen
    c = RawConn(a, w, src, dst, l3)
    seg, answers, iss = c.seg, c.answers, c.iss

    def flipped(f, at):
        f[at] ^= 0x20
        return bytes(f)

    syn = seg("S", iss, 0, opts=[("MSS", 1460)])
    w.send(flipped(syn, l4 + 20 + 3))
    synack_bad = int(any(fl & 0x12 == 0x12 for fl, _, _, _ in answers(0.7)))
    w.send(bytes(seg("S", iss, 0, opts=[("MSS", 1460)])))
    s_isn = next((sq for fl, sq, _, _ in
                  answers(2, lambda g: g[0] & 0x12 == 0x12)
                  if fl & 0x12 == 0x12), None)
    if s_isn is None:
        return "synack_bad=%d error=no_synack" % synack_bad
    cseq, sseq = iss + 1, (s_isn + 1) & 0xffffffff
    w.send(bytes(seg("A", cseq, sseq)))
    req = http_get(dst)
    w.send(flipped(seg("PA", cseq, sseq, req), l4 + 20 + 5))
    bad_tcp = int(bool(answers(1)))
    words = "synack_bad=%d bad_tcp=%d" % (synack_bad, bad_tcp)
    if not v6:
        # TTL changed, the IPv4 header's sum left: the TCP sum still holds.
        w.send(flipped(seg("PA", cseq, sseq, req), 14 + 8))
        words += " bad_ip=%d" % int(bool(answers(1)))
    w.send(bytes(seg("PA", cseq, sseq, req)))
    answered = int(any(sq == sseq and n > 0 for _, sq, n, _ in
                       answers(2, lambda g: g[1] == sseq and g[2] > 0)))
    w.send(bytes(seg("R", cseq + len(req), 0)))
    return words + " answered=%d" % answered


def mode_dsack(a, w):
    c = RawConn(a, w, a.src.rsplit(".", 1)[0] + ".99", a.dst)
    seg, answers, iss = c.seg, c.answers, c.iss
    w.send(bytes(seg("S", iss, 0,
                     opts=[("MSS", 1460), ("SAckOK", b""), ("NOP", None),
                           ("NOP", None)])))
    s_isn = next((sq for fl, sq, _, _ in
                  answers(2, lambda g: g[0] & 0x12 == 0x12)
                  if fl & 0x12 == 0x12), None)
    if s_isn is None:
        return print("error=no_synack") or 1
    cseq, sseq = iss + 1, (s_isn + 1) & 0xffffffff
    w.send(bytes(seg("A", cseq, sseq)))
    req = http_get(a.dst)
    w.send(bytes(seg("PA", cseq, sseq, req)))
    got = answers(2, lambda g: g[1] == sseq and g[2] > 0)
    n = next((ln for _, sq, ln, _ in got if sq == sseq and ln > 0), 0)
    if not n:
        return print("error=no_answer") or 1
    snd = (sseq + n) & 0xffffffff
    w.send(bytes(seg("A", cseq + len(req), snd)))
    answers(0.3)
    bad = seg("PA", cseq, snd, req)
    bad[-3] ^= 0x20
    w.send(bytes(bad))
    dup_bad = int(bool(answers(0.7)))
    w.send(bytes(seg("PA", cseq, snd, req)))
    blk = next((b for _, _, _, b in answers(1, lambda g: g[3] is not None)
                if b is not None), None)
    w.send(bytes(seg("R", cseq + len(req), 0)))
    dsack = ("%d-%d" % ((blk[0] - cseq) & 0xffffffff,
                        (blk[1] - cseq) & 0xffffffff)) if blk else "none"
    print("dup_bad=%d dsack=%s" % (dup_bad, dsack))
    return 0


def mode_csum(a, w):
    out = "v4: " + csum_family(a, w, False)
    if a.dst6:
        out += " v6: " + csum_family(a, w, True)
    print(out)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["rst", "syn", "flood", "tlp", "csum",
                                     "dsack"])
    ap.add_argument("iface")
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("port", type=int)
    ap.add_argument("--dmac", required=True, help="the server's MAC")
    ap.add_argument("--conns", type=int, default=2000)
    ap.add_argument("--srcs", type=int, default=20)
    ap.add_argument("--src6", help="csum: the client's IPv6 address")
    ap.add_argument("--dst6", help="csum: the server's IPv6 address")
    a = ap.parse_args()
    w = Wire(a.iface)
    if a.mode in ("rst", "syn"):
        return mode_inject(a, w, a.mode)
    if a.mode == "flood":
        return mode_flood(a, w)
    if a.mode == "csum":
        return mode_csum(a, w)
    if a.mode == "dsack":
        return mode_dsack(a, w)
    return mode_tlp(a, w)


if __name__ == "__main__":
    os.environ.setdefault("SCAPY_USE_LIBPCAP", "no")
    sys.exit(main())
