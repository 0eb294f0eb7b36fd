#!/usr/bin/python3
# tests/e2e/jumbo_post.py - run by test_jumbo.sh.
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
body = b"x" * 6000
s.sendall(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
print(s.recv(4096).split(b"\r\n")[0].decode())
