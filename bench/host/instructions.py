#!/usr/bin/env python3
"""Instructions and system calls per call of nfsrdmad's per-call path (issue 13).

Runs percall_bench's workloads (percall_bench.cpp) outside Google Benchmark, each twice,
with N and 2N calls: under callgrind for the instructions executed in user space, and under
strace -c for the system calls. The difference between the two runs divided by N is the
cost of one call; start-up and set-up cancel out. Callgrind counts each instruction once,
whatever the machine, so the figures are exact and repeatable (unlike a timer); the kernel's
side of each system call is not in them.

Instructions are split by the object they ran in: "ours" is the percall_bench executable
(nfsrdmad's code is linked into it statically), then the C++ and C libraries (allocation,
memcpy, the system call wrappers) and the rest.

  bench/host/instructions.py BUILD_DIR [--calls N] [--only NAME] [--json FILE]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

WORKLOADS = ["null", "v3_getattr", "v3_getattr_nowait", "v3_read_4k", "v3_readdirplus", "v41_getattr",
             "v41_getattr_nowait", "v3_create", "v41_create"]
# These name files with openat2(2), which valgrind 3.19 does not know: system calls only.
STRACE_ONLY = {"v3_create", "v41_create"}


def callgrind_self_cost(path):
    """Instructions (Ir) executed in each object, from a callgrind output file."""
    names = {}  # compressed "(id)" -> object name
    per_object = defaultdict(int)
    current = "?"
    skip_next = False  # the line after calls= is the call's inclusive cost, not self cost
    with open(path) as f:
        for line in f:
            if skip_next:
                skip_next = False
                continue
            if line.startswith("ob=") or line.startswith("cob="):
                # ob= and cob= share one table of compressed names: "(id) name" defines one.
                value = line.split("=", 1)[1].strip()
                m = re.match(r"\((\d+)\)\s*(.*)", value)
                name = value
                if m:
                    if m.group(2):
                        names[m.group(1)] = m.group(2)
                    name = names.get(m.group(1), "?")
                if line.startswith("ob="):
                    current = name
                continue
            if line.startswith("calls="):
                skip_next = True
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                if len(parts) >= 2:
                    per_object[current] += int(parts[1])
    return per_object


def group(obj, exe):
    base = os.path.basename(obj)
    if os.path.realpath(obj) == os.path.realpath(exe):
        return "ours"
    if base.startswith("libstdc++"):
        return "libstdc++"
    if base.startswith("libc.so") or base.startswith("libc-"):
        return "libc"
    return "other"


def run_callgrind(exe, name, calls, tmp):
    out = os.path.join(tmp, f"cg.{name}.{calls}")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    exe, "--calls", name, str(calls)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    grouped = defaultdict(int)
    for obj, ir in callgrind_self_cost(out).items():
        grouped[group(obj, exe)] += ir
    return grouped


def run_strace(exe, name, calls, tmp):
    out = os.path.join(tmp, f"st.{name}.{calls}")
    subprocess.run(["strace", "-f", "-c", "-o", out, exe, "--calls", name, str(calls)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return strace_counts(out)


def strace_counts(path):
    """System call -> calls, from the table `strace -c` wrote (fullpath.py uses it too)."""
    counts = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            # % time, seconds, usecs/call, calls, [errors,] syscall
            if len(parts) >= 5 and re.match(r"^[\d.]+$", parts[0]) and parts[-1] != "total":
                counts[parts[-1]] = int(parts[3])
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--only", choices=WORKLOADS)
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    exe = os.path.join(a.build_dir, "bench", "percall_bench")
    if not os.access(exe, os.X_OK):
        sys.exit(f"instructions.py: no {exe}: build it first (cmake --build {a.build_dir})")
    n = a.calls
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in [a.only] if a.only else WORKLOADS:
            ins = {}
            if name not in STRACE_ONLY:
                lo, hi = run_callgrind(exe, name, n, tmp), run_callgrind(exe, name, 2 * n, tmp)
                ins = {k: (hi[k] - lo.get(k, 0)) / n for k in hi}
            slo, shi = run_strace(exe, name, n, tmp), run_strace(exe, name, 2 * n, tmp)
            sys_per = {k: (shi[k] - slo.get(k, 0)) / n for k in shi}
            sys_per = {k: v for k, v in sys_per.items() if v >= 0.05}
            results[name] = {"instructions": ins, "syscalls": sys_per}

    print(f"per call, from {n} and {2 * n} calls (callgrind: user-space instructions; "
          "strace: system calls)")
    cols = ["ours", "libstdc++", "libc", "other"]
    print(f"{'workload':<20}" + "".join(f"{c:>11}" for c in cols) + f"{'total':>11}"
          + f"{'syscalls':>10}")
    for name, r in results.items():
        ins = r["instructions"]
        if ins:
            row = "".join(f"{ins.get(c, 0):>11.0f}" for c in cols) + f"{sum(ins.values()):>11.0f}"
        else:
            row = "".join(f"{'-':>11}" for _ in cols + ["total"])
        print(f"{name:<20}{row}{sum(r['syscalls'].values()):>10.1f}")
    print()
    for name, r in results.items():
        calls = ", ".join(f"{k} {v:g}" for k, v in sorted(r["syscalls"].items(),
                                                           key=lambda kv: -kv[1]))
        print(f"{name}: {calls or 'none'}")
    broken = [name for name, r in results.items()
              if (name not in STRACE_ONLY and r["instructions"].get("ours", 0) <= 0)
              or sum(r["syscalls"].values()) <= 0 and name in STRACE_ONLY]
    if broken:
        sys.exit(f"instructions.py: no instructions counted in percall_bench for {broken}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
