#!/usr/bin/env python3
# pmap_standin.py PORT PROG=PORT... — a stand-in rpcbind for the daemon's own calls to a
# client on this same host (NFSRDMAD_CALLBACK_RPCBIND_PORT): portmap v2 GETPORT over TCP
# (RFC 1833 §3.2) answered from the table given, 0 for anything else. Used where the
# kernel client's lockd and the daemon share one rpcbind (NLM's entry can name only one of
# them): the real rpcbind names the daemon, this one the kernel's lockd and statd.
import socket, struct, sys, threading

port = int(sys.argv[1])
table = {int(p): int(q) for p, q in (a.split("=") for a in sys.argv[2:])}

def serve(c):
    with c:
        buf = b""
        while True:
            while len(buf) < 4 or len(buf) < 4 + (struct.unpack(">I", buf[:4])[0] & 0x7fffffff):
                d = c.recv(4096)
                if not d:
                    return
                buf += d
            n = struct.unpack(">I", buf[:4])[0] & 0x7fffffff
            msg, buf = buf[4:4 + n], buf[4 + n:]
            xid, _mtype, _rpcvers, _prog, _vers, proc = struct.unpack(">6I", msg[:24])
            # Skip the credential and verifier (flavor, length, body each).
            off = 24
            for _ in range(2):
                _flavor, ln = struct.unpack(">2I", msg[off:off + 8])
                off += 8 + ((ln + 3) & ~3)
            answer = 0
            if proc == 3:  # PMAPPROC_GETPORT (prog, vers, prot, port)
                prog = struct.unpack(">I", msg[off:off + 4])[0]
                answer = table.get(prog, 0)
            body = struct.pack(">6I", xid, 1, 0, 0, 0, 0)
            if proc == 3:
                body += struct.pack(">I", answer)
            c.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)

s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", port))
s.listen(64)
print("pmap stand-in on port %d: %s" % (port, table), flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
