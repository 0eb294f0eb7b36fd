#!/usr/bin/python3
# tests/e2e/trust_ka_client.py - run by test_trust.sh.
import http.client, os, sys, time
srv, port, ready, go = sys.argv[1:]
c = http.client.HTTPConnection(srv, int(port), timeout=5)
c.request("GET", "/")
print(c.getresponse().read().decode())
open(ready, "w").close()
for _ in range(200):
    if os.path.exists(go):
        break
    time.sleep(0.1)
try:
    c.request("GET", "/")
    print(c.getresponse().read().decode())
except Exception as e:
    print("old connection: %s" % e)
n = http.client.HTTPConnection(srv, int(port), timeout=5)
try:
    n.request("GET", "/")
    print(n.getresponse().read().decode())
except Exception as e:
    print("new connection: %s" % e)
