#!/usr/bin/python3
"""Seed corpora from real traffic: a capture the VM groups write when they run with
NFSRDMAD_CAPTURE=1 (tests/vm/lib/nfs.sh capture_start: the kernel client's NFS and
MOUNT calls over TCP). RPC-over-RDMA traffic cannot be captured there: Soft-RoCE
loops back inside the guest when client and server share it, so the rdma_header
seeds stay the ones make_seeds.py builds.

    apt-get install tcpdump python3-scapy     # Debian's scapy: run with /usr/bin/python3
    tests/vm/boot.sh --vm-dir build/vm -e NFSRDMAD_CAPTURE=1 -e NFSRDMAD_BIN=... \\
        tests/vm/tests/nfsrdmad_tcp.sh
    tests/fuzz/seeds_from_capture.py build/tests/vm/runs/*/out/traffic.pcap

Writes tests/fuzz/corpus/<target>/cap-<hash> for
  record_marking  the first 8 KiB of each client-to-server TCP stream (record marks as sent)
  rpc_call        each call record of at most 8 KiB (RFC 5531), two per program/version/procedure
  xdr_args        NFSv3 and MOUNT v3 MNT arguments, behind fuzz_xdr_args.cpp's selector byte
and leaves the other seeds (make_seeds.py) and the crash reproducers alone.
"""
import hashlib
import os
import struct
import sys
from collections import defaultdict

from scapy.all import IP, IPv6, TCP, PcapReader  # noqa: E402  (Debian's python3-scapy)

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER_PORTS = {2049, 20048}
MAX_PER_TARGET = 48


def words(b, n, off=0):
    return struct.unpack_from(">" + "I" * n, b, off)


class Streams:
    """Client-to-server TCP bytes per connection, in order, up to the first gap or the
    first packet tcpdump truncated (-s 4096)."""

    def __init__(self):
        self.data = defaultdict(bytearray)
        self.next = {}
        self.done = set()

    def add(self, key, seq, payload, truncated):
        if key in self.done or not payload:
            return
        if key not in self.next:
            self.next[key] = seq
        expect = self.next[key]
        if seq < expect:  # a retransmission: keep only what is new
            payload = payload[expect - seq:]
            seq = expect
        if seq > expect:
            self.done.add(key)
            return
        self.data[key] += payload
        self.next[key] = expect + len(payload)
        if truncated:
            self.done.add(key)


def records(stream):
    """Complete RPC records (RFC 5531 §11: fragments, last-fragment bit)."""
    out, rec, off = [], bytearray(), 0
    while off + 4 <= len(stream):
        (mark,) = words(stream, 1, off)
        n = mark & 0x7FFFFFFF
        if off + 4 + n > len(stream):
            break
        rec += stream[off + 4:off + 4 + n]
        off += 4 + n
        if mark & 0x80000000:
            out.append(bytes(rec))
            rec = bytearray()
    return out


def call_shape(rec):
    """(prog, vers, proc, offset of the arguments) of an RPC call, or None."""
    if len(rec) < 40:
        return None
    xid, mtype, rpcvers, prog, vers, proc = words(rec, 6)
    if mtype != 0 or rpcvers != 2:
        return None
    off = 24
    for _ in range(2):  # credential, verifier: flavor, length, body
        if off + 8 > len(rec):
            return None
        _, n = words(rec, 2, off)
        off += 8 + n + (-n % 4)
    return (prog, vers, proc, off) if off <= len(rec) else None


def main(paths):
    streams = Streams()
    for path in paths:
        with PcapReader(path) as pcap:
            for pkt in pcap:
                ip = pkt.getlayer(IP) or pkt.getlayer(IPv6)
                if ip is None or not pkt.haslayer(TCP) or pkt[TCP].dport not in SERVER_PORTS:
                    continue
                truncated = pkt.wirelen is not None and len(pkt) < pkt.wirelen  # tcpdump -s
                t = pkt[TCP]
                streams.add((ip.src, t.sport, ip.dst, t.dport), t.seq, bytes(t.payload), truncated)

    seeds = defaultdict(dict)
    per_shape = defaultdict(int)
    for data in streams.data.values():
        seeds["record_marking"][bytes(data[:8192])] = None
        for rec in records(bytes(data)):
            shape = call_shape(rec)
            if not shape or len(rec) > 8192:
                continue
            prog, vers, proc, args = shape
            per_shape[shape[:3]] += 1
            if per_shape[shape[:3]] > 2:
                continue
            seeds["rpc_call"][rec] = None
            if prog == 100003 and vers == 3 and 1 <= proc <= 21:
                seeds["xdr_args"][bytes([2 * (proc - 1)]) + rec[args:]] = None
            elif prog == 100005 and vers == 3 and proc == 1:
                seeds["xdr_args"][bytes([47]) + rec[args:]] = None
    for target, found in seeds.items():
        d = os.path.join(HERE, "corpus", target)
        os.makedirs(d, exist_ok=True)
        kept = list(found)[:MAX_PER_TARGET]
        for s in kept:
            name = "cap-" + hashlib.sha1(s).hexdigest()[:12]
            with open(os.path.join(d, name), "wb") as f:
                f.write(s)
        print(f"{target}: {len(kept)} seeds ({len(found)} distinct)")
    print(f"tcp streams: {len(streams.data)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
