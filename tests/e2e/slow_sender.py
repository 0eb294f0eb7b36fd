#!/usr/bin/python3
# tests/e2e/slow_sender.py HOST PORT SECONDS - run by test_epoll_load.sh:
# sends a GET one byte per second for at most SECONDS; prints "closed T"
# when the server closed it after T seconds, else "open".
import select, socket, sys, time
host, port, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
req = b"GET /slow HTTP/1.1\r\nHost: blitz\r\nX-Slow: " + b"s" * 64 + b"\r\n\r\n"
s = socket.create_connection((host, port), timeout=5)
t0 = time.time()
for i in range(secs):
    try:
        s.send(req[i:i + 1])
        r, _, _ = select.select([s], [], [], 1.0)
        if r and not s.recv(100):
            raise ConnectionResetError
    except OSError:
        print("closed %.1f" % (time.time() - t0), flush=True)
        sys.exit(0)
print("open", flush=True)
