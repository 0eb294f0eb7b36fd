#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""send_raw.py - send a file's bytes on one TCP connection, print what
comes back.

Usage: send_raw.py HOST PORT FILE [--split OFF[,OFF...]] [--pause SECS]
                   [--quiet SECS] [--timeout SECS] [--out FILE]

The bytes are sent in chunks cut at the --split offsets (with TCP_NODELAY,
so each chunk leaves as its own segment(s)); between chunks the sender
reads for --pause seconds. After the last chunk it reads until the server
closes, until nothing came for --quiet seconds, or until --timeout.
The bytes received go to --out (or stdout). One line on stderr says how it
ended: "end=fin", "end=rst" or "end=quiet", with the byte count.
Exit status: 0 for fin/quiet, 2 for a reset, 1 when it could not connect.
Used by tests/e2e/test_handoff.sh and test_differential.sh (and its
read_for() by rfc9112_cases.py); it only talks
to the address it is given (the tests give testbed addresses).
"""
import argparse
import select
import socket
import sys
import time


def read_for(sock, secs, got, stop_on_quiet=None):
    """Read until secs pass (or, with stop_on_quiet, until that long with
    nothing). Returns 'fin', 'rst' or None (still open)."""
    deadline = time.monotonic() + secs
    last = time.monotonic()
    while True:
        now = time.monotonic()
        left = deadline - now
        if stop_on_quiet is not None:
            left = min(left, last + stop_on_quiet - now)
        if left <= 0:
            return None
        r, _, _ = select.select([sock], [], [], left)
        if not r:
            continue
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return "rst"
        if not data:
            return "fin"
        got.extend(data)
        last = time.monotonic()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("file")
    ap.add_argument("--split", default="")
    ap.add_argument("--pause", type=float, default=0.3)
    ap.add_argument("--quiet", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--out")
    a = ap.parse_args()

    with open(a.file, "rb") as f:
        payload = f.read()
    cuts = [int(x) for x in a.split.split(",") if x]
    bounds = [0] + [c for c in cuts if 0 < c < len(payload)] + [len(payload)]
    chunks = [payload[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]

    fam = socket.AF_INET6 if ":" in a.host else socket.AF_INET
    sock = socket.socket(fam, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(a.timeout)
    try:
        sock.connect((a.host, a.port))
    except OSError as e:
        print("end=noconnect error=%s" % e, file=sys.stderr)
        return 1
    sock.setblocking(False)

    got = bytearray()
    end = None
    for i, chunk in enumerate(chunks):
        try:
            _send_all(sock, chunk)
        except ConnectionResetError:
            end = "rst"
            break
        except BrokenPipeError:
            end = "fin"
            break
        if i < len(chunks) - 1:
            end = read_for(sock, a.pause, got)
            if end:
                break
    if not end:
        end = read_for(sock, a.timeout, got, stop_on_quiet=a.quiet) or "quiet"
    sock.close()

    if a.out:
        with open(a.out, "wb") as f:
            f.write(got)
    else:
        sys.stdout.buffer.write(got)
        sys.stdout.flush()
    print("end=%s bytes=%d" % (end, len(got)), file=sys.stderr)
    return 2 if end == "rst" else 0


def _send_all(sock, data):
    """sendall for a non-blocking socket, bounded by 5 s."""
    view = memoryview(data)
    deadline = time.monotonic() + 5
    while view:
        _, w, _ = select.select([], [sock], [], max(0, deadline - time.monotonic()))
        if not w:
            raise TimeoutError("send timed out")
        n = sock.send(view)
        view = view[n:]


if __name__ == "__main__":
    sys.exit(main())
