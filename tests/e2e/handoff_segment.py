#!/usr/bin/python3
# tests/e2e/handoff_segment.py - run by test_handoff.sh.
import sys
from scapy.all import IP, IPv6, TCP, conf, sr1
conf.verb = 0
src, dst, sport, port, isn, tsv, ts, v6, ifc = sys.argv[1:]
sport, port, isn, tsv = int(sport), int(port), int(isn), int(tsv)
# With timestamps: the client "already received 100 bytes from XDP and
# sent 500". Without, only the segment completing the handshake is ours.
ack = (isn + 1 + (100 if ts == "1" else 0)) & 0xffffffff
seq = 1500
opts = [("NOP", None), ("NOP", None), ("Timestamp", (4242, tsv))] if ts == "1" else []
l3 = IPv6(src=src, dst=dst) if v6 == "1" else IP(src=src, dst=dst)
payload = b"GET /handoff HTTP/1.1\r\nHost: x\r\n"  # incomplete: stays open
a = sr1(l3 / TCP(sport=sport, dport=port, flags="PA", seq=seq, ack=ack,
                 options=opts) / payload, timeout=2, iface=ifc)
if a is None or TCP not in a:
    print("no answer")
    sys.exit(0)
t = a[TCP]
got_ts = [o[1] for o in t.options if o[0] == "Timestamp"]
ok = t.seq == ack and t.ack == seq + len(payload) and (t.flags & 0x10)
if ts == "1":
    ok = ok and got_ts and got_ts[0][1] == 4242 and \
        (got_ts[0][0] - tsv) % 2**32 < 100000
print("ok" if ok else "bad", "seq", t.seq, "want", ack, "ack", t.ack,
      "want", seq + len(payload), "ts", got_ts)
