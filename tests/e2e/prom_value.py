#!/usr/bin/python3
# prom_value.py ENGINE FAMILY < exposition - parse Prometheus text with
# Debian's python3-prometheus-client and print the sum of FAMILY's samples
# whose engine label is ENGINE (0 when none); ENGINE "*" sums over every
# engine label. A text the parser refuses exits 2 with its error.
# prom_value.py --unique < exposition - print "unique" when no sample
# (name and label set) appears twice, else "duplicate NAME{LABELS}".
import sys

from prometheus_client.parser import text_string_to_metric_families

unique = sys.argv[1] == "--unique"
engine, family = (None, None) if unique else (sys.argv[1], sys.argv[2])
total = 0
seen = set()
try:
    for fam in text_string_to_metric_families(sys.stdin.read()):
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            if unique and key in seen:
                print("duplicate %s%s" % (s.name, dict(key[1])))
                sys.exit(0)
            seen.add(key)
            if s.name == family and engine in ("*", s.labels.get("engine")):
                total += s.value
except Exception as e:  # the parser's words, on one line
    print("unparsable: %s" % e)
    sys.exit(2)
print("unique" if unique else int(total))
