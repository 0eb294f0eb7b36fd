#!/usr/bin/python3
# tests/e2e/secret_file_probe.py - run by test_secret_file.sh.
import sys
from scapy.all import IP, TCP, conf, sr1
conf.verb = 0
src, dst = sys.argv[1:]
syn = IP(src=src, dst=dst) / TCP(sport=47001, dport=80, flags="S", seq=1000,
        options=[("MSS", 1460), ("SAckOK", b""), ("Timestamp", (777, 0)),
                 ("WScale", 7)])
a = sr1(syn, timeout=2)
if a is None or not a.haslayer(TCP) or (a[TCP].flags & 0x12) != 0x12:
    print("none")
else:
    ts = [o[1][0] for o in a[TCP].options if o[0] == "Timestamp"]
    print(a[TCP].seq, ts[0] if ts else "no-ts")
