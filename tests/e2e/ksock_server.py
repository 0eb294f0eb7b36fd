#!/usr/bin/python3
# tests/e2e/ksock_server.py - run by test_ksock.sh.
import socket, sys, threading
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
ls.bind(("0.0.0.0", int(sys.argv[1])))
ls.listen(16)
def serve(c):
    n = 0
    f = c.makefile("rb")
    for line in f:
        n += 1
        c.sendall(b"kernel %d\n" % n)
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
