#!/usr/bin/python3
# tests/e2e/handoff_syn_probe.py - run by test_handoff.sh.
import sys
from scapy.all import IP, TCP, conf, sr1
conf.verb = 0
src, dst, port, ifc = sys.argv[1:]
a = sr1(IP(src=src, dst=dst) / TCP(sport=41010, dport=int(port), flags="PA",
        seq=1, ack=12345, options=[("Timestamp", (1, 99))]) / b"GET / HTTP/1.1\r\n",
        timeout=1, iface=ifc)
print("nothing" if a is None else "answered: " + a.summary())
