#!/bin/bash
# guest-bench.sh - runs IN THE VM (bench/vm/run.sh boots it): the same fio jobs through the
# kernel NFS client (NFSv3, then NFSv4.1) against the kernel nfsd and against nfsrdmad, over
# TCP and RDMA (Soft-RoCE), then prints the side-by-side tables (table.py).
# Around every job the server's CPU ticks and the bytes the mount moved (CONFIG.JOB.cpu.json);
# after nfsrdmad's RDMA seq-write and seq-read, io_floor moves the same bytes between the
# exported file and a registered buffer (CONFIG.JOB.floor.json): the floor of CPU per GiB.
# Files in /vmtest: jobs/*.fio and jobs/*.py, table.py, cpu.sh. Env: NFSRDMAD_BIN, IO_FLOOR_BIN,
# BENCH_VERS ("3 4.1"), BENCH_SIZE (128M),
# BENCH_RUNTIME (15 s per data job), BENCH_NRFILES (1000), NFSRDMAD_RDMA_ARGS (the daemon's
# RDMA listener arguments; default "--rdma $RXE_IP:20050" when `nfsrdmad --help` shows --rdma),
# BENCH_SPLIT (1: client jobs on vCPU 1, the server's threads and io_floor on vCPU 0; cpu.sh).
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/nfs.sh"
source /vmtest/cpu.sh  # server_cpu, vm_busy, mount_bytes

read -r -a VERS <<< "${BENCH_VERS:-3 4.1}"
export SIZE=${BENCH_SIZE:-128M} RUNTIME=${BENCH_RUNTIME:-15} NRFILES=${BENCH_NRFILES:-1000}
JOBS=(seq-write seq-read rand-read rand-write meta-create meta-stat meta-unlink serial-meta)
EXPORT=/srv/bench
NFSRDMAD_RDMA_PORT=${NFSRDMAD_RDMA_PORT:-20050}
RES=$VMTEST_OUT/results
mkdir -p "$RES"

# suite CONFIG SRC OPTS TRANSPORT: mount, run every job, unmount
suite() {
    local config=$1 src=$2 opts=$3 transport=$4 mnt=/mnt/bench j t0 s0 v0 b0 s1 v1 b1
    local server=${config%%-*}
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
        read -r -a b0 <<< "$(mount_bytes $mnt)"
        s0=$(server_cpu "$server") v0=$(vm_busy)
        pin_client
        if [ -f "/vmtest/jobs/$j.py" ]; then  # not fio: a loop fio cannot express
            check "$config: $j" timeout 600 python3 "/vmtest/jobs/$j.py" "$DIR/$j" "$RUNTIME" "$RES/$config.$j.json"
        else
            check "$config: fio $j" timeout 600 fio --eta=never --output-format=json --output="$RES/$config.$j.json" "/vmtest/jobs/$j.fio"
        fi
        unpin_client
        s1=$(server_cpu "$server") v1=$(vm_busy)
        read -r -a b1 <<< "$(mount_bytes $mnt)"
        printf '{"hz": %s, "server": %s, "vm": %s, "read_bytes": %s, "write_bytes": %s}\n' "$(getconf CLK_TCK)" \
            $((s1 - s0)) $((v1 - v0)) $((b1[0] - b0[0])) $((b1[1] - b0[1])) > "$RES/$config.$j.cpu.json"
        note "$j: $(since "$t0") s wall, server CPU $((s1 - s0)) ticks, $(((b1[0] - b0[0]) >> 20)) MiB read, $(((b1[1] - b0[1]) >> 20)) MiB written"
        [ "$server-$transport" = nfsrdmad-rdma ] && floor "$config" "$j" $((b1[0] - b0[0])) $((b1[1] - b0[1]))
    done
    _mountstats_block "$(cd $mnt && pwd -P)" > "$RES/$config.mountstats.txt"
    mount_op_summary $mnt | sed 's/^/    /'
    rm -rf "$DIR"
    check "$config: umount" nfs_umount $mnt
}

# floor CONFIG JOB READ_BYTES WRITE_BYTES: after seq-read, io_floor reads the job's file as
# many bytes as the job read, from a cold cache as the job began; after seq-write it writes as
# many into a file of its own and fsyncs it. Into or from a buffer registered on $RXE_DEV:
# once alone (CONFIG.JOB.floor.json), once with each chunk moved over the device too
# (--wire: RDMA Write after the pread, RDMA Read before the pwrite; CONFIG.JOB.floor-wire.json).
floor() {
    local config=$1 j=$2 rb=$3 wb=$4 kind args out
    local -a FLOOR_CPU=(env)  # the server's work: on the server's vCPU under --split
    [ "${BENCH_SPLIT:-0}" = 1 ] && FLOOR_CPU=(taskset -c 0)
    for kind in floor floor-wire; do
        args=(--dev "$RXE_DEV"); [ $kind = floor-wire ] && args+=(--wire "$RXE_GID_IDX")
        out=$RES/$config.$j.$kind.json
        case $j in
            seq-read)
                [ "$rb" -gt 0 ] || return 0
                sync; echo 3 > /proc/sys/vm/drop_caches
                check "$config: io_floor read $((rb >> 20)) MiB ${args[*]}" \
                    sh -c '"$0" "$@" > "'"$out"'"' "${FLOOR_CPU[@]}" "$IO_FLOOR_BIN" read "$EXPORT/fio/seq.dat" "$rb" "${args[@]}" ;;
            seq-write)
                [ "$wb" -gt 0 ] || return 0
                check "$config: io_floor write $((wb >> 20)) MiB ${args[*]}" \
                    sh -c '"$0" "$@" > "'"$out"'"' "${FLOOR_CPU[@]}" "$IO_FLOOR_BIN" write "$EXPORT/fio/floor.dat" "$wb" "${args[@]}"
                rm -f "$EXPORT/fio/floor.dat" ;;
            *) return 0 ;;
        esac
        [ -s "$out" ] && note "$kind: $(cat "$out")"
    done
    return 0
}

step "setup (size $SIZE, runtime ${RUNTIME}s per data job, $NRFILES files per metadata job)"
check "tools" need_cmd fio python3 mkfs.ext4 rpc.nfsd || exit 1
check "io_floor" test -x "${IO_FLOOR_BIN:-}" || exit 1
check "rxe_setup" rxe_setup || exit 1
check "ext4 export" make_ext4 $EXPORT 1536 || exit 1
check "NFS client modules" nfs_client_modules || exit 1
check "rpcbind" rpcbind_start || exit 1

# versions SERVER TCP_SRC RDMA_SRC V4_TCP_SRC V4_RDMA_SRC TCP_PORT RDMA_PORT MOUNT_PORT: the
# suites of every version in $VERS. Configurations are SERVER-TRANSPORT for NFSv3 and
# SERVER-TRANSPORT-vV for the others (table.py's names). v4 needs no MOUNT protocol and no NLM.
versions() {
    local server=$1 tsrc=$2 rsrc=$3 t4src=$4 r4src=$5 tport=$6 rport=$7 mport=$8 v sfx opts
    for v in "${VERS[@]}"; do
        if [ "$v" = 3 ]; then
            sfx= opts="mountport=$mport,mountproto=tcp,nolock"
            suite "$server-tcp" "$tsrc" "vers=3,proto=tcp,port=$tport,$opts" tcp
            [ -n "$rport" ] && suite "$server-rdma" "$rsrc" "vers=3,proto=rdma,port=$rport,$opts" rdma
        else
            sfx=-v$v
            suite "$server-tcp$sfx" "$t4src" "vers=$v,proto=tcp,port=$tport" tcp
            [ -n "$rport" ] && suite "$server-rdma$sfx" "$r4src" "vers=$v,proto=rdma,port=$rport" rdma
        fi
    done
}
# not_run SERVER WHY: every configuration of SERVER is n/a for WHY
not_run() {
    local v t sfx
    for v in "${VERS[@]}"; do
        sfx=; [ "$v" = 3 ] || sfx=-v$v
        for t in tcp rdma; do echo "$2" > "$RES/$1-$t$sfx.na"; done
    done
}

step "kernel nfsd"
if check "knfsd_start" knfsd_start $EXPORT; then
    [ "${BENCH_SPLIT:-0}" = 1 ] && check "knfsd on vCPU 0" pin_server $(pgrep -x nfsd)
    # v4: the export is the kernel nfsd's pseudo-root (fsid=0), mounted as "/".
    versions knfsd "127.0.0.1:$EXPORT" "$RXE_IP:$EXPORT" "127.0.0.1:/" "$RXE_IP:/" \
        "$KNFSD_PORT" "$KNFSD_RDMA_PORT" "$KNFSD_MOUNTD_PORT"
    check "knfsd_stop" knfsd_stop
else
    not_run knfsd "the kernel nfsd did not start"
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
# NFSv4.1 on as well (nfs4_config); v3 is served all the same. v4 clients mount the same paths.
if check "nfsrdmad_start" nfsrdmad_start $EXPORT "${RDMA_ARGS[@]}" --config "$(nfs4_config)"; then
    [ "${BENCH_SPLIT:-0}" = 1 ] && check "nfsrdmad on vCPU 0" pin_server "$NFSRDMAD_PID"
    rport=; [ $HAS_RDMA = 1 ] && rport=$NFSRDMAD_RDMA_PORT
    versions nfsrdmad "127.0.0.1:$EXPORT" "$RXE_IP:$EXPORT" "127.0.0.1:$EXPORT" "$RXE_IP:$EXPORT" \
        "$NFSRDMAD_PORT" "$rport" "$NFSRDMAD_MOUNT_PORT"
    check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
else
    not_run nfsrdmad "nfsrdmad did not start"
fi

step "results"
python3 /vmtest/table.py "$RES" | tee "$VMTEST_OUT/table.txt"
vm_summary
