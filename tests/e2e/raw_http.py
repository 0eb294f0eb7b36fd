#!/usr/bin/python3
# Raw HTTP/1.1 checks against HOST PORT: exact bytes (Date masked),
# pipelining, split requests, bodies, the error rows of the contract, and
# how the server closes (FIN, not RST). One PASS/FAIL line per check.
import re, socket, sys, time

HOST, PORT, PREFIX = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ONLY = sys.argv[4].split(",") if len(sys.argv) > 4 and sys.argv[4] else None
DATE = re.compile(rb"Date: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\n")
BODY = b"Hello World!"
GET = b"GET / HTTP/1.1\r\nHost: blitz\r\n\r\n"

def hdr(status, extra=b"", ctype=b"text/plain", clen=len(BODY)):
    return (b"HTTP/1.1 " + status + b"\r\nServer: blitz\r\nDate: D\r\n" + extra +
            b"Content-Type: " + ctype + b"\r\nContent-Length: " + str(clen).encode() +
            b"\r\n")

KA = b"Keep-Alive: timeout=60\r\n"  # every keep-alive response (issue 10)
R200 = hdr(b"200 OK") + KA + b"\r\n" + BODY
R200_HEAD = hdr(b"200 OK") + KA + b"\r\n"
R200_CLOSE = hdr(b"200 OK") + b"Connection: close\r\n\r\n" + BODY
R405 = (hdr(b"405 Method Not Allowed", b"Allow: GET, HEAD\r\n", clen=19) +
        b"Connection: close\r\n\r\nMethod Not Allowed\n")

def mask(b):
    return DATE.sub(b"Date: D\r\n", b)

def dial():
    s = socket.create_connection((HOST, PORT), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

class Conn:
    def __init__(self):
        self.s = dial()
        self.buf = b""

    def fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError
        self.buf += d

    def response(self, head=False):
        """One response, raw bytes."""
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        end = self.buf.index(b"\r\n\r\n") + 4
        m = re.search(rb"\r\nContent-Length: (\d+)\r\n", self.buf[:end], re.I)
        n = 0 if head or not m else int(m.group(1))
        while len(self.buf) < end + n:
            self.fill()
        r, self.buf = self.buf[:end + n], self.buf[end + n:]
        return r

    def closed_how(self, timeout=3):
        """'fin', 'rst', 'open' (nothing within timeout) or 'data'."""
        if self.buf:
            return "data"
        self.s.settimeout(timeout)
        try:
            d = self.s.recv(4096)
        except ConnectionResetError:
            return "rst"
        except socket.timeout:
            return "open"
        return "fin" if not d else "data"

    def close(self):
        self.s.close()

failed = 0
def result(name, why):
    global failed
    if why:
        failed = 1
        print("FAIL %s_%s: %s" % (PREFIX, name, why))
    else:
        print("PASS %s_%s" % (PREFIX, name))
    sys.stdout.flush()

def check(name):
    def deco(fn):
        if ONLY and name not in ONLY:
            return fn
        try:
            result(name, fn())
        except Exception as e:  # a check that raises fails, never passes
            result(name, "%s: %s" % (type(e).__name__, e))
        return fn
    return deco

def expect(got, want, what="response"):
    if mask(got) != want:
        return "%s %r, want %r" % (what, mask(got)[:200], want[:200])
    return None

def last_then_fin(c, req, want, after):
    """req on c is answered with want, then the server's FIN (not a RST);
    closes c."""
    c.s.sendall(req)
    why = expect(c.response(), want)
    how = c.closed_how()
    c.close()
    return why or (None if how == "fin" else "after %s: %s" % (after, how))

@check("exact_bytes_get_head")
def _():
    c = Conn()
    c.s.sendall(GET)
    why = expect(c.response(), R200, "GET")
    c.s.sendall(b"HEAD / HTTP/1.1\r\nHost: blitz\r\n\r\n")
    why = why or expect(c.response(head=True), R200_HEAD, "HEAD")
    c.close()
    return why

@check("exact_bytes_close")
def _():
    return last_then_fin(Conn(), b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                         R200_CLOSE, "Connection: close")

@check("post_405_close")
def _():
    return last_then_fin(Conn(), b"POST /form HTTP/1.1\r\nHost: blitz\r\nContent-Length: 11\r\n\r\nhello=world",
                         R405, "405")

@check("post_after_two_gets")
def _():
    c = Conn()
    for i in range(2):
        c.s.sendall(GET)
        why = expect(c.response(), R200, "GET %d" % i)
        if why:
            return why
    return last_then_fin(c, b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd",
                         R405, "405")

@check("split_request")
def _():
    c = Conn()
    c.s.sendall(b"GET /split HTTP/1.1\r\nHo")
    time.sleep(0.5)
    if c.closed_how(0.2) != "open":
        return "answered or closed after half a request"
    c.s.sendall(b"st: blitz\r\n\r\n")
    why = expect(c.response(), R200)
    c.close()
    return why

@check("headers_5k")
def _():
    c = Conn()
    c.s.sendall(b"GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + b"b" * 5120 + b"\r\n\r\n")
    why = expect(c.response(), R200)
    c.close()
    return why

def error_row(req, status):
    c = Conn()
    c.s.sendall(req)
    r = c.response()
    how = c.closed_how()
    c.close()
    if not r.startswith(b"HTTP/1.1 " + status):
        return "status line %r" % r[:60]
    if b"\r\nConnection: close\r\n" not in r:
        return "no Connection: close in %r" % r[:300]
    return None if how == "fin" else "after %s: %s" % (status.decode(), how)

@check("headers_9k_431")
def _():
    return error_row(b"GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + b"b" * 9216 + b"\r\n\r\n", b"431 ")

@check("http2_preface_505")
def _():
    return error_row(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", b"505 ")

@check("malformed_400")
def _():
    return error_row(b"GET / HTTP/1.1\r\nHost: h\r\nNo colon here\r\n\r\n", b"400 ")

@check("pipelined_16")
def _():
    c = Conn()
    c.s.sendall(b"".join(b"GET /p%d HTTP/1.1\r\nHost: blitz\r\n\r\n" % i for i in range(16)))
    for i in range(16):
        why = expect(c.response(), R200, "response %d" % i)
        if why:
            return why
    extra = c.closed_how(0.3)
    c.close()
    return None if extra == "open" else "after 16 responses: " + extra

@check("chunked_get_body")
def _():
    c = Conn()
    c.s.sendall(b"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n" + GET)
    why = expect(c.response(), R200, "first") or expect(c.response(), R200, "second")
    c.close()
    return why

@check("content_length_get_body")
def _():
    c = Conn()
    c.s.sendall(b"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello" + GET)
    why = expect(c.response(), R200, "first") or expect(c.response(), R200, "second")
    c.close()
    return why

sys.exit(failed)
