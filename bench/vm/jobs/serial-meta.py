#!/usr/bin/env python3
"""Serial metadata latency (issue 13): one process, one file at a time, in a loop for
SECONDS: create (O_CREAT|O_EXCL, then close), stat, rename, remove, each waiting for the
one before: the servers' small-call round trip, not their parallelism. The client may answer
the stat from the attributes the create returned; it does so against either server (the
mount's per-op counts in the results show what went on the wire). Writes JSON to OUT: loops,
seconds, loops_per_s, ms_per_loop.

  serial-meta.py DIR SECONDS OUT.json
"""
import json
import os
import sys
import time

d, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
os.makedirs(d, exist_ok=True)
loops = 0
start = time.monotonic()
while time.monotonic() - start < seconds:
    a = os.path.join(d, f"serial.{loops}")
    b = a + ".renamed"
    os.close(os.open(a, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    os.stat(a)
    os.rename(a, b)
    os.unlink(b)
    loops += 1
elapsed = time.monotonic() - start
with open(out, "w") as f:
    json.dump({"loops": loops, "seconds": elapsed, "loops_per_s": loops / elapsed,
               "ms_per_loop": 1000.0 * elapsed / max(loops, 1)}, f)
