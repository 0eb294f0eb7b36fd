#!/usr/bin/python3
# tests/e2e/trust_time_wait.py - run by test_trust.sh.
import socket, sys, time
cli, srv, port, cport, what = sys.argv[1:]
def once(data):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((cli, int(cport)))
    s.settimeout(5)
    s.connect((srv, int(port)))
    s.sendall(data)
    got = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except OSError as e:
        got += b" [%s]" % str(e).encode()
    s.close()
    return got
if what == "post":
    print(once(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx").split(b"\r\n")[0].decode())
else:
    time.sleep(0.5)
    print(once(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").split(b"\r\n\r\n")[-1].decode().strip())
