#!/bin/bash
# nfsrdmad_rdma.sh - guest test group: OUR daemon over RPC-over-RDMA (Soft-RoCE) under the
# Linux kernel NFS client (xprtrdma), NFSv3.
#
# Asserts:
#  - the daemon finds the rxe device and listens on $RXE_IP:20049;
#  - the kernel client mounts vers=3,proto=rdma and /proc/self/mountstats says rdma;
#  - a 64 MiB file written and read back (cold cache, after a remount) with matching md5,
#    at the default rsize/wsize and again at 4 KiB (many small transfers);
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
check "listening on the rxe device" grep -q "rdma: listening on $RXE_IP:$RDMA_PORT" "$NFSRDMAD_LOG"

step "mount vers=3,proto=rdma"
check "mount" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 180 || {
    tail -30 "$NFSRDMAD_LOG"; nfsrdmad_stop; vm_summary; exit 1; }
check "transport is rdma (mountstats)" assert_mount_transport "$MNT" rdma

step "64 MiB written and read back"
head -c $((64 << 20)) /dev/urandom > /tmp/src.bin
want=$(md5sum < /tmp/src.bin | cut -d' ' -f1)
check "write 64 MiB" dd if=/tmp/src.bin of="$MNT/big.bin" bs=1M conv=fsync status=none
check_eq "md5 on the server's disk" "$want" "$(md5sum < "$EXPORT/big.bin" | cut -d' ' -f1)"
nfs_umount "$MNT"; nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120
check_eq "md5 read back over RDMA (cold cache)" "$want" "$(md5sum < "$MNT/big.bin" | cut -d' ' -f1)"

step "rsize=wsize=4096"
nfs_umount "$MNT"
check "mount with 4 KiB transfers" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts rsize=4096,wsize=4096)" 120
head -c $((8 << 20)) /dev/urandom > /tmp/small.bin
want4=$(md5sum < /tmp/small.bin | cut -d' ' -f1)
check "write 8 MiB in 4 KiB" dd if=/tmp/small.bin of="$MNT/small.bin" bs=4k conv=fsync status=none
nfs_umount "$MNT"; nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts rsize=4096,wsize=4096)" 120
check_eq "md5 read back in 4 KiB" "$want4" "$(md5sum < "$MNT/small.bin" | cut -d' ' -f1)"
nfs_umount "$MNT"
nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120

step "a directory of $MANY entries (reply chunks)"
mkdir -p "$EXPORT/many"
for ((i = 0; i < MANY; i++)); do : > "$EXPORT/many/entry-$i"; done
check_eq "ls counts every entry" "$MANY" "$(ls "$MNT/many" | wc -l)"
check_eq "ls -l counts every entry" "$MANY" "$(ls -l "$MNT/many" | grep -c entry-)"

step "a 1000-byte symlink target (READLINK into a write chunk)"
target=$(printf 'x%.0s' $(seq 1 1000))
ln -s "$target" "$EXPORT/longlink"
check_eq "readlink over RDMA" "$target" "$(readlink "$MNT/longlink")"

step "a crafted requester, while the kernel mount stays up"
if [ -x "${RDMA_REQUESTER:-}" ]; then
    for sc in null vers unaligned oversize truncated badlist nomsg overrun; do
        check "requester: $sc" "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" "$sc"
    done
    check_eq "the kernel mount still reads the 64 MiB file" "$want" "$(md5sum < "$MNT/big.bin" | cut -d' ' -f1)"
    echo "after the requester" > /tmp/after.txt
    check "the kernel mount still writes" cp /tmp/after.txt "$MNT/after.txt"
    check_eq "and the server has it" "after the requester" "$(cat "$EXPORT/after.txt")"
else
    fail "requester" "RDMA_REQUESTER is not set or not executable"
fi

step "counters"
dump_stats
grep -o "stats: rdma .*" "$NFSRDMAD_LOG" | tail -1
check "RDMA Reads ran (WRITE data)" test "$(counter read_chunks)" -gt 0
check "RDMA Writes into write chunks ran (READ data)" test "$(counter write_chunks)" -gt 0
check "reply chunks ran (long replies)" test "$(counter reply_chunks)" -gt 0
check "ERR_VERS sent" test "$(counter err_vers)" -gt 0
check "ERR_CHUNK sent" test "$(counter err_chunk)" -gt 0
check "credit overrun detected" test "$(counter credit_overruns)" -gt 0
check_eq "payload bytes memcpy'd in userspace" 0 "$(counter payload_memcpy_bytes)"
echo "completion errors: $(counter completion_errors) (flushes after the requester's disconnects are expected)"

step "shutdown"
nfs_umount "$MNT"
check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
vm_summary
