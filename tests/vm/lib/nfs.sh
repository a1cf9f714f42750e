# nfs.sh - NFS servers and the kernel NFS client in the guest (sourced; bash).
#
# Client
#   nfs_client_modules            sunrpc, nfs, nfsv3, nfsv4 and rpcrdma (xprtrdma + svcrdma)
#   nfs_mount SRC MNT OPTS        mount -t nfs, bounded in time; on failure shows dmesg
#   nfs_umount MNT                umount, bounded; forces/lazy-unmounts if it hangs (and fails)
#   assert_mount_transport MNT rdma|tcp
#                                 the transport the client REALLY uses, read from the
#                                 "xprt:" line of MNT's block in /proc/self/mountstats (and
#                                 checked against proto= on its "opts:" line)
#   mount_op_count MNT OP         how many OP calls (READ, WRITE, ...) the client sent on MNT
#   mount_op_summary MNT          calls, mean RTT and execute time per operation
#   rpc_xprt_cut PORT             forces the client's transports (TCP or RDMA) to PORT to
#                                 disconnect (sysfs dstaddr), as a network fault would
# Services
#   rpcbind_start / rpcbind_stop
#   statd_start / statd_stop      rpc.statd (only where NLM locking is tested)
#   knfsd_start DIR / knfsd_stop  the kernel nfsd exporting DIR ($KNFSD_EXPORT_OPTS): TCP $KNFSD_PORT, RDMA
#                                 $KNFSD_RDMA_PORT, MOUNT on $KNFSD_MOUNTD_PORT; v3 mounts DIR,
#                                 v4 mounts "/" (DIR is the v4 pseudo-root, fsid=0)
#   nfsrdmad_start DIR [ARGS...]  our daemon ($NFSRDMAD_BIN) exporting DIR on 127.0.0.1:
#                                 $NFSRDMAD_PORT, MOUNT on $NFSRDMAD_MOUNT_PORT; log in
#                                 $VMTEST_OUT/nfsrdmad.log; returns once both ports accept
#                                 connections (rpcbind is optional)
#   nfsrdmad_stop                 SIGTERM; fails unless the daemon exits 0 within 30 s
#   nfsrdmad_mount_opts           the mount options that reach our daemon over TCP (v3, nolock)
#   nlm_client_run RESTART CMD... runs CMD (lib/nlm_client.sh) in the background; when it
#                                 asks for the server's restart (holding a lock), RESTART
#                                 runs; returns CMD's status
# The kernel nfsd and our daemon use different ports, but both register NFSv3 with rpcbind:
# stop one before starting the other.
source "${VMTEST_LIB:-/vmtest/lib}/common.sh"

KNFSD_PORT=${KNFSD_PORT:-3049}
KNFSD_RDMA_PORT=${KNFSD_RDMA_PORT:-20049}
KNFSD_MOUNTD_PORT=${KNFSD_MOUNTD_PORT:-30048}
KNFSD_THREADS=${KNFSD_THREADS:-8}
NFSRDMAD_PORT=${NFSRDMAD_PORT:-2049}
NFSRDMAD_MOUNT_PORT=${NFSRDMAD_MOUNT_PORT:-20048}
NFSRDMAD_ADDR=${NFSRDMAD_ADDR:-127.0.0.1}
NFSRDMAD_STATE=${NFSRDMAD_STATE:-/tmp/nfsrdmad-state}
NFSRDMAD_LOG=${NFSRDMAD_LOG:-$VMTEST_OUT/nfsrdmad.log}
NFSRDMAD_PID=
RPCBIND_PID=
STATD_PID=
MOUNTD_PID=

# ------------------------------------------------------------------------------ client
nfs_client_modules() {
    load_modules sunrpc nfs nfsv3 nfsv4 rpcrdma
}

# nfs_mount SRC MNT OPTS [TIMEOUT]
nfs_mount() {
    local src=$1 mnt=$2 opts=$3 tmo=${4:-120} rc t0
    mkdir -p "$mnt"
    t0=$(now)
    echo "+ mount -t nfs -o $opts $src $mnt"
    timeout -k 5 "$tmo" mount -t nfs -o "$opts" "$src" "$mnt"
    rc=$?
    if [ $rc != 0 ]; then
        echo "mount failed (status $rc after $(since "$t0") s); dmesg tail:" >&2
        dmesg | tail -15 | sed 's/^/  dmesg: /' >&2
        return $rc
    fi
    echo "  mounted in $(since "$t0") s: $(grep " $mnt " /proc/mounts | tail -1)"
}

nfs_umount() {
    local mnt=$1 rc
    timeout -k 5 60 umount "$mnt"
    rc=$?
    [ $rc = 0 ] && return 0
    echo "umount $mnt failed (status $rc); forcing" >&2
    timeout -k 5 30 umount -f "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
    return $rc
}

# _mountstats_block MNT: MNT's block of /proc/self/mountstats (the last one if stacked)
_mountstats_block() {
    awk -v m="$1" '
        /^device / { inb = ($4 == "on" && $5 == m && $7 == "fstype" && $8 ~ /^nfs/); if (inb) blk = ""; }
        inb { blk = blk $0 "\n" }
        END { printf "%s", blk }' /proc/self/mountstats
}

# assert_mount_transport MNT rdma|tcp   (returns 0 iff MNT is an NFS mount using that transport)
assert_mount_transport() {
    local mnt want=$2 blk xprt proto
    mnt=$(cd "$1" 2>/dev/null && pwd -P) || { echo "assert_mount_transport: no such directory $1" >&2; return 1; }
    blk=$(_mountstats_block "$mnt")
    if [ -z "$blk" ]; then
        echo "assert_mount_transport: $mnt is not an NFS mount (not in /proc/self/mountstats)" >&2
        return 1
    fi
    xprt=$(printf '%s' "$blk" | awk '$1 == "xprt:" {print $2; exit}')
    proto=$(printf '%s' "$blk" | awk '$1 == "opts:" {print $2; exit}' | tr , '\n' | sed -n 's/^proto=//p')
    echo "  $mnt: mountstats xprt=$xprt, opts proto=$proto (want $want)"
    if [ "$xprt" != "$want" ]; then
        echo "assert_mount_transport: $mnt uses transport '${xprt:-none}', not '$want':" >&2
        printf '%s' "$blk" | grep -E '^\s*(device|opts|xprt):' | sed 's/^/    /' >&2
        return 1
    fi
    # proto=rdma6/tcp6 (IPv6) is the same transport as rdma/tcp
    [ "${proto%6}" = "$want" ] || { echo "assert_mount_transport: opts say proto=$proto, xprt says $xprt" >&2; return 1; }
}

# mount_op_count MNT OP: number of OP requests sent (per-op statistics of mountstats)
mount_op_count() {
    local mnt
    mnt=$(cd "$1" && pwd -P) || return 1
    _mountstats_block "$mnt" | awk -v op="$2:" '$1 == op {print $2; f=1; exit} END {if (!f) print 0}'
}

# mount_op_summary MNT: per NFS operation with calls: count, mean RTT and mean execute time (ms)
mount_op_summary() {
    local mnt
    mnt=$(cd "$1" && pwd -P) || return 1
    _mountstats_block "$mnt" | awk '
        /per-op statistics/ { on = 1; next }
        on && $1 ~ /:$/ && $2 > 0 {
            printf "%-12s %8d calls  rtt %7.2f ms  exec %7.2f ms\n", $1, $2, $8 / $2, $9 / $2 }'
}

# ------------------------------------------------------------------------------ rpcbind, statd
rpcbind_start() {
    if rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then return 0; fi
    mkdir -p /run/rpcbind
    rpcbind -f -w &
    RPCBIND_PID=$!
    wait_for 20 rpcinfo -p 127.0.0.1 >/dev/null || { echo "rpcbind did not come up" >&2; return 1; }
}
rpcbind_stop() {
    [ -n "$RPCBIND_PID" ] || return 0
    kill -TERM "$RPCBIND_PID" 2>/dev/null; wait "$RPCBIND_PID" 2>/dev/null; RPCBIND_PID=
}
statd_start() {
    rpcbind_start || return 1
    mkdir -p /var/lib/nfs/sm /var/lib/nfs/sm.bak
    rpc.statd -F --no-notify &
    STATD_PID=$!
    wait_for 20 rpcinfo -T tcp 127.0.0.1 100024 1 || { echo "rpc.statd did not register" >&2; return 1; }
}
statd_stop() {
    [ -n "$STATD_PID" ] || return 0
    kill -TERM "$STATD_PID" 2>/dev/null; wait "$STATD_PID" 2>/dev/null; STATD_PID=
}

# ------------------------------------------------------------------------------ kernel nfsd
knfsd_start() {
    local dir=$1
    [ -d "$dir" ] || { echo "knfsd_start: no directory $dir" >&2; return 1; }
    load_modules nfsd rpcrdma || return 1
    mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
    mkdir -p /run/rpc_pipefs /var/lib/nfs/v4recovery
    mountpoint -q /run/rpc_pipefs || mount -t rpc_pipefs sunrpc /run/rpc_pipefs
    rpcbind_start || return 1
    # fsid=0: DIR is also the NFSv4 pseudo-root. The guest's / is an overlayfs, which the
    # kernel nfsd cannot export, so the automatic v4 pseudo-root on / would not work.
    echo "$dir *(${KNFSD_EXPORT_OPTS:-rw,no_root_squash,insecure,no_subtree_check,fsid=0})" > /etc/exports
    exportfs -ra || return 1
    rpc.mountd -F -p "$KNFSD_MOUNTD_PORT" &
    MOUNTD_PID=$!
    # short lease and grace times: otherwise the first NFSv4 OPEN waits up to 90 s.
    # NB: rpc.nfsd's -r takes an OPTIONAL argument ("-r 20049" would mean 20049 threads):
    # the RDMA listener is added through the portlist file instead.
    rpc.nfsd -L 10 -G 10 -p "$KNFSD_PORT" "$KNFSD_THREADS" || return 1
    grep -q "rdma $KNFSD_RDMA_PORT" /proc/fs/nfsd/portlist \
        || echo "rdma $KNFSD_RDMA_PORT" > /proc/fs/nfsd/portlist || return 1
    wait_for 20 rpcinfo -T tcp 127.0.0.1 100005 3 >/dev/null || { echo "rpc.mountd did not register" >&2; return 1; }
    echo "knfsd: export $dir, listeners: $(tr '\n' ' ' < /proc/fs/nfsd/portlist), versions: $(cat /proc/fs/nfsd/versions)"
}

knfsd_stop() {
    rpc.nfsd 0 2>/dev/null
    exportfs -ua 2>/dev/null
    if [ -n "$MOUNTD_PID" ]; then
        kill -TERM "$MOUNTD_PID" 2>/dev/null; wait "$MOUNTD_PID" 2>/dev/null; MOUNTD_PID=
    fi
    # rpc.nfsd 0 unregisters NFS; make sure nothing stale remains for the next server
    rpcinfo -d 100003 3 2>/dev/null; rpcinfo -d 100003 4 2>/dev/null
    rpcinfo -d 100005 1 2>/dev/null; rpcinfo -d 100005 3 2>/dev/null
    [ "$(cat /proc/fs/nfsd/threads 2>/dev/null)" = 0 ] || { echo "knfsd_stop: nfsd threads still running" >&2; return 1; }
}

# ------------------------------------------------------------------------------ nfsrdmad
# soft,timeo=150,retrans=2: a server that stops answering makes the calls fail with EIO after
# ~45 s (and the client logs "server ... not responding"), instead of hanging the guest until
# the run's timeout. NFSRDMAD_MOUNT_EXTRA appends options.
nfsrdmad_mount_opts() {
    echo "vers=3,proto=tcp,port=$NFSRDMAD_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock,soft,timeo=150,retrans=2${NFSRDMAD_MOUNT_EXTRA:+,$NFSRDMAD_MOUNT_EXTRA}"
}

_tcp_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# nfsrdmad_start DIR [EXTRA DAEMON ARGS...]; export options from $NFSRDMAD_EXPORT_OPTS
nfsrdmad_start() {
    local dir=$1; shift
    [ -n "${NFSRDMAD_BIN:-}" ] || { echo "nfsrdmad_start: NFSRDMAD_BIN is not set" >&2; return 1; }
    [ -x "$NFSRDMAD_BIN" ] || { echo "nfsrdmad_start: $NFSRDMAD_BIN is not executable in the guest (a host path under /tmp, /run or /dev/shm is not visible there)" >&2; return 1; }
    [ -d "$dir" ] || { echo "nfsrdmad_start: no directory $dir" >&2; return 1; }
    mkdir -p "$NFSRDMAD_STATE"
    local before
    before=$(wc -l < "$NFSRDMAD_LOG" 2>/dev/null) || before=0
    echo "+ $NFSRDMAD_BIN --foreground --tcp $NFSRDMAD_ADDR:$NFSRDMAD_PORT --mount-port $NFSRDMAD_MOUNT_PORT --export $dir=${NFSRDMAD_EXPORT_OPTS:-rw,no_root_squash} $*" | tee -a "$NFSRDMAD_LOG"
    "$NFSRDMAD_BIN" --foreground --log-level "${NFSRDMAD_LOG_LEVEL:-info}" \
        --state-dir "$NFSRDMAD_STATE" --tcp "$NFSRDMAD_ADDR:$NFSRDMAD_PORT" \
        --mount-port "$NFSRDMAD_MOUNT_PORT" \
        --export "$dir=${NFSRDMAD_EXPORT_OPTS:-rw,no_root_squash}" "$@" >> "$NFSRDMAD_LOG" 2>&1 &
    NFSRDMAD_PID=$!
    local i probe=${NFSRDMAD_ADDR#[}
    probe=${probe%]}  # "[fd00::1]" on the command line, fd00::1 for bash's /dev/tcp
    for ((i = 0; i < 150; i++)); do
        if ! kill -0 "$NFSRDMAD_PID" 2>/dev/null; then
            wait "$NFSRDMAD_PID"
            echo "nfsrdmad exited during startup (status $?); log:" >&2
            tail -20 "$NFSRDMAD_LOG" | sed 's/^/  nfsrdmad: /' >&2
            NFSRDMAD_PID=
            return 1
        fi
        # both listeners accept connections (bash's /dev/tcp: no exec, and unlike
        # `rpcinfo -n PORT` it does not need rpcbind)
        _tcp_open "$probe" "$NFSRDMAD_PORT" && _tcp_open "$probe" "$NFSRDMAD_MOUNT_PORT" && break
        sleep 0.2
    done
    _tcp_open "$probe" "$NFSRDMAD_PORT" && _tcp_open "$probe" "$NFSRDMAD_MOUNT_PORT" \
        || { echo "nfsrdmad does not accept connections on $NFSRDMAD_ADDR:$NFSRDMAD_PORT and :$NFSRDMAD_MOUNT_PORT after 30 s" >&2; return 1; }
    # Then its "ready" line: the listeners accept before the daemon has registered with
    # rpcbind (under load, 100 ms a program version: a check of rpcinfo right after the
    # start once found NLM not registered yet).
    for ((i = 0; i < 150; i++)); do
        tail -n +$((before + 2)) "$NFSRDMAD_LOG" | grep -q "nfsrdmad ready" && break
        kill -0 "$NFSRDMAD_PID" 2>/dev/null || break
        sleep 0.2
    done
    if ! tail -n +$((before + 2)) "$NFSRDMAD_LOG" | grep -q "nfsrdmad ready"; then
        echo "nfsrdmad accepted connections but did not log 'nfsrdmad ready' within 30 s; log:" >&2
        tail -20 "$NFSRDMAD_LOG" | sed 's/^/  nfsrdmad: /' >&2
        return 1
    fi
    echo "nfsrdmad: pid $NFSRDMAD_PID, export $dir, listening on $NFSRDMAD_ADDR:$NFSRDMAD_PORT (MOUNT $NFSRDMAD_MOUNT_PORT)"
}

# nfsrdmad_stop: SIGUSR1 (counters into the log), then SIGTERM; returns the daemon's status
nfsrdmad_stop() {
    [ -n "$NFSRDMAD_PID" ] || return 0
    local pid=$NFSRDMAD_PID i rc
    NFSRDMAD_PID=
    nfsrdmad_dump "$pid"
    kill -TERM "$pid" 2>/dev/null || { echo "nfsrdmad (pid $pid) was not running" >&2; wait "$pid"; return 1; }
    for ((i = 0; i < 150; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
        echo "nfsrdmad did not exit within 30 s of SIGTERM; killing it" >&2
        kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
        return 1
    fi
    wait "$pid"; rc=$?
    echo "nfsrdmad exited with status $rc"
    return $rc
}

# Optional traffic capture for the fuzz seeds: with NFSRDMAD_CAPTURE=1 in the guest's
# environment (boot.sh -e NFSRDMAD_CAPTURE=1; tcpdump installed on the host), the NFS
# and MOUNT TCP traffic goes to $VMTEST_OUT/traffic.pcap, which
# tests/fuzz/seeds_from_capture.py turns into seed corpora. Off by default. RoCEv2 is
# not seen on any interface (Soft-RoCE loops back inside the guest): the daemon writes
# the RPC-over-RDMA messages it receives itself (rdma_capture_env), and
# tests/fuzz/seeds_from_rdma_capture.py turns those into rdma_header seeds.
capture_start() {
    [ -n "${NFSRDMAD_CAPTURE:-}" ] || return 0
    command -v tcpdump > /dev/null || { echo "NFSRDMAD_CAPTURE is set but tcpdump is not installed" >&2; return 1; }
    # 4 KiB of each packet and 30000 packets at most: the pcap stays under ~120 MiB.
    tcpdump -i any -s 4096 -c 30000 -U -w "$VMTEST_OUT/traffic.pcap" \
        "tcp port $NFSRDMAD_PORT or tcp port $NFSRDMAD_MOUNT_PORT" > /dev/null 2>&1 &
    CAPTURE_PID=$!
}

# rdma_capture_env: with NFSRDMAD_CAPTURE=1, makes the next nfsrdmad_start write the
# first 512 messages it receives over RDMA to $VMTEST_OUT/rdma-capture.
rdma_capture_env() {
    [ -n "${NFSRDMAD_CAPTURE:-}" ] || return 0
    mkdir -p "$VMTEST_OUT/rdma-capture"
    export NFSRDMAD_RDMA_CAPTURE_DIR=$VMTEST_OUT/rdma-capture
}

capture_stop() {
    [ -n "${CAPTURE_PID:-}" ] || return 0
    kill -INT "$CAPTURE_PID" 2> /dev/null; wait "$CAPTURE_PID"; CAPTURE_PID=
    unset NFSRDMAD_RDMA_CAPTURE_DIR
    ls -l "$VMTEST_OUT/traffic.pcap"
}

# ------------------------------------------------------------------------------ NLM
# lib/nlm_client.sh touches /tmp/nlm-restart-now while it holds a lock and waits for
# /tmp/nlm-restarted.
nlm_client_run() {
    local restart=$1 pid
    shift
    rm -f /tmp/nlm-restart-now /tmp/nlm-restarted
    "$@" &
    pid=$!
    while kill -0 $pid 2>/dev/null && [ ! -e /tmp/nlm-restart-now ]; do sleep 0.2; done
    if [ -e /tmp/nlm-restart-now ]; then
        $restart
        touch /tmp/nlm-restarted
    fi
    wait $pid
}

# ------------------------------------------------------------------------------ NFSv4.1
# nfs4_config: a YAML file turning NFSv4.1 on (short lease: a client that goes away is
# reaped within the run); pass it to nfsrdmad_start as `--config "$(nfs4_config)"`.
nfs4_config() {
    printf 'nfsv4:\n  enabled: true\n  lease_time: 15\n' > /tmp/nfsrdmad-v4.yaml
    echo /tmp/nfsrdmad-v4.yaml
}
# nfs4_deleg_config: the same with write delegations said explicitly (on by default).
nfs4_deleg_config() {
    printf 'nfsv4:\n  enabled: true\n  lease_time: 15\n  write_delegations: true\n' > /tmp/nfsrdmad-v4d.yaml
    echo /tmp/nfsrdmad-v4d.yaml
}

# nfsrdmad_dump [PID [LOG]]: SIGUSR1 to the daemon (default $NFSRDMAD_PID), then wait until
# LOG (default $NFSRDMAD_LOG) holds the whole dump: its last line is "stats: end dump=N",
# one more of them than before the signal. Polls, so it costs a tenth of a second, not the
# fixed second the scripts slept (and never reads an older dump under load).
nfsrdmad_dump() {
    local pid=${1:-$NFSRDMAD_PID} log=${2:-$NFSRDMAD_LOG} n i
    n=$(grep -c 'stats: end dump=' "$log" 2>/dev/null)
    kill -USR1 "$pid" 2>/dev/null || return 1
    for ((i = 0; i < 100; i++)); do
        [ "$(grep -c 'stats: end dump=' "$log" 2>/dev/null)" -gt "${n:-0}" ] && return 0
        sleep 0.1
    done
    echo "nfsrdmad (pid $pid) logged no whole stats dump within 10 s of SIGUSR1" >&2
    return 1
}

# nfsrdmad_stat GROUP KEY: KEY's value in a fresh "stats: GROUP ..." line of the daemon's
# log (SIGUSR1 writes its counters there).
nfsrdmad_stat() {
    nfsrdmad_dump
    nfsrdmad_last_stat "$1" "$2"
}
# nfsrdmad_last_stat GROUP KEY: the same from the last such line already logged (no dump).
nfsrdmad_last_stat() {
    grep -o "stats: $1 .*" "$NFSRDMAD_LOG" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# nfs4_delegations M4 M3 SRV LABEL: delegations (RFC 8881 §10.2) to the kernel client of
# the v4.1 mount M4, and their recall over its backchannel (§10.4) when another client,
# the v3 mount M3 of the same export (SRV on the server's side), needs the file: the v3
# call is put off while the recall is under way (run again for up to a second, rather than
# answered NFS3ERR_JUKEBOX at once, after which the v3 client asks again only 5 s later),
# the v4.1 client returns the delegation, and both see the same data.
#  - read: a file held open for reading on M4 (a read delegation), rewritten through M3;
#  - write: a file created, written and closed on M4 (the write delegation stays, and the
#    client need not have flushed), read through M3.
#  - write, local: the same, read by a process on the server: the delegation's write
#    lease holds the reader until the client flushed and returned the delegation.
# The daemon's counters (SIGUSR1) and the client's mountstats (DELEGRETURN) must agree.
# FLAVOR (optional, 5th): what M3's calls are signed with, for the notes: "sys", or the
# krb5 flavor (an RPCSEC_GSS call put off keeps what the auth stage accepted of it, and its
# decrypted arguments under krb5p, and is not checked again: its sequence number was used).
nfs4_delegations() {
    local m4=$1 m3=$2 srv=$3 label=$4 flavor=${5:-sys} t0 holder got
    # write_closed F TEXT: F created read-write, TEXT written, F closed (a read-write open:
    # a write delegation comes with it, and the client keeps it after the close).
    write_closed() {
        python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, (sys.argv[2] + "\n").encode())
os.close(fd)' "$1" "$2"
    }
    local r=deleg-read-$$ w=deleg-write-$$
    local returned0 rets0 recalls0 deferred0 woken0
    deferred0=$(nfsrdmad_stat rpc deferred)
    woken0=$(nfsrdmad_last_stat rpc deferred_woken)
    returned0=$(nfsrdmad_stat nfs4_delegations returned)
    recalls0=$(nfsrdmad_stat nfs4_delegations recalls)
    rets0=$(mount_op_count "$m4" DELEGRETURN)
    echo "first version" > "$srv/$r"
    sleep 600 < "$m4/$r" &
    holder=$!
    sleep 1
    check_eq "$label: a file held open for reading has a read delegation (daemon: held)" \
        1 "$(nfsrdmad_stat nfs4_delegations held)"
    t0=$(now)
    check "$label: the v3 mount rewrites the file (a conflicting WRITE)" \
        bash -c "echo 'second version' > '$m3/$r'"
    note "$label: v3 write beside the read delegation: $(since "$t0") s (recall, return; $flavor)"
    check "$label: ... within 20 s (recalled and returned, not revoked a lease later)" \
        awk -v t="$(since "$t0")" 'BEGIN {exit !(t < 20)}'
    check "$label: ... the v3 call ($flavor) was put off while the recall ran (rpc: deferred)" \
        test "$(nfsrdmad_stat rpc deferred)" -gt "$deferred0"
    note "$label: runs put off $(( $(nfsrdmad_last_stat rpc deferred) - deferred0 )), answered JUKEBOX after them so far: $(nfsrdmad_last_stat rpc defer_gave_up)"
    # Run again as the delegation's lease went (rpc/deferred_wakes.h), unless its timer's
    # first steps (4, 8 ms) caught the return first: the kernel client returns a read
    # delegation that fast, so this is a note, not a check (the e2e test holds the return).
    note "$label: runs woken by the return: $(( $(nfsrdmad_last_stat rpc deferred_woken) - woken0 ))"
    check_eq "$label: the v4.1 client reads what the v3 client wrote" "second version" "$(cat "$m4/$r")"
    kill $holder 2>/dev/null; wait $holder 2>/dev/null

    # A process on the server itself writes to a file the client holds a read delegation
    # of: its open(2) waits on the delegation's file lease until the client gave it back.
    echo "client's version" > "$srv/$r.local"
    sleep 600 < "$m4/$r.local" &
    holder=$!
    sleep 1
    t0=$(now)
    check "$label: a local process on the server appends to a file under a read delegation" \
        bash -c "echo 'local append' >> '$srv/$r.local'"
    note "$label: local write beside the read delegation: $(since "$t0") s (lease break, recall, return)"
    check "$label: ... the daemon recalled it for the local process (file lease)" \
        grep -q "a local process wants a file client .* holds a read delegation of" "$NFSRDMAD_LOG"
    check_eq "$label: the v4.1 client sees the local append" "client's version
local append" "$(cat "$m4/$r.local")"
    kill $holder 2>/dev/null; wait $holder 2>/dev/null

    # Written and closed under a write delegation: the client keeps the delegation after
    # the close (and need not have flushed: with one, close only starts the writeback).
    check "$label: a file created, written and closed read-write on the v4.1 mount" \
        write_closed "$m4/$w" "written under a write delegation"
    check_eq "$label: ... it keeps a write delegation of it (daemon)" \
        1 "$(nfsrdmad_stat nfs4_delegations write)"
    t0=$(now)
    got=$(cat "$m3/$w")
    note "$label: v3 read beside the write delegation: $(since "$t0") s"
    note "$label: the v3 mount's calls so far: $(mount_op_summary "$m3" | awk '{printf "%s%s ", $1, $2}')"
    check_eq "$label: the v3 client reads what the v4.1 client wrote under its write delegation" \
        "written under a write delegation" "$got"

    # A process on the server reads a file the client wrote and closed under a write
    # delegation (kept, its data maybe unflushed): its open(2) waits on the delegation's
    # write lease (vfs/lease.h) until the client has flushed and given it back. (A file
    # still open on the client is not flushed by the return: the client writes it back
    # later under its open, as close-to-open consistency allows.)
    check "$label: another file created, written and closed on the v4.1 mount" \
        write_closed "$m4/$w.local" "written and closed under a write delegation"
    check_eq "$label: ... it keeps a write delegation of it (daemon)" \
        1 "$(nfsrdmad_stat nfs4_delegations write)"
    t0=$(now)
    got=$(timeout 60 cat "$srv/$w.local")
    note "$label: local read beside the write delegation: $(since "$t0") s (lease break, recall, flush, return)"
    check_eq "$label: a local process on the server reads what the client wrote under its write delegation" \
        "written and closed under a write delegation" "$got"
    check "$label: ... the daemon recalled the write delegation for it (file lease)" \
        grep -q "a local process wants a file client .* holds a write delegation of" "$NFSRDMAD_LOG"
    sleep 1
    local returned recalls rets
    returned=$(nfsrdmad_stat nfs4_delegations returned)
    recalls=$(nfsrdmad_stat nfs4_delegations recalls)
    rets=$(mount_op_count "$m4" DELEGRETURN)
    note "$label: $(grep -o 'stats: nfs4_delegations .*' "$NFSRDMAD_LOG" | tail -1); client DELEGRETURN calls: $((rets - rets0))"
    check "$label: four recalls sent (daemon: recalls)" test $((recalls - recalls0)) -ge 4
    check_eq "$label: the client's DELEGRETURN calls = the daemon's returned delegations" \
        $((rets - rets0)) $((returned - returned0))
    check "$label: ... at least the four recalled ones" test $((returned - returned0)) -ge 4
    check_eq "$label: none revoked" 0 "$(nfsrdmad_stat nfs4_delegations revoked)"
    check_eq "$label: no recall failed" 0 "$(nfsrdmad_stat nfs4_delegations recall_failures)"
    rm -f "$srv/$r" "$srv/$r.local" "$srv/$w" "$srv/$w.local"
}

# nfs4_peer NS ADDR EXPORT PORT CMD: runs CMD (bash; the mount is $P) as a second NFSv4.1
# client: in network namespace NS, under a UTS name of its own ("v4peer": the Linux client's
# owner string, so a client identity of its own), with a vers=4.1 mount of ADDR:EXPORT made
# for CMD and gone after it (a private mount namespace).
nfs4_peer() {
    local ns=$1 addr=$2 export=$3 port=$4 cmd=$5
    ip netns exec "$ns" unshare --mount --uts --propagation private bash -c '
        hostname v4peer || exit 90
        P=/mnt/v4peer; mkdir -p $P
        timeout -k 5 60 mount -t nfs -o vers=4.1,proto=tcp,port='"$port"' '"$addr:$export"' $P || exit 91
        ( '"$cmd"' ); rc=$?
        timeout -k 5 60 umount $P || umount -l $P
        exit $rc'
}

# rpc_xprt_cut PORT: the kernel RPC client's transports to PORT, of any kind, disconnect:
# writing a transport's own destination address back to its sysfs "dstaddr"
# (/sys/kernel/sunrpc, Linux 5.15+) makes it drop the connection (xprt_force_disconnect:
# for RDMA, rdma_disconnect) and connect again on its next call. `ss -K` reaches TCP
# sockets only; this reaches an RDMA connection too. Fails when no transport matched.
rpc_xprt_cut() {
    local port=$1 x a n=0
    for x in /sys/kernel/sunrpc/xprt-switches/switch-*/xprt-*; do
        [ -r "$x/xprt_info" ] && grep -qx "dst_port=$port" "$x/xprt_info" || continue
        a=$(cat "$x/dstaddr") && echo "$a" > "$x/dstaddr" && n=$((n + 1))
    done
    echo "rpc_xprt_cut: $n transport(s) to port $port disconnected"
    [ "$n" -gt 0 ]
}

# nfs4_two_clients M4 SRV NS ADDR EXPORT PORT LABEL [CUT]: delegations between two NFSv4.1
# client identities: this host's mount M4 (over TCP or RDMA: the recalls go over its
# transport) and a peer client in network namespace NS reaching the daemon over TCP at ADDR
# (nfs4_peer). The daemon runs with write delegations (nfs4_deleg_config); SRV is the
# export on the server's side. CUT: 1 (the default) cuts M4's TCP connection to
# 127.0.0.1:$NFSRDMAD_PORT (ss -K); xprt:P cuts M4's transports to port P whatever they
# are (rpc_xprt_cut: an RDMA connection); 0 skips the cut.
#  - the peer's write recalls this host's read delegation (CB_RECALL over this host's
#    connection), and both see the peer's data;
#  - the peer's stat of a file this host writes under a write delegation (still open, data
#    maybe unflushed) is answered through CB_GETATTR (RFC 8881 §10.4.3): the holder's size,
#    the delegation kept; the peer's read then recalls it, and once the holder closed
#    the peer reads its data;
#  - this host's connection is cut under a held read delegation: the client
#    reconnects, hears CB_PATH_DOWN on SEQUENCE, binds the new connection to its session's
#    backchannel (BIND_CONN_TO_SESSION), and the peer's write recalls it over the new one.
nfs4_two_clients() {
    local m4=$1 srv=$2 ns=$3 addr=$4 export=$5 port=$6 label=$7 cut=${8:-1}
    local f=peer-r-$$ g=peer-w-$$ h=peer-cut-$$ holder t0 out
    local recalls0 failures0 getattrs0 ups0 binds0 deferred0 woken0
    deferred0=$(nfsrdmad_stat rpc deferred)
    woken0=$(nfsrdmad_last_stat rpc deferred_woken)
    recalls0=$(nfsrdmad_stat nfs4_delegations recalls)
    failures0=$(nfsrdmad_stat nfs4_delegations recall_failures)
    getattrs0=$(nfsrdmad_stat nfs4_delegations cb_getattrs)

    # 1. A read delegation recalled by the other client's write.
    echo "first version" > "$srv/$f"
    sleep 600 < "$m4/$f" &
    holder=$!
    sleep 1
    check_eq "$label: this host holds a read delegation (daemon: held)" \
        1 "$(nfsrdmad_stat nfs4_delegations held)"
    t0=$(now)
    check "$label: the second client (its own identity) rewrites the file" \
        nfs4_peer "$ns" "$addr" "$export" "$port" "echo 'peer version' > \$P/$f"
    note "$label: the peer's mount, write and umount beside the read delegation: $(since "$t0") s"
    check_eq "$label: ... recalled once (daemon: recalls)" \
        $((recalls0 + 1)) "$(nfsrdmad_stat nfs4_delegations recalls)"
    # Its OPEN is put off while the recall runs (run again whole, its SEQUENCE slot as it
    # was), not answered NFS4ERR_DELAY, after which the client waits 100 ms and longer.
    check "$label: ... the peer's OPEN was put off while the recall ran (rpc: deferred)" \
        test "$(nfsrdmad_stat rpc deferred)" -gt "$deferred0"
    note "$label: runs put off $(( $(nfsrdmad_last_stat rpc deferred) - deferred0 )), woken by a return $(( $(nfsrdmad_last_stat rpc deferred_woken) - woken0 )), answered DELAY after them so far: $(nfsrdmad_last_stat rpc defer_gave_up)"
    check_eq "$label: this host reads what the other client wrote" "peer version" "$(cat "$m4/$f")"
    kill $holder 2>/dev/null; wait $holder 2>/dev/null

    # 2. CB_GETATTR: a write delegation's holder asked for its size, not recalled.
    rm -f /tmp/peer-held /tmp/peer-release
    python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"w" * 100000)
open("/tmp/peer-held", "w").close()
while not os.path.exists("/tmp/peer-release"):
    time.sleep(0.1)
os.close(fd)' "$m4/$g" &
    holder=$!
    wait_for 20 test -e /tmp/peer-held
    check_eq "$label: this host writes a file it holds open with a write delegation (daemon: write)" \
        1 "$(nfsrdmad_stat nfs4_delegations write)"
    out=$(nfs4_peer "$ns" "$addr" "$export" "$port" "stat -c %s \$P/$g")
    check_eq "$label: the other client's stat sees the holder's size" 100000 "$out"
    check "$label: ... asked with CB_GETATTR (daemon: cb_getattrs)" \
        test "$(nfsrdmad_stat nfs4_delegations cb_getattrs)" -gt "$getattrs0"
    check_eq "$label: ... and the write delegation kept (daemon: write, recalls)" \
        "1 $((recalls0 + 1))" "$(nfsrdmad_stat nfs4_delegations write) $(nfsrdmad_stat nfs4_delegations recalls)"
    # The peer's read recalls the write delegation (NFS4ERR_DELAY until it is returned).
    # The holder still has the file open, and the Linux client may return the delegation
    # before its dirty pages reach the server (it writes them later under its open
    # stateid): close-to-open promises the peer the data once the holder has closed, not
    # before. (Seen once the checks above stopped sleeping a second per counter: the
    # peer's first read found the file still empty.) So the holder closes, then the peer
    # must read exactly its data.
    local want_g
    want_g=$(head -c 100000 /dev/zero | tr '\0' w | md5sum)
    out=$(nfs4_peer "$ns" "$addr" "$export" "$port" "md5sum < \$P/$g")
    note "$label: the peer's read under the open write delegation: $([ "$out" = "$want_g" ] && echo "the holder's data" || echo "not yet the holder's data ($out)")"
    check_eq "$label: the other client's read recalls the write delegation (daemon: recalls)" \
        $((recalls0 + 2)) "$(nfsrdmad_stat nfs4_delegations recalls)"
    touch /tmp/peer-release
    wait $holder
    check_eq "$label: ... and once the holder closed, it reads the holder's data" \
        "$want_g" "$(nfs4_peer "$ns" "$addr" "$export" "$port" "md5sum < \$P/$g")"

    # 3. The connection cut under a held read delegation.
    if [ "$cut" = 0 ]; then
        check_eq "$label: no recall failed, none revoked" "$failures0 0" \
            "$(nfsrdmad_stat nfs4_delegations recall_failures) $(nfsrdmad_stat nfs4_delegations revoked)"
        rm -f "$srv/$f" "$srv/$g"
        return
    fi
    echo "before the cut" > "$srv/$h"
    sleep 600 < "$m4/$h" &
    holder=$!
    sleep 1
    check_eq "$label: a read delegation held before the cut" 1 "$(nfsrdmad_stat nfs4_delegations held)"
    binds0=$(mount_op_count "$m4" BIND_CONN_TO_SESSION)
    ups0=$(grep -c "callback path to client .* up" "$NFSRDMAD_LOG")
    if [ "${cut#xprt:}" != "$cut" ]; then
        check "$label: this host's connection to the daemon cut (sysfs dstaddr)" \
            rpc_xprt_cut "${cut#xprt:}"
    else
        check "$label: this host's connection to the daemon cut (ss -K)" \
            ss -K dst 127.0.0.1 dport = :"$NFSRDMAD_PORT"
    fi
    check "$label: ... the daemon saw it close (callback path down)" \
        wait_for 10 grep -q "callback path to client .* down: its connection closed" "$NFSRDMAD_LOG"
    local who
    who=$(grep -o "callback path to client [0-9a-fx]* down: its connection closed" "$NFSRDMAD_LOG" |
        tail -1 | awk '{print $5}')
    touch "$m4/after-cut-$$"  # a call: the client reconnects, and SEQUENCE says CB_PATH_DOWN
    check "$label: ... this host's client bound its new connection to the backchannel (probe answered)" \
        wait_for 40 bash -c "tail -n +$((ups0 + 1)) <(grep 'callback path to client .* up' '$NFSRDMAD_LOG') | grep -q 'client $who up'"
    check "$label: ... with BIND_CONN_TO_SESSION (mountstats)" \
        test "$(mount_op_count "$m4" BIND_CONN_TO_SESSION)" -gt "$binds0"
    t0=$(now)
    check "$label: the other client rewrites the file after the cut" \
        nfs4_peer "$ns" "$addr" "$export" "$port" "echo 'after the cut' > \$P/$h"
    note "$label: the peer's write after the cut: $(since "$t0") s"
    check_eq "$label: ... recalled over the new connection (daemon: recalls)" \
        $((recalls0 + 3)) "$(nfsrdmad_stat nfs4_delegations recalls)"
    check_eq "$label: this host reads the other client's data" "after the cut" "$(cat "$m4/$h")"
    kill $holder 2>/dev/null; wait $holder 2>/dev/null
    check_eq "$label: no recall failed, none revoked" "$failures0 0" \
        "$(nfsrdmad_stat nfs4_delegations recall_failures) $(nfsrdmad_stat nfs4_delegations revoked)"
    rm -f "$srv/$f" "$srv/$g" "$srv/$h" "$srv/after-cut-$$"
}

# nfs4_recall_any M4 SRV LABEL: CB_RECALL_ANY (RFC 8881 §20.6) to the kernel client. The
# daemon runs with a table of 16 delegations (engine.fd_cache: 32, nfs4_small_table_config);
# reading 14 files on M4 takes 14 read delegations (the client keeps them after close), and
# at 12 the daemon asks the client to keep half; the client answers it.
nfs4_recall_any() {
    local m4=$1 srv=$2 label=$3 i
    local rets0
    rets0=$(mount_op_count "$m4" DELEGRETURN)
    for i in $(seq 1 14); do echo "file $i" > "$srv/ra-$i-$$"; done
    for i in $(seq 1 14); do cat "$m4/ra-$i-$$" > /dev/null; done
    check "$label: the client holds delegations of the files it read (daemon: granted >= 12)" \
        test "$(nfsrdmad_stat nfs4_delegations granted)" -ge 12
    # A function, so that wait_for reads the counter again on each try.
    _recall_any_sent() { test "$(nfsrdmad_stat nfs4_delegations recall_any)" -ge 1; }
    check "$label: CB_RECALL_ANY sent at three quarters of the table (daemon: recall_any)" \
        wait_for 10 _recall_any_sent
    sleep 2
    check "$label: ... and the client answered it (no failure logged)" \
        bash -c "! grep -q 'CB_RECALL_ANY to client .* failed' '$NFSRDMAD_LOG'"
    _returned_since() { test $(($(mount_op_count "$m4" DELEGRETURN) - rets0)) -ge 6; }
    check "$label: ... and gave back at least the half asked for (mountstats DELEGRETURN >= 6)" \
        wait_for 20 _returned_since
    note "$label: $(grep -o 'stats: nfs4_delegations .*' "$NFSRDMAD_LOG" | tail -1); DELEGRETURN calls since: $(( $(mount_op_count "$m4" DELEGRETURN) - rets0 ))"
    rm -f "$srv"/ra-*-$$
}
# nfs4_local_changes M4 SRV LABEL: a chmod made on the server, by a local process, of a file
# the client holds a read delegation of. A file lease does not see a chmod; the daemon's
# file watch (vfs/file_watch.h) does, and recalls the delegation, so the client's next
# stat asks the server again once its attribute cache times out (acregmin, 3 s: 3.3 s
# from the chmod in a quiet guest). Without the recall the client keeps answering from its
# cache (with a delegation its attributes never time out) until the delegation ends: an
# ad-hoc boot with the watch disabled still showed 644 after 10 s.
nfs4_local_changes() {
    local m4=$1 srv=$2 label=$3 f=lc-$$ recalls0 changes0 granted0 t0
    echo "local changes" > "$srv/$f"
    chmod 644 "$srv/$f"
    recalls0=$(nfsrdmad_stat nfs4_delegations recalls)
    changes0=$(nfsrdmad_stat nfs4_delegations local_changes)
    granted0=$(nfsrdmad_stat nfs4_delegations granted)
    cat "$m4/$f" > /dev/null
    check_eq "$label: the client sees mode 644" 644 "$(stat -c %a "$m4/$f")"
    check "$label: ... and holds a read delegation of the file (daemon: granted)" \
        test "$(nfsrdmad_stat nfs4_delegations granted)" -gt "$granted0"
    t0=$(now)
    chmod 600 "$srv/$f"
    _lc_mode() { test "$(stat -c %a "$m4/$f")" = 600; }
    check "$label: a chmod on the server: the client sees mode 600 within 30 s" wait_for 30 _lc_mode
    note "$label: the client saw the server's chmod after $(since "$t0") s"
    check "$label: ... the daemon saw the local change and recalled the delegation (local_changes, recalls)" \
        test "$(nfsrdmad_stat nfs4_delegations local_changes)" -gt "$changes0" -a \
        "$(nfsrdmad_stat nfs4_delegations recalls)" -gt "$recalls0"
    rm -f "$srv/$f"
}
# nfs4_small_table_config: NFSv4.1 with a table of 16 delegations (half of engine.fd_cache).
nfs4_small_table_config() {
    printf 'nfsv4:\n  enabled: true\n  lease_time: 15\nengine:\n  fd_cache: 32\n' > /tmp/nfsrdmad-v4s.yaml
    echo /tmp/nfsrdmad-v4s.yaml
}

# nfs4_locks DIR LABEL: byte-range locks (RFC 8881 §18.10-§18.12) between two processes
# of the Linux client. flock(1) on NFS is a whole-file POSIX lock on the server (the
# descriptor is opened read-write: an exclusive lock needs write access); python3's
# fcntl.lockf for byte ranges. The holder keeps its lock ~2 s; a blocking waiter gets it
# when the holder lets go (the client polls: this server parks no waiters). With SRV, the
# same directory on the server's side (the export): the client's lock is seen by a local
# process there, and a local process's lock stops the client (locks.local: OFD locks).
nfs4_locks() {
    local M=$1 L=$2 S=${3:-}
    : > "$M/lockf"
    rm -f /tmp/v4held /tmp/v4release
    # The holder keeps its lock until told to let go (a fixed sleep raced the checks below
    # under emulation, where a python3 start can take seconds).
    ( flock -x 9 && touch /tmp/v4held &&
        while [ ! -e /tmp/v4release ]; do sleep 0.1; done ) 9<> "$M/lockf" &
    local holder=$! i
    for i in $(seq 1 50); do [ -e /tmp/v4held ] && break; sleep 0.1; done
    check "$L: flock: a write lock held" test -e /tmp/v4held
    check "$L: ... a second process's non-blocking attempt fails" \
        sh -c "! flock -n -x 9 9<> '$M/lockf'"
    if [ -n "$S" ]; then
        check "$L: ... a local process on the server sees it (lockf on the export)" \
            python3 -c 'import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(0)
sys.exit("the local lock was granted")' "$S/lockf"
    fi
    ( sleep 1; touch /tmp/v4release ) &
    check "$L: ... a blocking attempt completes once the holder unlocks" \
        sh -c "flock -w 20 -x 9 9<> '$M/lockf'"
    wait "$holder"
    check "$L: ... then a non-blocking attempt succeeds" sh -c "flock -n -x 9 9<> '$M/lockf'"
    if [ -n "$S" ]; then
        rm -f /tmp/v4held
        python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX)
open("/tmp/v4held", "w").close()
time.sleep(2)' "$S/lockf" &
        holder=$!
        for i in $(seq 1 50); do [ -e /tmp/v4held ] && break; sleep 0.1; done
        check "$L: a local process's lockf on the server stops the client's flock -n" \
            sh -c "! flock -n -x 9 9<> '$M/lockf'"
        wait "$holder"
        check "$L: ... granted once the local process is gone" \
            sh -c "flock -n -x 9 9<> '$M/lockf'"
    fi
    if command -v python3 > /dev/null; then
        check "$L: lockf byte ranges: overlap denied, beside granted, waiter granted" \
            python3 - "$M/lockf" << 'PY'
import fcntl, os, sys, time
p = sys.argv[1]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    fd = os.open(p, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)  # bytes 0-99
    os.write(w, b"x")
    time.sleep(2)
    os._exit(0)
os.read(r, 1)
fd = os.open(p, os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 50)
    sys.exit("an overlapping lock was granted")
except OSError:
    pass
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 100)  # beside it
fcntl.lockf(fd, fcntl.LOCK_EX, 10, 50)  # waits for the holder
os.waitpid(pid, 0)
fcntl.lockf(fd, fcntl.LOCK_UN, 0, 0)
PY
    fi
    rm -f /tmp/v4held /tmp/v4release "$M/lockf"
}

# nfs4_workload MNT LABEL: ordinary file work on an NFSv4.1 mount, each check "LABEL: ...":
# a file of 8 MiB + a tail written and read back, small files, mkdir -p, readdir of 300
# entries with attributes, rename (over an existing file too), hard link, symlink, chmod,
# truncate, a file read and written after it was unlinked while open, chown by user name
# (the client shows the names; with SRV, the server's file has their ids), ACLs through
# nfs4_getfacl/nfs4_setfacl (mapped from and to the mode), byte-range locks
# between two processes (nfs4_locks; with SRV, the export's directory on the server, also
# against local processes there), rm -rf.
nfs4_workload() {
    local M=$1/v4w L=$2 S=${3:+$3/v4w} got
    rm -rf "$M" 2>/dev/null
    check "$L: mkdir" mkdir -p "$M/a/b/c" || return 1
    head -c $((8 * 1024 * 1024 + 777)) /dev/urandom > /tmp/v4src
    check "$L: 8 MiB + 777 bytes written" cp /tmp/v4src "$M/big"
    check "$L: ... and read back intact" cmp /tmp/v4src "$M/big"
    check_eq "$L: its size" $((8 * 1024 * 1024 + 777)) "$(stat -c %s "$M/big")"
    local i
    for i in $(seq 1 300); do echo "file $i" > "$M/a/f$i"; done
    check_eq "$L: 300 small files listed" 300 "$(ls "$M/a" | grep -c '^f')"
    check_eq "$L: ls -l sees their sizes" 300 "$(ls -l "$M/a" | awk '$5 > 0 && $NF ~ /^f/' | wc -l)"
    check_eq "$L: one of them read back" "file 123" "$(cat "$M/a/f123")"
    check "$L: rename" mv "$M/a/f1" "$M/a/b/moved"
    check "$L: rename over an existing file" mv "$M/a/f2" "$M/a/f3"
    check_eq "$L: ... the target has the source's content" "file 2" "$(cat "$M/a/f3")"
    check "$L: hard link" ln "$M/a/f4" "$M/a/b/f4link"
    check_eq "$L: ... nlink 2" 2 "$(stat -c %h "$M/a/f4")"
    check "$L: symlink" ln -s ../f5 "$M/a/b/sym"
    check_eq "$L: ... readlink" "../f5" "$(readlink "$M/a/b/sym")"
    check_eq "$L: ... followed" "file 5" "$(cat "$M/a/b/sym")"
    check "$L: chmod 0640" chmod 0640 "$M/a/f6"
    check_eq "$L: ... mode" 640 "$(stat -c %a "$M/a/f6")"
    check "$L: truncate to 3 bytes" truncate -s 3 "$M/a/f7"
    check_eq "$L: ... content" "fil" "$(cat "$M/a/f7")"
    # Unlinked while open: the open state keeps the file (RFC 8881 §9.x, no silly rename
    # on v4.1 servers that keep the file open).
    echo "still here" > "$M/a/open-unlinked"
    exec 7<> "$M/a/open-unlinked"
    check "$L: unlink an open file" rm "$M/a/open-unlinked"
    check_eq "$L: ... still readable through the open descriptor" "still here" "$(cat <&7)"
    exec 7>&-
    # Owners by name (RFC 8881 §5.9): chown sends the ids, the server answers
    # name@domain, the client's id mapper turns that back into the same names.
    echo named > "$M/named"
    check "$L: chown daemon:daemon (by name)" chown daemon:daemon "$M/named"
    check_eq "$L: ... the client shows the same names" daemon:daemon "$(stat -c %U:%G "$M/named")"
    if [ -n "$S" ]; then
        check_eq "$L: ... the server's file has their ids" \
            "$(id -u daemon):$(getent group daemon | cut -d: -f3)" "$(stat -c %u:%g "$S/named")"
    fi
    # ACLs mapped from the mode (RFC 8881 §6; nfs/v4/attrs/acl.h), through the client's
    # system.nfs4_acl: the mode read as an ACL, an ACL of OWNER@/GROUP@/EVERYONE@ written as
    # the mode, and an ACE for a named user (which a mode cannot hold) refused.
    echo acl > "$M/aclf"
    chmod 0640 "$M/aclf"
    check_eq "$L: nfs4_getfacl shows mode 0640 as an ACL" \
        "A::OWNER@:rwatTcCy A:g:GROUP@:rtcy A::EVERYONE@:tcy" \
        "$(nfs4_getfacl "$M/aclf" | grep -v '^#' | grep . | tr '\n' ' ' | sed 's/ $//')"
    check "$L: nfs4_setfacl of OWNER@, GROUP@ and EVERYONE@" \
        nfs4_setfacl -s "A::OWNER@:rwaxtTcCy,A:g:GROUP@:rxtcy,A::EVERYONE@:rtcy" "$M/aclf"
    check_eq "$L: ... the client sees the mode it comes to" 754 "$(stat -c %a "$M/aclf")"
    if [ -n "$S" ]; then
        check_eq "$L: ... and so does the server's file" 754 "$(stat -c %a "$S/aclf")"
    fi
    check "$L: an ACE for a named user is refused (a mode cannot hold it)" \
        sh -c "! nfs4_setfacl -a 'A::daemon@localdomain:r' '$M/aclf' 2>/dev/null"
    check_eq "$L: ... and the mode is unchanged" 754 "$(stat -c %a "$M/aclf")"
    nfs4_locks "$M" "$L" "$S"
    check "$L: rm -rf" rm -rf "$M"
    check "$L: gone" test ! -e "$M"
}

# nfs4_restart_under_mount MNT LABEL START...: the daemon restarted (SIGTERM, then the
# command START...) under a v4.1 mount with a file held open for writing and locked by
# another process: the client reclaims its open and its lock in the grace period (RFC
# 8881 §8.4.2.1), the application writes through its old descriptor without an error, the
# lock still keeps others out; the records in the state directory name the client, and
# grace ends early with RECLAIM_COMPLETE.
nfs4_restart_under_mount() {
    local M=$1 L=$2
    shift 2
    echo "written before the restart" > "$M/held"
    exec 8>> "$M/held"
    # Another process holds a write lock on the whole file across the restart. It opens
    # write-only: a read-write open would get a write delegation, under which the Linux
    # client keeps the lock to itself (and its flock below would not conflict with it).
    rm -f /tmp/v4lockheld /tmp/v4lockrelease
    python3 - "$M/held" << 'PY' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
fcntl.lockf(fd, fcntl.LOCK_EX, 0, 0)
open("/tmp/v4lockheld", "w").close()
while not os.path.exists("/tmp/v4lockrelease"):
    time.sleep(0.2)
PY
    local holder=$! i
    for i in $(seq 1 50); do [ -e /tmp/v4lockheld ] && break; sleep 0.1; done
    check "$L: a process holds a write lock on the file" test -e /tmp/v4lockheld
    check "$L: the state directory records the client" test -s "$NFSRDMAD_STATE/nfs4-clients"
    check "$L: daemon stopped under the mount" nfsrdmad_stop
    # (Without the descriptor: the daemon would inherit it and keep the mount busy.)
    check "$L: daemon started again" "$@" 8>&-
    check "$L: write through the descriptor opened before the restart" \
        bash -c 'printf "and after it\n" >&8'
    exec 8>&-
    check_eq "$L: ... the file holds both" "written before the restart
and after it" "$(cat "$M/held")"
    check "$L: the lock was reclaimed: another process is still refused it" \
        sh -c "! flock -n -x 9 9<> '$M/held'"
    touch /tmp/v4lockrelease
    wait "$holder"
    check "$L: ... and gets it once the holder has gone" sh -c "flock -n -x 9 9<> '$M/held'"
    rm -f /tmp/v4lockheld /tmp/v4lockrelease
    check "$L: the daemon saw the client of the previous boot" \
        grep -q "grace period of .* for 1 client" "$NFSRDMAD_LOG"
    check "$L: grace ended early: the client sent RECLAIM_COMPLETE" \
        wait_for 20 grep -q "nfsv4.1: grace period over$" "$NFSRDMAD_LOG"
    rm -f "$M/held"
}

# nfs4_remounts SRC MNT OPTS N LABEL: N cycles of mount, ls, umount with OPTS; each must
# work, and afterwards the daemon holds nothing of them (its SIGUSR1 "stats: nfs4" line):
# at umount the Linux client destroys its session and client ID (DESTROY_SESSION,
# DESTROY_CLIENTID), which must take every session, stateid, open and lock with them.
nfs4_remounts() {
    local src=$1 M=$2 O=$3 n=$4 L=$5 ok=0 i line
    for ((i = 0; i < n; i++)); do
        nfs_mount "$src" "$M" "$O" 60 > /dev/null && ls "$M" > /dev/null &&
            nfs_umount "$M" > /dev/null && ok=$((ok + 1))
    done
    check_eq "$L: mount/ls/umount cycles that worked" "$n" "$ok"
    nfsrdmad_dump
    line=$(grep -o 'stats: nfs4 .*' "$NFSRDMAD_LOG" | tail -1)
    note "$line"
    check_eq "$L: no client, session, stateid, open or lock left behind" \
        "clients=0 sessions=0 stateids=0 opens=0 lock_stateids=0 locked_files=0" \
        "$(echo "${line#stats: nfs4 }" | cut -d' ' -f1-6)"
}
