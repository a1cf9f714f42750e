#!/bin/bash
# nfsrdmad_scale.sh - guest test group vm_nfsrdmad_scale: OUR daemon at scale and under load
# (issue 16), kernel clients over Soft-RoCE, NFSv3. One boot, one daemon (restarted once).
#
# Asserts:
#  - $SCALE_CONNS RDMA connections at once: as many server addresses on the rxe netdev, one
#    mount each (nosharecache; the client shares a transport per server address), all mount;
#    $SCALE_MB MiB written + fsync'd through each in parallel and read back with O_DIRECT:
#    every byte exact; every mount's transport connected exactly once (the client's xprt
#    connect count in mountstats, and the daemon log's "connection from" lines per address);
#    no "disconnecting" line in the daemon log while they run;
#  - then one of those mounts busy, the others idle: the daemon requests at most 3 CQ events
#    a call (counter cq_arms), not one per connection each time a reactor sleeps;
#  - fio 1 MiB O_DIRECT at iodepth $SCALE_DEPTH, writes then reads, over one RDMA mount: no
#    error and the client never reconnects (the peaks of its calls and Read bytes are
#    printed);
#  - a create storm ($SCALE_THREADS threads x $SCALE_FILES files, each fsync'd) over RDMA and
#    over TCP: every file created, no error;
#  - a daemon restart under load: SIGKILL in the middle of a $SCALE_RESTART_MB MiB write over
#    an RDMA hard mount, started again with the same state dir: the writer finishes, the file's
#    md5 is right on the server and read back, and the mount reconnected at most once;
#  - the kernel log has no "changed security contexts" line (rdma_cm calls from a worker
#    thread whose credentials were switched for a request: ucma refuses them);
#  - the daemon exits 0 on SIGTERM.
# Several of these fail on the daemon of issue 16's time (the 16th connection is dropped,
# reconnects under deep queues, EIO in the create storm): that is what the group is for.
# Env: NFSRDMAD_BIN (required); SCALE_CONNS (64), SCALE_MB (1), SCALE_DEPTH (128),
# SCALE_FIO_SIZE (256M), SCALE_FIO_RUNTIME (20 s per direction), SCALE_THREADS (4),
# SCALE_FILES (500), SCALE_RESTART_MB (128); LOAD_* of lib/load.sh.
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/nfs.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/load.sh"

SCALE_CONNS=${SCALE_CONNS:-64}
SCALE_MB=${SCALE_MB:-1}
SCALE_DEPTH=${SCALE_DEPTH:-128}
SCALE_FIO_SIZE=${SCALE_FIO_SIZE:-256M}
SCALE_FIO_RUNTIME=${SCALE_FIO_RUNTIME:-20}
SCALE_THREADS=${SCALE_THREADS:-4}
SCALE_FILES=${SCALE_FILES:-500}
SCALE_RESTART_MB=${SCALE_RESTART_MB:-128}
EXPORT=/srv/export
RDMA_PORT=20049
BASE=/mnt/load
RES=$VMTEST_OUT/load
mkdir -p "$RES"

# the kernel's default timeo (60 s) for RDMA and TCP; soft so that a dead server ends in EIO
rdma_opts() {
    echo "vers=3,proto=rdma,port=$RDMA_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock,nosharecache,soft,retrans=2${1:+,$1}"
}
tcp_opts() {
    echo "vers=3,proto=tcp,port=$NFSRDMAD_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock,nosharecache,soft,retrans=2"
}
disconnect_lines() {  # SKIP: "disconnecting" lines of the daemon log after line SKIP
    awk -v skip="$1" 'NR > skip && /disconnecting/' "$NFSRDMAD_LOG"
}
dump_stats() { nfsrdmad_dump; grep -o "stats: rdma .*" "$NFSRDMAD_LOG" | tail -1; }

step "setup: Soft-RoCE, $SCALE_CONNS addresses, nfsrdmad on every address"
check "tools" need_cmd fio python3 mkfs.ext4 || { vm_summary; exit 1; }
check "rxe device up" rxe_setup || { vm_summary; exit 1; }
check "export on ext4" make_ext4 "$EXPORT" 1536 || { vm_summary; exit 1; }
nfs_client_modules
check "rpcbind" rpcbind_start
check "$SCALE_CONNS addresses on $RXE_NETDEV" load_addrs_add "$SCALE_CONNS"
NFSRDMAD_ADDR=0.0.0.0
check "nfsrdmad starts" nfsrdmad_start "$EXPORT" --rdma "0.0.0.0:$RDMA_PORT" || { vm_summary; exit 1; }
check "listening for RDMA on every address" wait_for 20 grep -q "rdma: listening on 0.0.0.0:$RDMA_PORT" "$NFSRDMAD_LOG"

step "$SCALE_CONNS RDMA connections, $SCALE_MB MiB through each in parallel"
fanout_round() {  # mounts every address, writes and reads back through each, and
    # records each transport's connect count in $RES/xprt.txt
    skip=$(load_log_lines "$NFSRDMAD_LOG")
    kmsg_skip=$(dmesg | wc -l)
    load_mount_all "$SCALE_CONNS" "$EXPORT" "$BASE" "$(rdma_opts)"
    mnts=(); for i in "${LOAD_MOUNTED[@]}"; do mnts+=("$BASE/$i"); done
    rm -f "$RES/roundtrip.json"
    if [ ${#LOAD_MOUNTED[@]} -gt 0 ]; then
        load_roundtrip "$BASE" "$SCALE_MB" "$RES/roundtrip.json" "${LOAD_MOUNTED[@]}"
    fi
    load_xprt "${mnts[@]}" > "$RES/xprt.txt"
}
fanout_round
# The client's own Soft-RoCE sometimes drops a busy connection (tests/vm/README trap 16,
# seen here too on 2026-12-02: its kernel logs "rxe_reg_fast_mr: ... not free", the daemon
# only "the peer disconnected"). Exactly that, and nothing else, earns one more round on
# fresh mounts, which must then be clean; any other reconnect fails below as before.
if [ "$(awk '$3 != 1' "$RES/xprt.txt" | wc -l)" != 0 ] &&
    dmesg | tail -n +$((kmsg_skip + 1)) | grep -q "rxe_reg_fast_mr.*not free" &&
    [ "$(disconnect_lines "$skip" | grep -vc "the peer disconnected")" = 0 ]; then
    note "the client's rxe dropped a connection itself (trap 16); once more on fresh mounts"
    dmesg | grep -iE "rxe|rpcrdma|xprtrdma" | tail -5 | sed 's/^/    kernel: /'
    check "unmount them all (before the second round)" load_umount_all "$BASE"
    fanout_round
fi
check_eq "mounts that succeeded" "$SCALE_CONNS" "${#LOAD_MOUNTED[@]}"
note "mount wall time: $LOAD_MOUNT_WALL s"
check_eq "mounts whose data came back exact" "$SCALE_CONNS" "$(load_json "$RES/roundtrip.json" exact)"
check_eq "client: transports that are rdma" "$SCALE_CONNS" "$(awk '$2 == "rdma"' "$RES/xprt.txt" | wc -l)"
check_eq "client: transports that connected exactly once" "$SCALE_CONNS" "$(awk '$3 == 1' "$RES/xprt.txt" | wc -l)"
note "client connect counts above 1: $(awk '$3 != 1 {printf "%s=%s ", $1, $3}' "$RES/xprt.txt")"
note "client connects in all: $(awk '{s += $3} END {print s + 0}' "$RES/xprt.txt")"
load_log_conns "$NFSRDMAD_LOG" "$skip" > "$RES/daemon-conns.txt"
once=0
for ((i = 0; i < SCALE_CONNS; i++)); do
    a=$(load_addr "$i")
    [ "$(awk -v a="$a" '$1 == a {print $2}' "$RES/daemon-conns.txt")" = 1 ] && once=$((once + 1))
done
check_eq "daemon: addresses with exactly one connection" "$SCALE_CONNS" "$once"
note "daemon connection lines in all: $(awk '{s += $2} END {print s + 0}' "$RES/daemon-conns.txt") from $(wc -l < "$RES/daemon-conns.txt") addresses"
disconnect_lines "$skip" > "$RES/disconnects.txt"
check_eq "daemon: no 'disconnecting' line under load" 0 "$(wc -l < "$RES/disconnects.txt")"
head -5 "$RES/disconnects.txt" | sed 's/^/    /'
dump_stats
# Idle connections cost a busy one nothing: a reactor about to sleep requests the CQ event
# only of connections whose last request an event used up (cq_events.h), not of all of its
# own (before: one system call per connection on the reactor, every sleep).
if [ ${#LOAD_MOUNTED[@]} -gt 0 ]; then
    calls0=$(nfsrdmad_stat rdma calls_msg) arms0=$(nfsrdmad_last_stat rdma cq_arms)
    python3 - "$BASE/${LOAD_MOUNTED[0]}/arms" <<'PY'
import os, sys
os.mkdir(sys.argv[1])
for i in range(200):  # LOOKUP and CREATE each: one call at a time
    os.close(os.open(os.path.join(sys.argv[1], f"f{i}"), os.O_CREAT | os.O_WRONLY, 0o644))
PY
    calls=$(($(nfsrdmad_stat rdma calls_msg) - calls0)) arms=$(($(nfsrdmad_last_stat rdma cq_arms) - arms0))
    note "one mount of ${#LOAD_MOUNTED[@]} busy: $calls calls, $arms CQ event requests"
    check "one busy mount: at least 400 calls" test "$calls" -ge 400
    check "one busy mount, the others idle: at most 3 CQ event requests a call" test "$arms" -le $((3 * calls))
fi
check "unmount them all" load_umount_all "$BASE"

step "fio 1 MiB O_DIRECT at iodepth $SCALE_DEPTH over one RDMA mount"
MNT=/mnt/deep
skip=$(load_log_lines "$NFSRDMAD_LOG")
kmsg_skip=$(dmesg | wc -l)  # the kernel's lines before this step: trap 16 must be this step's
if check "deep: mount" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120; then
    check "deep: transport is rdma" assert_mount_transport "$MNT" rdma
    check "deep: fio write" load_fio "$MNT" write "$SCALE_DEPTH" "$SCALE_FIO_SIZE" "$SCALE_FIO_RUNTIME" "$RES/fio-write.json"
    check "deep: fio read" load_fio "$MNT" read "$SCALE_DEPTH" "$SCALE_FIO_SIZE" "$SCALE_FIO_RUNTIME" "$RES/fio-read.json"
    # The client's own Soft-RoCE sometimes drops a busy connection (tests/vm/README trap 16:
    # its kernel logs "rxe_reg_fast_mr: ... not free", the daemon only "the peer
    # disconnected"). Exactly that, and nothing else, earns one more run on a fresh mount,
    # which must then be clean; any other reconnect fails below as before.
    if [ "$(load_xprt_connects "$MNT")" != 1 ] &&
        dmesg | tail -n +$((kmsg_skip + 1)) | grep -q "rxe_reg_fast_mr.*not free" &&
        [ "$(disconnect_lines "$skip" | grep -vc "the peer disconnected")" = 0 ]; then
        note "the client's rxe dropped the connection itself (trap 16); once more on a fresh mount"
        dmesg | grep -iE "rxe|rpcrdma|xprtrdma" | tail -5 | sed 's/^/    kernel: /'
        rm -f "$MNT/deep.dat"
        nfs_umount "$MNT"
        skip=$(load_log_lines "$NFSRDMAD_LOG")
        check "deep: mount again" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120
        check "deep: fio write again" load_fio "$MNT" write "$SCALE_DEPTH" "$SCALE_FIO_SIZE" "$SCALE_FIO_RUNTIME" "$RES/fio-write.json"
        check "deep: fio read again" load_fio "$MNT" read "$SCALE_DEPTH" "$SCALE_FIO_SIZE" "$SCALE_FIO_RUNTIME" "$RES/fio-read.json"
    fi
    # What the deep queue reached (rdma-connection calls_peak, read_bytes_peak): in the runs
    # of 2026-12-02 the Linux client on Soft-RoCE held 128 calls with us at once, yet never
    # two of its WRITEs' 1 MiB Reads were in flight together, so the per-connection Read
    # bound (8 MiB; ReadWindow's unit tests) is not reached here. Printed, not asserted.
    note "deep: the connection held up to $(nfsrdmad_stat rdma-connection calls_peak) calls at once; its RDMA Read bytes in flight peaked at $(nfsrdmad_last_stat rdma-connection read_bytes_peak)"
    check_eq "deep: the client connected once (no reconnect)" 1 "$(load_xprt_connects "$MNT")"
    check_eq "deep: no 'disconnecting' line" 0 "$(disconnect_lines "$skip" | wc -l)"
    disconnect_lines "$skip" | head -3 | sed 's/^/    /'
    # Who dropped it, when the client reconnected: its own rxe or xprtrdma says so in the
    # kernel log (seen once: "rxe_reg_fast_mr: mr->lkey = ... not free", the client's
    # registration of its own memory failing, with a clean disconnect on the server's side).
    [ "$(load_xprt_connects "$MNT")" = 1 ] ||
        dmesg | grep -iE "rxe|rpcrdma|xprtrdma" | tail -5 | sed 's/^/    kernel: /'
    rm -f "$MNT/deep.dat"
    nfs_umount "$MNT"
fi

step "daemon restart under load: SIGKILL in the middle of a $SCALE_RESTART_MB MiB write (hard mount)"
MNT=/mnt/hard
head -c $((SCALE_RESTART_MB << 20)) /dev/urandom > /tmp/restart.bin
want=$(md5sum < /tmp/restart.bin | cut -d' ' -f1)
if check "hard: mount" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "vers=3,proto=rdma,port=$RDMA_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock,hard" 120; then
    timeout -s KILL 300 dd if=/tmp/restart.bin of="$MNT/restart.bin" bs=1M oflag=direct conv=fsync status=none &
    writer=$!
    # until a quarter of the file is on the server, or the writer is gone (failed early:
    # checked below), for at most 120 s (by the clock: each stat is an exec, ~0.1 s)
    deadline=$((SECONDS + 120))
    while kill -0 "$writer" 2>/dev/null && [ $SECONDS -lt $deadline ] &&
        [ "$(stat -c %s "$EXPORT/restart.bin" 2>/dev/null || echo 0)" -lt $((SCALE_RESTART_MB << 18)) ]; do
        sleep 0.3
    done
    check "hard: the writer is still writing when the daemon is killed" kill -0 "$writer"
    note "server has $(stat -c %s "$EXPORT/restart.bin") bytes; SIGKILL nfsrdmad (pid $NFSRDMAD_PID)"
    kill -KILL "$NFSRDMAD_PID"; wait "$NFSRDMAD_PID" 2>/dev/null; NFSRDMAD_PID=
    sleep 2
    skip=$(load_log_lines "$NFSRDMAD_LOG")
    t0=$(now)
    check "restart: nfsrdmad starts again with the same state dir" nfsrdmad_start "$EXPORT" --rdma "0.0.0.0:$RDMA_PORT"
    check "restart: the writer finishes" wait "$writer"
    note "writer finished $(since "$t0") s after the restart"
    check_eq "restart: md5 on the server's disk" "$want" "$(md5sum < "$EXPORT/restart.bin" | cut -d' ' -f1)"
    sync; echo 3 > /proc/sys/vm/drop_caches
    check_eq "restart: md5 read back over RDMA" "$want" \
        "$(timeout -s KILL 120 dd if="$MNT/restart.bin" bs=1M iflag=direct status=none | md5sum | cut -d' ' -f1)"
    n=$(load_log_conns "$NFSRDMAD_LOG" "$skip" | awk -v a="$RXE_IP" '$1 == a {print $2}')
    note "connections from $RXE_IP after the restart: ${n:-0}; client connects: $(load_xprt_connects "$MNT")"
    check "restart: the mount reconnected at most once" test "${n:-0}" -le 1
    nfs_umount "$MNT" || umount -f -l "$MNT"
fi
rm -f /tmp/restart.bin

# storm LABEL NAME SERVER OPTS: a create storm through a fresh mount of SERVER:$EXPORT
storm() {
    local label=$1 name=$2 server=$3 opts=$4 mnt=/mnt/$2
    step "create storm over $label: $SCALE_THREADS threads x $SCALE_FILES files with fsync"
    check "$name: mount" nfs_mount "$server:$EXPORT" "$mnt" "$opts" 120 || return
    check "storm over $label: no error" load_storm "$mnt/$name" "$SCALE_THREADS" "$SCALE_FILES" "$RES/$name.json"
    check_eq "storm over $label: every file there" "$((SCALE_THREADS * SCALE_FILES))" \
        "$(find "$EXPORT/$name" -type f 2>/dev/null | wc -l)"
    nfs_umount "$mnt"
}
storm RDMA storm-rdma "$RXE_IP" "$(rdma_opts)"
storm TCP storm-tcp 127.0.0.1 "$(tcp_opts)"
note "daemon descriptors now: $(ls /proc/"$NFSRDMAD_PID"/fd 2>/dev/null | wc -l) (soft limit $(awk '/open files/ {print $4}' /proc/"$NFSRDMAD_PID"/limits 2>/dev/null))"

step "kernel log and shutdown"
dmesg > "$RES/dmesg.txt"
grep 'changed security contexts' "$RES/dmesg.txt" | head -3 | sed 's/^/    /'
check_eq "kernel log: no 'changed security contexts' (ucma EACCES)" 0 "$(grep -c 'changed security contexts' "$RES/dmesg.txt")"
dump_stats
check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
vm_summary
