#!/usr/bin/python3
# tests/e2e/keepalive_get.py - run by lib.sh.
import http.client, sys
host, port, n, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
c = http.client.HTTPConnection(host, port, timeout=5)
ports = set()
for i in range(n):
    c.request("GET", "/ka%d" % i)
    r = c.getresponse()
    body = r.read()
    if r.status != 200 or body != want.encode():
        print("response %d: %d %r" % (i, r.status, body[:60]))
        sys.exit(1)
    ports.add(c.sock.getsockname()[1])
c.close()
print(len(ports))
