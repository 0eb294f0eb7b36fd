# SPDX-License-Identifier: GPL-2.0
"""tcp_wire.py - the raw-segment layer of the Python e2e clients, without
scapy (importing scapy takes seconds and a segment built by it about a
millisecond): an AF_PACKET socket, Ethernet/IPv4/TCP frames built by hand
with their checksums, and received frames parsed into a Seg. Used by
tcp_raw.py (which checks the first frame of each kind against scapy's
bytes) and seq_diff.py. IPv4 only; no IP options are written.
Only sends where its caller says: it picks no address of its own.
"""
import collections
import select
import socket
import struct
import time

ETH_P_ALL = 3
SO_RCVBUFFORCE = 33
SO_TIMESTAMPNS = 35

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
IP_DF = 0x4000

# A TCP segment as it came: addresses as text, ports and numbers as ints,
# payload the bytes the IP length covers, tsval None without timestamps.
Seg = collections.namedtuple(
    "Seg", "src sport dst dport seq ack flags win plen payload tsval")


def packet_socket(iface, rcvbuf=16 << 20):
    """A non-blocking AF_PACKET socket bound to iface, all protocols."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, rcvbuf)
    s.bind((iface, 0))
    s.setblocking(False)
    return s


def send_frame(s, frame, tries=1000):
    """Send one frame, waiting a millisecond at a time while the socket's
    queue is full (at most tries times)."""
    for _ in range(tries):
        try:
            s.send(frame)
            return True
        except BlockingIOError:
            time.sleep(0.001)
    return False


def received(s, secs, ancbufsize=0):
    """Yield (frame, ancillary data, address) of what the non-blocking
    packet socket s receives for up to secs seconds."""
    end = time.monotonic() + secs
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        while True:
            try:
                d, anc, _, a = s.recvmsg(70000, ancbufsize)
            except BlockingIOError:
                break
            yield d, anc, a


def mac_bytes(mac):
    return bytes.fromhex(mac.replace(":", ""))


def eth_header(smac, dmac):
    """Ethernet header of an IPv4 frame; MACs as text."""
    return mac_bytes(dmac) + mac_bytes(smac) + b"\x08\x00"


def csum(b):
    """The Internet checksum (RFC 1071) of b."""
    if len(b) & 1:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def opt_mss(mss):
    return struct.pack("!BBH", 2, 4, mss)


def opt_timestamps(tsval, tsecr):
    """NOP, NOP, timestamps: 12 bytes, as Linux aligns them."""
    return struct.pack("!BBBBII", 1, 1, 8, 10, tsval & 0xffffffff,
                       tsecr & 0xffffffff)


def tcp4_frame(eth, src, dst, sport, dport, flags, seq, ack, data=b"",
               opts=b"", win=65535, ip_id=1, frag=0):
    """An Ethernet/IPv4/TCP frame with both checksums; eth from
    eth_header(), opts a multiple of 4 bytes, flags an int (FIN|ACK...)."""
    tl = 20 + len(opts) + len(data)
    sa, da = socket.inet_aton(src), socket.inet_aton(dst)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + tl, ip_id, frag, 64,
                     socket.IPPROTO_TCP, 0, sa, da)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    th = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff,
                     ack & 0xffffffff, (20 + len(opts)) // 4 << 4, flags,
                     win, 0, 0) + opts + data
    c = csum(sa + da + struct.pack("!BBH", 0, socket.IPPROTO_TCP, tl) + th)
    return eth + ip + th[:16] + struct.pack("!H", c) + th[18:]


def tsval_of(opts):
    """The TSval in a TCP option block, or None; a walk that stops at EOL
    or where the options run out."""
    i = 0
    while i < len(opts):
        if opts[i] == 0:
            break
        if opts[i] == 1:
            i += 1
            continue
        if i + 1 >= len(opts):
            break
        if opts[i] == 8 and opts[i + 1] == 10 and i + 6 <= len(opts):
            return struct.unpack("!I", opts[i + 2:i + 6])[0]
        i += max(opts[i + 1], 2)
    return None


def parse_tcp4(d):
    """A Seg of an Ethernet/IPv4/TCP frame, or None for anything else."""
    if len(d) < 54 or d[12:14] != b"\x08\x00" or \
            d[23] != socket.IPPROTO_TCP:
        return None
    ihl = (d[14] & 15) * 4
    tot = struct.unpack("!H", d[16:18])[0]
    th = 14 + ihl
    sport, dport, seq, ack, off, fl, win = struct.unpack(
        "!HHIIBBH", d[th:th + 16])
    thl = (off >> 4) * 4
    return Seg(socket.inet_ntoa(d[26:30]), sport, socket.inet_ntoa(d[30:34]),
               dport, seq, ack, fl, win, tot - ihl - thl,
               d[th + thl:14 + tot], tsval_of(d[th + 20:th + thl]))
