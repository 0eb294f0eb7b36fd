#!/usr/bin/python3
# tests/e2e/ksock_back_client.py - run by test_ksock.sh.
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(10)
s.connect((sys.argv[3], int(sys.argv[4])))
got = s.recv(100)
s.sendall(b"echo " + got)
print(got.decode().strip(), flush=True)
