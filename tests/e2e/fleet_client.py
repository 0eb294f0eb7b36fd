"""fleet_client.py - bounded keep-alive load for tests/e2e/test_fleet.sh.

Usage: fleet_client.py HOST PORT CONNS SECONDS INTERVAL_MS [MARKS_FILE [STOP_FILE [SEEN_FILE]]]

Opens CONNS keep-alive connections to HOST:PORT, then for SECONDS sends one
GET on each connection every INTERVAL_MS (one request in flight per
connection), reading each response whole (status line, Content-Length).
Never reconnects: a connection that fails stays failed, so every reset and
every lost request is counted. Prints one JSON object at the end:
  conns, opened, requests_ok, failed (connections that broke), resets,
  timeouts (no whole response within 3 s), eof, bad (not a 200).
With MARKS_FILE, appends "<seconds> <requests_ok>" once a second (for a
look at the progress). With STOP_FILE, stops sending once that file exists
(SECONDS stays the bound). With SEEN_FILE ("-": none), appends each body
the moment it is first answered, one a line (a caller waits on it).
"bodies" counts the answers per body (the first 32 distinct ones), "no_ts" the connections whose SYN-ACK carried no
timestamps (TCP_INFO: outside "survives a rehash", README). Load is bounded in count and time; only the
namespace's own addresses are ever targets (the caller's choice).
"""
import errno
import json
import os
import selectors
import socket
import struct
import sys
import time

REQ = b"GET / HTTP/1.1\r\nHost: fleet\r\n\r\n"
TIMEOUT = 3.0


class Conn:
    def __init__(self, s):
        self.s = s
        self.buf = b""
        self.sent_at = None  # a request is in flight since
        self.next_at = 0.0
        self.dead = None


def parse(buf):
    """A whole response at the start of buf: (status, length) or None."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = buf[:end].split(b"\r\n")
    status = head[0].split(b" ")[1] if b" " in head[0] else b"?"
    clen = 0
    for line in head[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            clen = int(v.strip())
    if len(buf) < end + 4 + clen:
        return None
    return status, end + 4 + clen


def has_timestamps(s):
    """TCP_INFO's tcpi_options has TCPI_OPT_TIMESTAMPS (1)."""
    try:
        info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    except OSError:
        return True
    return bool(struct.unpack_from("B", info, 5)[0] & 1)


def main():
    host, port, nconn, secs, ivl = sys.argv[1:6]
    marks = open(sys.argv[6], "a") if len(sys.argv) > 6 and sys.argv[6] != "-" else None
    stop = sys.argv[7] if len(sys.argv) > 7 and sys.argv[7] != "-" else None
    seen = open(sys.argv[8], "a") if len(sys.argv) > 8 and sys.argv[8] != "-" else None
    port, nconn, secs, ivl = int(port), int(nconn), float(secs), int(ivl) / 1000.0
    out = {"conns": nconn, "opened": 0, "requests_ok": 0, "failed": 0,
           "resets": 0, "timeouts": 0, "eof": 0, "bad": 0, "no_ts": 0,
           "bodies": {}}
    sel = selectors.DefaultSelector()
    conns = []
    for i in range(nconn):
        try:
            s = socket.create_connection((host, port), timeout=3)
        except OSError:
            out["failed"] += 1
            continue
        if not has_timestamps(s):
            out["no_ts"] += 1
        s.setblocking(False)
        c = Conn(s)
        c.next_at = time.monotonic() + ivl * i / nconn  # spread the sends
        conns.append(c)
        sel.register(s, selectors.EVENT_READ, c)
    out["opened"] = len(conns)

    def kill(c, why):
        if c.dead:
            return
        c.dead = why
        out["failed"] += 1
        out[why] += 1
        sel.unregister(c.s)
        c.s.close()

    start = time.monotonic()
    end = start + secs
    last_mark = last_stop = start
    while True:
        now = time.monotonic()
        if stop and now < end and now - last_stop >= 0.1:
            last_stop = now
            if os.path.exists(stop):
                end = now
        if now >= end and all(c.sent_at is None or c.dead for c in conns):
            break
        if now >= end + TIMEOUT:
            break
        for c in conns:
            if c.dead:
                continue
            if c.sent_at is None and now < end and now >= c.next_at:
                try:
                    c.s.send(REQ)
                    c.sent_at = now
                except OSError as e:
                    kill(c, "resets" if e.errno == errno.ECONNRESET else "eof")
            elif c.sent_at is not None and now - c.sent_at > TIMEOUT:
                kill(c, "timeouts")
        for key, _ in sel.select(timeout=0.01):
            c = key.data
            try:
                d = c.s.recv(65536)
            except ConnectionResetError:
                kill(c, "resets")
                continue
            except BlockingIOError:
                continue
            if not d:
                kill(c, "eof")
                continue
            c.buf += d
            r = parse(c.buf)
            if r:
                status, n = r
                body = c.buf[c.buf.find(b"\r\n\r\n") + 4:n].decode("latin-1")
                if body in out["bodies"] or len(out["bodies"]) < 32:
                    if seen and body not in out["bodies"]:
                        seen.write(body.replace("\n", " ") + "\n")
                        seen.flush()
                    out["bodies"][body] = out["bodies"].get(body, 0) + 1
                c.buf = c.buf[n:]
                if status != b"200":
                    kill(c, "bad")
                    continue
                out["requests_ok"] += 1
                c.next_at = c.sent_at + ivl
                c.sent_at = None
        if marks and now - last_mark >= 1:
            last_mark = now
            marks.write("%.0f %d %d\n" % (now - start, out["requests_ok"],
                                          out["failed"]))
            marks.flush()
    for c in conns:
        if not c.dead:
            c.s.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
