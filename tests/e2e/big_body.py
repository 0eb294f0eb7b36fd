#!/usr/bin/python3
# tests/e2e/big_body.py - run by test_epoll_engine.sh.
import hashlib, socket, sys
host, port, size, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = socket.create_connection((host, port), timeout=10)
s.sendall(b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"
          b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
h1, _, rest = data.partition(b"\r\n\r\n")
cl = b"\r\ncontent-length: %d\r\n" % size
if cl not in h1.lower() + b"\r\n":
    print("HEAD: no Content-Length %d in %r" % (size, h1[:300])); sys.exit(1)
if not rest.startswith(b"HTTP/1.1 200 OK\r\n"):
    print("HEAD: bytes after its headers: %r" % rest[:60]); sys.exit(1)
h2, _, body = rest.partition(b"\r\n\r\n")
if cl not in h2.lower() + b"\r\n" or b"connection: close" not in h2.lower():
    print("GET: headers %r" % h2[:300]); sys.exit(1)
got = hashlib.sha256(body).hexdigest()
if len(body) != size or got != want:
    print("GET: %d bytes, sha256 %s" % (len(body), got)); sys.exit(1)
print("ok")
