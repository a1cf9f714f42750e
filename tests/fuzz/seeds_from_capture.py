#!/usr/bin/python3
"""Seed corpora from real traffic: a capture the VM groups write when they run with
NFSRDMAD_CAPTURE=1 (tests/vm/lib/nfs.sh capture_start: the kernel client's NFS and
MOUNT calls over TCP, and RoCEv2 packets when Soft-RoCE puts them on the wire).

    apt-get install tcpdump python3-scapy     # Debian's scapy: run with /usr/bin/python3
    tests/vm/boot.sh --vm-dir build/vm -e NFSRDMAD_CAPTURE=1 -e NFSRDMAD_BIN=... \\
        tests/vm/tests/nfsrdmad_tcp.sh
    tests/fuzz/seeds_from_capture.py build/tests/vm/runs/*/out/traffic.pcap

Writes tests/fuzz/corpus/<target>/cap-<hash> for
  record_marking  the first 8 KiB of each client-to-server TCP stream (record marks as sent)
  rpc_call        each call record of at most 8 KiB (RFC 5531), two per program/version/procedure
  xdr_args        NFSv3 and MOUNT v3 MNT arguments, behind fuzz_xdr_args.cpp's selector byte
  rdma_header     RPC-over-RDMA messages (RFC 8166) reassembled from RC Send packets
and leaves the other seeds (make_seeds.py) and the crash reproducers alone.
"""
import hashlib
import os
import struct
import sys
from collections import defaultdict

from scapy.all import IP, IPv6, TCP, UDP, PcapReader  # noqa: E402  (Debian's python3-scapy)

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER_PORTS = {2049, 20048}
ROCE_PORT = 4791
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


# RC Send opcodes (IBA 9.2): first, middle, last (+imm, +inv), only (+imm, +inv).
SEND_FIRST, SEND_MIDDLE = 0x00, 0x01
SEND_LAST = {0x02: 0, 0x03: 4, 0x16: 4}  # opcode -> extra header bytes
SEND_ONLY = {0x04: 0, 0x05: 4, 0x17: 4}


def roce_sends(pkts):
    """Whole Send messages from RoCEv2 packets, reassembled per destination QP."""
    partial, out = {}, []
    for payload in pkts:
        if len(payload) < 16:
            continue
        op, flags = payload[0], payload[1]
        qp = int.from_bytes(payload[5:8], "big")
        pad = (flags >> 4) & 3
        extra = SEND_LAST.get(op, SEND_ONLY.get(op, 0))
        body = payload[12 + extra:len(payload) - 4 - pad]  # BTH, IMM/IETH ... pad, ICRC
        if op == SEND_FIRST:
            partial[qp] = bytearray(body)
        elif op == SEND_MIDDLE and qp in partial:
            partial[qp] += body
        elif op in SEND_LAST and qp in partial:
            out.append(bytes(partial.pop(qp) + body))
        elif op in SEND_ONLY:
            out.append(bytes(body))
    return out


def main(paths):
    streams, roce = Streams(), []
    for path in paths:
        with PcapReader(path) as pcap:
            for pkt in pcap:
                ip = pkt.getlayer(IP) or pkt.getlayer(IPv6)
                if ip is None:
                    continue
                truncated = len(pkt) < getattr(pkt, "wirelen", len(pkt) or 0)
                if pkt.haslayer(TCP) and pkt[TCP].dport in SERVER_PORTS:
                    t = pkt[TCP]
                    key = (ip.src, t.sport, ip.dst, t.dport)
                    streams.add(key, t.seq, bytes(t.payload), truncated)
                elif pkt.haslayer(UDP) and pkt[UDP].dport == ROCE_PORT and not truncated:
                    roce.append(bytes(pkt[UDP].payload))

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
    rdma_shapes = defaultdict(int)
    for msg in roce_sends(roce):
        if len(msg) < 16 or words(msg, 2)[1] != 1:  # rdma_vers 1
            continue
        shape = (words(msg, 4)[3], msg[16:40])  # procedure, the start of the chunk lists
        rdma_shapes[shape] += 1
        if rdma_shapes[shape] <= 2:
            seeds["rdma_header"][msg] = None

    for target, found in seeds.items():
        d = os.path.join(HERE, "corpus", target)
        os.makedirs(d, exist_ok=True)
        kept = list(found)[:MAX_PER_TARGET]
        for s in kept:
            name = "cap-" + hashlib.sha1(s).hexdigest()[:12]
            with open(os.path.join(d, name), "wb") as f:
                f.write(s)
        print(f"{target}: {len(kept)} seeds ({len(found)} distinct)")
    print(f"tcp streams: {len(streams.data)}, roce packets: {len(roce)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
