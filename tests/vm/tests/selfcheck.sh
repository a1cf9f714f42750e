#!/bin/bash
# selfcheck.sh - guest test group 1: does the harness itself work?
#
# Asserts, in one boot:
#  1. the guest has the tools and kernel modules the tier relies on;
#  2. Soft-RoCE comes up (rxe device on a dummy netdev, PORT_ACTIVE, RoCE v2 GID for its IPv4);
#  3. userspace verbs over rxe: ibv_rc_pingpong (RC send/recv ping-pong, 4 KiB x 500) and
#     rping (rdma_cm connection setup + RDMA read/write) both succeed on both sides;
#  4. the kernel NFS client mounts the kernel nfsd over RDMA with vers=3 and vers=4.1:
#     /proc/self/mountstats shows xprt rdma, a 16 MiB random file is written (conv=fsync),
#     its md5 on the server's file system matches, and after a remount the file read back
#     over RDMA matches too; WRITE and READ calls were really sent on that mount;
#  5. assert_mount_transport is not vacuous: on a TCP mount it accepts "tcp" and rejects "rdma";
#  6. the kernel nfsd stops cleanly.
# Env: SIZE_MB (16), SKIP_RDMA_NFS=1 to skip 4.
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/nfs.sh"

SIZE_MB=${SIZE_MB:-16}
EXPORT=/srv/knfsd

step "guest environment"
note "kernel $(uname -r), $(nproc) vCPUs, $(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo) MiB"
check "host tools present in the guest" \
    need_cmd modprobe ip rdma ibv_devinfo ibv_rc_pingpong rping mkfs.ext4 losetup \
             rpcbind rpcinfo rpc.nfsd rpc.mountd exportfs mount.nfs md5sum dd || { vm_summary; exit 1; }
check "kernel modules are bound at /lib/modules/$(uname -r)" test -f "/lib/modules/$(uname -r)/modules.dep.bin"

step "Soft-RoCE"
check "rxe_setup" rxe_setup || { vm_summary; exit 1; }
rxe_show
check "rxe port is ACTIVE" grep -q ACTIVE "/sys/class/infiniband/$RXE_DEV/ports/1/state"
check "ibv_devinfo lists $RXE_DEV" bash -c "ibv_devinfo -d $RXE_DEV | grep -q PORT_ACTIVE"

step "verbs ping-pong (ibv_rc_pingpong, RC, 4096 B x 500)"
timeout 120 ibv_rc_pingpong -d "$RXE_DEV" -g "$RXE_GID_IDX" -s 4096 -n 500 > /tmp/pp-server.log 2>&1 &
srv=$!
sleep 1
check "ibv_rc_pingpong client" timeout 120 ibv_rc_pingpong -d "$RXE_DEV" -g "$RXE_GID_IDX" -s 4096 -n 500 127.0.0.1
wait $srv; rc=$?
sed 's/^/    server: /' /tmp/pp-server.log
check_eq "ibv_rc_pingpong server exit status" 0 "$rc"
grep -q "500 iters" /tmp/pp-server.log; check_eq "ibv_rc_pingpong server completed 500 iterations" 0 $?

step "rdma_cm ping (rping, 10 iterations)"
timeout 60 rping -s -a "$RXE_IP" -C 10 > /tmp/rping-server.log 2>&1 &
srv=$!
sleep 1
check "rping client" timeout 60 rping -c -a "$RXE_IP" -C 10 -v -S 64
wait $srv; check_eq "rping server exit status" 0 $?

if [ "${SKIP_RDMA_NFS:-0}" != 1 ]; then
    step "kernel nfsd on an ext4 export, TCP $KNFSD_PORT + RDMA $KNFSD_RDMA_PORT"
    check "ext4 export image" make_ext4 "$EXPORT" 512 || { vm_summary; exit 1; }
    check "NFS client modules" nfs_client_modules
    check "knfsd_start" knfsd_start "$EXPORT" || { dmesg | tail -30; vm_summary; exit 1; }

    dd if=/dev/urandom of=/tmp/src bs=1M count="$SIZE_MB" status=none
    SRC_MD5=$(md5sum < /tmp/src | cut -d' ' -f1)
    note "source: $SIZE_MB MiB, md5 $SRC_MD5"

    # rdma_roundtrip NAME OPTS PATH: write, server-side md5, remount, read back
    rdma_roundtrip() {
        local name=$1 opts=$2 path=$3 mnt=/mnt/$1 t0 md5 n
        step "$name: $SIZE_MB MiB over RDMA ($opts)"
        check "$name: mount" nfs_mount "$RXE_IP:$path" "$mnt" "$opts" || return
        check "$name: mountstats says xprt rdma" assert_mount_transport "$mnt" rdma
        t0=$(now)
        check "$name: write $SIZE_MB MiB" timeout 300 dd if=/tmp/src of="$mnt/file.$name" bs=1M conv=fsync status=none
        note "write: $(since "$t0") s"
        n=$(mount_op_count "$mnt" WRITE)
        check "$name: WRITE calls sent on the mount ($n)" test "$n" -gt 0
        md5=$(md5sum < "$EXPORT/file.$name" | cut -d' ' -f1)
        check_eq "$name: md5 of the file on the server's ext4" "$SRC_MD5" "$md5"
        check "$name: umount" nfs_umount "$mnt"
        check "$name: remount" nfs_mount "$RXE_IP:$path" "$mnt" "$opts" || return
        check "$name: mountstats says xprt rdma after remount" assert_mount_transport "$mnt" rdma
        t0=$(now)
        md5=$(timeout 300 dd if="$mnt/file.$name" bs=1M status=none | md5sum | cut -d' ' -f1)
        note "read: $(since "$t0") s"
        check_eq "$name: md5 read back over RDMA" "$SRC_MD5" "$md5"
        n=$(mount_op_count "$mnt" READ)
        check "$name: READ calls sent on the mount ($n)" test "$n" -gt 0
        grep -A3 "^device $RXE_IP:$path mounted on $mnt " /proc/self/mountstats | sed 's/^/    /'
        check "$name: umount after read" nfs_umount "$mnt"
        rm -f "$EXPORT/file.$name"
    }
    rdma_roundtrip v3rdma "vers=3,proto=rdma,port=$KNFSD_RDMA_PORT,mountport=$KNFSD_MOUNTD_PORT,mountproto=tcp,nolock" "$EXPORT"
    rdma_roundtrip v41rdma "vers=4.1,proto=rdma,port=$KNFSD_RDMA_PORT" /

    step "assert_mount_transport on a TCP mount"
    if check "v3tcp: mount" nfs_mount "127.0.0.1:$EXPORT" /mnt/v3tcp \
            "vers=3,proto=tcp,port=$KNFSD_PORT,mountport=$KNFSD_MOUNTD_PORT,mountproto=tcp,nolock"; then
        check "v3tcp: accepted as tcp" assert_mount_transport /mnt/v3tcp tcp
        if assert_mount_transport /mnt/v3tcp rdma 2>/dev/null; then
            fail "v3tcp: rejected as rdma" "assert_mount_transport said a TCP mount is RDMA"
        else
            pass "v3tcp: rejected as rdma"
        fi
        check "v3tcp: umount" nfs_umount /mnt/v3tcp
    fi
    if assert_mount_transport /mnt 2>/dev/null tcp; then
        fail "a non-NFS directory is rejected"
    else
        pass "a non-NFS directory is rejected"
    fi

    step "stop the kernel nfsd"
    check "knfsd_stop" knfsd_stop
    note "rpcrdma/svcrdma kernel messages:"
    dmesg | grep -iE "rpcrdma|svcrdma|xprtrdma" | tail -10 | sed 's/^/    /'
fi

vm_summary
