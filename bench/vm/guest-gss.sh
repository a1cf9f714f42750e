#!/bin/bash
# guest-gss.sh - runs IN THE VM (bench/vm/run.sh --gss boots it): the data jobs (sequential
# 1 MiB write and read, 4 KiB random read) through the kernel client over RDMA with sec=sys,
# krb5, krb5i and krb5p, against the kernel nfsd and against nfsrdmad, then the side-by-side
# table (table.py --gss).
#
# A KDC and rpc.gssd run in the guest (tests/vm/lib/krb5.sh); the kernel nfsd gets its
# contexts through rpc.svcgssd. Both servers export the same ext4 file system with
# sec=sys:krb5:krb5i:krb5p and listen on TCP 2049 while they run: the client's gssd sets up
# every context over TCP port 2049, RDMA mounts included. The jobs run as root, so under
# Kerberos as the client's machine credential (the fio directory is world-writable: the
# kernel nfsd maps that principal to nobody, nfsrdmad to root). Per configuration
# SERVER-FLAVOR: one fio JSON per job, and the CPU time of the server (the daemon's process
# or the nfsd threads) and of the whole VM around each job (CONFIG.JOB.cpu.json).
# Files in /vmtest: jobs/*.fio, table.py, cpu.sh. Env: NFSRDMAD_BIN, GSS_VERS (4.1), GSS_PROTO (rdma),
# BENCH_SIZE (128M), BENCH_RUNTIME (15 s per job).
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/nfs.sh"
source "$VMTEST_LIB/krb5.sh"
source /vmtest/cpu.sh  # server_cpu, vm_busy

VERS=${GSS_VERS:-4.1} PROTO=${GSS_PROTO:-rdma}
export SIZE=${BENCH_SIZE:-128M} RUNTIME=${BENCH_RUNTIME:-15}
FLAVORS=(sys krb5 krb5i krb5p)
JOBS=(seq-write seq-read rand-read)
EXPORT=/srv/bench
MNT=/mnt/bench
RES=$VMTEST_OUT/results
mkdir -p "$RES"
# gssd talks to TCP 2049 whatever the mount's port: each server listens there in turn.
KNFSD_PORT=2049 NFSRDMAD_PORT=2049

# suite SERVER FLAVOR SRC PORT: mount with sec=FLAVOR, every job, unmount
suite() {
    local server=$1 flavor=$2 config=$1-$2 o j t0 s0 v0 s1 v1
    if [ "$PROTO" = rdma ]; then o="proto=rdma,port=$4"; else o="proto=tcp,port=2049"; fi
    o="vers=$VERS,$o,sec=$flavor"
    [ "$VERS" = 3 ] && o="$o,mountport=$5,mountproto=tcp,nolock"
    step "$config: $3 ($o)"
    if ! check "$config: mount" nfs_mount "$3" $MNT "$o"; then
        echo "mount failed" > "$RES/$config.na"; return 1
    fi
    check "$config: transport is $PROTO" assert_mount_transport $MNT "$PROTO"
    export DIR=$MNT/fio
    rm -rf "$EXPORT/fio"; mkdir -p "$EXPORT/fio"; chmod 1777 "$EXPORT/fio"
    for j in "${JOBS[@]}"; do
        sync; echo 3 > /proc/sys/vm/drop_caches
        t0=$(now) s0=$(server_cpu "$server") v0=$(vm_busy)
        check "$config: fio $j" timeout 600 fio --eta=never --output-format=json --output="$RES/$config.$j.json" "/vmtest/jobs/$j.fio"
        s1=$(server_cpu "$server") v1=$(vm_busy)
        printf '{"hz": %s, "server": %s, "vm": %s}\n' "$(getconf CLK_TCK)" $((s1 - s0)) $((v1 - v0)) > "$RES/$config.$j.cpu.json"
        note "$j: $(since "$t0") s wall, server CPU $((s1 - s0)) ticks, VM busy $((v1 - v0)) ticks"
    done
    mount_op_summary $MNT | sed 's/^/    /'
    check "$config: umount" nfs_umount $MNT
    rm -rf "$EXPORT/fio"
}

step "setup: NFS v$VERS over $PROTO, sec ${FLAVORS[*]}; size $SIZE, ${RUNTIME}s per job"
check "tools" need_cmd fio python3 mkfs.ext4 rpc.nfsd rpc.svcgssd || exit 1
check "rxe_setup" rxe_setup || exit 1
check "ext4 export" make_ext4 $EXPORT 1536 || exit 1
check "NFS client modules" nfs_client_modules || exit 1
check "Kerberos realm and KDC" krb5_realm_start "$RXE_IP" || exit 1
check "rpc.gssd" gssd_start || exit 1
check "rpcbind" rpcbind_start || exit 1

step "kernel nfsd"
# rpc.svcgssd before nfsd: the kernel asks it to accept contexts (no gssproxy here).
rpc.svcgssd -f > "$VMTEST_OUT/svcgssd.log" 2>&1 &
SVCGSSD_PID=$!
KNFSD_EXPORT_OPTS=rw,no_root_squash,insecure,no_subtree_check,fsid=0,sec=sys:krb5:krb5i:krb5p
if check "knfsd_start" knfsd_start $EXPORT; then
    echo Y > /proc/fs/nfsd/v4_end_grace 2>/dev/null
    for f in "${FLAVORS[@]}"; do
        # v4: the export is the kernel nfsd's pseudo-root (fsid=0), mounted as "/".
        src="$KRB5_HOST:/"; [ "$VERS" = 3 ] && src="$KRB5_HOST:$EXPORT"
        suite knfsd "$f" "$src" "$KNFSD_RDMA_PORT" "$KNFSD_MOUNTD_PORT"
    done
    check "knfsd_stop" knfsd_stop
else
    for f in "${FLAVORS[@]}"; do echo "the kernel nfsd did not start" > "$RES/knfsd-$f.na"; done
fi
kill "$SVCGSSD_PID" 2>/dev/null

step "nfsrdmad"
NFSRDMAD_ADDR=0.0.0.0
NFSRDMAD_EXPORT_OPTS="rw,no_root_squash,insecure,sec=sys:krb5:krb5i:krb5p"
if check "nfsrdmad_start" nfsrdmad_start $EXPORT --rdma "$RXE_IP:20050"; then
    for f in "${FLAVORS[@]}"; do
        suite nfsrdmad "$f" "$KRB5_HOST:$EXPORT" 20050 "$NFSRDMAD_MOUNT_PORT"
    done
    nfsrdmad_dump
    grep -E 'stats: (rpc|rdma) ' "$NFSRDMAD_LOG" | tail -2 | sed 's/^/    /'
    check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
else
    for f in "${FLAVORS[@]}"; do echo "nfsrdmad did not start" > "$RES/nfsrdmad-$f.na"; done
fi
gssd_stop

step "results"
python3 /vmtest/table.py --gss "$RES" "$VERS" "$PROTO" | tee "$VMTEST_OUT/table.txt"
vm_summary
