#!/bin/bash
# guest-bench.sh - runs IN THE VM (bench/vm/run.sh boots it): the same fio jobs through the
# kernel NFS client (NFSv3) against the kernel nfsd and against nfsrdmad, over TCP and RDMA
# (Soft-RoCE), then prints the side-by-side table (table.py).
# Files in /vmtest: jobs/*.fio, table.py. Env: NFSRDMAD_BIN, BENCH_SIZE (128M),
# BENCH_RUNTIME (15 s per data job), BENCH_NRFILES (1000), NFSRDMAD_RDMA_ARGS (the daemon's
# RDMA listener arguments; default "--rdma $RXE_IP:20050" when `nfsrdmad --help` shows --rdma).
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/nfs.sh"

export SIZE=${BENCH_SIZE:-128M} RUNTIME=${BENCH_RUNTIME:-15} NRFILES=${BENCH_NRFILES:-1000}
JOBS=(seq-write seq-read rand-read meta-create meta-stat meta-unlink)
EXPORT=/srv/bench
NFSRDMAD_RDMA_PORT=${NFSRDMAD_RDMA_PORT:-20050}
RES=$VMTEST_OUT/results
mkdir -p "$RES"

# suite CONFIG SRC OPTS TRANSPORT: mount, run every job, unmount
suite() {
    local config=$1 src=$2 opts=$3 transport=$4 mnt=/mnt/bench j t0
    step "$config: $src ($opts)"
    if ! check "$config: mount" nfs_mount "$src" $mnt "$opts"; then
        echo "mount failed" > "$RES/$config.na"; return 1
    fi
    check "$config: transport is $transport" assert_mount_transport $mnt "$transport"
    export DIR=$mnt/fio
    rm -rf "$DIR"; mkdir -p "$DIR"
    for j in "${JOBS[@]}"; do
        sync; echo 3 > /proc/sys/vm/drop_caches
        t0=$(now)
        check "$config: fio $j" timeout 600 fio --eta=never --output-format=json --output="$RES/$config.$j.json" "/vmtest/jobs/$j.fio"
        note "$j: $(since "$t0") s wall"
    done
    _mountstats_block "$(cd $mnt && pwd -P)" > "$RES/$config.mountstats.txt"
    mount_op_summary $mnt | sed 's/^/    /'
    rm -rf "$DIR"
    check "$config: umount" nfs_umount $mnt
}

step "setup (size $SIZE, runtime ${RUNTIME}s per data job, $NRFILES files per metadata job)"
check "tools" need_cmd fio python3 mkfs.ext4 rpc.nfsd || exit 1
check "rxe_setup" rxe_setup || exit 1
check "ext4 export" make_ext4 $EXPORT 1536 || exit 1
check "NFS client modules" nfs_client_modules || exit 1
check "rpcbind" rpcbind_start || exit 1

step "kernel nfsd"
if check "knfsd_start" knfsd_start $EXPORT; then
    suite knfsd-tcp "127.0.0.1:$EXPORT" \
        "vers=3,proto=tcp,port=$KNFSD_PORT,mountport=$KNFSD_MOUNTD_PORT,mountproto=tcp,nolock" tcp
    suite knfsd-rdma "$RXE_IP:$EXPORT" \
        "vers=3,proto=rdma,port=$KNFSD_RDMA_PORT,mountport=$KNFSD_MOUNTD_PORT,mountproto=tcp,nolock" rdma
    check "knfsd_stop" knfsd_stop
else
    echo "the kernel nfsd did not start" > "$RES/knfsd-tcp.na"
    echo "the kernel nfsd did not start" > "$RES/knfsd-rdma.na"
fi

step "nfsrdmad"
# Every address, like the kernel nfsd: the RDMA suite mounts $RXE_IP, and its MOUNT call goes
# over TCP to that address (a listener on 127.0.0.1 only made that mount hang).
NFSRDMAD_ADDR=0.0.0.0
HAS_RDMA=0
"$NFSRDMAD_BIN" --help 2>&1 | grep -q -- '--rdma' && HAS_RDMA=1
RDMA_ARGS=()
if [ $HAS_RDMA = 1 ]; then
    # port 20050, not the kernel nfsd's 20049: no interplay with the listener just stopped
    read -r -a RDMA_ARGS <<< "${NFSRDMAD_RDMA_ARGS:---rdma $RXE_IP:$NFSRDMAD_RDMA_PORT}"
else
    echo "n/a: nfsrdmad has no RDMA transport yet" > "$RES/nfsrdmad-rdma.na"
fi
if check "nfsrdmad_start" nfsrdmad_start $EXPORT "${RDMA_ARGS[@]}"; then
    suite nfsrdmad-tcp "127.0.0.1:$EXPORT" \
        "vers=3,proto=tcp,port=$NFSRDMAD_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock" tcp
    if [ $HAS_RDMA = 1 ]; then
        suite nfsrdmad-rdma "$RXE_IP:$EXPORT" \
            "vers=3,proto=rdma,port=$NFSRDMAD_RDMA_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock" rdma
    fi
    check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
else
    echo "nfsrdmad did not start" > "$RES/nfsrdmad-tcp.na"
fi

step "results"
python3 /vmtest/table.py "$RES" | tee "$VMTEST_OUT/table.txt"
vm_summary
