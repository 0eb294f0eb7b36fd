#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""rfc9112_cases.py - RFC 9112 edge cases on one connection each, all at
once; one line per case: "NAME|STATUSES|END|WANT|ALONE".

Usage: rfc9112_cases.py HOST PORT [--list]

STATUSES are the status codes received, space-separated ("-" for none);
END is how the connection ended: fin, rst or quiet (still open after
0.8 s of silence). WANT is the contract's answer (docs/architecture.md, "One wire
contract"): statuses and end, as "200 200/quiet". ALONE says what `blitz
load` with no kernel listener can do (docs/architecture.md, "The contract without a
kernel listener"): "xdp" (answered by the fast path from one segment),
"rst" (split requests, bodies and too-big batches go to the kernel,
which resets them), or "xdp|rst" (answered when the replies fit the frame, else reset:
multi-segment replies are issue 12 part 2, pass_no_room on veth). Used by
tests/e2e/test_rfc9112.sh; it only talks to the address it is given.
"""
import socket
import sys
import threading

from send_raw import read_for

GET = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"


def pipelined(n):
    return GET * n


# name, chunks (each sent as its own segment, 0.3 s apart), want, alone
CASES = [
    ("get_11", [GET], "200/quiet", "xdp"),
    ("head_11", [b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n"], "200/quiet", "xdp"),
    ("http10_close", [b"GET / HTTP/1.0\r\n\r\n"], "200/fin", "xdp"),
    ("http10_keepalive", [b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"],
     "200/quiet", "xdp"),
    ("connection_keepalive_close",
     [b"GET / HTTP/1.1\r\nHost: t\r\nConnection: keep-alive, close\r\n\r\n"],
     "200/fin", "xdp"),
    ("header_names_any_case",
     [b"GET / HTTP/1.1\r\nhOsT: t\r\ncONNECTION: Close\r\n\r\n"], "200/fin", "xdp"),
    ("absolute_form",
     [b"GET http://t/x?y HTTP/1.1\r\nHost: t\r\n\r\n"], "200/quiet", "xdp"),
    ("expect_100_no_body",
     [b"GET / HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n\r\n"], "200/quiet", "xdp"),
    ("bad_request_line", [b"GARBAGE\r\n\r\n"], "400/fin", "xdp"),
    ("no_version", [b"GET /\r\n\r\n"], "400/fin", "xdp"),
    ("version_2_0", [b"GET / HTTP/2.0\r\nHost: t\r\n\r\n"], "505/fin", "xdp"),
    ("version_1_2", [b"GET / HTTP/1.2\r\nHost: t\r\n\r\n"], "505/fin", "xdp"),
    ("unknown_method", [b"BREW / HTTP/1.1\r\nHost: t\r\n\r\n"], "405/fin", "xdp"),
    ("post_with_body",
     [b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"], "405/fin", "xdp"),
    ("missing_host", [b"GET / HTTP/1.1\r\n\r\n"], "400/fin", "xdp"),
    ("duplicate_host", [b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"], "400/fin", "xdp"),
    ("obs_fold", [b"GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n"], "400/fin", "xdp"),
    ("space_before_colon", [b"GET / HTTP/1.1\r\nHost : t\r\n\r\n"], "400/fin", "xdp"),
    ("bare_lf", [b"GET / HTTP/1.1\nHost: t\n\n"], "400/fin", "xdp"),
    ("nul_in_value", [b"GET / HTTP/1.1\r\nHost: t\r\nX: a\x00b\r\n\r\n"], "400/fin", "xdp"),
    ("bad_content_length",
     [b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\n"], "400/fin", "xdp"),
    # two replies in one frame: on veth the frame may have no room to grow
    ("error_after_200", [GET + b"GET / HTTP/1.1\r\n\r\n"], "200 400/fin", "xdp|rst"),
    ("pipelined_8", [pipelined(8)], " ".join(["200"] * 8) + "/quiet", "xdp|rst"),
    ("pipelined_32", [pipelined(32)], " ".join(["200"] * 32) + "/quiet", "xdp|rst"),
    ("pipelined_100", [pipelined(100)], " ".join(["200"] * 100) + "/quiet", "xdp|rst"),
    ("split_request", [b"GET / HTTP/1.1\r\n", b"Host: t\r\n\r\n"], "200/quiet", "rst"),
    ("get_with_body", [b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello"],
     "200/quiet", "rst"),
    ("content_length_body_split",
     [b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n", b"0123456789"],
     "200/quiet", "rst"),
    ("post_chunked",
     [b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      b"5\r\nhello\r\n0\r\n\r\n"], "405/fin", "xdp"),
    ("transfer_encoding_not_chunked",
     [b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n"], "400/fin", "xdp"),
    ("get_chunked_body",
     [b"GET / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      b"5\r\nhello\r\n0\r\n\r\n"], "200/quiet", "rst"),
    ("header_over_8k",
     [b"GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n"], "431/fin", "rst"),
]


def statuses(data):
    """Status codes of the responses in data (HEAD-free cases only)."""
    out = []
    while data.startswith(b"HTTP/1."):
        end = data.find(b"\r\n\r\n")
        if end < 0:
            break
        head = data[:end].decode("latin-1")
        out.append(head[9:12])
        clen = 0
        for line in head.split("\r\n")[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                clen = int(v.strip() or 0)
        data = data[end + 4 + clen:]
    return out


def run(host, port, case, results):
    name, chunks, want, alone = case
    got = bytearray()
    end = None
    try:
        s = socket.create_connection((host, port), timeout=3)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i, c in enumerate(chunks):
            try:
                s.sendall(c)
            except (BrokenPipeError, ConnectionResetError):
                end = "rst"
                break
            if i + 1 < len(chunks):
                end = read_for(s, 0.3, got)
                if end:
                    break
        if not end:
            end = read_for(s, 4.0, got, stop_on_quiet=0.8) or "quiet"
        s.close()
    except OSError as e:
        end = "error:" + type(e).__name__
    st = " ".join(statuses(bytes(got))) or "-"
    results[name] = "%s|%s|%s|%s|%s" % (name, st, end, want, alone)


def main():
    if "--list" in sys.argv:
        for c in CASES:
            print(c[0])
        return 0
    host, port = sys.argv[1], int(sys.argv[2])
    results = {}
    threads = [threading.Thread(target=run, args=(host, port, c, results))
               for c in CASES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in CASES:
        print(results.get(c[0], "%s|-|error:none|%s|%s" % (c[0], c[2], c[3])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
