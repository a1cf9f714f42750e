#!/usr/bin/env python3
"""Side-by-side table of the VM benchmark (bench/vm): nfsrdmad vs the kernel nfsd.

Usage: table.py RESULTS_DIR
       table.py --load RESULTS_DIR CLIENTS MB DEPTH THREADS FILES PROTO
RESULTS_DIR holds one fio JSON file per (configuration, job): CONFIG.JOB.json, where CONFIG is
nfsrdmad-tcp, knfsd-tcp, nfsrdmad-rdma, knfsd-rdma for NFSv3 and the same with a -v4.1 suffix for
NFSv4.1, and an optional CONFIG.na file whose text says why that configuration did not run. One
table per NFS version that has any file. Ratios are nfsrdmad / knfsd (higher is better for every
row). Under TCG emulation the absolute numbers mean little; the ratios are what we track.

--load: the load mode (guest-load.sh): SERVER.NAME.json files (SERVER nfsrdmad or knfsd) of
many mounts in parallel, fio at a deep queue, create storms; ratio = nfsrdmad / knfsd with a
column saying whether higher or lower is better for that row.
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
VERSIONS = [("NFSv3", ""), ("NFSv4.1", "-v4.1")]  # (name, configuration suffix)


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
    if isinstance(v, int):
        return str(v)
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


LOAD_ROWS = [  # (section, json name, key, figure, better)
    ("mounts", "mounts", "mounted", "mounts that mounted", "higher"),
    ("mounts", "mounts", "mount_s", "mount wall s", "lower"),
    ("mounts", "roundtrip", "exact", "mounts with exact data", "higher"),
    ("mounts", "roundtrip", "write_s", "write+fsync wall s", "lower"),
    ("mounts", "roundtrip", "write_mibs", "write MiB/s", "higher"),
    ("mounts", "roundtrip", "worst_write_s", "slowest mount's write s", "lower"),
    ("mounts", "roundtrip", "read_s", "read wall s", "lower"),
    ("mounts", "roundtrip", "read_mibs", "read MiB/s", "higher"),
    ("mounts", "roundtrip", "errors", "mounts with an error", "lower"),
    ("mounts", "mounts", "reconnects", "client reconnects", "lower"),
    ("fio write", "fio-write", "mibs", "MiB/s", "higher"),
    ("fio write", "fio-write", "clat_max_s", "worst completion s", "lower"),
    ("fio write", "fio-write.reconnects", "reconnects", "client reconnects", "lower"),
    ("fio read", "fio-read", "mibs", "MiB/s", "higher"),
    ("fio read", "fio-read", "clat_max_s", "worst completion s", "lower"),
    ("fio read", "fio-read.reconnects", "reconnects", "client reconnects", "lower"),
    ("storm rdma", "storm-rdma", "files_per_s", "files/s", "higher"),
    ("storm rdma", "storm-rdma", "errors", "errors", "lower"),
    ("storm rdma", "storm-rdma", "worst_s", "worst create s", "lower"),
    ("storm rdma", "storm-rdma.reconnects", "reconnects", "client reconnects", "lower"),
    ("storm tcp", "storm-tcp", "files_per_s", "files/s", "higher"),
    ("storm tcp", "storm-tcp", "errors", "errors", "lower"),
    ("storm tcp", "storm-tcp", "worst_s", "worst create s", "lower"),
    ("storm tcp", "storm-tcp.reconnects", "reconnects", "client reconnects", "lower"),
]


def load_value(results, server, name, key):
    try:
        with open(os.path.join(results, f"{server}.{name}.json")) as f:
            v = json.load(f).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def lfmt(v):
    if v is None or isinstance(v, int):
        return fmt(v)
    return f"{v:.2f}" if v < 10 else fmt(v)


def load_table(results, clients, mb, depth, threads, files, proto):
    sections = {"mounts": f"{clients} {proto} mounts x {mb} MiB", "fio write": f"fio write qd{depth} ({proto})",
                "fio read": f"fio read qd{depth} ({proto})",
                "storm rdma": f"create {threads}x{files} fsync (rdma)",
                "storm tcp": f"create {threads}x{files} fsync (tcp)"}
    rows = [["load", "figure", "nfsrdmad", "knfsd", "ratio", "better"]]
    for section, name, key, figure, better in LOAD_ROWS:
        a = load_value(results, "nfsrdmad", name, key)
        b = load_value(results, "knfsd", name, key)
        ratio = f"{a / b:.2f}" if a is not None and b else "-"
        rows.append([sections[section], figure, lfmt(a), lfmt(b), ratio, better])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(r[2:5], widths[2:5])] + [r[5]]
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append("ratio = nfsrdmad / knfsd; 'better' says which way is good for the row. NFSv3, kernel "
                 "client, same ext4 export, one VM boot; FAILED = no result. Emulated (TCG): compare ratios.")
    for server in ("nfsrdmad", "knfsd"):
        path = os.path.join(results, f"{server}.na")
        if os.path.exists(path):
            with open(path) as f:
                lines.append(f"{server}: {f.read().strip()}")
    print("\n".join(lines))


def version_table(results, version, suffix):
    pairs = [(t, ours + suffix, theirs + suffix) for t, ours, theirs in PAIRS]
    notes = []
    header = ["job", "unit"]
    for transport, ours, theirs in pairs:
        header += [f"nfsrdmad/{transport}", f"knfsd/{transport}", f"ratio/{transport}"]
    rows = [header]
    marks = {}
    for _, ours, theirs in pairs:
        for config in (ours, theirs):
            reason = na_reason(results, config)
            if reason:
                mark = "(" + "*" * (len(marks) + 1) + ")"
                marks[config] = mark
                notes.append(f"{mark} {reason}")
    for job, label, unit, direction, what in JOBS:
        row = [label, unit]
        for _, ours, theirs in pairs:
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
    lines = [version]
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(r[2:], widths[2:])]
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines + notes


def ran(results, suffix):
    names = [c + suffix for _, ours, theirs in PAIRS for c in (ours, theirs)]
    return any(f.startswith(tuple(n + "." for n in names)) for f in os.listdir(results))


def main():
    if sys.argv[1] == "--load":
        load_table(*sys.argv[2:9])
        return
    results = sys.argv[1]
    lines = []
    for version, suffix in VERSIONS:
        if ran(results, suffix):
            lines += version_table(results, version, suffix) + [""]
    lines.append("ratio = nfsrdmad / knfsd (higher is better in every row); kernel client, "
                 "same ext4 export, O_DIRECT for data jobs; emulated (TCG): compare ratios, not values.")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
