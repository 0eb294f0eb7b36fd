#!/usr/bin/env python3
"""tests/e2e/pipe_stream.py - one connection's pipelined stream, checked
byte for byte: HOST PORT BATCHES DEPTH [TIMEOUT].

Sends BATCHES writes of DEPTH pipelined GETs each (one write per batch,
the next batch once every response of the previous one is in), reads the
responses and checks that each is exactly the first one with its Date
value replaced (the Date must be an IMF-fixdate), and that nothing else
arrives. Prints "ok N responses" (rc 0) or what differed (rc 1).
"""
import re
import socket
import sys
import time

DATE = re.compile(rb"Date: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} "
                  rb"\d\d:\d\d:\d\d GMT\r\n")
REQ = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"


def one_response(buf):
    """The length of the first complete response in buf, or 0."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return 0
    m = re.search(rb"\r\nContent-Length: (\d+)\r\n", buf[:end + 2])
    n = end + 4 + (int(m.group(1)) if m else 0)
    return n if len(buf) >= n else 0


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    batches, depth = int(sys.argv[3]), int(sys.argv[4])
    limit = float(sys.argv[5]) if len(sys.argv) > 5 else 60.0
    deadline = time.monotonic() + limit
    s = socket.create_connection((host, port), timeout=limit)
    ref = None
    got = 0
    buf = b""
    for b in range(batches):
        s.sendall(REQ * depth)
        want = got + depth
        while got < want:
            if time.monotonic() > deadline:
                print(f"timeout: {got} of {batches * depth} responses")
                return 1
            n = one_response(buf)
            if not n:
                chunk = s.recv(65536)
                if not chunk:
                    print(f"closed after {got} responses")
                    return 1
                buf += chunk
                continue
            resp, buf = buf[:n], buf[n:]
            if not DATE.search(resp):
                print(f"response {got}: no valid Date: {resp[:120]!r}")
                return 1
            masked = DATE.sub(b"Date: X\r\n", resp, count=1)
            if ref is None:
                ref = masked
                if not resp.startswith(b"HTTP/1.1 200 OK\r\n"):
                    print(f"response 0 is not a 200: {resp[:80]!r}")
                    return 1
            elif masked != ref:
                print(f"response {got} differs: {resp!r}")
                return 1
            got += 1
        if buf:
            print(f"batch {b}: {len(buf)} bytes more than asked for")
            return 1
    s.settimeout(0.3)
    try:
        extra = s.recv(65536)
    except socket.timeout:
        extra = b""
    if extra:
        print(f"{len(extra)} bytes after the last response")
        return 1
    s.close()
    print(f"ok {got} responses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
