#!/usr/bin/python3
# prom_value.py ENGINE FAMILY < exposition - parse Prometheus text with
# Debian's python3-prometheus-client and print the sum of FAMILY's samples
# whose engine label is ENGINE (0 when none). A text the parser refuses
# exits 2 with its error.
import sys

from prometheus_client.parser import text_string_to_metric_families

engine, family = sys.argv[1], sys.argv[2]
total = 0
try:
    for fam in text_string_to_metric_families(sys.stdin.read()):
        for s in fam.samples:
            if s.name == family and s.labels.get("engine") == engine:
                total += s.value
except Exception as e:  # the parser's words, on one line
    print("unparsable: %s" % e)
    sys.exit(2)
print(int(total))
