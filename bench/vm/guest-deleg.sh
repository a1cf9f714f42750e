#!/bin/bash
# guest-deleg.sh - runs IN THE VM (bench/vm/run.sh --deleg boots it): an open/read/close-heavy
# job over NFSv4.1 with and without delegations, against the kernel nfsd and nfsrdmad, over TCP
# and RDMA (Soft-RoCE), then the side-by-side table (table.py --deleg).
#
# Per configuration SERVER-TRANSPORT-deleg|nodeleg: DELEG_FILES files of DELEG_SIZE bytes made
# on the server's side (one python3), a fresh vers=4.1 mount, caches dropped, one warm-up open
# of another file (waits out any grace period, lets the callback path come up), then fio
# (jobs/deleg-orc.fio) opens, reads and closes every file: one cold pass, then DELEG_PASSES
# warm passes. A client holding read delegations opens locally (no OPEN, no CLOSE, cached
# data); without, every open is an OPEN and a CLOSE on the wire. Recorded around each phase:
# the mount's per-op counts (OPEN, CLOSE, DELEGRETURN, ...) from /proc/self/mountstats, and
# the delegations the server holds: nfsrdmad's "stats: nfs4_delegations" line (SIGUSR1), the
# kernel nfsd's /proc/fs/nfsd/clients/*/states ("type: deleg"); and the CPU time of the server
# (daemon process / nfsd threads) and of the whole VM per phase.
# The Linux client gives back, at each lease renewal, delegations it has not used since the
# previous one (nfs_expire_unreferenced_delegations): the warm-up file's shows up as one
# DELEGRETURN; the passes follow each other closely enough that the files' stay.
#   knfsd without delegations: /proc/sys/fs/leases-enable=0 while it runs (nfsd's delegations
#     are VFS leases; generic_add_lease refuses them), restored afterwards.
#   nfsrdmad without delegations: `nfsv4: {delegations: false}`. nfsrdmad's read delegations
#     hold a Linux file lease too, so leases-enable is 1 while it runs.
# Files in /vmtest: jobs/deleg-orc.fio, table.py, cpu.sh. Env: NFSRDMAD_BIN, DELEG_FILES (200),
# DELEG_SIZE (4096 bytes), DELEG_PASSES (warm passes, 10), DELEG_TRANSPORTS ("tcp rdma").
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/nfs.sh"
source /vmtest/cpu.sh  # server_cpu, vm_busy, cpu_json

FILES=${DELEG_FILES:-200} SIZE=${DELEG_SIZE:-4096} PASSES=${DELEG_PASSES:-10}
read -r -a TRANSPORTS <<< "${DELEG_TRANSPORTS:-tcp rdma}"
EXPORT=/srv/bench
MNT=/mnt/deleg
NFSRDMAD_RDMA_PORT=${NFSRDMAD_RDMA_PORT:-20050}
RES=$VMTEST_OUT/results
# OPEN_NOATTR: mountstats' name for an OPEN of a file the client has already looked up (fio
# stats every file before its timed part, so its opens are these)
OPS="OPEN OPEN_NOATTR CLOSE DELEGRETURN READ GETATTR ACCESS LOOKUP"
mkdir -p "$RES"

# op_counts MNT: {"OPEN": n, ...} for $OPS, cumulative calls of the mount (one awk)
op_counts() {
    _mountstats_block "$(cd "$1" && pwd -P)" | awk -v want="$OPS" '
        BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) c[w[i]] = 0 }
        /per-op statistics/ { on = 1; next }
        on && $1 ~ /:$/ { op = substr($1, 1, length($1) - 1); if (op in c) c[op] = $2 }
        END { s = "{"; for (i = 1; i <= n; i++) s = s (i > 1 ? ", " : "") "\"" w[i] "\": " c[w[i]]; print s "}" }'
}

# server_delegs SERVER: the delegations the server holds/granted, as JSON
server_delegs() {
    local line
    if [ "$1" = nfsrdmad ]; then
        nfsrdmad_dump
        line=$(grep -o 'stats: nfs4_delegations .*' "$NFSRDMAD_LOG" | tail -1)
        [ -n "$line" ] || { echo null; return; }
        # "held=1 write=0 granted=3 ..." -> {"held": 1, "write": 0, "granted": 3, ...}
        echo "${line#stats: nfs4_delegations }" | sed 's/ /, /g; s/\([a-z_]*\)=\([0-9]*\)/"\1": \2/g; s/^/{/; s/$/}/'
    else
        echo "{\"held\": $(cat /proc/fs/nfsd/clients/*/states 2>/dev/null | grep -c 'type: deleg')}"
    fi
}

# fio_pass CONFIG PHASE LOOPS DIR: the job over DIR, LOOPS passes; fio JSON in $RES
fio_pass() {
    local t0
    t0=$(now)
    DIR=$4 DFILES=$FILES FSIZE=$SIZE LOOPS=$3 check "$1: fio $2 ($3 x $FILES files)" \
        timeout 900 fio --eta=never --output-format=json --output="$RES/$1.$2.json" /vmtest/jobs/deleg-orc.fio
    note "$1: $2: $(since "$t0") s wall (fio start included)"
}

# run_config CONFIG SERVER SRC OPTS TRANSPORT
run_config() {
    local config=$1 server=$2 src=$3 opts=$4 transport=$5 dir t0 warm
    local before cold after s0 s1 c0 c1 c2
    step "$config: $FILES files x $SIZE B, 1 cold + $PASSES warm passes; $src ($opts)"
    dir=$EXPORT/$config
    # the files, on the server's side (fio must not lay them out through the mount)
    check "$config: $FILES files made on the export" python3 -c 'import os, sys
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d)
for i in range(n):
    with open(os.path.join(d, f"f.{i}"), "wb") as f:
        f.write(os.urandom(size))
with open(d + ".warmup", "w") as f:
    f.write("warm-up\n")' "$dir" "$FILES" "$SIZE" || { echo "could not make the files" > "$RES/$config.na"; return 1; }
    sync
    if ! check "$config: mount" nfs_mount "$src" $MNT "$opts"; then
        echo "mount failed" > "$RES/$config.na"; rm -rf "$dir" "$dir.warmup"; return 1
    fi
    check "$config: transport is $transport" assert_mount_transport $MNT "$transport"
    # Cold caches (client and server: one kernel), dropped before the warm-up open so that
    # no delegation of it is given back (an evicted inode returns its delegation).
    sync; echo 3 > /proc/sys/vm/drop_caches
    # One open of another file before anything is timed: an OPEN in a grace period waits it
    # out, and the server probes the callback path (no delegation before it answers).
    t0=$(now)
    check "$config: warm-up open" bash -c "read -r x < '$MNT/$config.warmup'"
    note "$config: warm-up open: $(since "$t0") s"
    sleep 2
    s0=$(server_delegs "$server")
    before=$(op_counts $MNT)
    c0=$(cpu_json "$server")
    fio_pass "$config" cold 1 "$MNT/$config"
    c1=$(cpu_json "$server")
    cold=$(op_counts $MNT)
    fio_pass "$config" warm "$PASSES" "$MNT/$config"
    c2=$(cpu_json "$server")
    after=$(op_counts $MNT)
    s1=$(server_delegs "$server")
    printf '{"files": %s, "size": %s, "passes": %s, "hz": %s, "before": %s, "cold": %s, "warm": %s, "server_before": %s, "server_after": %s, "cpu": {"before": %s, "cold": %s, "warm": %s}}\n' \
        "$FILES" "$SIZE" "$PASSES" "$(getconf CLK_TCK)" "$before" "$cold" "$after" "$s0" "$s1" "$c0" "$c1" "$c2" > "$RES/$config.ops.json"
    note "$config: CPU ticks (server, whole VM) before: $c0; after the cold pass: $c1; after the warm passes: $c2"
    note "$config: calls before: $before"
    note "$config: calls after the cold pass: $cold"
    note "$config: calls after the warm passes: $after"
    note "$config: server delegations before: $s0; after: $s1"
    _mountstats_block "$(cd $MNT && pwd -P)" > "$RES/$config.mountstats.txt"
    mount_op_summary $MNT | sed 's/^/    /'
    t0=$(now)
    check "$config: umount" nfs_umount $MNT
    note "$config: umount (delegations returned): $(since "$t0") s"
    rm -rf "$dir" "$dir.warmup"
}

# configs SERVER MODE TCP_SRC RDMA_SRC TCP_PORT RDMA_PORT: every transport of one server mode
configs() {
    local server=$1 mode=$2 tsrc=$3 rsrc=$4 tport=$5 rport=$6 t
    for t in "${TRANSPORTS[@]}"; do
        case $t in
            tcp) run_config "$server-tcp-$mode" "$server" "$tsrc" "vers=4.1,proto=tcp,port=$tport" tcp ;;
            rdma)
                if [ -n "$rport" ]; then
                    run_config "$server-rdma-$mode" "$server" "$rsrc" "vers=4.1,proto=rdma,port=$rport" rdma
                else
                    echo "no RDMA listener" > "$RES/$server-rdma-$mode.na"
                fi ;;
        esac
    done
}
not_run() {  # SERVER MODE WHY
    local t
    for t in tcp rdma; do echo "$3" > "$RES/$1-$t-$2.na"; done
}

step "setup: $FILES files x $SIZE B, 1 cold + $PASSES warm passes, NFSv4.1 over ${TRANSPORTS[*]}"
check "tools" need_cmd fio python3 mkfs.ext4 rpc.nfsd || exit 1
check "rxe_setup" rxe_setup || exit 1
check "ext4 export" make_ext4 $EXPORT 512 || exit 1
check "NFS client modules" nfs_client_modules || exit 1
check "rpcbind" rpcbind_start || exit 1
read -r LEASES0 < /proc/sys/fs/leases-enable
note "fs.leases-enable at boot: $LEASES0"

# knfsd_mode MODE LEASES: the kernel nfsd started with leases-enable=LEASES, every transport
knfsd_mode() {
    local mode=$1
    echo "$2" > /proc/sys/fs/leases-enable
    step "kernel nfsd, $mode (fs.leases-enable=$2)"
    if check "knfsd_start ($mode)" knfsd_start $EXPORT; then
        # Its grace period (-G 10) would hold the first OPEN ~10 s: end it (no client to reclaim).
        echo Y > /proc/fs/nfsd/v4_end_grace 2>/dev/null || note "no v4_end_grace: the warm-up open waits out the grace period"
        # v4: the export is the kernel nfsd's pseudo-root (fsid=0), mounted as "/".
        configs knfsd "$mode" "127.0.0.1:/" "$RXE_IP:/" "$KNFSD_PORT" "$KNFSD_RDMA_PORT"
        check "knfsd_stop ($mode)" knfsd_stop
    else
        not_run knfsd "$mode" "the kernel nfsd did not start"
    fi
    echo "$LEASES0" > /proc/sys/fs/leases-enable
}
knfsd_mode deleg 1
knfsd_mode nodeleg 0

# nfsrdmad on every address (RDMA on 20050, not the kernel nfsd's 20049 just stopped),
# mounted at the export's path; a fresh state directory per start (no previous clients, so
# no grace period).
NFSRDMAD_ADDR=0.0.0.0
HAS_RDMA=0
"$NFSRDMAD_BIN" --help 2>&1 | grep -q -- '--rdma' && HAS_RDMA=1
RDMA_ARGS=() rport=
if [ $HAS_RDMA = 1 ]; then
    read -r -a RDMA_ARGS <<< "--rdma $RXE_IP:$NFSRDMAD_RDMA_PORT"
    rport=$NFSRDMAD_RDMA_PORT
fi
# nfsrdmad_mode MODE CONFIG_FILE
nfsrdmad_mode() {
    local mode=$1
    step "nfsrdmad, $mode ($(tr '\n' ' ' < "$2"))"
    NFSRDMAD_STATE=/tmp/nfsrdmad-state-$mode
    if check "nfsrdmad_start ($mode)" nfsrdmad_start $EXPORT "${RDMA_ARGS[@]}" --config "$2"; then
        configs nfsrdmad "$mode" "127.0.0.1:$EXPORT" "$RXE_IP:$EXPORT" "$NFSRDMAD_PORT" "$rport"
        check "nfsrdmad exits 0 on SIGTERM ($mode)" nfsrdmad_stop
    else
        not_run nfsrdmad "$mode" "nfsrdmad did not start"
    fi
}
nfsrdmad_mode deleg "$(nfs4_config)"
cp "$(nfs4_config)" /tmp/nfsrdmad-v4-nodeleg.yaml
echo "  delegations: false" >> /tmp/nfsrdmad-v4-nodeleg.yaml
nfsrdmad_mode nodeleg /tmp/nfsrdmad-v4-nodeleg.yaml

step "nfsrdmad log: warnings and errors"
# (the log's lines: "DATE TIME LEVEL message")
grep -E '^[-0-9]+ [:.0-9]+ (warning|error|critical) ' "$NFSRDMAD_LOG" | head -40 | sed 's/^/    /'
note "$(grep -cE '^[-0-9]+ [:.0-9]+ (warning|error|critical) ' "$NFSRDMAD_LOG") warning/error lines in all"
grep -E 'stats: (nfs4_delegations|fds) ' "$NFSRDMAD_LOG" | tail -4 | sed 's/^/    /'

step "results"
python3 /vmtest/table.py --deleg "$RES" | tee "$VMTEST_OUT/table.txt"
vm_summary
