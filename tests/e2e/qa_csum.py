# SPDX-License-Identifier: GPL-2.0
"""qa_csum.py IFACE SMAC DMAC SRC DST PORT MODE [NREQ] - one connection from
the unconfigured address SRC (IPv4 or IPv6; the server has a static
neighbour for it, so the client's kernel never resets it): SYN with
timestamps, the final ACK, then NREQ pipelined GETs (default 1) in one
segment whose checksums are right (MODE good), whose last payload byte was
changed after the TCP checksum was filled (MODE badpay: what a corrupting
link does) or whose IPv4 header checksum is wrong (MODE badip, IPv4 only).
Prints 'data N acks [..]': the data segments the server sent after the GETs
and the client bytes they acked. Linux drops a segment whose checksum does
not verify (ip_rcv; tcp_v4_rcv, tcp_v6_rcv): it gets nothing."""
import random
import sys
import time

from scapy.all import (AsyncSniffer, Ether, IP, IPv6, TCP, Raw, conf, sendp,
                       srp1)

conf.verb = 0
iface, smac, dmac, src, dst, port, mode = sys.argv[1:8]
nreq = int(sys.argv[8]) if len(sys.argv) > 8 else 1
port = int(port)
sport = random.randint(40000, 45999)
tsv = random.randint(1, 1 << 30)
v6 = ":" in dst
ipl = IPv6 if v6 else IP
flt = (f"tcp and src host {dst} and src port {port} and dst port {sport}")
eth = Ether(src=smac, dst=dmac)
syn = eth / ipl(src=src, dst=dst) / TCP(
    sport=sport, dport=port, flags="S", seq=1000,
    options=[("MSS", 1400), ("SAckOK", b""), ("Timestamp", (tsv, 0)),
             ("NOP", None), ("WScale", 7)])
sa = srp1(syn, iface=iface, timeout=3, filter=flt)
if sa is None or (sa[TCP].flags & 0x12) != 0x12:
    print("no SYN-ACK")
    sys.exit(1)
tsecr = dict(sa[TCP].options)["Timestamp"][0]
sn = AsyncSniffer(iface=iface, filter=flt, store=True)
sn.start()
time.sleep(0.3)


def seg(flags, tsval, data=b""):
    p = eth / ipl(src=src, dst=dst) / TCP(
        sport=sport, dport=port, flags=flags, seq=1001, ack=sa[TCP].seq + 1,
        window=4096,
        options=[("NOP", None), ("NOP", None), ("Timestamp", (tsval, tsecr))])
    return bytearray(bytes(p / Raw(data) if data else p))


sendp(Ether(bytes(seg("A", tsv + 1))), iface=iface)
get = seg("PA", tsv + 2, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * nreq)
if mode == "badpay":
    get[-5] ^= 0x20  # "Host: x" -> "Host: X": still a valid request
get = Ether(bytes(get))
if mode == "badip":
    get[IP].chksum ^= 0x0101
sendp(get, iface=iface)
time.sleep(1.0)
sn.stop()
res = sn.results or []
data = [p for p in res if Raw in p]
acks = sorted({p[TCP].ack - 1001 for p in res if p[TCP].flags & 0x10})
print(f"data {len(data)} acks {acks}")
