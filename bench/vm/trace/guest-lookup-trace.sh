# bench/vm/trace/guest-lookup-trace.sh - guest script (tests/vm/boot.sh): one process
# stat()s LOOKUPS names that do not exist over an NFSv3 TCP mount, one LOOKUP at a time,
# first against nfsrdmad (/vmtest/nfsrdmad), then against the kernel nfsd, with the
# sched_switch, sched_wakeup and raw_syscalls tracepoints on (perf samples nothing in this
# guest; tracepoints work). Writes ftrace-nfsrdmad.txt and ftrace-knfsd.txt to the run's
# out/ directory; bench/vm/trace/timeline.py reads them. See bench/vm/README.md, "Where a
# LOOKUP's time goes". Tracing costs every system call something, so compare the two
# servers of one boot, never figures of different boots.
# Env (boot.sh -e): PROTO=rdma mounts over Soft-RoCE instead of TCP; REPEAT=1 traces the
# warm-up's own names again through a lookupcache=none mount (names the server already
# knows are absent: the LOOKUP a reactor answers without a worker).
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/nfs.sh"
LOOKUPS=${LOOKUPS:-40} PROTO=${PROTO:-tcp} REPEAT=${REPEAT:-0}
EXPORT=/srv/bench; make_ext4 $EXPORT 256 >/dev/null
rpcbind_start; nfs_client_modules
mkdir -p /mnt/t
T=/sys/kernel/tracing; [ -d $T/events ] || mount -t tracefs nodev $T
[ -d $T/events ] || { echo "FAIL: no tracefs in the guest"; exit 1; }
echo 0 > $T/tracing_on
lookups() { python3 - "$1" "$2" "$LOOKUPS" <<'PY'
import os, sys
d, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    try: os.stat(f"{d}/nx-{tag}-{i}")
    except FileNotFoundError: pass
PY
}
trace_run() { # MNT LABEL
  echo > $T/trace; echo 8192 > $T/buffer_size_kb
  for e in sched/sched_switch sched/sched_wakeup raw_syscalls; do echo 1 > $T/events/$e/enable; done
  local tag=$2; [ "$REPEAT" = 1 ] && tag=warm-$2
  lookups $1 warm-$2        # the client's caches and the server's, warm
  echo 1 > $T/tracing_on; lookups $1 $tag; echo 0 > $T/tracing_on
  echo 0 > $T/events/enable
  cat $T/trace > $VMTEST_OUT/ftrace-$2.txt
  echo "$2: $(grep -c . $VMTEST_OUT/ftrace-$2.txt) trace lines"
}
opts=vers=3,proto=$PROTO,mountproto=tcp,nolock
host=127.0.0.1 port=$NFSRDMAD_PORT kport=$KNFSD_PORT
if [ "$PROTO" = rdma ]; then
  source "$VMTEST_LIB/rxe.sh"; rxe_setup || { echo "FAIL: rxe_setup"; exit 1; }
  host=$RXE_IP port=20050 kport=$KNFSD_RDMA_PORT
fi
# REPEAT: the traced names are the warm-up's (the server knows them absent), and the mount
# does not cache lookups, so each stat() is still one LOOKUP on the wire.
[ "$REPEAT" = 1 ] && opts+=,lookupcache=none
NFSRDMAD_ADDR=127.0.0.1; [ "$PROTO" = rdma ] && NFSRDMAD_ADDR=0.0.0.0  # MOUNT on $RXE_IP
NFSRDMAD_BIN=/vmtest/nfsrdmad
nfsrdmad_start $EXPORT --rdma 0.0.0.0:20050 > /dev/null || { tail $NFSRDMAD_LOG; exit 1; }
mount -t nfs -o $opts,port=$port,mountport=$NFSRDMAD_MOUNT_PORT $host:$EXPORT /mnt/t || { echo "FAIL: mount"; exit 1; }
trace_run /mnt/t nfsrdmad
umount /mnt/t; nfsrdmad_stop > /dev/null
knfsd_start $EXPORT > /dev/null
mount -t nfs -o $opts,port=$kport,mountport=$KNFSD_MOUNTD_PORT $host:$EXPORT /mnt/t || { echo "FAIL: knfsd mount"; exit 1; }
trace_run /mnt/t knfsd
umount /mnt/t; knfsd_stop > /dev/null
