#!/usr/bin/python3
# tests/e2e/ksock_before.py - run by test_ksock.sh.
import os, socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.sendall(b"one\n")
print(s.recv(100).decode().strip(), flush=True)
for _ in range(200):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
s.sendall(b"two\n")
print(s.recv(100).decode().strip(), flush=True)
