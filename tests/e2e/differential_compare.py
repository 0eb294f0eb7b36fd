#!/usr/bin/python3
# tests/e2e/differential_compare.py - run by test_differential.sh.
import glob, re, sys
tmp, engines = sys.argv[1], sys.argv[2:]
bad, n = [], 0
for eng in engines:
    for path in sorted(glob.glob("%s/%s/*.out" % (tmp, eng))):
        data = open(path, "rb").read()
        # Each response's head (no body here holds "HTTP/1.").
        for m in re.finditer(rb"HTTP/1\.1 \d{3} .*?\r\n\r\n", data, re.S):
            head = m.group(0)[:-2]
            n += 1
            closing = re.search(rb"(?i)\r\nConnection: close\r\n", head)
            ka = head.count(b"\r\nKeep-Alive: timeout=60\r\n")
            if ka != (0 if closing else 1):
                bad.append("%s/%s" % (eng, path.rsplit("/", 1)[1]))
if not n:
    print("no responses to check")
elif bad:
    print("%d of %d responses: %s" % (len(bad), n, " ".join(bad[:6])))
