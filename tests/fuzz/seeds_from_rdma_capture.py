#!/usr/bin/python3
"""rdma_header seeds from real traffic: the RPC-over-RDMA messages the kernel client sent
the daemon in the VM. No packet capture sees them (Soft-RoCE loops back inside the guest),
so the daemon writes what it receives itself when NFSRDMAD_RDMA_CAPTURE_DIR is set
(tests/vm/lib/nfs.sh rdma_capture_env, with NFSRDMAD_CAPTURE=1):

    tests/vm/boot.sh --vm-dir build/vm -e NFSRDMAD_CAPTURE=1 -e NFSRDMAD_BIN=... \\
        -e RDMA_REQUESTER=... tests/vm/tests/nfsrdmad_rdma.sh
    tests/fuzz/seeds_from_rdma_capture.py build/tests/vm/runs/*/out/rdma-capture

Writes tests/fuzz/corpus/rdma_header/cap-rdma-<hash>: fuzz_rdma_header.cpp's four shape
bytes (a 1 KiB READ-like payload, a 4 KiB inline threshold, 24 bytes of reply header)
then the message, at most two per shape (message type, chunk lists, RPC program and
procedure), MAX seeds in all.
"""
import hashlib
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "rdma_header")
SHAPE = bytes([0x01, 0x55, 0x0F, 0x1A])
MAX = 64
PER_SHAPE = 2


def shape(msg):
    """(proc, read segments, write chunks, reply chunk?, rpc prog, rpc proc) or None."""
    if len(msg) < 28:
        return None
    xid, vers, credits, proc = struct.unpack_from(">IIII", msg, 0)
    off, reads, writes = 16, 0, 0
    try:
        while struct.unpack_from(">I", msg, off)[0]:  # read list: position + segment
            reads, off = reads + 1, off + 4 + 4 + 16
        off += 4
        while struct.unpack_from(">I", msg, off)[0]:  # write list: count + segments
            n = struct.unpack_from(">I", msg, off + 4)[0]
            writes, off = writes + 1, off + 8 + 16 * n
        off += 4
        reply = struct.unpack_from(">I", msg, off)[0]
        if reply:  # discriminator, count, segments
            off += 8 + 16 * struct.unpack_from(">I", msg, off + 4)[0]
        else:
            off += 4
        prog, rproc = (0, 0)
        if proc == 0 and len(msg) >= off + 24:  # RDMA_MSG: the RPC call follows inline
            prog, rproc = struct.unpack_from(">I", msg, off + 12)[0], struct.unpack_from(">I", msg, off + 20)[0]
    except struct.error:
        return None
    return (proc, reads, writes, bool(reply), prog, rproc)


def main(dirs):
    if not dirs:
        print(__doc__)
        return 2
    os.makedirs(OUT, exist_ok=True)
    per, written, seen = {}, 0, 0
    files = sorted(
        (os.path.join(d, f) for d in dirs for f in os.listdir(d) if f.endswith(".bin")),
        key=lambda p: int(os.path.basename(p)[5:-4]) if os.path.basename(p)[5:-4].isdigit() else 0,
    )
    for path in files:
        with open(path, "rb") as f:
            msg = f.read()
        seen += 1
        key = shape(msg)
        if key is None or per.get(key, 0) >= PER_SHAPE or written >= MAX:
            continue
        per[key] = per.get(key, 0) + 1
        data = SHAPE + msg
        name = "cap-rdma-" + hashlib.sha1(data).hexdigest()[:16]
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        written += 1
    print(f"{seen} messages, {len(per)} shapes, {written} seeds in {OUT}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
