#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""fleet_handoff.py - the kernel hand-off across fleet hosts, for
tests/e2e/test_fleet.sh.

  fleet_handoff.py serve NAME PORT SECONDS
      A kernel listener on every address of PORT (IPv4) for at most SECONDS:
      each request (head, then Content-Length bytes of body) gets a 200
      whose body is "kernel NAME", on the same keep-alive connection.
  fleet_handoff.py client HOST PORT CMD...
      One connection to HOST:PORT: a GET (which the xdp engine answers),
      then CMD (run: it moves the flow to another host), then a GET with
      a body (which XDP passes to the kernel: it answers 405 to a POST
      itself now) on the same connection.
      Prints one line: "get=<status> <body> body=<status> <body>", with
      "rst", "eof" or "timeout" in place of a response that did not come.
Only the address it is given is a target (the caller gives the fleet's
service address); every wait is bounded.
"""
import socket
import socketserver
import subprocess
import sys
import threading
import time

TIMEOUT = 3.0


def recv_until(s, buf, enough):
    """Read s into buf until enough(buf): (None, buf), or ("rst"|"eof"|
    "timeout", b"") when the response cannot come."""
    while not enough(buf):
        try:
            d = s.recv(4096)
        except ConnectionResetError:
            return "rst", b""
        except socket.timeout:
            return "timeout", b""
        if not d:
            return "eof", b""
        buf += d
    return None, buf


def read_response(s, buf):
    """One whole response from s: (text, rest of buf)."""
    why, buf = recv_until(s, buf, lambda b: b"\r\n\r\n" in b)
    if why:
        return why, buf
    head, _, buf = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    n = 0
    for h in lines[1:]:
        k, _, v = h.partition(":")
        if k.strip().lower() == "content-length":
            n = int(v)
    why, buf = recv_until(s, buf, lambda b: len(b) >= n)
    if why:
        return why, buf
    status = lines[0].split(" ")[1] if " " in lines[0] else "?"
    body = buf[:n].decode("latin-1").strip().replace(" ", "_")
    return "%s %s" % (status, body), buf[n:]


def client(host, port, cmd):
    s = socket.create_connection((host, port), timeout=TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"GET / HTTP/1.1\r\nHost: fleet\r\n\r\n")
    get, buf = read_response(s, b"")
    post = "not sent"
    if subprocess.run(cmd).returncode != 0:
        post = "move failed"
    elif get not in ("rst", "eof", "timeout"):
        time.sleep(0.2)
        body = b"name=fleet&hand=off"
        s.sendall(b"GET /form HTTP/1.1\r\nHost: fleet\r\n"
                  b"Content-Type: application/x-www-form-urlencoded\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        post, buf = read_response(s, buf)
    print("get=%s body=%s" % (get.replace(" ", ":", 1),
                              post.replace(" ", ":", 1)))
    s.close()


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        s.settimeout(TIMEOUT)
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = s.recv(4096)
                    if not d:
                        return
                    buf += d
                head, _, buf = buf.partition(b"\r\n\r\n")
                n = 0
                for h in head.decode("latin-1").split("\r\n")[1:]:
                    k, _, v = h.partition(":")
                    if k.strip().lower() == "content-length":
                        n = int(v)
                while len(buf) < n:
                    d = s.recv(4096)
                    if not d:
                        return
                    buf += d
                buf = buf[n:]
                body = b"kernel " + self.server.name.encode()
                s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s"
                          % (len(body), body))
        except OSError:
            return


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def serve(name, port, secs):
    srv = Server(("0.0.0.0", port), Handler)
    srv.name = name
    threading.Timer(secs, srv.shutdown).start()
    srv.serve_forever(poll_interval=0.2)


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif len(sys.argv) >= 5 and sys.argv[1] == "client":
        client(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
