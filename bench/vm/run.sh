#!/usr/bin/env bash
# bench/vm/run.sh - NFS benchmark in the test VM: the same jobs (fio: sequential write and
# read with 1 MiB requests, 4 KiB random read and write at queue depth 16, metadata
# create/stat/unlink; jobs/serial-meta.py: create, stat, rename, remove one at a time) through
# the Linux NFS client (NFSv3 and NFSv4.1) against nfsrdmad and against the kernel nfsd, over
# TCP and over RDMA (Soft-RoCE), in ONE VM boot, printed as a side-by-side table with ratios.
#
# A benchmark, not a test: it is not registered in ctest. Under TCG emulation the absolute
# numbers are meaningless; track the ratios nfsrdmad/knfsd.
#
# Usage: bench/vm/run.sh [--build DIR] [--vm-dir DIR] [--size SIZE] [--runtime SECONDS] [--nrfiles N]
#                        [--vers 3|4.1] [--split] [--out DIR]
#        bench/vm/run.sh --load [--clients N] [--mb MB] [--depth D] [--threads T] [--files F]
#                        [--proto rdma|tcp] [--mem SIZE] [--build DIR] [--vm-dir DIR] [--out DIR]
#        bench/vm/run.sh --deleg [--deleg-files N] [--deleg-size BYTES] [--passes P]
#                        [--build DIR] [--vm-dir DIR] [--out DIR]
#        bench/vm/run.sh --gss [--gss-vers 3|4.1] [--proto rdma|tcp] [--size SIZE]
#                        [--runtime SECONDS] [--build DIR] [--vm-dir DIR] [--out DIR]
#        bench/vm/run.sh --ab NAME=DAEMON [--ab NAME=DAEMON ...] [--rounds N] [--vers 3|4.1]
#                        [--proto tcp|rdma] [--threads T] [--files F] [--knfsd]
#                        [--job storm|randread|serial|lookup|getattr|unlink|listing|deepwrite|deepread|fanout]
#                        [--clients N] [--mb MB] [--mem SIZE]
#                        [--size SIZE] [--runtime S] [--depth D] [--split] [--perf|--perf-graph]
#                        [--out DIR]
#   --build DIR    CMake build tree (default <repo>/build): daemon DIR/daemon/nfsrdmad, VM
#                  files in DIR/vm (tests/vm/prepare.sh makes them if needed)
#   --size SIZE    file size of the data jobs (default 128M)
#   --runtime S    seconds per data job (default 15)
#   --nrfiles N    files per metadata job (default 1000)
#   --vers V       one NFS version only (default: 3 and 4.1)
#   --perf         (--ab) profile the whole guest while each run is measured (perf record
#                  -a, 499 Hz): results/perf-NAME-ROUND.txt, by command, object and symbol.
#                  The sampling slows every server; read a profiled boot's rates as such.
#   --perf-graph   --perf with call graphs: the callers of the hottest symbols as well
#   --split        (this and --ab) the client's jobs on vCPU 1, every thread of the server
#                  (nfsrdmad, or the kernel nfsd's threads; io_floor) on vCPU 0: as if client
#                  and server were two hosts. Sharing vCPUs charges a user-space server an
#                  address-space switch (under TCG a whole TLB flush) per hop between it and
#                  the client, which a kernel thread never pays (bench/vm/README.md, "Client
#                  and server apart").
#   Beside the throughputs, the server's CPU seconds per GiB of every data job (the daemon's
#   process, or the nfsd threads), and over RDMA the floor: io_floor (bench/vm/io_floor.cpp,
#   built as DIR/bench/io_floor) moving the same bytes between the exported file and a
#   registered buffer with pread/pwrite alone, right after the job (issue 13).
#   --vm-dir DIR   VM files (default DIR/vm of --build)
#   --out DIR      run directory (default DIR/bench-vm, DIR/bench-vm-load for --load,
#                  DIR/bench-vm-deleg for --deleg); the table
#                  is in DIR/out/table.txt, the fio and load JSON files in DIR/out/results/
# Load mode (issue 16; guest-load.sh, the functions of tests/vm/lib/load.sh), kernel nfsd and
# nfsrdmad on one boot, side by side:
#   --load         N mounts (--clients, 16), each of its own server address, --mb MiB (2)
#                  written + synced + read back through each in parallel, md5-checked; fio 1 MiB
#                  O_DIRECT at --depth (128) writes and reads over one mount (both over --proto,
#                  rdma); --threads (4) x --files (500) files created with fsync over RDMA and
#                  TCP. Wall time, MiB/s, files/s, worst completion, reconnects. --mem (3G).
# A/B mode (guest-ab.sh): two or more daemon binaries (copy each build somewhere first) on
# the create storm, in one boot, taking turns for --rounds (4) rounds in alternating order:
#   --ab NAME=DAEMON  a build, under a name (repeat; the first is the base of the ratios);
#                  --threads (4) x --files (300 here) files with fsync over --proto (tcp)
#                  and NFSv--vers (3); --knfsd adds the kernel nfsd once per round. Files/s
#                  and the guest's CPU per file, per round, and each build's geometric mean
#                  over the first's, with the rounds it was ahead in and a 95 % interval
#                  (Student's t over the rounds' log ratios: a change is more than the
#                  boot's noise only when the interval leaves 1). For a change too small to
#                  show between boots.
#   --job randread  instead of the storm: jobs/rand-read.fio (4 KiB, O_DIRECT, iodepth 16)
#                  for --runtime (15) s over a --size (128M) file made on the server (in its
#                  page cache); IOPS and the guest's CPU per READ.
#   --job serial   instead: jobs/serial-meta.py (create, stat, rename, remove, one at a
#                  time) for --runtime (15) s; loops/s and the guest's CPU per loop.
#   --job lookup   instead: jobs/serial-lookup.py (stat() of 100 names the server knows,
#                  over a lookupcache=none mount: one LOOKUP each) for --runtime (15) s;
#                  LOOKUPs/s and the guest's CPU per LOOKUP.
#   --job getattr  the same over an actimeo=0 mount: each stat() revalidates the file's
#                  attributes (GETATTR); stat()s/s and the guest's CPU per stat().
#   --job unlink   instead: jobs/serial-unlink.py removes --files files made on the server,
#                  caches dropped first (a LOOKUP and a REMOVE each); files/s. Noisy: one
#                  build against itself moves up to 2x between runs (bench/vm/README.md).
#   --job listing  instead: jobs/serial-listing.py lists --files files made on the server
#                  with their attributes (`ls -l`, the listing made stale before each, so
#                  READDIRPLUS) for --runtime (15) s; entries/s and the guest's CPU per entry.
#   --job deepwrite, --job deepread  instead: issue 16's deep queue, fio 1 MiB O_DIRECT at
#                  --depth (128) for --runtime (15) s over a --size (128M) file (deepread
#                  writes it first, unmeasured); MiB/s, the worst completion, CPU per MiB.
#   --job fanout   instead: issue 16's many mounts, --clients (16) mounts each of its own
#                  server address, --mb (2) MiB written with fsync through each in parallel
#                  and read back; write MiB/s, the slowest mount's write, CPU per MiB moved.
#                  Give the guest --mem (3G) enough: 6G for 200 mounts.
# Delegation mode (issue 11; guest-deleg.sh, jobs/deleg-orc.fio), kernel nfsd and nfsrdmad on
# one boot, NFSv4.1 over TCP and RDMA, each WITH and WITHOUT delegations (knfsd:
# fs.leases-enable=1/0; nfsrdmad: `nfsv4: {delegations: true/false}`):
#   --deleg        one process opens, reads whole and closes each of --deleg-files (200) files of
#                  --deleg-size (4096) bytes, made on the server's side: one cold pass after
#                  dropping caches, then --passes (10) warm passes, where a client holding read
#                  delegations opens locally. Opens/s per configuration, ratios nfsrdmad/knfsd,
#                  and the OPEN/CLOSE/READ/DELEGRETURN calls of the mount and the delegations the
#                  server holds, to show whether delegations were in fact used. ~5-8 minutes.
# Kerberos mode (issue 12; guest-gss.sh), kernel nfsd and nfsrdmad on one boot, a KDC, gssd
# and (for the kernel nfsd) svcgssd in the guest:
#   --gss          sequential 1 MiB write and read and 4 KiB random read with sec=sys, krb5,
#                  krb5i and krb5p, NFS --gss-vers (4.1) over --proto (rdma): MiB/s or IOPS and
#                  the server's CPU seconds per GiB, side by side. ~8-10 minutes at the defaults
#                  --size 64M --runtime 10.
# Env: NFSRDMAD_BIN overrides the daemon path. Takes ~6-10 minutes on a 2-core host.
set -euo pipefail

# The whole script is one compound command: bash parses it completely before running it,
# so editing this file while it runs (a VM can run for many minutes) cannot derail it.
{

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$REPO/build
SIZE=128M RUNTIME=15 NRFILES=1000 OUT= VM_DIR= LOAD=0 DELEG=0 GSS=0 GSS_VERS=4.1 SIZE_SET=0 RUNTIME_SET=0
DELEG_FILES=200 DELEG_SIZE=4096 PASSES=10
CLIENTS=16 MB=2 DEPTH=128 THREADS=4 FILES=500 PROTO=rdma MEM=3G
AB_BINS=() ROUNDS=4 VERS=3 VERS_SET=0 KNFSD=0 FILES_SET=0 PROTO_SET=0 AB_JOB=storm SPLIT=0 PERF=0
while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD=$2; shift 2 ;;
        --size) SIZE=$2; SIZE_SET=1; shift 2 ;;
        --runtime) RUNTIME=$2; RUNTIME_SET=1; shift 2 ;;
        --gss) GSS=1; shift ;;
        --gss-vers) GSS_VERS=$2; shift 2 ;;
        --nrfiles) NRFILES=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --vm-dir) VM_DIR=$2; shift 2 ;;
        --load) LOAD=1; shift ;;
        --clients) CLIENTS=$2; shift 2 ;;
        --mb) MB=$2; shift 2 ;;
        --depth) DEPTH=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --files) FILES=$2; FILES_SET=1; shift 2 ;;
        --proto) PROTO=$2; PROTO_SET=1; shift 2 ;;
        --ab) AB_BINS+=("$2"); shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --vers) VERS=$2; VERS_SET=1; shift 2 ;;
        --knfsd) KNFSD=1; shift ;;
        --split) SPLIT=1; shift ;;
        --perf) PERF=1; shift ;;
        --perf-graph) PERF=g; shift ;;
        --job) AB_JOB=$2; shift 2 ;;
        --mem) MEM=$2; shift 2 ;;
        --deleg) DELEG=1; shift ;;
        --deleg-files) DELEG_FILES=$2; shift 2 ;;
        --deleg-size) DELEG_SIZE=$2; shift 2 ;;
        --passes) PASSES=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench/vm/run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
BUILD=$(cd "$BUILD" && pwd)
BIN=${NFSRDMAD_BIN:-$BUILD/daemon/nfsrdmad}
[ -x "$BIN" ] || { echo "bench/vm/run.sh: no daemon at $BIN (build it: cmake --build $BUILD --target nfsrdmad)" >&2; exit 2; }
VM_DIR=${VM_DIR:-$BUILD/vm}
case "$PROTO" in rdma|tcp) ;; *) echo "bench/vm/run.sh: --proto rdma or tcp" >&2; exit 2 ;; esac

"$REPO/tests/vm/prepare.sh" "$VM_DIR"
# Other work on the host skews everything (the VM's 2 vCPUs are emulated on its cores).
echo "host load average before the run: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
rc=0
if [ ${#AB_BINS[@]} -gt 0 ]; then
    OUT=${OUT:-$BUILD/bench-vm-ab}
    [ $FILES_SET = 1 ] || FILES=300
    [ $PROTO_SET = 1 ] || PROTO=tcp
    # The guest runs the host's binaries (its root is the host's, over 9p).
    [ "$PERF" = 0 ] || command -v perf > /dev/null \
        || { echo "bench/vm/run.sh: --perf needs perf on this host (apt-get install linux-perf)" >&2; exit 2; }
    for b in "${AB_BINS[@]}"; do
        case $b in
            *=*) [ -x "${b#*=}" ] || { echo "bench/vm/run.sh: --ab $b: no executable ${b#*=}" >&2; exit 2; } ;;
            *) echo "bench/vm/run.sh: --ab NAME=DAEMON, not $b" >&2; exit 2 ;;
        esac
    done
    "$REPO/tests/vm/boot.sh" --vm-dir "$VM_DIR" --run-dir "$OUT" --mem "$MEM" --timeout 3600 \
        -e "AB_CLIENTS=$CLIENTS" -e "AB_MB=$MB" \
        -e "AB_BINS=${AB_BINS[*]}" -e "AB_ROUNDS=$ROUNDS" -e "AB_PROTO=$PROTO" -e "AB_VERS=$VERS" \
        -e "AB_THREADS=$THREADS" -e "AB_FILES=$FILES" -e "AB_KNFSD=$KNFSD" \
        -e "AB_JOB=$AB_JOB" -e "AB_SIZE=$SIZE" -e "AB_RUNTIME=$RUNTIME" -e "AB_SPLIT=$SPLIT" -e "AB_DEPTH=$DEPTH" -e "AB_PERF=$PERF" \
        "$HERE/guest-ab.sh" "$HERE/cpu.sh" "$HERE/jobs/rand-read.fio" "$HERE/jobs/serial-meta.py" "$HERE/jobs/serial-lookup.py" "$HERE/jobs/serial-unlink.py" "$HERE/jobs/serial-listing.py" || rc=$?
elif [ $GSS = 1 ]; then
    OUT=${OUT:-$BUILD/bench-vm-gss}
    [ $SIZE_SET = 1 ] || SIZE=64M
    [ $RUNTIME_SET = 1 ] || RUNTIME=10
    "$REPO/tests/vm/boot.sh" --vm-dir "$VM_DIR" --run-dir "$OUT" --mem 3G --timeout 3600 \
        -e "NFSRDMAD_BIN=$BIN" -e "BENCH_SIZE=$SIZE" -e "BENCH_RUNTIME=$RUNTIME" \
        -e "GSS_VERS=$GSS_VERS" -e "GSS_PROTO=$PROTO" \
        "$HERE/guest-gss.sh" "$HERE/jobs" "$HERE/table.py" "$HERE/cpu.sh" || rc=$?
elif [ $DELEG = 1 ]; then
    OUT=${OUT:-$BUILD/bench-vm-deleg}
    "$REPO/tests/vm/boot.sh" --vm-dir "$VM_DIR" --run-dir "$OUT" --mem 2G --timeout 1800 \
        -e "NFSRDMAD_BIN=$BIN" -e "DELEG_FILES=$DELEG_FILES" -e "DELEG_SIZE=$DELEG_SIZE" \
        -e "DELEG_PASSES=$PASSES" \
        "$HERE/guest-deleg.sh" "$HERE/jobs" "$HERE/table.py" "$HERE/cpu.sh" || rc=$?
elif [ $LOAD = 1 ]; then
    OUT=${OUT:-$BUILD/bench-vm-load}
    "$REPO/tests/vm/boot.sh" --vm-dir "$VM_DIR" --run-dir "$OUT" --mem "$MEM" --timeout 3600 \
        -e "NFSRDMAD_BIN=$BIN" -e "LOAD_CLIENTS=$CLIENTS" -e "LOAD_MB=$MB" -e "LOAD_DEPTH=$DEPTH" \
        -e "LOAD_THREADS=$THREADS" -e "LOAD_FILES=$FILES" -e "LOAD_PROTO=$PROTO" \
        "$HERE/guest-load.sh" "$HERE/table.py" || rc=$?
else
    OUT=${OUT:-$BUILD/bench-vm}
    FLOOR_BIN=$BUILD/bench/io_floor
    [ -x "$FLOOR_BIN" ] || { echo "bench/vm/run.sh: no $FLOOR_BIN (build it: cmake --build $BUILD --target io_floor)" >&2; exit 2; }
    BENCH_VERS="3 4.1"; [ $VERS_SET = 1 ] && BENCH_VERS=$VERS
    "$REPO/tests/vm/boot.sh" --vm-dir "$VM_DIR" --run-dir "$OUT" --mem 3G --timeout 3600 \
        -e "NFSRDMAD_BIN=$BIN" -e "BENCH_SIZE=$SIZE" -e "BENCH_RUNTIME=$RUNTIME" -e "BENCH_NRFILES=$NRFILES" \
        -e "IO_FLOOR_BIN=$FLOOR_BIN" -e "BENCH_VERS=$BENCH_VERS" -e "BENCH_SPLIT=$SPLIT" \
        "$HERE/guest-bench.sh" "$HERE/jobs" "$HERE/table.py" "$HERE/cpu.sh" || rc=$?
fi
echo
echo "host load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -s "$OUT/out/table.txt" ]; then
    cat "$OUT/out/table.txt"
    echo
    echo "results: $OUT/out/results/"
else
    echo "bench/vm/run.sh: no table produced (guest exit status $rc); see the console above" >&2
fi
exit $rc
exit
}
