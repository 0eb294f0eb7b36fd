#!/usr/bin/python3
# tests/e2e/epoll_holder.py HOST PORT N RELEASE - run by test_epoll_load.sh:
# opens N connections to HOST PORT, prints "OPEN n", keeps them idle until
# the file RELEASE exists (at most 120 s), closes them and prints "CLOSED".
import os, socket, sys, time
host, port, n, release = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
socks = []
try:
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect((host, port))
        socks.append(s)
except OSError as e:
    print("ERROR after %d connections: %s" % (len(socks), e), flush=True)
print("OPEN %d" % len(socks), flush=True)
t0 = time.time()
while not os.path.exists(release) and time.time() - t0 < 120:
    time.sleep(0.1)
for s in socks:
    s.close()
print("CLOSED", flush=True)
