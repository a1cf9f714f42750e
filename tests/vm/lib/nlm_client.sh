#!/bin/bash
# nlm_client.sh SERVER EXPORT V4MNT — NFSv3 locking (NLM) through the kernel client.
#
# The TCP group runs it as a second "host" in the same guest:
#     ip netns exec NS unshare --mount --uts --propagation private bash nlm_client.sh ...
# so that this client has a network namespace of its own (its kernel lockd, its rpcbind on
# port 111, its rpc.statd), a mount namespace with its own /run (the kernel registers the
# client's lockd with the rpcbind that `mount` reaches through /run/rpcbind.sock, which
# would otherwise be the server's, and take NLM's rpcbind entry from our daemon), and a
# host name of its own (NLM_HOSTNAME: the caller_name its lockd sends).
# The RDMA group runs it on the server's host itself (NLM_OWN_HOST=0: rxe serves one
# network namespace only; the group arranges rpcbind, see nfsrdmad_rdma.sh).
#   SERVER  the daemon's address as seen from here; it serves EXPORT (v3, NLM)
#   EXPORT  the export's path, also the server's own view of the files (a local process)
#   V4MNT   an NFSv4.1 mount of EXPORT made in the first namespace (visible here too)
# Env: NLM_MOUNT_OPTS (default v3 over TCP), NLM_OWN_HOST (1: own /run, rpcbind, statd),
# NLM_HOSTNAME, NLM_REBOOT=1 (this host "reboots" holding a lock: sm-notify tells the
# server's statd, which must then call the daemon back; the group runs a statd there).
# Exit status: that of vm_summary (0 when every check passed).
source "${VMTEST_LIB:-/vmtest/lib}/nfs.sh"
SERVER=$1 EXPORT=$2 V4=$3
M=/mnt/v3nlm
OWN_HOST=${NLM_OWN_HOST:-1}

if [ "$OWN_HOST" = 1 ]; then
    mount -t tmpfs tmpfs /run && mount -t tmpfs tmpfs /var/lib/nfs || exit 1
    [ -z "${NLM_HOSTNAME:-}" ] || hostname "$NLM_HOSTNAME" || exit 1
    check "client host: rpcbind and rpc.statd in its own namespace" statd_start
fi
OPTS=${NLM_MOUNT_OPTS:-vers=3,proto=tcp,port=$NFSRDMAD_PORT,mountport=$NFSRDMAD_MOUNT_PORT,soft,timeo=100,retrans=2}
if ! check "mount -o $OPTS (no nolock)" nfs_mount "$SERVER:$EXPORT" $M "$OPTS"; then
    vm_summary
    exit 1
fi
check "... locks go to the server (local_lock=none)" \
    bash -c "grep ' $M ' /proc/mounts | tee /dev/stderr | grep -q 'local_lock=none'"
mkdir -p $M/nlm && : > $M/nlm/f && : > $M/nlm/g

# One python program per situation; each prints what it saw.
py() { python3 - "$@"; }

check "v3: fcntl ranges between processes: overlap denied, beside granted, shared with shared" py "$M/nlm/f" << 'PY'
import fcntl, os, sys, time
p = sys.argv[1]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    fd = os.open(p, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)      # bytes 0-99, exclusive
    fcntl.lockf(fd, fcntl.LOCK_SH, 100, 1000)   # bytes 1000-1099, shared
    os.write(w, b"x")
    time.sleep(3)
    os._exit(0)
os.read(r, 1)
fd = os.open(p, os.O_RDWR)
def attempt(kind, n, at):
    try:
        fcntl.lockf(fd, kind | fcntl.LOCK_NB, n, at)
        return True
    except OSError:
        return False
bad = []
if attempt(fcntl.LOCK_EX, 50, 10): bad.append("overlap granted")
if not attempt(fcntl.LOCK_EX, 100, 200): bad.append("beside denied")
if not attempt(fcntl.LOCK_SH, 10, 1010): bad.append("shared with shared denied")
if attempt(fcntl.LOCK_EX, 10, 1010): bad.append("exclusive over shared granted")
os.waitpid(pid, 0)
print("fcntl ranges:", bad or "as expected")
sys.exit(1 if bad else 0)
PY

# A held lock seen from the three other sides: the server's local processes, an NFSv4.1
# client, and (as holder) the other way round.
hold() {  # FILE HOW FLAGFILE: lock FILE (python, lockf HOW), touch FLAGFILE, hold until it goes
    python3 - "$@" << 'PY' &
import fcntl, os, sys, time
p, how, flag = sys.argv[1:4]
fd = os.open(p, os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX if how == "ex" else fcntl.LOCK_SH, 0, 0)
open(flag, "w").close()
while os.path.exists(flag):
    time.sleep(0.1)
PY
    HOLDER=$!
    local i
    for i in $(seq 1 100); do [ -e "$3" ] && return 0; sleep 0.1; done
    return 1
}
nb_lock_fails() {  # FILE: a non-blocking exclusive lockf of FILE is refused
    python3 - "$1" << 'PY'
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError as e:
    print("refused:", e)
    sys.exit(0)
sys.exit("granted")
PY
}
nb_lock_works() { ! nb_lock_fails "$1" > /dev/null; }

if check "v3: a process holds a lock" hold $M/nlm/g ex /tmp/nlm-held; then
    check "... a local process on the server is refused it (OFD mirror)" nb_lock_fails "$EXPORT/nlm/g"
    check "... an NFSv4.1 client is refused it (one lock table)" nb_lock_fails "$V4/nlm/g"
    check "... another v3 process is refused it" nb_lock_fails $M/nlm/g
    rm -f /tmp/nlm-held; wait $HOLDER
    check "... released: the v4.1 client gets it" nb_lock_works "$V4/nlm/g"
fi
if check "v4.1: a process holds a lock" hold "$V4/nlm/g" ex /tmp/nlm-held; then
    check "... the v3 client is refused it" nb_lock_fails $M/nlm/g
    rm -f /tmp/nlm-held; wait $HOLDER
    check "... released: the v3 client gets it" nb_lock_works $M/nlm/g
fi
if check "server: a local process holds a lock" hold "$EXPORT/nlm/g" ex /tmp/nlm-held; then
    check "... the v3 client is refused it" nb_lock_fails $M/nlm/g
    rm -f /tmp/nlm-held; wait $HOLDER
    check "... released: the v3 client gets it" nb_lock_works $M/nlm/g
fi

# A holder killed: the client's kernel unlocks for it when the process's files close.
if check "v3: a process holds a lock, then is killed (SIGKILL)" hold $M/nlm/g ex /tmp/nlm-held; then
    kill -KILL $HOLDER; wait $HOLDER 2>/dev/null
    ok=1
    for i in $(seq 1 50); do nb_lock_works $M/nlm/g && { ok=0; break; }; sleep 0.2; done
    check "... its lock is gone: another process gets it" test $ok = 0
    rm -f /tmp/nlm-held
fi

# flock(2): the Linux client sends it as a whole-file POSIX lock (NLM).
( flock -x 9 && touch /tmp/nlm-flock && while [ -e /tmp/nlm-flock ]; do sleep 0.1; done ) 9<> $M/nlm/f &
FL=$!
for i in $(seq 1 100); do [ -e /tmp/nlm-flock ] && break; sleep 0.1; done
check "v3: flock -x held by one process" test -e /tmp/nlm-flock
check "... flock -n by another fails" sh -c "! flock -n -x 9 9<> $M/nlm/f"
# A blocking waiter: the server answers BLOCKED, then calls this host's lockd back with
# NLM4_GRANTED once the holder lets go (1 s from now); without the callback the client's
# lockd would only find out by re-sending its LOCK, 30 s later.
( sleep 1; rm -f /tmp/nlm-flock ) &
T0=$(now)
check "... a blocking flock completes once the holder lets go" sh -c "flock -w 60 -x 9 9<> $M/nlm/f"
WAITED=$(since "$T0")
note "blocking flock granted after $WAITED s (the holder let go after 1 s)"
# The holder lets go 1 s after T0, and notices the flag within 0.1 s more: the waiter must
# have its lock within seconds of that, which only the callback gives (the re-send is 30 s
# away). Under TCG the unlock, the callback and two lockd wake-ups can take over a second
# (a run of the tcp group saw 2.12 s from T0 against a bound of 2.1), so the bound is 3 s
# after the release rather than issue 10's one second.
check "... within 3 s of the release: a GRANTED callback, not the client's 30 s re-send" \
    awk -v t="$WAITED" 'BEGIN { exit !(t < 4.1) }'
wait $FL

# The server restarts while this host holds a lock (the group restarts it when
# /tmp/nlm-restart-now appears, and says so with /tmp/nlm-restarted): the daemon tells this
# host's statd (NSM SM_NOTIFY), its lockd reclaims the lock in the grace period, and the
# process holding it never notices.
held_on_server() {  # FILE: a local F_GETLK on the server's file sees a lock (takes none)
    python3 - "$1" << 'PY'
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fmt = "hhqqi4x"  # struct flock on x86_64
for i in range(450):
    r = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(fmt, fcntl.F_WRLCK, 0, 0, 0, 0))
    if struct.unpack(fmt, r)[0] != fcntl.F_UNLCK:
        print("held after %.1f s" % (i / 10))
        sys.exit(0)
    time.sleep(0.1)
sys.exit("no lock on the server's file after 45 s")
PY
}
rm -f /tmp/nlm-restarted
if check "v3: a process holds a lock across a server restart" hold $M/nlm/g ex /tmp/nlm-held; then
    touch /tmp/nlm-restart-now
    for i in $(seq 1 600); do [ -e /tmp/nlm-restarted ] && break; sleep 0.1; done
    check "... the server restarted" test -e /tmp/nlm-restarted
    check "... the lock is held on the server again (reclaimed after SM_NOTIFY)" \
        held_on_server "$EXPORT/nlm/g"
    check "... another v3 process is still refused it" nb_lock_fails $M/nlm/g
    rm -f /tmp/nlm-held
    wait $HOLDER
    check "... the holder ran to its end without an error" test $? = 0
    check "... then the lock is free" nb_lock_works $M/nlm/g
fi
rm -f /tmp/nlm-restart-now

# This host reboots while a process of it holds a lock (as far as the server can tell: its
# statd says so). The daemon asked the server's rpc.statd to watch this host (SM_MON) when
# it first locked; sm-notify now tells that statd of the "reboot" (SM_NOTIFY), statd calls
# the daemon back (NLM procedure 16, UDP to 127.0.0.1), and the daemon frees what this
# host held: a local process on the server gets the lock at once.
if [ "${NLM_REBOOT:-0}" = 1 ] &&
    check "v3: a process holds a lock, then this host reboots (sm-notify -f)" hold $M/nlm/g ex /tmp/nlm-held; then
    check "... sm-notify reaches the server's statd" timeout 60 sm-notify -f -d
    ok=1
    for i in $(seq 1 100); do nb_lock_works "$EXPORT/nlm/g" && { ok=0; break; }; sleep 0.2; done
    check "... statd called the daemon back: the lock is free on the server" test $ok = 0
    rm -f /tmp/nlm-held
    wait $HOLDER
fi

check "umount (v3, NLM)" nfs_umount $M
if [ "$OWN_HOST" = 1 ]; then
    statd_stop
    rpcbind_stop
fi
vm_summary
