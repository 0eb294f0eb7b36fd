#!/usr/bin/python3
# tests/e2e/rotation_client.py - run by test_rotation.sh.
import http.client, os, sys, time
host, port, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = http.client.HTTPConnection(host, port, timeout=5)
def get():
    c.request("GET", "/")
    r = c.getresponse()
    return r.status, r.read()
print("before", *get(), flush=True)
sport = c.sock.getsockname()[1]
open(os.path.join(tmp, "first"), "w").close()
for _ in range(200):
    if os.path.exists(os.path.join(tmp, "rotated")):
        break
    time.sleep(0.05)
for i in range(3):
    print("after", *get(), flush=True)
    time.sleep(0.2)
print("sameport", c.sock.getsockname()[1] == sport, flush=True)
