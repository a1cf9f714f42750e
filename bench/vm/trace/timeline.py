#!/usr/bin/env python3
"""Per-LOOKUP timelines from bench/vm/trace/guest-lookup-trace.sh's ftrace output.

Finds the client's stat() calls that came back ENOENT (each one LOOKUP on the wire), prints
their durations and the median and mean of the last N, and with --show K,... the events
(system calls of every task, wake-ups, context switches) between the K-th call's entry and
its return, in µs from its entry. System call numbers are x86-64's (e.g. 19 readv, 20
writev, 202 futex, 228 clock_gettime, 232 epoll_wait, 332 statx, 437 openat2).

  timeline.py FTRACE.txt [--last N] [--show K,...]
"""
import argparse
import re
import statistics

LINE = re.compile(r"\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\S+):\s*(.*)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--last", type=int, default=36, help="calls the median is taken over")
    ap.add_argument("--show", default="", help="indexes of calls to print in full")
    a = ap.parse_args()
    ev = []
    with open(a.trace) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                ev.append((m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4)),
                           m.group(5), m.group(6)))
    calls = []
    for i, e in enumerate(ev):
        if e[0].startswith("python") and e[4] == "sys_enter" and re.match(r"NR (262|332|4) ", e[5]):
            x = next((j for j in range(i + 1, len(ev)) if ev[j][1] == e[1] and ev[j][4] == "sys_exit"), None)
            if x is not None and ev[x][5].endswith("= -2"):
                calls.append((i, x))
    if not calls:
        raise SystemExit("no stat() returning ENOENT in " + a.trace)
    us = [round((ev[x][3] - ev[i][3]) * 1e6) for i, x in calls]
    tail = us[-a.last:]
    print(f"{len(calls)} ENOENT stat() calls; µs: {us}")
    print(f"last {len(tail)}: median {statistics.median(tail):.0f} µs, mean {statistics.mean(tail):.0f} µs")
    for k in [int(s) for s in a.show.split(",") if s]:
        s, e = calls[k]
        t0 = ev[s][3]
        print(f"---- call {k}: {us[k]} µs")
        for x in ev[s:e + 1]:
            print(f"{(x[3] - t0) * 1e6:7.0f} {x[0][-12:]}-{x[1]:<7} cpu{x[2]} {x[4]:<13} {x[5][:110]}")


if __name__ == "__main__":
    main()
