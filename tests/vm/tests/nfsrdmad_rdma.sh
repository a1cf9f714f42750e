#!/bin/bash
# nfsrdmad_rdma.sh - guest test group: OUR daemon over RPC-over-RDMA (Soft-RoCE) under the
# Linux kernel NFS client (xprtrdma), NFSv3.
#
# Asserts:
#  - the daemon finds the rxe device and listens on $RXE_IP:20049;
#  - the kernel client mounts vers=3,proto=rdma and /proc/self/mountstats says rdma;
#  - a 256 MiB file written and read back (cold cache, after a remount) with matching md5
#    at rsize/wsize 1 MiB, and $SMALL_MB MiB at 4 KiB (many small transfers);
#  - four parallel writers, then four parallel readers, md5-checked;
#  - with the client's inline thresholds lowered to 1024 (sunrpc.rdma_max_inline_read/
#    write) everything still works and more replies go through reply chunks;
#  - 50 umount/remount cycles, then the data is still there and nothing leaked;
#  - a directory of $MANY entries listed (READDIR/READDIRPLUS through reply chunks);
#  - a 1000-byte symlink target read back (READLINK through a write chunk);
#  - a crafted requester (tests/tools/rdma_requester) gets ERR_VERS for a wrong version,
#    ERR_CHUNK for unaligned, oversize, truncated and malformed chunk lists, and is
#    disconnected for a credit overrun -- while the kernel mount keeps working;
#  - the daemon's counters prove the paths ran: read chunks (WRITE), write chunks (READ),
#    reply chunks (long replies), and payload bytes memcpy'd in userspace stayed 0;
#  - the daemon exits 0 on SIGTERM.
# Env: NFSRDMAD_BIN (required), RDMA_REQUESTER (the tool), MANY (default 5000).
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/nfs.sh"
source "$VMTEST_LIB/rxe.sh"

MANY=${MANY:-5000}
BIG_MB=${BIG_MB:-256}
SMALL_MB=${SMALL_MB:-32}
REMOUNTS=${REMOUNTS:-50}
EXPORT=/srv/export
MNT=/mnt/rdma
RDMA_PORT=20049

rdma_opts() {  # extra options
    echo "vers=3,proto=rdma,port=$RDMA_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock,soft,timeo=300,retrans=2${1:+,$1}"
}

counter() {  # NAME: the value of NAME= in the last stats line of the daemon log
    grep -o "stats: rdma .*" "$NFSRDMAD_LOG" | tail -1 | tr ' ' '\n' | sed -n "s/^$1=//p"
}

dump_stats() { kill -USR1 "$NFSRDMAD_PID" && sleep 1; }

step "Soft-RoCE"
check "rxe device up" rxe_setup || { vm_summary; exit 1; }
check "export on ext4" make_ext4 "$EXPORT" 600 || { vm_summary; exit 1; }
nfs_client_modules
load_modules rpcrdma

step "nfsrdmad over RDMA on $RXE_IP:$RDMA_PORT"
NFSRDMAD_ADDR=$RXE_IP
check "rpcbind" rpcbind_start
check "nfsrdmad starts" nfsrdmad_start "$EXPORT" --rdma "$RXE_IP:$RDMA_PORT" || { vm_summary; exit 1; }
# RDMA listeners start after TCP, which is what nfsrdmad_start waits for.
check "listening on the rxe device" wait_for 20 grep -q "rdma: listening on $RXE_IP:$RDMA_PORT" "$NFSRDMAD_LOG"

step "mount vers=3,proto=rdma"
check "mount" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 180 || {
    tail -30 "$NFSRDMAD_LOG"; nfsrdmad_stop; vm_summary; exit 1; }
check "transport is rdma (mountstats)" assert_mount_transport "$MNT" rdma

step "$BIG_MB MiB written and read back at 1 MiB"
head -c $((BIG_MB << 20)) /dev/urandom > /tmp/src.bin
want=$(md5sum < /tmp/src.bin | cut -d' ' -f1)
check "write $BIG_MB MiB" dd if=/tmp/src.bin of="$MNT/big.bin" bs=1M conv=fsync status=none
check_eq "md5 on the server's disk" "$want" "$(md5sum < "$EXPORT/big.bin" | cut -d' ' -f1)"
nfs_umount "$MNT"; nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120
check_eq "md5 read back over RDMA (cold cache)" "$want" "$(md5sum < "$MNT/big.bin" | cut -d' ' -f1)"
rm -f /tmp/src.bin  # the guest's /tmp is RAM: keep only what later steps compare

step "rsize=wsize=4096"
nfs_umount "$MNT"
check "mount with 4 KiB transfers" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts rsize=4096,wsize=4096)" 120
head -c $((SMALL_MB << 20)) /dev/urandom > /tmp/small.bin
want4=$(md5sum < /tmp/small.bin | cut -d' ' -f1)
check "write $SMALL_MB MiB in 4 KiB" dd if=/tmp/small.bin of="$MNT/small.bin" bs=4k conv=fsync status=none
nfs_umount "$MNT"; nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts rsize=4096,wsize=4096)" 120
check_eq "md5 read back in 4 KiB" "$want4" "$(md5sum < "$MNT/small.bin" | cut -d' ' -f1)"
rm -f /tmp/small.bin
nfs_umount "$MNT"
nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120

step "four parallel writers and readers"
for i in 1 2 3 4; do head -c $((16 << 20)) /dev/urandom > /tmp/par$i.bin; done
# (wait for these jobs only: the daemon and rpcbind are background jobs of this shell too)
pids=()
for i in 1 2 3 4; do dd if=/tmp/par$i.bin of="$MNT/par$i.bin" bs=1M conv=fsync status=none & pids+=($!); done
wait "${pids[@]}"
nfs_umount "$MNT"; nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120
pids=()
for i in 1 2 3 4; do md5sum < "$MNT/par$i.bin" > /tmp/par$i.got & pids+=($!); done
wait "${pids[@]}"
for i in 1 2 3 4; do
    check_eq "parallel file $i" "$(md5sum < /tmp/par$i.bin)" "$(cat /tmp/par$i.got)"
done

step "a directory of $MANY entries (reply chunks)"
mkdir -p "$EXPORT/many"
for ((i = 0; i < MANY; i++)); do : > "$EXPORT/many/entry-$i"; done
check_eq "ls counts every entry" "$MANY" "$(ls "$MNT/many" | wc -l)"
check_eq "ls -l counts every entry" "$MANY" "$(ls -l "$MNT/many" | grep -c entry-)"

step "a 1000-byte symlink target (READLINK into a write chunk)"
target=$(printf 'x%.0s' $(seq 1 1000))
ln -s "$target" "$EXPORT/longlink"
check_eq "readlink over RDMA" "$target" "$(readlink "$MNT/longlink")"

step "client inline thresholds lowered to 1024 (long replies)"
nfs_umount "$MNT"
old_r=$(cat /proc/sys/sunrpc/rdma_max_inline_read) old_w=$(cat /proc/sys/sunrpc/rdma_max_inline_write)
echo 1024 > /proc/sys/sunrpc/rdma_max_inline_read
echo 1024 > /proc/sys/sunrpc/rdma_max_inline_write
dump_stats; before_rc=$(counter reply_chunks)
check "mount with 1 KiB inline" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120
check_eq "ls -l of $MANY entries" "$MANY" "$(ls -l "$MNT/many" | grep -c entry-)"
check_eq "readlink" "$target" "$(readlink "$MNT/longlink")"
check_eq "md5 of a parallel file" "$(md5sum < /tmp/par1.bin)" "$(md5sum < "$MNT/par1.bin")"
dump_stats
check "more reply chunks with 1 KiB inline" test "$(counter reply_chunks)" -gt "$before_rc"
nfs_umount "$MNT"
echo "$old_r" > /proc/sys/sunrpc/rdma_max_inline_read
echo "$old_w" > /proc/sys/sunrpc/rdma_max_inline_write
nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120

step "a crafted requester, while the kernel mount stays up"
if [ -x "${RDMA_REQUESTER:-}" ]; then
    for sc in null vers unaligned oversize truncated badlist nomsg longcall overrun; do
        check "requester: $sc" "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" "$sc"
    done
    check_eq "the kernel mount still reads the 64 MiB file" "$want" "$(md5sum < "$MNT/big.bin" | cut -d' ' -f1)"
    echo "after the requester" > /tmp/after.txt
    check "the kernel mount still writes" cp /tmp/after.txt "$MNT/after.txt"
    check_eq "and the server has it" "after the requester" "$(cat "$EXPORT/after.txt")"
else
    fail "requester" "RDMA_REQUESTER is not set or not executable"
fi

step "$REMOUNTS umount/remount cycles"
nfs_umount "$MNT"
ok=0
for ((i = 0; i < REMOUNTS; i++)); do
    nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 60 >/dev/null && ls "$MNT" >/dev/null &&
        nfs_umount "$MNT" >/dev/null && ok=$((ok + 1))
done
check_eq "remount cycles that worked" "$REMOUNTS" "$ok"
nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120
check_eq "data intact after the remounts" "$want" "$(md5sum < "$MNT/big.bin" | cut -d' ' -f1)"

step "counters"
dump_stats
grep -o "stats: rdma .*" "$NFSRDMAD_LOG" | tail -1
check "RDMA Reads ran (WRITE data)" test "$(counter read_chunks)" -gt 0
check "RDMA Writes into write chunks ran (READ data)" test "$(counter write_chunks)" -gt 0
check "reply chunks ran (long replies)" test "$(counter reply_chunks)" -gt 0
check "ERR_VERS sent" test "$(counter err_vers)" -gt 0
check "ERR_CHUNK sent" test "$(counter err_chunk)" -gt 0
check "credit overrun detected" test "$(counter credit_overruns)" -gt 0
check "long calls ran (RDMA_NOMSG)" test "$(counter calls_nomsg)" -gt 0
check_eq "payload bytes memcpy'd in userspace" 0 "$(counter payload_memcpy_bytes)"
echo "completion errors: $(counter completion_errors) (flushes after the requester's disconnects are expected)"

step "shutdown"
nfs_umount "$MNT"
sleep 1
dump_stats
check_eq "no connection left open" 0 "$(counter open)"
check_eq "no registered buffer left in use" 0 "$(counter buffers_in_use)"
check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
vm_summary
