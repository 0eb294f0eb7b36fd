#!/usr/bin/python3
# tcp_info_sack.py HOST PORT - one GET over a fresh connection; reads the
# whole response, then prints what the client socket's TCP_INFO says was
# negotiated (the field `ss -ti` prints from): "sack" or "none", then the
# bytes received. Exit 1 when the connection or the read fails.
import socket
import struct
import sys

TCPI_OPT_SACK = 2

host, port = sys.argv[1], int(sys.argv[2])
s = socket.create_connection((host, port), timeout=10)
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
data = b""
want = None
while want is None or len(data) < want:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
    head, sep, _ = data.partition(b"\r\n\r\n")
    if sep and want is None:
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                want = len(head) + 4 + int(line.split(b":")[1])
info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
s.close()
options = struct.unpack("8B", info)[5]
print("sack" if options & TCPI_OPT_SACK else "none", len(data))
sys.exit(0 if want is not None and len(data) >= want else 1)
