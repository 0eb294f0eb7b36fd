#!/usr/bin/python3
# tests/e2e/trust_spoof.py - run by test_trust.sh.
import random, sys, time
from scapy.all import AsyncSniffer, Ether, IP, TCP, conf, sendp, get_if_hwaddr
conf.verb = 0
ifc, src, dst, port, kind, n = sys.argv[1:]
port, n = int(port), int(n)
rnd = random.Random(9)
sn = AsyncSniffer(iface=ifc, filter="tcp and src host %s and src port %d" % (dst, port))
sn.start()
time.sleep(0.5)
bodies = [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
          b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc",
          b"GET / HTTP/1.1\r\nHost: x\r\n"]
frames = []
for i in range(n):
    opts = []
    if kind == "tsecr":
        opts = [("NOP", None), ("NOP", None), ("Timestamp", (rnd.getrandbits(32), rnd.getrandbits(32)))]
    frames.append(IP(src=src, dst=dst) / TCP(sport=rnd.randrange(20000, 60000), dport=port,
                  flags="PA", seq=rnd.getrandbits(32), ack=rnd.getrandbits(32),
                  options=opts) / bodies[i % 3])
frames.append(IP(src=src, dst=dst) / TCP(sport=19999, dport=port, flags="S", seq=1))
from scapy.all import send
send(frames, iface=ifc, inter=0)
time.sleep(1.5)
got = [p for p in sn.stop() if TCP in p]
bad = [p for p in got if len(p[TCP].payload) > 0 or p[TCP].flags & 0x01]
synack = [p for p in got if p[TCP].flags & 0x12 == 0x12 and p[TCP].dport == 19999]
print(len(bad), len(synack))
