#!/usr/bin/python3
# tests/e2e/slow_big_request.py - run by test_handoff.sh.
import socket, sys, time
data = open(sys.argv[3], "rb").read()
worst = 0
for _ in range(5):
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
    t = time.monotonic()
    s.sendall(data)
    got = b""
    while b"\r\n\r\n" not in got:
        d = s.recv(4096)
        if not d:
            break
        got += d
    worst = max(worst, time.monotonic() - t)
    s.close()
print("%.0f" % (worst * 1000))
