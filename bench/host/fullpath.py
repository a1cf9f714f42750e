#!/usr/bin/env python3
"""Instructions and system calls per call of the whole daemon over TCP (issue 13).

percall_bench (instructions.py) measures decode, dispatch and encode alone. This runs the
real daemon (BUILD/daemon/nfsrdmad) with one reactor and two workers in the event engine
mode (no spinning, so nothing is counted while it waits for the next call), over an
export in a temporary directory, and sends it N and then 2N NFSv3 calls over one TCP
connection from a raw client here, one at a time, each reply awaited: record marking,
the reactor, the hand-off to a worker, the call, the reply written. The difference
between the two runs divided by N is one call; start-up, MOUNT and shut-down cancel out.

  callgrind  user-space instructions of every daemon thread
  strace -f  system calls of every daemon thread

  bench/host/fullpath.py BUILD_DIR [--calls N] [--only WORKLOAD] [--json FILE]

Workloads (NFSv3, AUTH_SYS uid 1000): null; getattr of the export's root; lookup of an
existing name; lookup_new (a name never looked up, a new one each call: NOENT); create (UNCHECKED, a new name each call, so each one commits the directory);
read (4 KiB of a 1 MiB file: spliced); write (4 KiB UNSTABLE into that file); write1m (the
whole 1 MiB file, UNSTABLE, the record sent at once); readdirplus (the export's root: 103
entries, each looked up). Instructions are not counted for lookup, lookup_new, create and readdirplus
(NO_CALLGRIND below).

Needs root (the daemon switches identities) and valgrind and strace. Loopback TCP, so the
kernel's side of the network is in no figure.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

from instructions import strace_counts  # same directory: on sys.path when run as a script

WORKLOADS = ["null", "getattr", "lookup", "lookup_new", "create", "read", "write", "write1m",
             "readdirplus"]
# Valgrind 3.19 (Debian 12) fails openat2 with ENOSYS, so these calls would fail under
# callgrind: their system calls are counted, their instructions are not.
NO_CALLGRIND = {"lookup", "lookup_new", "create", "readdirplus"}
MOUNT_PROG, NFS_PROG = 100005, 100003


class Client:
    """ONC RPC over TCP (RFC 5531 §11 record marking), AUTH_SYS uid/gid 1000."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.xid = 0
        machine = b"bench"
        body = struct.pack(">II", 0, len(machine)) + machine + b"\0" * (-len(machine) % 4)
        body += struct.pack(">IIII", 1000, 1000, 1, 1000)
        self.cred = struct.pack(">II", 1, len(body)) + body + struct.pack(">II", 0, 0)

    def _recv(self, n):
        out = b""
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            if not chunk:
                raise ConnectionError("the daemon closed the connection")
            out += chunk
        return out

    def call(self, prog, vers, proc, args=b""):
        """The results of an accepted call (after the reply header); raises otherwise."""
        self.xid += 1
        msg = struct.pack(">IIIIII", self.xid, 0, 2, prog, vers, proc) + self.cred + args
        self.s.sendall(struct.pack(">I", 0x80000000 | len(msg)) + msg)
        reply = b""
        while True:
            (mark,) = struct.unpack(">I", self._recv(4))
            reply += self._recv(mark & 0x7FFFFFFF)
            if mark & 0x80000000:
                break
        xid, mtype, stat, _flavor, vlen = struct.unpack(">IIIII", reply[:20])
        accept = struct.unpack(">I", reply[20 + vlen:24 + vlen])[0]
        if xid != self.xid or mtype != 1 or stat != 0 or accept != 0:
            raise RuntimeError(f"call {prog}/{proc} not accepted")
        return reply[24 + vlen:]


def opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def wait_for_port(port, proc, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"fullpath.py: the daemon exited early ({proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit("fullpath.py: the daemon did not listen in time")


def serve(exe, wrap, base, session):
    """Starts the daemon (under `wrap`) on base's export and state, MOUNTs the export, runs
    session(client, root handle) and stops the daemon; session's result."""
    export, state = os.path.join(base, "export"), os.path.join(base, "state")
    nfs_port, mount_port = free_ports(2)
    cmd = wrap + [exe, "--log-level", "warn", "--state-dir", state,
                  "--tcp", f"127.0.0.1:{nfs_port}", "--mount-port", str(mount_port),
                  "--export", f"{export}=rw,no_root_squash,insecure", "--rdma", "off",
                  "--no-rpcbind", "--config", os.path.join(base, "engine.yaml")]
    log = open(os.path.join(base, "log"), "a")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(nfs_port, proc)
        wait_for_port(mount_port, proc)
        m = Client(mount_port)
        res = m.call(MOUNT_PROG, 3, 1, opaque(export.encode()))  # MOUNTPROC3_MNT
        (status, fh_len) = struct.unpack(">II", res[:8])
        if status != 0:
            sys.exit(f"fullpath.py: MOUNT MNT failed ({status})")
        return session(Client(nfs_port), res[8:8 + fh_len])
    finally:
        # The daemon itself (strace's or valgrind's child, or valgrind itself) gets SIGTERM.
        target = proc.pid
        if wrap and wrap[0] == "strace":
            kids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                  text=True).stdout.split()
            target = int(kids[0]) if kids else proc.pid
        os.kill(target, signal.SIGTERM)
        proc.wait(timeout=120)
        log.close()


def check(r, what):
    (status,) = struct.unpack(">I", r[:4])
    if status != 0:
        sys.exit(f"fullpath.py: {what} failed (NFS3 status {status})")
    return r


def run(exe, tool, workload, calls, tmp, tag):
    """Starts the daemon under `tool`, sends `calls` calls, stops it; the tool's output."""
    base = tempfile.mkdtemp(dir=tmp)
    export = os.path.join(base, "export")
    os.makedirs(export)
    os.makedirs(os.path.join(base, "state"))
    os.chmod(export, 0o777)
    with open(os.path.join(export, "f"), "wb") as f:
        f.write(b"r" * (1 << 20))
    os.chown(os.path.join(export, "f"), 1000, 1000)
    if workload == "readdirplus":  # 100 more entries to list (with f, "." and "..")
        for i in range(100):
            open(os.path.join(export, f"e{i}"), "w").close()
    with open(os.path.join(base, "engine.yaml"), "w") as f:
        f.write("engine:\n  mode: event\n  threads: 1\n  workers: 2\n")
    file_fh = None
    if workload in ("read", "write", "write1m"):
        # The file's handle from a daemon run outside the tool (the handle key stays in the
        # state directory): LOOKUP makes an openat2, which callgrind cannot run.
        def lookup(c, root):
            r = check(c.call(NFS_PROG, 3, 3, opaque(root) + opaque(b"f")), "LOOKUP f")
            (n,) = struct.unpack(">I", r[4:8])
            return r[8:8 + n]
        file_fh = serve(exe, [], base, lookup)

    big = opaque(b"W" * (1 << 20))

    def session(c, root):
        for i in range(calls):
            if workload == "null":
                c.call(NFS_PROG, 3, 0)
                continue
            if workload == "getattr":
                proc, args = 1, opaque(root)
            elif workload == "lookup":
                proc, args = 3, opaque(root) + opaque(b"f")
            elif workload == "lookup_new":  # a name never seen: NOENT, from a worker
                proc, args = 3, opaque(root) + opaque(f"n{i}".encode())
            elif workload == "create":
                # createhow3 UNCHECKED, sattr3 with mode 0644 and nothing else set
                proc, args = 8, (opaque(root) + opaque(f"c{i}".encode())
                                 + struct.pack(">8I", 0, 1, 0o644, 0, 0, 0, 0, 0))
            elif workload == "readdirplus":  # the export's root from cookie 0, all of it
                proc, args = 17, (opaque(root) + struct.pack(">Q", 0) + b"\0" * 8
                                  + struct.pack(">II", 65536, 1 << 20))
            elif workload == "read":  # offset, count
                proc, args = 6, opaque(file_fh) + struct.pack(">QI", (i % 256) * 4096, 4096)
            elif workload == "write":  # offset, count, UNSTABLE, data
                proc, args = 7, (opaque(file_fh) + struct.pack(">QII", (i % 256) * 4096, 4096, 0)
                                 + opaque(b"w" * 4096))
            else:  # write1m: the whole file, 1 MiB UNSTABLE, sent at once
                proc, args = 7, opaque(file_fh) + struct.pack(">QII", 0, 1 << 20, 0) + big
            r = c.call(NFS_PROG, 3, proc, args)
            if workload == "lookup_new":
                if struct.unpack(">I", r[:4])[0] != 2:  # NFS3ERR_NOENT
                    sys.exit(f"fullpath.py: lookup_new call {i}: not NOENT")
                continue
            check(r, f"{workload} call {i}")

    out = os.path.join(tmp, f"{tag}.{workload}.{calls}")
    wrap = {"callgrind": ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"],
            "strace": ["strace", "-f", "-c", "-o", out]}[tool]
    serve(exe, wrap, base, session)
    return out


def callgrind_total(path):
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    sys.exit(f"fullpath.py: no totals in {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--only", choices=WORKLOADS)
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    exe = os.path.join(a.build_dir, "daemon", "nfsrdmad")
    if not os.access(exe, os.X_OK):
        sys.exit(f"fullpath.py: no {exe}: build it first")
    for tool in ("valgrind", "strace", "pgrep"):
        if not shutil.which(tool):
            sys.exit(f"fullpath.py: {tool} is not installed (scripts/install-deps)")
    if os.geteuid() != 0:
        sys.exit("fullpath.py: run as root (the daemon switches identities)")
    n = a.calls
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for w in [a.only] if a.only else WORKLOADS:
            instructions = None
            if w not in NO_CALLGRIND:
                lo = callgrind_total(run(exe, "callgrind", w, n, tmp, "cg"))
                hi = callgrind_total(run(exe, "callgrind", w, 2 * n, tmp, "cg"))
                instructions = (hi - lo) / n
            slo = strace_counts(run(exe, "strace", w, n, tmp, "st"))
            shi = strace_counts(run(exe, "strace", w, 2 * n, tmp, "st"))
            per = {k: (shi[k] - slo.get(k, 0)) / n for k in shi}
            results[w] = {"instructions": instructions,
                          "syscalls": {k: v for k, v in per.items() if v >= 0.05}}
    print(f"per call over TCP, whole daemon, from {n} and {2 * n} calls")
    print(f"{'workload':<10}{'instructions':>14}{'syscalls':>10}")
    for w, r in results.items():
        ins = "-" if r["instructions"] is None else f"{r['instructions']:.0f}"
        print(f"{w:<10}{ins:>14}{sum(r['syscalls'].values()):>10.1f}")
    print()
    for w, r in results.items():
        calls = ", ".join(f"{k} {v:g}" for k, v in sorted(r["syscalls"].items(),
                                                           key=lambda kv: -kv[1]))
        print(f"{w}: {calls or 'none'}")
    if any(r["instructions"] is None for r in results.values()):
        print("(-: valgrind 3.19 does not know openat2, which every name lookup makes)")
    broken = [w for w, r in results.items()
              if (r["instructions"] is not None and r["instructions"] <= 0) or sum(r["syscalls"].values()) <= 0]
    if broken:
        sys.exit(f"fullpath.py: nothing counted for {broken}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
