#!/usr/bin/env python3
"""Directory listing with attributes, as `ls -l` makes it (READDIRPLUS, issue 13): one
process lists DIR and lstat()s every entry, in a loop for SECONDS. Before each listing it
creates and removes a name in DIR, so the client's cached listing is stale and read again
from the server: on the wire one READDIRPLUS (NFSv3) or READDIR with attributes (NFSv4.1)
per batch of entries, and no LOOKUP or GETATTR per entry (the listing's attributes are
fresh). Writes JSON to OUT: listings, entries, seconds, entries_per_s, us_per_entry, and
the mount's call counts during the loop (from /proc/self/mountstats), so a reader can see
which calls were timed.

  serial-listing.py DIR SECONDS OUT.json
"""
import json
import os
import sys
import time


def op_counts(mnt):
    """Calls per operation of the NFS mount at mnt (mountstats' per-op lines)."""
    counts, here = {}, False
    with open("/proc/self/mountstats") as f:
        for line in f:
            if line.startswith("device "):
                here = f" mounted on {mnt} " in line
            elif here and ":" in line and line.startswith("\t") and line.split()[0].endswith(":"):
                fields = line.split()
                name = fields[0][:-1]
                if name.isupper() and len(fields) > 1 and fields[1].isdigit():
                    counts[name] = int(fields[1])
    return counts


d, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
mnt = os.path.dirname(os.path.abspath(d))
marker = os.path.join(d, ".listing-marker")
if len(os.listdir(d)) == 0:
    sys.exit(f"{d}: nothing to list")
before = op_counts(mnt)
listings = entries = 0
start = time.monotonic()
while time.monotonic() - start < seconds:
    open(marker, "w").close()
    os.unlink(marker)
    with os.scandir(d) as it:
        for e in it:
            e.stat(follow_symlinks=False)
            entries += 1
    listings += 1
elapsed = time.monotonic() - start
after = op_counts(mnt)
calls = {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}
with open(out, "w") as f:
    json.dump({"listings": listings, "entries": entries, "seconds": elapsed,
               "entries_per_s": entries / elapsed, "us_per_entry": 1e6 * elapsed / max(entries, 1),
               "calls": calls}, f)
