#!/usr/bin/env python3
"""Serial unlink (issue 13): one process removes every file DIR holds, one at a time, as
the bench's meta-unlink job does with cold caches (a LOOKUP and a REMOVE each). SECONDS is
ignored (the job ends when DIR is empty). Writes JSON to OUT: files, seconds, files_per_s.

  serial-unlink.py DIR SECONDS OUT.json
"""
import json
import os
import sys
import time

d, out = sys.argv[1], sys.argv[3]
names = [os.path.join(d, n) for n in sorted(os.listdir(d))]
if not names:
    sys.exit(f"{d}: no files to remove")
start = time.monotonic()
for p in names:
    os.unlink(p)
elapsed = time.monotonic() - start
with open(out, "w") as f:
    json.dump({"files": len(names), "seconds": elapsed, "files_per_s": len(names) / elapsed}, f)
