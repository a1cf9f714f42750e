#!/usr/bin/env python3
"""Side-by-side table of the VM benchmark (bench/vm): nfsrdmad vs the kernel nfsd.

Usage: table.py RESULTS_DIR
RESULTS_DIR holds one fio JSON file per (configuration, job): CONFIG.JOB.json, where CONFIG is
nfsrdmad-tcp, knfsd-tcp, nfsrdmad-rdma, knfsd-rdma, and an optional CONFIG.na file whose text
says why that configuration did not run. Ratios are nfsrdmad / knfsd (higher is better for every
row). Under TCG emulation the absolute numbers mean little; the ratios are what we track.
"""
import json
import os
import sys

JOBS = [  # (job, label, unit, fio direction, value)
    ("seq-write", "seq write 1 MiB", "MiB/s", "write", "bw"),
    ("seq-read", "seq read 1 MiB", "MiB/s", "read", "bw"),
    ("rand-read", "rand read 4 KiB", "IOPS", "read", "iops"),
    ("meta-create", "create", "ops/s", "write", "iops"),
    ("meta-stat", "stat (cold)", "ops/s", "read", "iops"),
    ("meta-unlink", "unlink", "ops/s", "read", "iops"),
]
PAIRS = [("tcp", "nfsrdmad-tcp", "knfsd-tcp"), ("rdma", "nfsrdmad-rdma", "knfsd-rdma")]


def value(results, config, job, direction, what):
    path = os.path.join(results, f"{config}.{job}.json")
    try:
        with open(path) as f:
            d = json.load(f)["jobs"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    if d.get("error", 0):
        return None
    side = d[direction]
    if what == "bw":
        return side["bw"] / 1024.0  # fio reports KiB/s
    return side["iops"]


def na_reason(results, config):
    path = os.path.join(results, f"{config}.na")
    if os.path.exists(path):
        with open(path) as f:
            return f.read().strip() or "n/a"
    return None


def fmt(v):
    if v is None:
        return "FAILED"
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def main():
    results = sys.argv[1]
    notes = []
    header = ["job", "unit"]
    for transport, ours, theirs in PAIRS:
        header += [f"nfsrdmad/{transport}", f"knfsd/{transport}", f"ratio/{transport}"]
    rows = [header]
    marks = {}
    for _, ours, theirs in PAIRS:
        for config in (ours, theirs):
            reason = na_reason(results, config)
            if reason:
                mark = "(" + "*" * (len(marks) + 1) + ")"
                marks[config] = mark
                notes.append(f"{mark} {reason}")
    for job, label, unit, direction, what in JOBS:
        row = [label, unit]
        for _, ours, theirs in PAIRS:
            vals = []
            for config in (ours, theirs):
                if config in marks:
                    vals.append(None)
                    row.append("n/a " + marks[config])
                else:
                    v = value(results, config, job, direction, what)
                    vals.append(v)
                    row.append(fmt(v))
            a, b = vals
            row.append(f"{a / b:.2f}" if a is not None and b else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(r[2:], widths[2:])]
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append("ratio = nfsrdmad / knfsd (higher is better in every row); NFSv3, kernel client, "
                 "same ext4 export, O_DIRECT for data jobs; emulated (TCG): compare ratios, not values.")
    lines += notes
    print("\n".join(lines))


if __name__ == "__main__":
    main()
