#!/bin/bash
# guest-load.sh - runs IN THE VM (bench/vm/run.sh --load boots it): the load mode of the
# benchmark (issue 16), for the kernel nfsd and then nfsrdmad on the same boot, with the same
# functions as the VM test group vm_nfsrdmad_scale (tests/vm/lib/load.sh):
#  - LOAD_CLIENTS mounts, each of its own server address (one transport each), LOAD_MB MiB
#    written + fsync'd and read back (O_DIRECT) through each in parallel, md5-checked;
#  - fio 1 MiB O_DIRECT at LOAD_DEPTH, writes then reads, over one mount;
#    (both over LOAD_PROTO: rdma or tcp)
#  - LOAD_THREADS threads x LOAD_FILES files created with fsync, over RDMA and over TCP;
# and for each: wall time, MiB/s or files/s, worst completion, reconnects (client: the xprt
# connect counts of mountstats; nfsrdmad: also its log's "connection from" lines), and
# nfsrdmad's resident and registered memory with one mount and with all of them. Results in
# $VMTEST_OUT/results/SERVER.load.json; table.py --load prints them side by side.
# Files in /vmtest: table.py. Env: NFSRDMAD_BIN, LOAD_CLIENTS (16), LOAD_MB (2), LOAD_DEPTH
# (128), LOAD_FIO_SIZE (256M), LOAD_FIO_RUNTIME (20), LOAD_THREADS (4), LOAD_FILES (500),
# LOAD_PROTO (rdma), LOAD_SERVERS ("knfsd nfsrdmad").
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/nfs.sh"
source "$VMTEST_LIB/load.sh"

CLIENTS=${LOAD_CLIENTS:-16} MB=${LOAD_MB:-2} DEPTH=${LOAD_DEPTH:-128}
FIO_SIZE=${LOAD_FIO_SIZE:-256M} FIO_RUNTIME=${LOAD_FIO_RUNTIME:-20}
THREADS=${LOAD_THREADS:-4} FILES=${LOAD_FILES:-500} PROTO=${LOAD_PROTO:-rdma}
SERVERS=${LOAD_SERVERS:-knfsd nfsrdmad}
EXPORT=/srv/bench
BASE=/mnt/load
RES=$VMTEST_OUT/results
mkdir -p "$RES"

# opts SERVER PROTO: mount options (the kernel's default timeo; soft so a dead server ends)
opts() {
    local port
    case "$1-$2" in
        knfsd-tcp) port=$KNFSD_PORT ;; knfsd-rdma) port=$KNFSD_RDMA_PORT ;;
        nfsrdmad-tcp) port=$NFSRDMAD_PORT ;; nfsrdmad-rdma) port=$NFSRDMAD_RDMA_PORT ;;
    esac
    local mport=$KNFSD_MOUNTD_PORT
    [ "$1" = nfsrdmad ] && mport=$NFSRDMAD_MOUNT_PORT
    echo "vers=3,proto=$2,port=$port,mountport=$mport,mountproto=tcp,nolock,nosharecache,soft,retrans=2"
}

# xprt_sum MNT...: connects beyond the first, summed over the mounts
reconnects() { load_xprt "$@" | awk '{ if ($3 > 1) s += $3 - 1 } END { print s + 0 }'; }

# memory: nfsrdmad's resident set (KiB) and its registered memory (bytes, from the counters
# SIGUSR1 writes into its log), as `"rss_kib": N, "registered": N` (-1 when unknown)
memory() {
    local rss=-1 reg=-1 f
    while read -r f; do
        case $f in VmRSS:*) rss=${f//[^0-9]/} ;; esac
    done < "/proc/$NFSRDMAD_PID/status"
    nfsrdmad_dump
    f=$(grep -o 'registered_bytes=[0-9]*' "$NFSRDMAD_LOG" | tail -1)
    [ -n "$f" ] && reg=${f#*=}
    echo "\"rss_kib\": $rss, \"registered\": $reg"
}

# run_server NAME: every load against the running server NAME; results in $RES/NAME.*.json
run_server() {
    local s=$1 skip mnts=() i r one
    if [ "$s" = nfsrdmad ]; then
        # Its memory with one connection that moved data, then with all of them: what the
        # pools are sized by is configuration, not the number of clients (issue 16).
        step "$s: memory with one $PROTO mount x $MB MiB"
        load_mount_all 1 "$EXPORT" "$BASE" "$(opts "$s" "$PROTO")" &&
            load_roundtrip "$BASE" "$MB" "$RES/$s.roundtrip-one.json" 0
        one=$(memory)
        load_umount_all "$BASE"
        rm -f "$EXPORT"/load-*.bin
    fi
    step "$s: $CLIENTS $PROTO mounts x $MB MiB"
    skip=$(load_log_lines "$NFSRDMAD_LOG")
    load_mount_all "$CLIENTS" "$EXPORT" "$BASE" "$(opts "$s" "$PROTO")"
    for i in "${LOAD_MOUNTED[@]}"; do mnts+=("$BASE/$i"); done
    [ ${#mnts[@]} -gt 0 ] && load_roundtrip "$BASE" "$MB" "$RES/$s.roundtrip.json" "${LOAD_MOUNTED[@]}"
    if [ "$s" = nfsrdmad ]; then
        echo "{\"one\": {$one}, \"all\": {$(memory)}, \"mounted\": ${#mnts[@]}}" > "$RES/$s.memory.json"
        note "memory: $(cat "$RES/$s.memory.json")"
    fi
    r=$(reconnects "${mnts[@]}")
    echo "{\"mounted\": ${#mnts[@]}, \"mount_s\": $LOAD_MOUNT_WALL, \"reconnects\": $r}" > "$RES/$s.mounts.json"
    note "mounted ${#mnts[@]}/$CLIENTS in $LOAD_MOUNT_WALL s; client reconnects $r"
    if [ "$s" = nfsrdmad ] && [ "$PROTO" = rdma ]; then
        note "daemon: $(load_log_conns "$NFSRDMAD_LOG" "$skip" | awk '{s += $2} END {print s + 0}') connection lines for $CLIENTS mounts"
    fi
    load_umount_all "$BASE"
    rm -f "$EXPORT"/load-*.bin

    step "$s: fio 1 MiB O_DIRECT at iodepth $DEPTH over one $PROTO mount"
    local mnt=/mnt/deep src=$RXE_IP
    [ "$PROTO" = tcp ] && src=127.0.0.1
    if check "$s: deep mount" nfs_mount "$src:$EXPORT" "$mnt" "$(opts "$s" "$PROTO")"; then
        load_fio "$mnt" write "$DEPTH" "$FIO_SIZE" "$FIO_RUNTIME" "$RES/$s.fio-write.json"
        echo "{\"reconnects\": $(reconnects "$mnt")}" > "$RES/$s.fio-write.reconnects.json"
        load_fio "$mnt" read "$DEPTH" "$FIO_SIZE" "$FIO_RUNTIME" "$RES/$s.fio-read.json"
        echo "{\"reconnects\": $(reconnects "$mnt")}" > "$RES/$s.fio-read.reconnects.json"
        rm -f "$mnt/deep.dat"
        nfs_umount "$mnt"
    fi

    for p in rdma tcp; do
        step "$s: create storm over $p, $THREADS threads x $FILES files with fsync"
        src=$RXE_IP; [ $p = tcp ] && src=127.0.0.1
        mnt=/mnt/storm-$p
        if check "$s: $p mount" nfs_mount "$src:$EXPORT" "$mnt" "$(opts "$s" $p)"; then
            load_storm "$mnt/storm-$s-$p" "$THREADS" "$FILES" "$RES/$s.storm-$p.json"
            echo "{\"reconnects\": $(reconnects "$mnt")}" > "$RES/$s.storm-$p.reconnects.json"
            nfs_umount "$mnt"
        fi
        rm -rf "$EXPORT/storm-$s-$p"
    done
}

step "setup: $CLIENTS clients x $MB MiB, iodepth $DEPTH, $THREADS x $FILES files, over $PROTO"
check "tools" need_cmd fio python3 mkfs.ext4 rpc.nfsd || exit 1
check "rxe_setup" rxe_setup || exit 1
check "ext4 export" make_ext4 $EXPORT 2048 || exit 1
check "NFS client modules" nfs_client_modules || exit 1
check "rpcbind" rpcbind_start || exit 1
check "$CLIENTS addresses" load_addrs_add "$CLIENTS" || exit 1
NFSRDMAD_RDMA_PORT=${NFSRDMAD_RDMA_PORT:-20050}

for s in $SERVERS; do
    case $s in
        knfsd)
            if check "knfsd_start" knfsd_start $EXPORT; then
                run_server knfsd
                check "knfsd_stop" knfsd_stop
            else
                echo "the kernel nfsd did not start" > "$RES/knfsd.na"
            fi ;;
        nfsrdmad)
            # every address; RDMA on 20050, not the kernel nfsd's 20049 just stopped
            NFSRDMAD_ADDR=0.0.0.0
            if check "nfsrdmad_start" nfsrdmad_start $EXPORT --rdma "0.0.0.0:$NFSRDMAD_RDMA_PORT"; then
                run_server nfsrdmad
                check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
            else
                echo "nfsrdmad did not start" > "$RES/nfsrdmad.na"
            fi ;;
    esac
done

step "results"
python3 /vmtest/table.py --load "$RES" "$CLIENTS" "$MB" "$DEPTH" "$THREADS" "$FILES" "$PROTO" | tee "$VMTEST_OUT/table.txt"
vm_summary
