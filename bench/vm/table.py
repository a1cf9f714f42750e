#!/usr/bin/env python3
"""Side-by-side table of the VM benchmark (bench/vm): nfsrdmad vs the kernel nfsd.

Usage: table.py RESULTS_DIR
       table.py --load RESULTS_DIR CLIENTS MB DEPTH THREADS FILES PROTO
       table.py --deleg RESULTS_DIR
       table.py --gss RESULTS_DIR VERS PROTO
RESULTS_DIR holds one fio JSON file per (configuration, job): CONFIG.JOB.json, where CONFIG is
nfsrdmad-tcp, knfsd-tcp, nfsrdmad-rdma, knfsd-rdma for NFSv3 and the same with a -v4.1 suffix for
NFSv4.1, and an optional CONFIG.na file whose text says why that configuration did not run. One
table per NFS version that has any file. Ratios are nfsrdmad / knfsd (higher is better for every
row). Under TCG emulation the absolute numbers mean little; the ratios are what we track.

--load: the load mode (guest-load.sh): SERVER.NAME.json files (SERVER nfsrdmad or knfsd) of
many mounts in parallel, fio at a deep queue, create storms; ratio = nfsrdmad / knfsd with a
column saying whether higher or lower is better for that row.

--deleg: the delegation mode (guest-deleg.sh): per configuration SERVER-TRANSPORT-MODE (MODE
deleg or nodeleg) the fio JSON of the cold pass and of the warm passes of the open/read/close
job (CONFIG.cold.json, CONFIG.warm.json) and CONFIG.ops.json: the mount's cumulative per-op
calls before, after the cold pass and after the warm passes, the server's delegation counters
before and after. Rows per transport: opens/s and the calls that show whether delegations were
used; ratio = nfsrdmad / knfsd for "with" and for "without".

--gss: the Kerberos mode (guest-gss.sh): per configuration SERVER-FLAVOR (FLAVOR sys, krb5,
krb5i, krb5p) the fio JSON of the data jobs and CONFIG.JOB.cpu.json (server and VM CPU ticks
during the job). Rows per job and flavor: throughput, and the server's CPU seconds per GiB
moved; ratio = nfsrdmad / knfsd (higher is better for throughput, lower for CPU).
"""
import json
import os
import sys

JOBS = [  # (job, label, unit, fio direction, value)
    ("seq-write", "seq write 1 MiB", "MiB/s", "write", "bw"),
    ("seq-read", "seq read 1 MiB", "MiB/s", "read", "bw"),
    ("rand-read", "rand read 4 KiB qd16", "IOPS", "read", "iops"),
    ("rand-write", "rand write 4 KiB qd16", "IOPS", "write", "iops"),
    ("meta-create", "create", "ops/s", "write", "iops"),
    ("meta-stat", "stat (cold)", "ops/s", "read", "iops"),
    ("meta-unlink", "unlink", "ops/s", "read", "iops"),
    # jobs/serial-meta.py, not fio: its own JSON, the figure at the top level
    ("serial-meta", "serial create+stat+rename+remove", "loops/s", None, "loops_per_s"),
]
PAIRS = [("tcp", "nfsrdmad-tcp", "knfsd-tcp"), ("rdma", "nfsrdmad-rdma", "knfsd-rdma")]
VERSIONS = [("NFSv3", ""), ("NFSv4.1", "-v4.1")]  # (name, configuration suffix)


def value(results, config, job, direction, what):
    path = os.path.join(results, f"{config}.{job}.json")
    if direction is None:  # a job of our own (jobs/*.py): {what: value, ...}
        try:
            with open(path) as f:
                return float(json.load(f)[what])
        except (OSError, ValueError, KeyError, TypeError):
            return None
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
    try:
        with open(os.path.join(results, "nfsrdmad.memory.json")) as f:
            mem = json.load(f)
        mib = lambda v: f"{v / 1024:.1f}" if v >= 0 else "?"
        lines.append("")
        lines.append(f"nfsrdmad memory: one mount: RSS {mib(mem['one']['rss_kib'])} MiB, registered "
                     f"{mib(mem['one']['registered'] / 1024)} MiB; {mem['mounted']} mounts: RSS "
                     f"{mib(mem['all']['rss_kib'])} MiB, registered {mib(mem['all']['registered'] / 1024)} MiB "
                     f"(after the same {mb} MiB through each)")
    except (OSError, ValueError, KeyError, TypeError):
        pass
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


DATA_JOBS = [j for j in JOBS if j[0] in ("seq-write", "seq-read", "rand-read", "rand-write")]


def cpu_per_gib(results, config, job, direction):
    """The server's CPU seconds per GiB the mount moved during the job (CONFIG.JOB.cpu.json of
    guest-bench.sh: ticks and the mount's server byte counters, ramp time included in both)."""
    cpu = read_json(os.path.join(results, f"{config}.{job}.cpu.json"))
    if not cpu:
        return None
    moved = cpu.get(f"{direction}_bytes", 0)
    return cpu["server"] / cpu["hz"] / (moved / float(1 << 30)) if moved else None


def cpu_table(results, version, suffix):
    """CPU seconds per GiB of the data jobs; over RDMA beside the floor (io_floor: pread or
    pwrite of the same bytes into or from a registered buffer, guest-bench.sh's floor())."""
    pairs = [(t, ours + suffix, theirs + suffix) for t, ours, theirs in PAIRS]
    header = ["server CPU s per GiB"]
    for transport, _, _ in pairs:
        header += [f"nfsrdmad/{transport}", f"knfsd/{transport}", f"ratio/{transport}"]
    header += ["floor", "floor+wire", "nfsrdmad/floor+wire"]
    rows = [header]
    any_value = False

    def cell(v):
        return f"{v:.2f}" if v is not None else "-"

    for job, label, _, direction, _ in DATA_JOBS:
        row = [label]
        for _, ours, theirs in pairs:
            a = cpu_per_gib(results, ours, job, direction)
            b = cpu_per_gib(results, theirs, job, direction)
            any_value |= a is not None or b is not None
            row += [cell(a), cell(b), f"{a / b:.2f}" if a is not None and b else "-"]
        ours_rdma = "nfsrdmad-rdma" + suffix
        floors = []
        for kind in ("floor", "floor-wire"):
            fl = read_json(os.path.join(results, f"{ours_rdma}.{job}.{kind}.json"))
            floors.append(fl.get("cpu_s_per_gib") if fl else None)
        a = cpu_per_gib(results, ours_rdma, job, direction)
        wire = floors[1]
        row += [cell(floors[0]), cell(wire), f"{a / wire:.2f}" if a is not None and wire else "-"]
        rows.append(row)
    if not any_value:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for n, r in enumerate(rows):
        lines.append("  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def ran(results, suffix):
    names = [c + suffix for _, ours, theirs in PAIRS for c in (ours, theirs)]
    return any(f.startswith(tuple(n + "." for n in names)) for f in os.listdir(results))


DELEG_COLUMNS = [("knfsd", "deleg"), ("knfsd", "nodeleg"), ("nfsrdmad", "deleg"), ("nfsrdmad", "nodeleg")]


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def deleg_fio(results, config, phase, expect_ios):
    """(opens per second, note): fio's read IOPS of the phase (one read per open+close)."""
    d = read_json(os.path.join(results, f"{config}.{phase}.json"))
    try:
        job = d["jobs"][0]
        rd = job["read"]
    except (TypeError, KeyError, IndexError):
        return None, None
    if job.get("error", 0):
        return None, f"{config} {phase}: fio error {job['error']}"
    ios = rd.get("total_ios", 0)
    note = None
    if expect_ios is not None and ios != expect_ios:
        note = f"{config} {phase}: fio did {ios} reads, not the {expect_ios} expected"
    return (rd["iops"] if rd.get("runtime") else None), note


def deleg_table(results):
    ops = {}
    for transport in ("tcp", "rdma"):
        for server, mode in DELEG_COLUMNS:
            c = f"{server}-{transport}-{mode}"
            ops[c] = read_json(os.path.join(results, f"{c}.ops.json"))
    any_ops = next((o for o in ops.values() if o), None)
    files = any_ops["files"] if any_ops else None
    passes = any_ops["passes"] if any_ops else None
    size = any_ops["size"] if any_ops else None
    warm_opens = files * passes if any_ops else None
    header = ["transport", "figure", "knfsd deleg", "knfsd no-deleg", "nfsrdmad deleg",
              "nfsrdmad no-deleg", "ratio deleg", "ratio no-deleg"]
    rows = [header]
    notes, marks, speedups = [], {}, []

    def calls(o, op, frm, to):
        # "OPEN" counts both of mountstats' OPEN (by name) and OPEN_NOATTR (by file handle)
        try:
            return sum(o[to].get(x, 0) - o[frm].get(x, 0) for x in ([op, op + "_NOATTR"] if op == "OPEN" else [op]))
        except (TypeError, KeyError, AttributeError):
            return None

    def server(o, key, delta):
        try:
            after = o["server_after"][key]
            return after - o["server_before"][key] if delta else after
        except (TypeError, KeyError):
            return None

    def cpu(o, who, frm, to):
        # CPU seconds between two points: the server's processes/threads, or the whole VM
        try:
            c = o["cpu"]
            return (c[to][who] - c[frm][who]) / float(o.get("hz") or 100)
        except (TypeError, KeyError):
            return None

    for transport in ("tcp", "rdma"):
        configs = [f"{s}-{transport}-{m}" for s, m in DELEG_COLUMNS]
        if not any(ops[c] or os.path.exists(os.path.join(results, f"{c}.na")) for c in configs):
            continue
        for c in configs:
            reason = na_reason(results, c)
            if reason:
                marks[c] = "(" + "*" * (len(marks) + 1) + ")"
                notes.append(f"{marks[c]} {c}: {reason}")
        figures = []
        for phase, label, expect in (("warm", "warm opens/s", warm_opens), ("cold", "cold opens/s (pass 1)", files)):
            vals = []
            for c in configs:
                v, note = deleg_fio(results, c, phase, expect) if c not in marks else (None, None)
                if note:
                    notes.append(note)
                vals.append(v)
            figures.append((label, vals, True))
        count_rows = [
            (f"OPEN calls, warm (of {warm_opens} opens)", lambda o: calls(o, "OPEN", "cold", "warm")),
            ("CLOSE calls, warm", lambda o: calls(o, "CLOSE", "cold", "warm")),
            ("READ calls, warm", lambda o: calls(o, "READ", "cold", "warm")),
            ("GETATTR calls, warm (fio setup)", lambda o: calls(o, "GETATTR", "cold", "warm")),
            (f"OPEN calls, cold (of {files} opens)", lambda o: calls(o, "OPEN", "before", "cold")),
            ("DELEGRETURN calls, both phases", lambda o: calls(o, "DELEGRETURN", "before", "warm")),
            ("server: delegations held after", lambda o: server(o, "held", False)),
            ("nfsrdmad: delegations granted", lambda o: server(o, "granted", True)),
            ("server CPU s, cold pass", lambda o: cpu(o, "server", "before", "cold")),
            ("server CPU s, warm passes", lambda o: cpu(o, "server", "cold", "warm")),
            ("VM busy CPU s, warm passes", lambda o: cpu(o, "vm", "cold", "warm")),
        ]
        for label, fn in count_rows:
            figures.append((label, [fn(ops[c]) if c not in marks else None for c in configs], False))
        first = True
        for label, vals, is_rate in figures:
            row = [transport if first else "", label]
            first = False
            for c, v in zip(configs, vals):
                if c in marks:
                    row.append("n/a " + marks[c])
                elif v is None:
                    row.append("FAILED" if is_rate else "-")
                elif isinstance(v, float) and not is_rate:
                    row.append(f"{v:.2f}")
                else:
                    row.append(fmt(v))
            if is_rate:
                kd, kn, nd, nn = vals
                row.append(f"{nd / kd:.2f}" if nd is not None and kd else "-")
                row.append(f"{nn / kn:.2f}" if nn is not None and kn else "-")
                if label.startswith("warm"):
                    for name, w, wo in (("knfsd", kd, kn), ("nfsrdmad", nd, nn)):
                        if w is not None and wo:
                            speedups.append(f"{name}/{transport} x{w / wo:.1f}")
            else:
                row += ["", ""]
            rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"NFSv4.1 open/read/close, one process: {files} files x {size} B, 1 cold pass + {passes} warm passes"]
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])]
        cells += [c.rjust(w) for c, w in zip(r[2:], widths[2:])]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += notes
    lines.append("")
    if speedups:
        lines.append("delegations' gain on warm opens/s (deleg / no-deleg): " + ", ".join(speedups))
    lines.append("opens/s = files opened, read whole and closed per second (fio, openfiles=1; its runtime "
                 "includes open and close);")
    lines.append("warm = the passes after the first; calls from the client's mountstats (OPEN: OPEN + "
                 "OPEN_NOATTR); held, granted: from the server;")
    lines.append("fio stat()s every file before its timed part (the GETATTRs of the warm phase); the client "
                 "gives back a delegation unused for a lease renewal (the warm-up file's: 1 DELEGRETURN);")
    lines.append("server CPU: the daemon's process or the kernel nfsd's threads (2 vCPUs: the client's work "
                 "is the rest of the VM's busy time);")
    lines.append("ratio = nfsrdmad / knfsd, higher is better. Kernel client, vers=4.1, same ext4 export, one VM "
                 "boot; emulated (TCG): compare ratios, not values.")
    print("\n".join(lines))


GSS_FLAVORS = ["sys", "krb5", "krb5i", "krb5p"]
GSS_JOBS = [j for j in JOBS if j[0] in ("seq-write", "seq-read", "rand-read")]


def gss_cpu_per_gib(results, config, job, direction):
    cpu = read_json(os.path.join(results, f"{config}.{job}.cpu.json"))
    try:
        with open(os.path.join(results, f"{config}.{job}.json")) as f:
            moved = json.load(f)["jobs"][0][direction]["io_bytes"]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    if not cpu or not moved:
        return None
    return cpu["server"] / cpu["hz"] / (moved / float(1 << 30))


def gss_table(results, vers, proto):
    def ratio(a, b):
        return f"{a / b:.2f}" if a is not None and b else "-"

    head = ["job", "sec", "nfsrdmad", "knfsd", "ratio", "CPU s/GiB nfsrdmad", "knfsd", "ratio"]
    rows = []
    for job, label, unit, direction, what in GSS_JOBS:
        for flavor in GSS_FLAVORS:
            ours, theirs = f"nfsrdmad-{flavor}", f"knfsd-{flavor}"
            a = value(results, ours, job, direction, what)
            b = value(results, theirs, job, direction, what)
            ca = gss_cpu_per_gib(results, ours, job, direction)
            cb = gss_cpu_per_gib(results, theirs, job, direction)
            na_a, na_b = na_reason(results, ours), na_reason(results, theirs)
            rows.append([f"{label} ({unit})", flavor, "n/a" if na_a else fmt(a),
                         "n/a" if na_b else fmt(b), ratio(a, b),
                         f"{ca:.2f}" if ca is not None else "-",
                         f"{cb:.2f}" if cb is not None else "-", ratio(ca, cb)])
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    lines = [f"RPCSEC_GSS, NFS v{vers} over {proto}: nfsrdmad vs the kernel nfsd", ""]
    for n, r in enumerate([head] + rows):
        lines.append("  ".join(str(c).ljust(widths[i]) for i, c in enumerate(r)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    for flavor in GSS_FLAVORS:
        for server in ("nfsrdmad", "knfsd"):
            why = na_reason(results, f"{server}-{flavor}")
            if why:
                lines.append(f"{server} {flavor}: n/a: {why}")
    lines.append("")
    lines.append("ratio = nfsrdmad / knfsd: higher is better for throughput, lower for CPU s/GiB (the "
                 "server's own CPU time per GiB the job moved: the daemon's process, which includes "
                 "its reactors' polling, against the nfsd threads only, without the kernel's RDMA "
                 "completion work). Kernel client, same ext4 export, O_DIRECT, root under the "
                 "client's machine credential; emulated (TCG): compare ratios, not values.")
    print("\n".join(lines))


def main():
    if sys.argv[1] == "--gss":
        gss_table(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    if sys.argv[1] == "--load":
        load_table(*sys.argv[2:9])
        return
    if sys.argv[1] == "--deleg":
        deleg_table(sys.argv[2])
        return
    results = sys.argv[1]
    lines = []
    for version, suffix in VERSIONS:
        if ran(results, suffix):
            lines += version_table(results, version, suffix) + [""]
            cpu = cpu_table(results, version, suffix)
            if cpu:
                lines += cpu + [""]
    lines.append("ratio = nfsrdmad / knfsd (higher is better in every row; lower for CPU s per GiB); "
                 "kernel client, same ext4 export, O_DIRECT for data jobs; emulated (TCG): compare "
                 "ratios, not values.")
    lines.append("server CPU s per GiB: the daemon's process (its reactors' polling and, over "
                 "Soft-RoCE, the send work done in its threads) or the nfsd threads (without the "
                 "kernel's RDMA and TCP work in softirqs and kworkers), over the bytes the mount "
                 "moved. floor: io_floor moving the same bytes between the file and a registered "
                 "buffer with pread (reads) or pwrite + fsync (writes) alone: the floor on an RDMA "
                 "NIC, which moves the bytes itself. floor+wire: the same, each chunk also RDMA-"
                 "Written to (reads) or RDMA-Read from (writes) a second queue pair on the device: "
                 "Soft-RoCE does that work on the CPU, in the poster's system call for an RDMA Write "
                 "and in softirqs (charged to whichever thread they interrupt, or ksoftirqd) for an "
                 "RDMA Read, so on Soft-RoCE floor+wire is the comparable floor for reads and only a "
                 "rough one for writes. Issue 13's goal: <= 1.2 x the floor.")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
