#!/usr/bin/python3
# tests/e2e/ksock_back_server.py - run by test_ksock.sh.
import socket, sys
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], int(sys.argv[2])))
ls.listen(1)
ls.settimeout(10)
c, _ = ls.accept()
c.sendall(b"from the client side\n")
c.settimeout(10)
print(c.recv(100).decode().strip(), flush=True)
