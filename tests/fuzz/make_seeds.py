#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora: small valid inputs, word by word as RFC 5531
(ONC RPC, record marking), RFC 1813 (NFSv3, MOUNT), RFC 5662 (NFSv4.1 COMPOUND),
RFC 8166 (RPC-over-RDMA) and RFC 8797 (CM private data) lay them out, plus the example
configurations.

    tests/fuzz/make_seeds.py            # rewrites tests/fuzz/corpus/*/seed-*

Crash reproducers (corpus/<target>/crash-*) are kept as they are.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def u32(*vs):
    return b"".join(struct.pack(">I", v & 0xffffffff) for v in vs)


def u64(v):
    return struct.pack(">Q", v)


def opaque(b):
    return u32(len(b)) + b + b"\0" * (-len(b) % 4)


FH = opaque(bytes(range(1, 33)))  # a 32-byte file handle
NAME = opaque(b"file.txt")
SATTR_NONE = u32(0, 0, 0, 0, 0, 0)          # set nothing, times DONT_CHANGE
SATTR_ALL = u32(1, 0o644, 1, 1000, 1, 1000, 1) + u64(4096) + u32(2, 5, 6, 1)
AUTH_SYS = u32(1) + opaque(u32(7) + opaque(b"client") + u32(1000, 1000, 2, 10, 20))
AUTH_NONE = u32(0) + opaque(b"")


def call(xid, prog, vers, proc, args=b"", cred=AUTH_SYS):
    return u32(xid, 0, 2, prog, vers, proc) + cred + AUTH_NONE + args


def frame(payload, last=True):
    return u32(len(payload) | (0x80000000 if last else 0)) + payload


# ---- NFSv3 / MOUNT arguments (RFC 1813 §3.3, §5.2) --------------------------------------
NFS_ARGS = {
    1: FH,                                                    # GETATTR
    2: FH + SATTR_ALL + u32(1, 5, 6),                         # SETATTR with guard
    3: FH + NAME,                                             # LOOKUP
    4: FH + u32(0x3f),                                        # ACCESS
    5: FH,                                                    # READLINK
    6: FH + u64(0) + u32(4096),                               # READ
    7: FH + u64(8) + u32(5, 2) + opaque(b"hello"),            # WRITE FILE_SYNC
    8: FH + NAME + u32(2) + b"verifier",                      # CREATE EXCLUSIVE
    9: FH + NAME + SATTR_NONE,                                # MKDIR
    10: FH + NAME + SATTR_NONE + opaque(b"../target"),        # SYMLINK
    11: FH + NAME + u32(3) + SATTR_NONE + u32(8, 1),          # MKNOD NF3BLK
    12: FH + NAME,                                            # REMOVE
    13: FH + NAME,                                            # RMDIR
    14: FH + NAME + FH + opaque(b"new"),                      # RENAME
    15: FH + FH + NAME,                                       # LINK
    16: FH + u64(0) + b"\0" * 8 + u32(4096),                  # READDIR
    17: FH + u64(3) + b"cookieve" + u32(1024, 8192),          # READDIRPLUS
    18: FH, 19: FH, 20: FH,                                   # FSSTAT FSINFO PATHCONF
    21: FH + u64(0) + u32(0),                                 # COMMIT
}
FATTR = u32(1, 0o644, 1, 0, 0) + u64(5) + u64(4096) + u32(0, 0) + u64(1) + u64(42) + u32(1, 2, 3, 4, 5, 6)
NFS_RES = {
    1: u32(0) + FATTR,                                        # GETATTR3resok
    3: u32(0) + FH + u32(1) + FATTR + u32(0),                 # LOOKUP3resok
    6: u32(0, 0) + u32(5, 1) + opaque(b"hello"),              # READ3resok
    7: u32(0, 0, 0) + u32(5, 2) + b"writever",                # WRITE3resok
    16: u32(0, 0) + b"cookieve" + u32(1) + u64(9) + opaque(b"a") + u64(1) + u32(0, 1),
    70: u32(70, 0),                                           # GETATTR3res NFS3ERR_STALE
}


def xdr_seeds():
    seeds = {}
    # proc_codecs() order: NFSv3 procedures 1..21 (args, res), then MOUNT (see fuzz_xdr_args.cpp).
    for proc, body in NFS_ARGS.items():
        seeds[f"nfs3-args-{proc}"] = bytes([2 * (proc - 1)]) + body
    for proc, body in NFS_RES.items():
        p = 1 if proc == 70 else proc
        seeds[f"nfs3-res-{proc}"] = bytes([2 * (p - 1) + 1]) + body
    seeds["mount1-mnt-args"] = bytes([42]) + opaque(b"/srv/data")
    seeds["mount3-mnt-args"] = bytes([47]) + opaque(b"/srv/data")
    seeds["mount3-mnt-res"] = bytes([48]) + u32(0) + FH + u32(2, 1, 0)
    seeds["mount3-export-res"] = bytes([51]) + u32(1) + opaque(b"/srv") + u32(1) + opaque(b"*") + u32(0, 0)
    return seeds


def rpc_seeds():
    return {
        "null-auth-none": call(1, 100003, 3, 0, cred=AUTH_NONE),
        "getattr-auth-sys": call(2, 100003, 3, 1, NFS_ARGS[1]),
        "write-auth-sys": call(3, 100003, 3, 7, NFS_ARGS[7]),
        "mnt": call(4, 100005, 3, 1, opaque(b"/srv/data")),
        "rpcvers-3": u32(5, 0, 3, 100003, 3, 0) + AUTH_NONE + AUTH_NONE,
        "reply": u32(6, 1, 0) + AUTH_NONE + u32(0),
    }


def record_seeds():
    null = call(1, 100003, 3, 0, cred=AUTH_NONE)
    write = call(2, 100003, 3, 7, NFS_ARGS[7])
    return {
        "one-record": b"\0" + frame(null),
        "two-records-step3": b"\3" + frame(null) + frame(write),
        "fragments-step1": b"\1" + frame(write[:12], last=False) + frame(write[12:40], last=False)
        + frame(write[40:]),
        "empty-fragments": b"\7" + frame(b"", last=False) + frame(null),
    }


# ---- RPC-over-RDMA version 1 (RFC 8166 §4) -----------------------------------------------
XID = 0x11223344


def seg(handle, length, offset):
    return u32(handle, length) + u64(offset)


def rdma(proc, reads=(), writes=(), reply=None, vers=1):
    h = u32(XID, vers, 32, proc)
    for pos, s in reads:
        h += u32(1, pos) + s
    h += u32(0)
    for segs in writes:
        h += u32(1, len(segs)) + b"".join(segs)
    h += u32(0)
    h += u32(0) if reply is None else u32(1, len(reply)) + b"".join(reply)
    return h


def rdma_seeds():
    # Shape bytes: payload length / 3 (2 bytes), inline threshold, flags (see fuzz_rdma_header.cpp).
    small, big = b"\0\x10\x03\x02", b"\x10\0\x01\x07"
    null = call(XID, 100003, 3, 0, cred=AUTH_NONE)
    read = call(XID, 100003, 3, 6, NFS_ARGS[6])
    write = call(XID, 100003, 3, 7, FH + u64(0) + u32(8192, 2, 8192))  # data in a read chunk
    return {
        "msg-inline-null": small + rdma(0) + null,
        "msg-read-write-list": big + rdma(0, writes=[[seg(7, 4096, 0x1000), seg(7, 8192, 0x9000)]])
        + read,
        "msg-write-read-chunk": small + rdma(0, reads=[(len(write), seg(9, 8192, 0x2000))]) + write,
        "msg-reply-chunk": big + rdma(0, reply=[seg(5, 65536, 0x4000)]) + read,
        "nomsg-position-zero": small + rdma(1, reads=[(0, seg(3, len(write) + 8192, 0x8000))],
                                            reply=[seg(5, 4096, 0)]),
        "msgp": small + u32(XID, 1, 32, 2, 4, 1024) + u32(0, 0, 0) + null,
        "done": small + u32(XID, 1, 32, 3),
        "error-vers": small + u32(XID, 1, 32, 4, 1, 1, 1),
        "version-2": small + rdma(0, vers=2) + null,
    }



# ---- NFSv4.1 COMPOUND4args (RFC 5662) ----------------------------------------------------
SESSION = bytes(range(16))
FH4 = opaque(bytes(range(0x40, 0x60)))        # a 32-byte file handle
STATEID = u32(1) + bytes(range(12))
BITMAP = u32(2, 0x0010011a, 0x00b0a23a)       # type change size fsid fileid | mode ... times
FATTR_MODE = u32(2, 0, 2) + opaque(u32(0o644))  # attrmask {mode}, attr_vals


def op4(num, args=b""):
    return u32(num) + args


def compound4(*ops, tag=b"", minor=1):
    return opaque(tag) + u32(minor, len(ops)) + b"".join(ops)


SEQUENCE = op4(53, SESSION + u32(1, 0, 0, 0))
PUTFH = op4(22, FH4)
GETATTR = op4(9, BITMAP)
OWNER = u64(0x1122334455667788) + opaque(b"open id:1")


def open4(how, claim):
    return op4(18, u32(0, 3, 0) + OWNER + how + claim)


def compound4_seeds():
    chan = u32(0, 1049620, 1049480, 7584, 8, 64)
    return {
        "sequence-putfh-getattr": compound4(SEQUENCE, PUTFH, GETATTR, tag=b"t1"),
        "exchange-id": compound4(op4(42, b"verifier" + opaque(b"Linux NFSv4.1 client")
                                      + u32(0x101, 0) + u32(1) + opaque(b"kernel.org")
                                      + opaque(b"Linux 6.1") + u64(1700000000) + u32(0))),
        "exchange-id-mach-cred": compound4(op4(42, b"verifier" + opaque(b"owner") + u32(0, 1)
                                                + u32(2, 0x00100000, 0x50) + u32(1, 0) + u32(0))),
        "create-session": compound4(op4(43, u64(0xfeedfacecafebeef) + u32(1, 3) + chan + u32(1, 16)
                                         + u32(0, 4096, 4096, 0, 2, 16, 0) + u32(0x40000000, 2, 0, 1)
                                         + u32(7) + opaque(b"client") + u32(0, 0, 2, 0, 10))),
        "open-create-exclusive41": compound4(SEQUENCE, PUTFH,
                                             open4(u32(1, 3) + b"verifier" + FATTR_MODE,
                                                   u32(0) + opaque(b"file.txt")),
                                             op4(10), GETATTR),
        "open-guarded-claim-fh": compound4(SEQUENCE, PUTFH, open4(u32(1, 1) + FATTR_MODE, u32(4)),
                                           op4(10)),
        "open-nocreate-claim-previous": compound4(SEQUENCE, PUTFH, open4(u32(0), u32(1, 1))),
        "open-claim-delegate-cur": compound4(SEQUENCE, PUTFH,
                                             open4(u32(0), u32(2) + STATEID + opaque(b"f"))),
        "open-claim-deleg-cur-fh": compound4(SEQUENCE, PUTFH, open4(u32(0), u32(5) + STATEID)),
        "write-read-commit": compound4(SEQUENCE, PUTFH,
                                       op4(38, STATEID + u64(8) + u32(2) + opaque(b"hello")),
                                       op4(25, STATEID + u64(0) + u32(4096)),
                                       op4(5, u64(0) + u32(0))),
        "lock-new-owner": compound4(SEQUENCE, PUTFH,
                                    op4(12, u32(2, 0) + u64(0) + u64(0xffffffffffffffff) + u32(1)
                                        + u32(0) + STATEID + u32(0) + u64(7) + opaque(b"lk"))),
        "lookup-readdir": compound4(SEQUENCE, op4(24), op4(15, opaque(b"dir")),
                                    op4(26, u64(0) + b"\0" * 8 + u32(8192, 32768) + BITMAP)),
        "illegal": compound4(op4(10044), minor=0),
    }


def private_data_seeds():
    pd = u32(0xf6ab0e18) + bytes([1, 1, 3, 7])
    return {"v1": pd, "v1-after-junk": b"\xde\xad\xbe" + pd + b"\0" * 5, "v2": pd[:4] + b"\2\0\0\0"}


def config_seeds():
    seeds = {}
    for f in sorted(os.listdir(os.path.join(ROOT, "config", "examples"))):
        with open(os.path.join(ROOT, "config", "examples", f), "rb") as fh:
            seeds[f] = fh.read()
    seeds["small.yaml"] = (b"listeners: {tcp: ['[::1]:2049'], rdma: [], mount_port: 20048}\n"
                           b"exports:\n  - path: /srv/a\n    access: rw\n    squash: all\n"
                           b"    anonuid: 65534\n    sec: [sys, none]\n"
                           b"    clients: [10.0.0.0/8, {match: 'fe80::/10', access: ro}]\n")
    return seeds


def main():
    corpora = {"xdr_args": xdr_seeds(), "compound4_args": compound4_seeds(),
               "rpc_call": rpc_seeds(), "record_marking": record_seeds(),
               "rdma_header": rdma_seeds(), "rdma_private_data": private_data_seeds(),
               "config": config_seeds()}
    for target, seeds in corpora.items():
        d = os.path.join(HERE, "corpus", target)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            if old.startswith("seed-"):
                os.remove(os.path.join(d, old))
        for name, data in seeds.items():
            with open(os.path.join(d, "seed-" + name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
