#!/usr/bin/python3
# tests/e2e/doctor_json.py - run by test_doctor.sh.
import json, sys
j = json.load(open(sys.argv[1]))
rows = [l.split()[:2] for l in open(sys.argv[2]).read().splitlines()[1:]]
got = [[c["check"], c["status"]] for c in j["checks"]]
assert got == rows, (got, rows)
assert j["interface"] == sys.argv[3] and j["fail"] == 0 and j["ok"] + j["warn"] == len(rows)
