#!/bin/bash
# nfsrdmad_rdma.sh - guest test group: OUR daemon over RPC-over-RDMA (Soft-RoCE) under the
# Linux kernel NFS client (xprtrdma), NFSv3.
#
# Asserts:
#  - the daemon finds the rxe device and listens on $RXE_IP:20049;
#  - the kernel client mounts vers=3,proto=rdma and /proc/self/mountstats says rdma;
#  - a $BIG_MB (128) MiB file written and read back (cold cache, after a remount) with matching md5
#    at rsize/wsize 1 MiB, and $SMALL_MB MiB at 4 KiB (many small transfers);
#  - four parallel writers, then four parallel readers, md5-checked;
#  - calls that need no disk (GETATTR, ACCESS, READ of cached pages; NFSv4.1 COMPOUNDs of
#    SEQUENCE, PUTFH, GETATTR, ACCESS, READ) were answered on the reactor (counter
#    reactor_calls), the read-backs among them; and workers that never switched
#    credentials (root, not squashed) posted their replies themselves while the reactor
#    slept (counter worker_replies), WRITEs among them;
#  - with the client's inline thresholds lowered to 1024 (sunrpc.rdma_max_inline_read/
#    write) everything still works and more replies go through reply chunks;
#  - $REMOUNTS (5) umount/remount cycles, then the data is still there and nothing leaked;
#  - a directory of $MANY entries listed (READDIR/READDIRPLUS through reply chunks);
#  - a 1000-byte symlink target read back (READLINK through a write chunk);
#  - a crafted requester (tests/tools/rdma_requester) gets ERR_VERS for a wrong version,
#    ERR_CHUNK for unaligned, oversize, truncated and malformed chunk lists and for an
#    RDMA_NOMSG call whose pulled message carries another XID, no answer to a peer's
#    malformed RDMA_ERROR, and is
#    disconnected for a credit overrun, for a flood of 1 500 calls in one chain and for
#    a read chunk with a bogus rkey (the RDMA Read fails); a requester that dies while its
#    1 MiB read chunk is being pulled costs nothing: its buffers come back, and every
#    receive of the shared queue is posted again; one that disconnects while the daemon
#    has put its WRITE off (held up by a local read lease) has the call dropped, never
#    run -- while the kernel mount keeps working;
#  - a long call larger than a payload buffer gets ERR_CHUNK at once (not a call parked
#    forever), and a requester that posts no receive is disconnected by the send
#    watchdog (rdma.send_timeout, 3 s here) while the kernel mount keeps going;
#  - the daemon's counters prove the paths ran: read chunks (WRITE), write chunks (READ),
#    reply chunks (long replies), and payload bytes memcpy'd in userspace stayed 0; the
#    per-connection lines of the dump agree;
#  - the link under rxe down and up: the daemon logs the port error and the port coming
#    back (the device's asynchronous events) and counts them;
#  - the daemon exits 0 on SIGTERM;
#  - a payload pool of 4 registered buffers on huge pages under four parallel writers and
#    readers (the RDMA Read budget, unset, is the pool's 4 MiB; 256 MiB by default):
#    calls wait for buffers (counted), none fails, no ERR_CHUNK, data intact;
#    then a requester holds all four: a READ with a write chunk waits on the reactor for
#    its buffer (no worker waits), a small inline READ gives up after 0.5 s with
#    NFS3ERR_JUKEBOX (counted), and both read their file intact once the watchdog frees them;
#  - IPv6: the listener on an IPv6 address of the rxe netdev, the requester and the kernel
#    client (proto=rdma6) reach it;
#  - the connection limit: with rdma.max_connections 2 a third connection is rejected at
#    CONNECT_REQUEST (logged, counted) while the mount keeps working; the credit grant is
#    the device's receive budget shared by the connections (96 each for two, 128 alone)
#    and registered memory does not grow with connections;
#  - the iWARP path (each RDMA Read registers its own sink), forced on Soft-RoCE: four
#    parallel writers and readers intact, a registration per Read;
#  - the kernel log has no ucma or uverbs "changed security contexts" line (rdma_cm or
#    a Send posted from a worker thread that had switched credentials);
#  - the engine modes: restarted with engine.mode poll and then event, the kernel mount
#    moves 32 MiB each way intact; an idle poll-mode daemon burns CPU, an idle adaptive or
#    event one does not (CPU ticks from /proc, a functional check, not a speed check).
#    Each runs with send queues of 4 work requests (NFSRDMAD_RDMA_SEND_QUEUE_DEPTH): work
#    waits for slots (send_queue_waits > 0), with no disconnect and no ERR_CHUNK; in poll
#    mode a crafted requester's reply of 6 work requests is posted in parts (reply_parts);
#  - NFSv4.1 (nfsv4.enabled): the kernel client mounts vers=4.1,proto=rdma (mountstats
#    says rdma), $BIG_MB MiB written and read back md5-exact after a remount, four parallel
#    writers and readers, ls -l of the $MANY-entry directory and a 1000-byte readlink,
#    nfs4_workload (lib/nfs.sh) passes, the daemon's counters show read, write and reply
#    chunks and no payload memcpy; a crafted requester's COMPOUND of six READs without
#    write chunks reads every byte right inline (the reply has more pieces than a Send
#    gathers: copied, and counted) and through a reply chunk (Writes split by gather
#    entries); the daemon restarted under the mount with a file open
#    (nfs4_restart_under_mount: the client reclaims over RDMA), and $V4_REMOUNTS remounts
#    leave no client state behind (nfs4_remounts);
#  - NFSv4.1 delegations over RDMA (RFC 8167): the v4.1 mount's backchannel on its RDMA
#    connection answers CB_NULL; read and write delegations are recalled over it when a v3
#    mount over RDMA or a local process needs the file (lib/nfs.sh nfs4_delegations); the
#    daemon's reverse-call counters show calls and no failure;
#  - NFSv3 locking on a proto=rdma mount without nolock (NLM, lib/nlm_client.sh on this
#    host): fcntl ranges between processes, locks seen by the server's local processes and
#    a v4.1 mount (over RDMA) both ways, a killed holder, a blocking flock granted through
#    the GRANTED callback within seconds, a lock held across a daemon restart (NSM notify,
#    reclaim), the client host's "reboot" (sm-notify) freeing its locks through statd's
#    callback, which reaches the daemon on 127.0.0.1 though it is bound to the rxe address;
# Env: NFSRDMAD_BIN (required), RDMA_REQUESTER (the tool), MANY (default 5000).
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/nfs.sh"
source "$VMTEST_LIB/rxe.sh"

MANY=${MANY:-5000}
BIG_MB=${BIG_MB:-128}
SMALL_MB=${SMALL_MB:-16}
REMOUNTS=${REMOUNTS:-5}
V4_REMOUNTS=${V4_REMOUNTS:-5}
EXPORT=/srv/export
MNT=/mnt/rdma
RDMA_PORT=20049

rdma_opts() {  # extra options
    echo "vers=3,proto=rdma,port=$RDMA_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,nolock,soft,timeo=300,retrans=2${1:+,$1}"
}

counter() { nfsrdmad_last_stat rdma "$1"; }  # NAME: from the last "stats: rdma" line
rpc_counter() { nfsrdmad_last_stat rpc "$1"; }
fds_counter() { nfsrdmad_last_stat fds "$1"; }

dump_stats() { nfsrdmad_dump; }

# parallel_roundtrip NAME LABEL [MNT OPTS]: /tmp/par1..4.bin written to MNT/NAME1..4.bin
# (default $MNT, mounted with OPTS, default rdma_opts) by four parallel writers, then (after a
# remount: cold cache) read back by four parallel readers and compared. Waits for these jobs
# only: the daemon and rpcbind are background jobs too.
parallel_roundtrip() {
    local name=$1 label=$2 m=${3:-$MNT} o=${4:-$(rdma_opts)} i pids=()
    for i in 1 2 3 4; do dd if=/tmp/par$i.bin of="$m/$name$i.bin" bs=1M conv=fsync status=none & pids+=($!); done
    wait "${pids[@]}"
    nfs_umount "$m"; nfs_mount "$RXE_IP:$EXPORT" "$m" "$o" 120
    pids=()
    for i in 1 2 3 4; do md5sum < "$m/$name$i.bin" > /tmp/$name$i.got & pids+=($!); done
    wait "${pids[@]}"
    for i in 1 2 3 4; do
        check_eq "$label $i" "$(md5sum < /tmp/par$i.bin)" "$(cat /tmp/$name$i.got)"
    done
}

step "Soft-RoCE"
check "rxe device up" rxe_setup || { vm_summary; exit 1; }
check "export on ext4" make_ext4 "$EXPORT" 600 || { vm_summary; exit 1; }
nfs_client_modules
load_modules rpcrdma

step "nfsrdmad over RDMA on $RXE_IP:$RDMA_PORT"
NFSRDMAD_ADDR=$RXE_IP
check "rpcbind" rpcbind_start
# A short send watchdog, so the deaf requester below is cut off within seconds; the
# kernel client's replies keep completing, which the watchdog counts as progress.
printf 'rdma:\n  send_timeout: 3\n' > /tmp/main.yaml
rdma_capture_env  # NFSRDMAD_CAPTURE=1: fuzz seeds from what the kernel client sends
check "nfsrdmad starts" nfsrdmad_start "$EXPORT" --rdma "$RXE_IP:$RDMA_PORT" --config /tmp/main.yaml || { vm_summary; exit 1; }
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
dump_stats
check "calls answered on the reactor (GETATTR, ACCESS, cached READ)" test "$(counter reactor_calls)" -gt 0
check "replies posted by their workers while the reactor slept (worker_replies)" \
    test "$(counter worker_replies)" -gt 0
rm -f /tmp/small.bin
nfs_umount "$MNT"

step "revalidations (actimeo=0): GETATTRs of files answered on the reactor"
# Each stat() (a shell test: no exec, so the loop takes well under the second or two the
# daemon holds a resolved file) revalidates the directory and the file: two GETATTRs. The
# first round's went to workers, which left the files held (fd_cache.h, path entries).
check "mount with actimeo=0" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts actimeo=0)" 120
for i in 1 2 3 4 5; do : > "$EXPORT/ga$i"; done
stat_all() { local i; for i in 1 2 3 4 5; do [ -e "$MNT/ga$i" ] || echo "ga$i missing"; done; }
stat_all
dump_stats; c0=$(rpc_counter calls) a0=$(rpc_counter nowait_answered)
for r in 1 2 3 4 5 6 7 8 9 10; do stat_all; done
dump_stats; c1=$(rpc_counter calls) a1=$(rpc_counter nowait_answered)
echo "    calls $((c1 - c0)), on the reactor $((a1 - a0)), held files $(fds_counter cache_path_entries)"
check "the revalidations reached the server" test $((c1 - c0)) -ge 50
check "all but a few answered on the reactor" test $(((c1 - c0) - (a1 - a0))) -le 5
closed0=$(fds_counter cache_idle_closed)
sleep 3; dump_stats
check_eq "idle held files closed within 3 s" 0 "$(fds_counter cache_path_entries)"
check "... by the sweep" test "$(fds_counter cache_idle_closed)" -gt "$closed0"
rm -f "$EXPORT"/ga[1-5]
nfs_umount "$MNT"
nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120

step "four parallel writers and readers"
for i in 1 2 3 4; do head -c $((16 << 20)) /dev/urandom > /tmp/par$i.bin; done
parallel_roundtrip par "parallel file"

check "traffic capture (NFSRDMAD_CAPTURE)" capture_start
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
    sleep 1; dump_stats; idle_buffers=$(counter buffers_in_use) idle_posted=$(counter receives_posted)
    for sc in null vers unaligned oversize truncated badlist nomsg nomsgxid peererror longcall \
        bignomsg ddp2 overrun flood badrkey; do
        check "requester: $sc" "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" "$sc"
    done
    # A call put off (an NFSv3 WRITE held up by a local read lease) whose connection goes
    # meanwhile is dropped with it: never run (the requester checks the file), no longer
    # counted as put off, and its receive buffer comes back (checked below).
    deferred0=$(nfsrdmad_stat rpc deferred)
    check "requester: deferdrop (a WRITE put off, then its connection gone)" \
        "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" deferdrop "$EXPORT" deferdrop.txt
    check "... the WRITE was put off (rpc: deferred)" test "$(nfsrdmad_stat rpc deferred)" -gt "$deferred0"
    check_eq "... and let go of with its connection (rpc: deferred_now)" 0 "$(nfsrdmad_stat rpc deferred_now)"
    dump_stats
    check "the failed RDMA Read was a completion error" test "$(counter completion_errors)" -gt 0
    check "requester: deaf (takes no reply) is cut off" "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" deaf
    dump_stats
    check_eq "the deaf peer's disconnect was the send watchdog's" 1 "$(counter stalled_sends)"
    check "requester: vanish (dies mid RDMA Read)" "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" vanish
    # The dead peer's connection goes (CM DREQ from its closed id, or the Read's retries
    # running out) and everything it held comes back.
    vanished() { dump_stats; [ "$(counter open)" = 1 ] && [ "$(counter buffers_in_use)" = "$idle_buffers" ]; }
    for ((i = 0; i < 90; i++)); do vanished && break; done  # ~1 s a round (dump_stats)
    check "the vanished peer's connection and buffers are released" vanished
    echo "    open=$(counter open) buffers_in_use=$(counter buffers_in_use) (idle mount: $idle_buffers)" \
        "receive_strays=$(counter receive_strays)"
    # Floods, overruns and dead peers cost the shared receive queue no slot.
    check_eq "every receive is posted again after the requesters" "$idle_posted" "$(counter receives_posted)"
    check_eq "the kernel mount still reads the $BIG_MB MiB file" "$want" "$(md5sum < "$MNT/big.bin" | cut -d' ' -f1)"
    echo "after the requester" > /tmp/after.txt
    check "the kernel mount still writes" cp /tmp/after.txt "$MNT/after.txt"
    check_eq "and the server has it" "after the requester" "$(cat "$EXPORT/after.txt")"
else
    fail "requester" "RDMA_REQUESTER is not set or not executable"
fi

capture_stop
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
conn_line=$(grep -o "stats: rdma-connection .*" "$NFSRDMAD_LOG" | tail -1)
echo "$conn_line"
conn_counter() { echo "$conn_line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
check "the mount's connection has its own counters: calls" test "$(conn_counter calls_msg)" -gt 0
check "... READ data by write chunks on it" test "$(conn_counter write_chunks)" -gt 0
check_eq "... credits it was granted" 128 "$(conn_counter credits)"

step "shutdown"
nfs_umount "$MNT"
sleep 1
dump_stats
check_eq "no connection left open" 0 "$(counter open)"
check_eq "no registered buffer left in use" 0 "$(counter buffers_in_use)"
# The device's asynchronous events are logged: the link under rxe goes down (rxe reports a
# port error) and comes back (port active). No mount is left to notice.
ip link set "$RXE_NETDEV" down
check "a port going down is logged" wait_for 10 grep -q "rdma: $RXE_DEV port 1: port error" "$NFSRDMAD_LOG"
ip link set "$RXE_NETDEV" up
check "... and coming back" wait_for 10 grep -q "rdma: $RXE_DEV port 1: port active" "$NFSRDMAD_LOG"
dump_stats
check "... counted" test "$(counter async_events)" -ge 2
check "nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop

# cpu_ticks PID: user+system clock ticks the process has used so far
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# idle_ticks: ticks the daemon burns in 3 s with an idle mount
idle_ticks() { local a; sleep 1; a=$(cpu_ticks "$NFSRDMAD_PID"); sleep 3; echo $(($(cpu_ticks "$NFSRDMAD_PID") - a)); }

# Each mode also runs with send queues of 4 work requests (by default 208 here): the
# client's WRITEs (RDMA Reads) and READs (a Write and a Send each) find the queue full,
# wait for completions, and go on: no disconnect, no ERR_CHUNK. Without the count nothing
# waits (a build with it disabled: send_queue_waits=0, and its posts stayed within what
# rxe allocated, which may be more than asked), and a post past a queue's real capacity
# fails (ENOMEM) and ends the connection.
for mode in poll event adaptive; do
    step "engine mode $mode (send queues of 4)"
    printf 'engine:\n  mode: %s\n  threads: 1\n' "$mode" > /tmp/engine-$mode.yaml
    # poll: NFSv4.1 too, for the requester's COMPOUND below
    [ "$mode" = poll ] && printf 'nfsv4:\n  enabled: true\n' >> /tmp/engine-$mode.yaml
    NFSRDMAD_RDMA_SEND_QUEUE_DEPTH=4 check "nfsrdmad starts in $mode mode" nfsrdmad_start \
        "$EXPORT" --rdma "$RXE_IP:$RDMA_PORT" --config /tmp/engine-$mode.yaml || continue
    check "$mode: listening" wait_for 20 grep -q "rdma: listening on $RXE_IP:$RDMA_PORT (.*$mode completion mode" "$NFSRDMAD_LOG"
    check "$mode: mount" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120 || { nfsrdmad_stop; continue; }
    check "$mode: the connection's send queue holds 4" grep -q "rdma: connection from .*send queue 4," "$NFSRDMAD_LOG"
    check "$mode: write 32 MiB" dd if=/tmp/par1.bin of="$MNT/mode-$mode.bin" bs=1M conv=fsync status=none
    cat /tmp/par2.bin >> "$MNT/mode-$mode.bin"
    nfs_umount "$MNT"; nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120
    check_eq "$mode: read back" "$(cat /tmp/par1.bin /tmp/par2.bin | md5sum)" "$(md5sum < "$MNT/mode-$mode.bin")"
    dump_stats
    echo "    $mode: send_queue_waits=$(counter send_queue_waits) completions=$(counter completions)"
    check "$mode: work waited for send queue slots" test "$(counter send_queue_waits)" -gt 0
    check_eq "$mode: no disconnect but the remount's" 1 "$(counter disconnects)"
    check_eq "$mode: no ERR_CHUNK" 0 "$(counter err_chunk)"
    check_eq "$mode: no completion error" 0 "$(counter completion_errors)"
    # The dump's engine line: an adaptive RDMA reactor sizes its spin (engine/spin_window.h)
    # and shows it; in the other modes none is sized.
    spin=$(nfsrdmad_last_stat engine spin_window_ns)
    echo "    $mode: the reactors' spin window: $spin (ns), $(nfsrdmad_last_stat engine sleeps) sleeps"
    if [ "$mode" = adaptive ]; then
        check "adaptive: the RDMA reactor's spin window is shown (0-50 us)" \
            test "${spin:-x}" -ge 0 -a "${spin:-x}" -le 50000
    else
        check_eq "$mode: no spin window is shown" "-" "$spin"
    fi
    if [ "$mode" = poll ] && [ -x "${RDMA_REQUESTER:-}" ]; then
        # A reply longer than the queue: the requester's six READs through a reply chunk
        # take 5 Writes and the Send (6 work requests, the queue holds 4). They are posted
        # in parts (send_queue.h), never refused: with the parts disabled this is ERR_CHUNK
        # and the requester fails.
        check "poll: six v4.1 READs through a reply chunk, in parts on a queue of 4" \
            "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" v41reads "$EXPORT" sge4.bin
        dump_stats
        echo "    poll: reply_parts=$(counter reply_parts) err_chunk=$(counter err_chunk)"
        check "poll: the long reply went in parts" test "$(counter reply_parts)" -gt 0
        check_eq "poll: still no ERR_CHUNK" 0 "$(counter err_chunk)"
    fi
    ls "$MNT" > /dev/null
    ticks=$(idle_ticks)
    echo "    $mode: $ticks CPU ticks in 3 s with an idle mount"
    if [ "$mode" = poll ]; then
        check "poll: the reactor polls while idle (>= 100 ticks)" test "$ticks" -ge 100
    else
        check "$mode: an idle daemon sleeps (<= 10 ticks)" test "$ticks" -le 10
    fi
    nfs_umount "$MNT"
    check "$mode: nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
done

step "a payload pool of 4 buffers, on huge pages, under four writers and readers"
echo 16 > /proc/sys/vm/nr_hugepages
printf 'rdma:\n  max_payload_buffers: 4\n  huge_pages: true\n  send_timeout: 8\n' > /tmp/small-pool.yaml
if check "nfsrdmad starts with 4 payload buffers" nfsrdmad_start "$EXPORT" \
        --rdma "$RXE_IP:$RDMA_PORT" --config /tmp/small-pool.yaml &&
    check "pool: listening" wait_for 20 grep -q "rdma: listening on $RXE_IP:$RDMA_PORT" "$NFSRDMAD_LOG" &&
    check "pool: mount" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120; then
    # The RDMA Read budget follows the payload pool unless set: 4 buffers, 4 MiB.
    check "pool: the Read budget is the pool's 4 MiB" \
        grep -q "rdma: device .* up to 4194304 bytes of RDMA Read in flight" "$NFSRDMAD_LOG"
    parallel_roundtrip pool "pool: file intact:"
    dump_stats
    grep -o "stats: rdma .*" "$NFSRDMAD_LOG" | tail -1
    check "pool: calls waited for registered memory" test "$(counter buffer_waits)" -gt 0
    check_eq "pool: no ERR_CHUNK" 0 "$(counter err_chunk)"
    check_eq "pool: no disconnect but the remount's" 1 "$(counter disconnects)"
    check "pool: payload buffers on huge pages" test "$(counter huge_page_bytes)" -gt 0
    check_eq "pool: payload memcpy" 0 "$(counter payload_memcpy_bytes)"
    # No registered buffer frees up: a requester holds all four (calls whose replies it
    # never takes) until the send watchdog (8 s here) cuts it off. A READ with a write
    # chunk (2 MiB at rsize 1 MiB) waits on the reactor, in order, for its buffer and runs
    # once they are back: no worker waits, no JUKEBOX. A small READ whose reply goes
    # inline (no write chunk) takes a buffer on the worker: it waits 0.5 s and answers
    # NFS3ERR_JUKEBOX, and the client's retry gets the data.
    dd if=/dev/urandom of="$EXPORT/jukebox.bin" bs=1M count=2 status=none
    head -c 2048 /dev/urandom > "$EXPORT/small-read.bin"
    want_j=$(md5sum < "$EXPORT/jukebox.bin" | cut -d' ' -f1)
    want_s=$(md5sum < "$EXPORT/small-read.bin" | cut -d' ' -f1)
    stat "$MNT/jukebox.bin" "$MNT/small-read.bin" > /dev/null  # LOOKUPs before the hog
    dump_stats; base_reads=$(counter read_chunks); base_waits=$(counter buffer_waits)
    "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" hog > /tmp/hog.log 2>&1 & hog=$!
    hogging() { dump_stats; [ "$(counter read_chunks)" -ge $((base_reads + 4)) ]; }
    check "jukebox: a requester holds every payload buffer" wait_for 30 hogging
    md5sum < "$MNT/jukebox.bin" | cut -d' ' -f1 > /tmp/jukebox.got & big=$!
    # O_DIRECT in 1 KiB: each READ asks for 1 KiB, small enough for an inline reply (a
    # page-cache read would ask for a whole page and offer a write chunk).
    dd if="$MNT/small-read.bin" iflag=direct bs=1024 count=2 status=none | md5sum | cut -d' ' -f1 > /tmp/small-read.got & small=$!
    waiting() { dump_stats; [ "$(counter calls_waiting)" -gt 0 ]; }
    check "jukebox: the large READ waits on the reactor for a buffer" wait_for 20 waiting
    wait "$big" "$small"
    check_eq "jukebox: the large READ gets its data once the buffers are back" "$want_j" "$(cat /tmp/jukebox.got)"
    check_eq "jukebox: the small READ gets its data after NFS3ERR_JUKEBOX" "$want_s" "$(cat /tmp/small-read.got)"
    check "jukebox: the requester was cut off by the send watchdog" wait "$hog"
    sed 's/^/    hog: /' /tmp/hog.log
    dump_stats
    check "jukebox: the inline READ gave up waiting for a buffer (NFS3ERR_JUKEBOX)" \
        test "$(counter payload_wait_timeouts)" -gt 0
    check "jukebox: calls waited for registered memory" test "$(counter buffer_waits)" -gt "$base_waits"
    check_eq "jukebox: nobody waits any more" 0 "$(counter calls_waiting)"
    check "jukebox: the holder's replies were stalled sends" test "$(counter stalled_sends)" -ge 1
    nfs_umount "$MNT"
fi
check "pool: nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop
echo 0 > /proc/sys/vm/nr_hugepages

step "the connection limit and the credit share (shared receive queue)"
# 256 receive buffers: 64 stay posted on the SRQ, 192 are shared out as credits. Two
# connections at most: the third is rejected at CONNECT_REQUEST, never accepted.
printf 'rdma:\n  max_connections: 2\n  receive_buffers: 256\n  send_timeout: 12\n' > /tmp/limits.yaml
if check "nfsrdmad starts with max_connections 2" nfsrdmad_start "$EXPORT" \
        --rdma "$RXE_IP:$RDMA_PORT" --config /tmp/limits.yaml &&
    check "limits: listening" wait_for 20 grep -q "rdma: listening on $RXE_IP:$RDMA_PORT" "$NFSRDMAD_LOG" &&
    check "limits: mount" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120; then
    grep "rdma: device .* registered" "$NFSRDMAD_LOG" | head -2
    check "limits: registered memory is reported at start" \
        grep -q "rdma: device .* bytes registered (256 receive buffers, 64 posted" "$NFSRDMAD_LOG"
    check "limits: the Read budget is the default pool's 256 MiB" \
        grep -q "rdma: device .* up to 268435456 bytes of RDMA Read in flight" "$NFSRDMAD_LOG"
    dump_stats; registered_one=$(counter registered_bytes)
    grant() { sed -n 's/.*credits granted \([0-9]*\).*/\1/p' <<<"$1"; }
    out=$("$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" null)
    echo "    $out"
    check_eq "limits: a second connection is granted half of 192 credits" 96 "$(grant "$out")"
    # The deaf requester stays connected (it takes no reply) until the watchdog's 12 s.
    "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" deaf > /tmp/deaf.log 2>&1 & deaf=$!
    two_open() { dump_stats; [ "$(counter open)" = 2 ]; }
    check "limits: the mount and the deaf requester are connected" wait_for 20 two_open
    check "limits: a third connection is refused" bash -c "! '$RDMA_REQUESTER' '$RXE_IP' '$RDMA_PORT' null"
    check "limits: ... at CONNECT_REQUEST, with the reason logged" \
        grep -q "rejecting a connection from .*: 2 connections already open (rdma.max_connections)" "$NFSRDMAD_LOG"
    dump_stats
    check_eq "limits: counted as rejected" 1 "$(counter rejected)"
    check_eq "limits: registered memory did not grow with connections" "$registered_one" "$(counter registered_bytes)"
    check "limits: the kernel mount still reads" cmp /tmp/par3.bin "$MNT/par3.bin"
    wait "$deaf"
    out=$("$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" null)
    check_eq "limits: once the deaf one is gone, a connection is accepted again, granted 96" 96 "$(grant "$out")"
    nfs_umount "$MNT"
    out=$("$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" null)
    check_eq "limits: alone, a connection is granted the configured maximum (128)" 128 "$(grant "$out")"
fi
check "limits: nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop

step "RDMA Read sinks registered per Read (the iWARP path, on Soft-RoCE)"
# The Debian kernel has no siw (soft-iWARP), so the path iWARP takes is forced here: each
# RDMA Read registers its own remotely writable sink and deregisters it on completion.
rm -f "$EXPORT"/mode-*.bin "$EXPORT"/pool*.bin "$EXPORT"/jukebox.bin  # room on the 600 MB export
if NFSRDMAD_RDMA_PER_READ_SINKS=1 check "nfsrdmad starts with per-Read sinks" \
        nfsrdmad_start "$EXPORT" --rdma "$RXE_IP:$RDMA_PORT" &&
    check "sinks: listening" wait_for 20 grep -q "rdma: listening on $RXE_IP:$RDMA_PORT" "$NFSRDMAD_LOG" &&
    check "sinks: mount" nfs_mount "$RXE_IP:$EXPORT" "$MNT" "$(rdma_opts)" 120; then
    check "sinks: the daemon says so" grep -q "every RDMA Read registers its own sink" "$NFSRDMAD_LOG"
    parallel_roundtrip sinks "sinks: file intact:"
    dump_stats
    echo "    read_chunks=$(counter read_chunks) sink_registrations=$(counter sink_registrations)"
    check "sinks: RDMA Reads ran" test "$(counter read_chunks)" -gt 0
    check "sinks: each registered its own sink" test "$(counter sink_registrations)" -ge "$(counter read_chunks)"
    check_eq "sinks: no completion error" 0 "$(counter completion_errors)"
    nfs_umount "$MNT"
    rm -f "$EXPORT"/sinks*.bin
fi
check "sinks: nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop

step "IPv6: the listener on an IPv6 address of the rxe netdev"
V6=fd00:99::1
ip -6 addr add "$V6/64" dev "$RXE_NETDEV" nodad
v6_gid() { grep -q "^fd00:0099:0000:0000:0000:0000:0000:0001" /sys/class/infiniband/$RXE_DEV/ports/1/gids/*; }
check "rxe has a GID for $V6" wait_for 10 v6_gid
if NFSRDMAD_ADDR="[$V6]" check "nfsrdmad starts on [$V6]" nfsrdmad_start "$EXPORT" --rdma "[$V6]:$RDMA_PORT" &&
    check "v6: listening" wait_for 20 grep -q "rdma: listening on $V6:$RDMA_PORT" "$NFSRDMAD_LOG"; then
    if [ -x "${RDMA_REQUESTER:-}" ]; then
        check "v6: requester NULL" "$RDMA_REQUESTER" "$V6" "$RDMA_PORT" null
        check "v6: requester ERR_VERS" "$RDMA_REQUESTER" "$V6" "$RDMA_PORT" vers
    fi
    v6opts="vers=3,proto=rdma6,port=$RDMA_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp6,nolock,soft,timeo=300,retrans=2"
    if check "v6: kernel mount proto=rdma6" nfs_mount "[$V6]:$EXPORT" "$MNT" "$v6opts" 120; then
        check "v6: transport is rdma (mountstats)" assert_mount_transport "$MNT" rdma
        check_eq "v6: read a file" "$(md5sum < /tmp/par3.bin)" "$(md5sum < "$MNT/par3.bin")"
        check "v6: write a file" cp /tmp/par4.bin "$MNT/v6.bin"
        check_eq "v6: the server has it" "$(md5sum < /tmp/par4.bin)" "$(md5sum < "$EXPORT/v6.bin")"
        nfs_umount "$MNT"
    fi
    grep "rdma: connection from" "$NFSRDMAD_LOG" | tail -1
fi
check "v6: nfsrdmad exits 0 on SIGTERM" nfsrdmad_stop

step "NFSv4.1 over RDMA"
rm -f "$EXPORT/big.bin" "$EXPORT/small.bin"  # room on the 600 MB export for v4.1's big file
MNT4=/mnt/rdma-v4
OPTS4="vers=4.1,proto=rdma,port=$RDMA_PORT,soft,timeo=300,retrans=2"
if check "nfsrdmad starts with nfsv4.enabled and RDMA" nfsrdmad_start "$EXPORT" \
        --rdma "$RXE_IP:$RDMA_PORT" --config "$(nfs4_config)"; then
    if check "mount -o $OPTS4" nfs_mount "$RXE_IP:$EXPORT" $MNT4 "$OPTS4"; then
        check "the v4.1 mount runs over RDMA (mountstats)" assert_mount_transport $MNT4 rdma
        head -c $((BIG_MB << 20)) /dev/urandom > /tmp/v4big
        want4=$(md5sum < /tmp/v4big | cut -d' ' -f1)
        check "$BIG_MB MiB written over v4.1/RDMA" dd if=/tmp/v4big of=$MNT4/v4big bs=1M conv=fsync status=none
        rm -f /tmp/v4big
        check_eq "... md5 on the server's disk" "$want4" "$(md5sum < "$EXPORT/v4big" | cut -d' ' -f1)"
        check "umount and remount (cold cache)" bash -c "umount $MNT4 && mount -t nfs -o $OPTS4 $RXE_IP:$EXPORT $MNT4"
        check_eq "... md5 read back over v4.1/RDMA" "$want4" "$(md5sum < $MNT4/v4big | cut -d' ' -f1)"
        rm -f $MNT4/v4big
        parallel_roundtrip v4par "v4.1/rdma: parallel file" $MNT4 "$OPTS4"
        rm -f $MNT4/v4par*.bin
        check_eq "v4.1/rdma: ls -l of $MANY entries (READDIR in reply chunks)" "$MANY" \
            "$(ls -l "$MNT4/many" | grep -c entry-)"
        check_eq "v4.1/rdma: readlink of a 1000-byte target" "$target" "$(readlink "$MNT4/longlink")"
        nfs4_workload $MNT4 v4.1/rdma "$EXPORT"
        # RFC 8267 §4 for NFSv4: WRITE data in read chunks, READ and READLINK results in
        # write chunks, long replies in reply chunks; none of it copied (this daemon
        # instance served only v4.1).
        dump_stats
        grep -o "stats: rdma .*" "$NFSRDMAD_LOG" | tail -1
        check "v4.1/rdma: RDMA Reads ran (WRITE data in read chunks)" test "$(counter read_chunks)" -gt 0
        check "v4.1/rdma: RDMA Writes ran (READ data in write chunks)" test "$(counter write_chunks)" -gt 0
        check "v4.1/rdma: reply chunks ran (long replies)" test "$(counter reply_chunks)" -gt 0
        check_eq "v4.1/rdma: payload bytes memcpy'd in userspace" 0 "$(counter payload_memcpy_bytes)"
        check "v4.1/rdma: COMPOUNDs answered on the reactor (SEQUENCE, PUTFH, GETATTR, READ)" \
            test "$(counter reactor_calls)" -gt 0
        # What a COMPOUND's arguments tell (a READ over 64 KiB, a PUTFH of a file not held
        # open before its GETATTR) is seen before its SEQUENCE runs: few are begun on the
        # reactor and then left to a worker (nowait_given_up: work done twice).
        note "v4.1/rdma: nowait answered $(rpc_counter nowait_answered), given up $(rpc_counter nowait_given_up), declined $(rpc_counter nowait_declined)"
        check "v4.1/rdma: COMPOUNDs given up after they began are fewer than those answered" \
            test "$(rpc_counter nowait_given_up)" -lt "$(rpc_counter nowait_answered)"
        # COMPOUNDs the Linux client never sends: six READs and no write chunk, inline (13
        # pieces, more than a Send gathers: the server copies the reply into its send
        # buffer, and counts it) and through a reply chunk (13 pieces RDMA-Written in
        # Writes of at most the QP's gather entries).
        check "requester: v4.1 six READs inline and through a reply chunk, every byte right" \
            "$RDMA_REQUESTER" "$RXE_IP" "$RDMA_PORT" v41reads "$EXPORT" sge.bin
        dump_stats
        check "v4.1/rdma: the 13-piece inline reply was copied, and counted" \
            test "$(counter payload_memcpy_bytes)" -gt 0
        echo "    payload_memcpy_bytes=$(counter payload_memcpy_bytes) err_chunk=$(counter err_chunk)"
        nfs4_restart_under_mount $MNT4 "v4.1/rdma restart" nfsrdmad_start "$EXPORT" \
            --rdma "$RXE_IP:$RDMA_PORT" --config "$(nfs4_config)"
        note "client-side statistics (per operation):"
        mount_op_summary $MNT4 | sed 's/^/    /'
        check "umount (v4.1/RDMA)" nfs_umount $MNT4
        nfs4_remounts "$RXE_IP:$EXPORT" $MNT4 "$OPTS4" $V4_REMOUNTS "v4.1/rdma remounts"
    fi
    check "nfsrdmad (v4.1) exits 0 on SIGTERM" nfsrdmad_stop
fi

step "NFSv4.1 delegations over RDMA (RFC 8167 backchannel)"
# The kernel client's v4.1 mount over RDMA asks for a backchannel on its connection; the
# daemon probes it with CB_NULL and recalls read and write delegations over it (reverse-
# direction calls, inline) when a v3 mount over RDMA, a local process, or a second v4.1
# client (over TCP from a network namespace) needs the file; CB_GETATTR for that client's
# stat of a write-delegated file.
MNT3R=/mnt/rdma-v3d
if check "nfsrdmad starts with write delegations and RDMA" nfsrdmad_start "$EXPORT" \
        --rdma "$RXE_IP:$RDMA_PORT" --config "$(nfs4_deleg_config)" &&
    check "listening on the rxe device" wait_for 20 grep -q "rdma: listening on $RXE_IP:$RDMA_PORT" "$NFSRDMAD_LOG" &&
    check "mount -o $OPTS4" nfs_mount "$RXE_IP:$EXPORT" $MNT4 "$OPTS4"; then
    check "the v4.1 mount runs over RDMA (mountstats)" assert_mount_transport $MNT4 rdma
    check "v4.1/rdma: the callback path is up (CB_NULL answered over RDMA)" \
        wait_for 10 grep -q "callback path to client .* up (CB_NULL" "$NFSRDMAD_LOG"
    if check "a v3 mount over RDMA beside it (noac)" nfs_mount "$RXE_IP:$EXPORT" $MNT3R "$(rdma_opts noac)" 180; then
        nfs4_delegations $MNT4 $MNT3R "$EXPORT" "v4.1/rdma delegations"
        check "umount (v3/RDMA)" nfs_umount $MNT3R
    fi
    # A second v4.1 client identity (a network namespace with a UTS name of its own,
    # routed to $RXE_IP over a veth pair, mounting over TCP: rxe serves the first namespace
    # only) conflicts with this host's delegations: the recalls and CB_GETATTR go over this
    # host's RDMA connection, also after that connection is cut under a held delegation
    # (lib/nfs.sh nfs4_two_clients, rpc_xprt_cut).
    peer_ns_up() {
        modprobe veth 2>/dev/null
        ip netns add v4peer && ip link add vp0 type veth peer name vp1 &&
            ip link set vp1 netns v4peer && ip addr add 10.78.0.1/24 dev vp0 && ip link set vp0 up &&
            ip netns exec v4peer sh -c 'ip addr add 10.78.0.2/24 dev vp1 && ip link set vp1 up &&
                ip link set lo up && ip route add default via 10.78.0.1' &&
            ip netns exec v4peer bash -c "echo > /dev/tcp/$RXE_IP/$NFSRDMAD_PORT"
    }
    if check "a second client: network namespace v4peer, 10.78.0.2 -> $RXE_IP" peer_ns_up; then
        nfs4_two_clients $MNT4 "$EXPORT" v4peer "$RXE_IP" "$EXPORT" "$NFSRDMAD_PORT" \
            "v4.1/rdma two clients" "xprt:$RDMA_PORT"
    fi
    ip netns del v4peer 2>/dev/null
    dump_stats
    grep -o "stats: rdma .*" "$NFSRDMAD_LOG" | tail -1
    check "v4.1/rdma: reverse-direction calls went out (back_calls)" test "$(counter back_calls)" -gt 3
    check_eq "v4.1/rdma: none failed (back_failed)" 0 "$(counter back_failed)"
    check_eq "v4.1/rdma: no stray replies" 0 "$(counter stray_replies)"
    check "umount (v4.1/RDMA)" nfs_umount $MNT4
fi
check "nfsrdmad (delegations over RDMA) exits 0 on SIGTERM" nfsrdmad_stop

step "NFSv3 locking (NLM) on a proto=rdma mount, without nolock"
# rxe in this kernel serves the first network namespace only, so the client's lockd runs
# on the daemon's host, and both use this host's rpcbind, where NLM's entry can name one of
# them only. The kernel's lockd (on a fixed port) registers NLM v1 and v3 when a mount
# starts it, and its v4 only where the daemon has none (rpcbind keeps the daemon's: seen
# with Debian 12's; otherwise the daemon restarts and takes it back), so the client's NLM
# v4 calls reach the daemon.
# The daemon's own calls to this host's lockd and statd (GRANTED, SM_MON, SM_NOTIFY) ask a
# stand-in rpcbind (NFSRDMAD_CALLBACK_RPCBIND_PORT, lib/pmap_standin.py) that names the
# lockd. Lock traffic goes over TCP, as from any Linux client of a proto=rdma mount.
NLM_LOCKD_PORT=4045
PMAP_STANDIN_PORT=1111
NLM_RDMA_OPTS="vers=3,proto=rdma,port=$RDMA_PORT,mountport=$NFSRDMAD_MOUNT_PORT,mountproto=tcp,soft,timeo=100,retrans=2"
# The server and the client host are one host here, and so would be one name to statd: the
# daemon's reboot notice would also read as the client host's reboot. So the daemon goes
# by a name of its own in NSM (locks.nsm_name), which statd resolves to the address the
# client mounted; the host's own name resolves elsewhere (127.0.1.1, as Debian has it).
nlm_rdma_config() {
    { cat "$(nfs4_config)"; printf 'locks:\n  nsm_name: nfsrdmad-server\n'; } > /tmp/nfsrdmad-nlm.yaml
    echo /tmp/nfsrdmad-nlm.yaml
}
# nfsrdmad_start returns once TCP accepts; rpcbind hears of the daemon after its RDMA
# device is set up, a second later: wait for that, or the kernel's lockd may come first.
readies_above() { [ "$(grep -c 'nfsrdmad ready' "$NFSRDMAD_LOG")" -gt "$1" ]; }
nlm_rdma_start() {
    local before
    before=$(grep -c 'nfsrdmad ready' "$NFSRDMAD_LOG")
    NFSRDMAD_CALLBACK_RPCBIND_PORT=$PMAP_STANDIN_PORT NFSRDMAD_STATE=/tmp/nfsrdmad-state-nlm \
        nfsrdmad_start "$EXPORT" --rdma "$RXE_IP:$RDMA_PORT" --config "$(nlm_rdma_config)" &&
        wait_for 30 readies_above "$before"
}
nlm_rdma_restart() {  # under a held lock, when lib/nlm_client.sh asks
    check "nfsrdmad stops under a held v3 lock" nfsrdmad_stop
    check "nfsrdmad starts again" nlm_rdma_start
    check "... it notified the host that held locks (NSM)" \
        wait_for 20 grep -q "nsm: $RXE_IP notified" "$NFSRDMAD_LOG"
}
nlm_lockd_port() {
    # Names resolve (statd looks up the names it is asked to watch and is told of).
    printf '%s nfsrdmad-server\n127.0.1.1 %s\n' "$RXE_IP" "$(hostname)" >> /etc/hosts &&
        modprobe lockd && echo $NLM_LOCKD_PORT > /proc/sys/fs/nfs/nlm_tcpport &&
        echo $NLM_LOCKD_PORT > /proc/sys/fs/nfs/nlm_udpport
}
nlm_ours() {  # rpcbind names the daemon for NLM v4 over TCP
    rpcinfo -p 127.0.0.1 | awk -v p=$NFSRDMAD_PORT '$1 == 100021 && $2 == 4 && $3 == "tcp" && $4 == p' | grep -q .
}
nlm_ours_or_restart() {
    nlm_ours && return 0
    echo "the kernel's lockd took NLM v4's rpcbind entry: the daemon restarts to take it back"
    nfsrdmad_stop && nlm_rdma_start && wait_for 10 nlm_ours
}
MNT_KEEP=/mnt/rdma-lockd
MNT4=/mnt/rdma-v4
OPTS4="vers=4.1,proto=rdma,port=$RDMA_PORT,soft,timeo=300,retrans=2"
if check "rpc.statd" statd_start && check "the kernel's lockd on port $NLM_LOCKD_PORT" nlm_lockd_port; then
    statd_port=$(rpcinfo -p 127.0.0.1 | awk '$1 == 100024 && $3 == "tcp" {print $4; exit}')
    python3 "$VMTEST_LIB/pmap_standin.py" $PMAP_STANDIN_PORT 100021=$NLM_LOCKD_PORT \
        100024=$statd_port >> "$VMTEST_OUT/pmap_standin.log" 2>&1 &
    PMAP_PID=$!
    rm -rf /tmp/nfsrdmad-state-nlm
    # A first mount keeps the kernel's lockd up (it stops with the last locking mount, and
    # takes NLM's entry again when it restarts).
    if check "nfsrdmad starts, bound to $RXE_IP" nlm_rdma_start &&
        check "a v3 mount without nolock starts the kernel's lockd" \
            nfs_mount "$RXE_IP:$EXPORT" $MNT_KEEP "$NLM_RDMA_OPTS" &&
        check "rpcbind names the daemon for NLM v4" nlm_ours_or_restart &&
        check "mount -o $OPTS4 (for v3/v4.1 conflicts)" nfs_mount "$RXE_IP:$EXPORT" $MNT4 "$OPTS4"; then
        check "... the v3 mount runs over RDMA (mountstats)" assert_mount_transport $MNT_KEEP rdma
        nlm_client_run nlm_rdma_restart env NLM_OWN_HOST=0 NLM_REBOOT=1 \
            NLM_MOUNT_OPTS="$NLM_RDMA_OPTS" bash "$VMTEST_LIB/nlm_client.sh" "$RXE_IP" $EXPORT $MNT4
        check "the NLM checks on the RDMA mount (lib/nlm_client.sh, listed above) all pass" test $? = 0
        check "statd watched the client host for the daemon (SM_MON)" \
            grep -q "nsm: statd watches host '$RXE_IP'" "$NFSRDMAD_LOG"
        check "statd's callback (to 127.0.0.1: the daemon is bound to $RXE_IP) freed its locks" \
            grep -q "nsm: host '$RXE_IP' ($(hostname)) rebooted: its locks are released" "$NFSRDMAD_LOG"
        check "umount (v4.1)" nfs_umount $MNT4
    fi
    nfs_umount $MNT_KEEP 2>/dev/null
    check "nfsrdmad (NLM over RDMA mounts) exits 0 on SIGTERM" nfsrdmad_stop
    kill $PMAP_PID 2>/dev/null
    statd_stop
fi

step "the kernel log"
# ucma refuses rdma_cm calls, and uverbs Soft-RoCE's Sends, from a thread whose
# credentials changed since the device file was opened (workers switch fsuid per
# request): such a destroy fails and leaks, such a Send ends the connection.
dmesg | grep "changed security contexts" | head -3
check "no rdma_cm or verbs call from a worker that switched credentials" \
    bash -c '! dmesg | grep -q "changed security contexts"'
vm_summary
