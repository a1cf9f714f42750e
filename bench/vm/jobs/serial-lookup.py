#!/usr/bin/env python3
"""Serial LOOKUP or GETATTR latency (issue 13): one process stat()s the files DIR holds, name
after name, in a loop for SECONDS. Over a mount with `lookupcache=none` every stat() is one
LOOKUP on the wire (the client checks each name with the server): the round trip of a
lookup of a name the server knows, as path walks after the client's caches expire make
them. Over one with `actimeo=0` the client keeps the names but no attributes, so every
stat() is a GETATTR of the file: an attribute revalidation, the commonest call of all.
Writes JSON to OUT: stats, seconds, stats_per_s, us_per_stat.

  serial-lookup.py DIR SECONDS OUT.json
"""
import json
import os
import sys
import time

d, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
names = [os.path.join(d, n) for n in sorted(os.listdir(d))]
if not names:
    sys.exit(f"{d}: no files to look up")
n = 0
start = time.monotonic()
while time.monotonic() - start < seconds:
    for p in names:
        os.stat(p)
    n += len(names)
elapsed = time.monotonic() - start
with open(out, "w") as f:
    json.dump({"stats": n, "seconds": elapsed, "stats_per_s": n / elapsed,
               "us_per_stat": 1e6 * elapsed / max(n, 1)}, f)
