#!/usr/bin/python3
# tests/e2e/vlan_probe.py - run by test_vlan.sh.
import sys, time
from scapy.all import AsyncSniffer, Dot1AD, Dot1Q, Ether, IP, TCP, conf, sendp
conf.verb = 0
ifc, src, dst, port, mac, kind = sys.argv[1:]
port = int(port)
tags = {"q100": [Dot1Q(vlan=100)], "qinq": [Dot1AD(vlan=7), Dot1Q(vlan=100)],
        "prio0": [Dot1Q(vlan=0, prio=1)], "prio0ack": [Dot1Q(vlan=0, prio=1)]}[kind]
sn = AsyncSniffer(iface=ifc, filter="ether src %s" % mac)
sn.start()
time.sleep(0.5)
frames = []
for i in range(5):
    f = Ether(dst=mac)
    for t in tags:
        f = f / t
    if kind == "prio0ack":  # a request with a TSecr that is no cookie
        tcp = TCP(sport=31000 + i, dport=port, flags="PA", seq=5000, ack=7000 + i,
                  options=[("NOP", None), ("NOP", None), ("Timestamp", (2, 12345 + i))])
        tcp = tcp / b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    else:
        tcp = TCP(sport=30000 + i, dport=port, flags="S", seq=1000 + i,
                  options=[("MSS", 1460), ("SAckOK", b""), ("Timestamp", (1, 0)),
                           ("WScale", 7)])
    frames.append(f / IP(src=src, dst=dst) / tcp)
sendp(frames, iface=ifc, inter=0.05)
time.sleep(1.5)
got = [p for p in sn.stop() if TCP in p]
synack = [p for p in got if p[TCP].flags & 0x12 == 0x12]
rst = [p for p in got if p[TCP].flags & 0x04]
print(len([p for p in synack if Dot1Q in p or Dot1AD in p]),
      len([p for p in synack if not (Dot1Q in p or Dot1AD in p)]), len(rst))
