#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""check_http.py - split a byte stream of HTTP/1.1 responses into
responses and print one line per response: "STATUS BODY_LEN BODY".

Usage: check_http.py FILE [--head N]...   (--head: the Nth response,
counting from 1, answers a HEAD request: no body despite Content-Length)
Trailing bytes that are not a complete response are reported as a line
"TRAILING N". Used by tests/e2e/test_handoff.sh.
"""
import re
import sys


def main():
    path = sys.argv[1]
    heads = {int(sys.argv[i + 1]) for i, a in enumerate(sys.argv) if a == "--head"}
    data = open(path, "rb").read()
    n = 0
    while data:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            break
        head = data[:end].decode("latin-1")
        m = re.match(r"HTTP/1\.[01] (\d{3}) ", head)
        if not m:
            break
        n += 1
        cl = re.search(r"(?im)^content-length:\s*(\d+)\s*$", head)
        blen = int(cl.group(1)) if cl and n not in heads else 0
        body = data[end + 4:end + 4 + blen]
        if len(body) < blen:
            break
        print("%s %d %s" % (m.group(1), blen, body.decode("latin-1").strip()))
        data = data[end + 4 + blen:]
    if data:
        print("TRAILING %d" % len(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
