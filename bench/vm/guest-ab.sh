#!/bin/bash
# guest-ab.sh - runs IN THE VM (bench/vm/run.sh --ab boots it): two or more nfsrdmad builds
# against each other in one boot, on the create storm (AB_THREADS threads x AB_FILES files,
# each created, written 100 bytes, fsync'd and closed: tests/vm/lib/load.sh load_storm), the
# builds taking turns round after round in alternating order (round 1 in the order given,
# round 2 reversed, ...), the kernel nfsd once per round when AB_KNFSD=1. Between boots the
# same build moves by tens of per cent; inside one boot, with the order alternated, a few per
# cent show. Per run: files/s, the worst create, and the guest's CPU per file (every vCPU's
# busy ticks, the client's and the kernel's work included: what the server costs the box).
# AB_JOB=serial runs /vmtest/serial-meta.py (create, stat, rename, remove, one at a time) for
# AB_RUNTIME seconds instead: loops/s and the guest's CPU per loop.
# AB_JOB=lookup runs /vmtest/serial-lookup.py (stat() of 100 names the server knows, in a
# loop, over a lookupcache=none mount: one LOOKUP each) instead: LOOKUPs/s and CPU per LOOKUP.
# AB_JOB=getattr the same over an actimeo=0 mount (each stat() revalidates the file's
# attributes: a GETATTR) instead: stat()s/s and CPU per stat().
# AB_JOB=listing lists AB_FILES files made on the server side with their attributes, as
# `ls -l` does (/vmtest/serial-listing.py: the listing made stale before each, so each is
# READDIRPLUS calls), for AB_RUNTIME seconds: entries/s and CPU per entry.
# AB_JOB=unlink removes AB_FILES files made on the server side, one at a time
# (/vmtest/serial-unlink.py), after dropping the guest's caches, as the bench's meta-unlink
# job: a LOOKUP and a REMOVE each; files/s and CPU per file.
# AB_JOB=randread runs 4 KiB random reads instead (/vmtest/rand-read.fio: O_DIRECT, iodepth
# 16, AB_RUNTIME seconds) over an AB_SIZE file made on the server, so in its page cache:
# IOPS and the guest's CPU per READ.
# AB_JOB=deepwrite / deepread runs issue 16's deep queue instead (tests/vm/lib/load.sh
# load_fio: fio 1 MiB O_DIRECT libaio at AB_DEPTH, default 128, for AB_RUNTIME seconds over
# a file of AB_SIZE; deepread writes it first, unmeasured): MiB/s, the worst completion and
# the guest's CPU per MiB.
# AB_JOB=fanout runs issue 16's many mounts instead: AB_CLIENTS (200) mounts, each of its own
# server address (tests/vm/lib/load.sh load_mount_all), AB_MB (2) MiB written and fsync'd
# through each in parallel, then read back (load_roundtrip): write MiB/s, the slowest
# mount's write, and the guest's CPU per MiB written and read. Give the guest memory for
# it (run.sh --mem 6G for 200).
# Every job also records the server's own CPU per unit (cpu.sh server_cpu: nfsrdmad's process,
# whose system calls include the Soft-RoCE and loopback TCP work they start; or the nfsd
# threads, without the softirq and kworker time the kernel spends for them), summed up per
# build under the table.
# AB_PERF=1 (run.sh --perf): a profile of the whole guest during each measured run
# (measure_begin below), in results/perf-NAME-ROUND.txt; AB_PERF=g (--perf-graph) with the
# callers of the hottest symbols (the kernel's stacks; nfsrdmad's own only as deep as its
# frame pointers go).
# Every nfsrdmad run also leaves results/engine-NAME-ROUND.txt: its "stats: engine" line
# (reactor sleeps and wake-ups, worker hand-overs) just before and just after the run.
# Results: $VMTEST_OUT/results/ab.json; table.txt has each round and each build's geometric
# mean of files/s (IOPS) over the first build's, round by round.
# Env: AB_BINS ("NAME=PATH NAME=PATH..."), AB_ROUNDS (4), AB_PROTO (tcp), AB_VERS (3 or 4.1),
# AB_THREADS (4), AB_FILES (300), AB_KNFSD (0), AB_JOB (storm), AB_SIZE (128M),
# AB_RUNTIME (15), AB_DEPTH (128), AB_CLIENTS (200), AB_MB (2), AB_SPLIT (0; 1: the client's job on vCPU 1, the servers' threads on vCPU 0).
source "$VMTEST_LIB/common.sh"
source "$VMTEST_LIB/rxe.sh"
source "$VMTEST_LIB/nfs.sh"
source "$VMTEST_LIB/load.sh"
source /vmtest/cpu.sh

read -r -a BINS <<< "${AB_BINS:?AB_BINS: NAME=PATH ...}"
ROUNDS=${AB_ROUNDS:-4} PROTO=${AB_PROTO:-tcp} VERS=${AB_VERS:-3}
THREADS=${AB_THREADS:-4} FILES=${AB_FILES:-300}
JOB=${AB_JOB:-storm} SIZE=${AB_SIZE:-128M} RUNTIME=${AB_RUNTIME:-15} DEPTH=${AB_DEPTH:-128}
CLIENTS=${AB_CLIENTS:-200} MB=${AB_MB:-2}
export BENCH_SPLIT=${AB_SPLIT:-0}  # cpu.sh's pin_server, pin_client
EXPORT=/srv/ab
MNT=/mnt/ab
RES=$VMTEST_OUT/results
NFSRDMAD_RDMA_PORT=20050
mkdir -p "$RES"
: > "$RES/ab.lines"

# opts SERVER: mount options for SERVER over PROTO in VERS
opts() {
    local port mport=$KNFSD_MOUNTD_PORT
    case "$1-$PROTO" in
        knfsd-tcp) port=$KNFSD_PORT ;; knfsd-rdma) port=$KNFSD_RDMA_PORT ;;
        *-tcp) port=$NFSRDMAD_PORT; mport=$NFSRDMAD_MOUNT_PORT ;;
        *-rdma) port=$NFSRDMAD_RDMA_PORT; mport=$NFSRDMAD_MOUNT_PORT ;;
    esac
    if [ "$VERS" = 3 ]; then
        echo "vers=3,proto=$PROTO,port=$port,mountport=$mport,mountproto=tcp,nolock"
    else
        echo "vers=$VERS,proto=$PROTO,port=$port"
    fi
}
# src SERVER: what to mount (the kernel nfsd's NFSv4 pseudo-root is the export, fsid=0)
src() {
    local host=127.0.0.1 path=$EXPORT
    [ "$PROTO" = rdma ] && host=$RXE_IP
    [ "$1" = knfsd ] && [ "$VERS" != 3 ] && path=/
    echo "$host:$path"
}

# measure_begin NAME ROUND / measure_end: around the measured part of every job. The
# client's placement (--split), and with AB_PERF=1 a system-wide profile of the guest
# (perf record -a, cpu-clock: TCG has no PMU) summed up by command, object and symbol in
# $RES/perf-NAME-ROUND.txt. The sampling costs every server alike, not nothing: a
# profiled boot's rates are not the bench's.
PERF_PID=
PERF_OUT=
# engine_stats NAME ROUND WHEN: nfsrdmad's "stats: engine" line (its reactors' sleeps and
# wake-ups, the workers' hand-overs) appended to $RES/engine-NAME-ROUND.txt, so that two
# readings around a run give them per unit; nothing for the kernel nfsd.
engine_stats() {
    [ "$1" = knfsd ] && return 0
    nfsrdmad_dump >/dev/null 2>&1 || return 0
    echo "$3 $(grep 'stats: engine ' "$NFSRDMAD_LOG" | tail -1)" >> "$RES/engine-$1-$2.txt"
}
measure_begin() {
    engine_stats "$1" "$2" begin
    STATS_AT=("$1" "$2")
    pin_client
    local graph=()
    case "${AB_PERF:-0}" in 1) ;; g) graph=(-g) ;; *) return 0 ;; esac
    PERF_OUT=$RES/perf-$1-$2
    perf record -a "${graph[@]}" -e cpu-clock -F 499 -o "$PERF_OUT.data" > "$PERF_OUT.log" 2>&1 < /dev/null &
    PERF_PID=$!
    sleep 5  # under TCG perf takes seconds to set up; a job started sooner goes unsampled
}
measure_end() {
    unpin_client
    engine_stats "${STATS_AT[@]}" end
    [ -n "$PERF_PID" ] || return 0
    kill -INT "$PERF_PID"
    wait "$PERF_PID"
    PERF_PID=
    { echo "# by command and object"
      perf report -i "$PERF_OUT.data" --stdio --no-children --sort comm,dso --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$'
      echo "# by command and symbol"
      perf report -i "$PERF_OUT.data" --stdio --no-children --sort comm,sym --percent-limit 0.3 -g none 2>/dev/null | grep -v '^#' | grep -v '^$'
      # The server's threads alone (nfsrdmad's loops and workers, or the nfsd threads), by
      # symbol: its samples spread over many threads, each under the limit above.
      local comms
      comms=$(perf report -i "$PERF_OUT.data" --stdio --no-children --sort comm -g none 2>/dev/null |
          awk '$1 ~ /%$/ {print $2}' | grep -E '^(worker-|reactor|nfsd|nfsrdmad|rdma-|tcp-)' | paste -sd, -)
      if [ -n "$comms" ]; then
          echo "# the server's threads, by object and symbol, in per cent of their samples ($comms)"
          perf report -i "$PERF_OUT.data" --stdio --no-children --comms "$comms" --percentage relative --sort dso,sym --percent-limit 0.2 -g none 2>/dev/null | grep -v '^#' | grep -v '^$'
      fi
      if [ "$AB_PERF" = g ]; then
          echo "# the symbols above 0.8 %, with their callers"
          perf report -i "$PERF_OUT.data" --stdio --no-children --sort comm,sym --percent-limit 0.8 -g caller,0.5,callee,function,percent --max-stack 16 2>/dev/null | grep -v '^#' | grep -v '^$'
      fi
    } > "$PERF_OUT.txt"
    rm -f "$PERF_OUT.data" "$PERF_OUT.log"
}

# kind SERVER: what server_cpu (cpu.sh) counts for it: knfsd, or nfsrdmad (any build)
kind() { if [ "$1" = knfsd ]; then echo knfsd; else echo nfsrdmad; fi; }

# storm NAME ROUND: one storm against the running server NAME
storm() {
    local name=$1 r=$2 b0 b1 s0 s1 out=/tmp/ab-storm.json
    check "$name round $r: mount" nfs_mount "$(src "$name")" "$MNT" "$(opts "$name")" || return
    measure_begin "$name" "$r"
    b0=$(vm_busy) s0=$(server_cpu "$(kind "$name")")
    load_storm "$MNT/ab-$name-$r" "$THREADS" "$FILES" "$out" > /dev/null
    b1=$(vm_busy) s1=$(server_cpu "$(kind "$name")")
    measure_end
    python3 - "$name" "$r" "$out" $((b1 - b0)) $((THREADS * FILES)) $((s1 - s0)) >> "$RES/ab.lines" <<'PY'
import json, sys
name, r, path, ticks, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
server = int(sys.argv[6])
d = json.load(open(path))
print(json.dumps({"name": name, "round": r, "files_per_s": d["files_per_s"], "errors": d["errors"],
                  "worst_s": d["worst_s"], "cpu_us_per_file": round(ticks * 10000 / n),
                  "server_us_per_file": round(server * 10000 / n)}))
PY
    note "$(tail -1 "$RES/ab.lines")"
    nfs_umount "$MNT"
    rm -rf "${EXPORT:?}/ab-$name-$r"
}

# randread NAME ROUND: 4 KiB random reads of $EXPORT/seq.dat against the running server NAME
randread() {
    local name=$1 r=$2 b0 b1 s0 s1 out=/tmp/ab-randread.json
    check "$name round $r: mount" nfs_mount "$(src "$name")" "$MNT" "$(opts "$name")" || return
    measure_begin "$name" "$r"
    b0=$(vm_busy) s0=$(server_cpu "$(kind "$name")")
    DIR=$MNT SIZE=$SIZE RUNTIME=$RUNTIME fio --output-format=json --output=$out /vmtest/rand-read.fio > /dev/null
    b1=$(vm_busy) s1=$(server_cpu "$(kind "$name")")
    measure_end
    python3 - "$name" "$r" "$out" $((b1 - b0)) $((s1 - s0)) >> "$RES/ab.lines" <<'PY'
import json, sys
name, r, path, ticks = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
server = int(sys.argv[5])
rd = json.load(open(path))["jobs"][0]["read"]
ios = max(rd["total_ios"], 1)
print(json.dumps({"name": name, "round": r, "files_per_s": round(rd["iops"]), "errors": 0,
                  "worst_s": rd["clat_ns"]["max"] / 1e9, "cpu_us_per_file": round(ticks * 10000 / ios),
                  "server_us_per_file": round(server * 10000 / ios)}))
PY
    note "$(tail -1 "$RES/ab.lines")"
    nfs_umount "$MNT"
}
# deep NAME ROUND RW: fio 1 MiB O_DIRECT at $DEPTH (load_fio) against the running server NAME
deep() {
    local name=$1 r=$2 rw=$3 b0 b1 out=/tmp/ab-deep.json
    check "$name round $r: mount" nfs_mount "$(src "$name")" "$MNT" "$(opts "$name")" || return
    # a read needs the file: written first, unmeasured
    [ "$rw" = read ] && { load_fio "$MNT" write "$DEPTH" "$SIZE" 3 /tmp/ab-deep-fill.json > /dev/null
                          check "$name round $r: the file to read" test -s "$MNT/deep.dat" || return; }
    measure_begin "$name" "$r"
    b0=$(vm_busy) s0=$(server_cpu "$(kind "$name")")
    check "$name round $r: fio $rw" load_fio "$MNT" "$rw" "$DEPTH" "$SIZE" "$RUNTIME" "$out"
    b1=$(vm_busy) s1=$(server_cpu "$(kind "$name")")
    measure_end
    python3 - "$name" "$r" "$out" $((b1 - b0)) $((s1 - s0)) >> "$RES/ab.lines" <<'PY'
import json, sys
name, r, path, ticks = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
server = int(sys.argv[5])
d = json.load(open(path))
mib = max(d.get("mib", 0), 1)
print(json.dumps({"name": name, "round": r, "files_per_s": d.get("mibs", 0),
                  "errors": int(d.get("error", 0) != 0), "worst_s": d.get("clat_max_s", 0),
                  "cpu_us_per_file": round(ticks * 10000 / mib),
                  "server_us_per_file": round(server * 10000 / mib)}))
PY
    note "$(tail -1 "$RES/ab.lines")"
    nfs_umount "$MNT"
    rm -f "$EXPORT/deep.dat"
}
# fanout NAME ROUND: $CLIENTS mounts of the running server NAME, each of its own address,
# $MB MiB written (and fsync'd) through each in parallel, then read back (load_roundtrip)
fanout() {
    local name=$1 r=$2 b0 b1 s0 s1 out=/tmp/ab-fanout.json base=/mnt/fanout
    load_mount_all "$CLIENTS" "$EXPORT" "$base" "$(opts "$name"),nosharecache"
    check "$name round $r: $CLIENTS mounts" test "${#LOAD_MOUNTED[@]}" = "$CLIENTS" || {
        load_umount_all "$base"; return; }
    measure_begin "$name" "$r"
    b0=$(vm_busy) s0=$(server_cpu "$(kind "$name")")
    check "$name round $r: $MB MiB through each, exact" load_roundtrip "$base" "$MB" "$out" "${LOAD_MOUNTED[@]}"
    b1=$(vm_busy) s1=$(server_cpu "$(kind "$name")")
    measure_end
    python3 - "$name" "$r" "$out" $((b1 - b0)) $((s1 - s0)) "$((CLIENTS * MB * 2))" >> "$RES/ab.lines" <<'PY'
import json, sys
name, r, path, ticks, server, mib = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
try:
    d = json.load(open(path))
except (OSError, ValueError):
    d = {}
print(json.dumps({"name": name, "round": r, "files_per_s": d.get("write_mibs", 0),
                  "errors": int(d.get("errors", 1) != 0), "worst_s": d.get("worst_write_s", 0),
                  "read_mibs": d.get("read_mibs", 0),
                  "cpu_us_per_file": round(ticks * 10000 / mib),
                  "server_us_per_file": round(server * 10000 / mib)}))
PY
    note "$(tail -1 "$RES/ab.lines")"
    load_umount_all "$base"
    rm -f "$EXPORT"/load-*.bin
}
# timed NAME ROUND SCRIPT DIR MOUNT_EXTRA RATE COUNT: python3 /vmtest/SCRIPT $MNT/DIR
# $RUNTIME OUT against the running server NAME, mounted with MOUNT_EXTRA added to its
# options; records OUT's RATE (per second) and the guest's CPU per COUNT
timed() {
    local name=$1 r=$2 script=$3 dir=$4 extra=$5 rate=$6 count=$7 b0 b1 s0 s1 out=/tmp/ab-timed.json
    local kind
    kind=$(kind "$name")
    check "$name round $r: mount" nfs_mount "$(src "$name")" "$MNT" "$(opts "$name")$extra" || return
    measure_begin "$name" "$r"
    b0=$(vm_busy) s0=$(server_cpu $kind)
    python3 "/vmtest/$script" "$MNT/$dir" "$RUNTIME" $out
    b1=$(vm_busy) s1=$(server_cpu $kind)
    measure_end
    python3 - "$name" "$r" "$out" $((b1 - b0)) "$rate" "$count" $((s1 - s0)) >> "$RES/ab.lines" <<'PY'
import json, sys
name, r, path, ticks, rate, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
server = int(sys.argv[7])
d = json.load(open(path))
n = max(d[count], 1)
# server_us_per_file: the daemon's process, or the nfsd threads (not the kernel's softirq
# and kworker time on their behalf), per unit
print(json.dumps({"name": name, "round": r, "files_per_s": round(d[rate], 1), "errors": 0,
                  "worst_s": 0, "cpu_us_per_file": round(ticks * 10000 / n),
                  "server_us_per_file": round(server * 10000 / n)}))
PY
    cp "$out" "$RES/$JOB-$name-$r.json"
    note "$(tail -1 "$RES/ab.lines")"
    nfs_umount "$MNT"
}
# serial NAME ROUND: /vmtest/serial-meta.py (create, stat, rename, remove, one at a time)
serial() {
    timed "$1" "$2" serial-meta.py "ab-serial-$1-$2" "" loops_per_s loops
    rm -rf "${EXPORT:?}/ab-serial-$1-$2"
}
# lookup NAME ROUND: /vmtest/serial-lookup.py over $EXPORT/ab-lookup (made on the server
# side, so the server's dentry cache knows every name) through a `lookupcache=none` mount:
# one LOOKUP per stat()
lookup() { timed "$1" "$2" serial-lookup.py ab-lookup ",lookupcache=none" stats_per_s stats; }
# getattr NAME ROUND: the same files through an `actimeo=0` mount: the client keeps the
# names but no attributes, so each stat() is a GETATTR of the file
getattr() { timed "$1" "$2" serial-lookup.py ab-lookup ",actimeo=0" stats_per_s stats; }
# listing NAME ROUND: /vmtest/serial-listing.py over $EXPORT/ab-listing ($FILES files made
# on the server side): `ls -l` in a loop, the listing made stale before each (READDIRPLUS)
listing() { timed "$1" "$2" serial-listing.py ab-listing "" entries_per_s entries; }
# unlink NAME ROUND: /vmtest/serial-unlink.py over $FILES files made on the server side, with
# the guest's caches (the client's and the server's) dropped first
unlink_job() {
    local d="ab-unlink-$1-$2" i
    mkdir -p "$EXPORT/$d" && for ((i = 0; i < FILES; i++)); do : > "$EXPORT/$d/f$i"; done
    sync; echo 3 > /proc/sys/vm/drop_caches
    timed "$1" "$2" serial-unlink.py "$d" "" files_per_s files
    rm -rf "${EXPORT:?}/$d"
}
run_job() {
    case "$JOB" in
        unlink) unlink_job "$@" ;;
        randread) randread "$@" ;;
        deepwrite) deep "$@" write ;;
        deepread) deep "$@" read ;;
        fanout) fanout "$@" ;;
        serial) serial "$@" ;;
        lookup) lookup "$@" ;;
        getattr) getattr "$@" ;;
        listing) listing "$@" ;;
        *) storm "$@" ;;
    esac
}

step "setup: ${BINS[*]}, $ROUNDS rounds, NFSv$VERS over $PROTO, job $JOB"
check "tools" need_cmd python3 mkfs.ext4 || exit 1
check "rxe_setup" rxe_setup || exit 1
check "ext4 export" make_ext4 $EXPORT 2048 || exit 1
check "NFS client modules" nfs_client_modules || exit 1
check "rpcbind" rpcbind_start || exit 1
NFSRDMAD_ADDR=0.0.0.0
config=()
[ "$VERS" != 3 ] && config=(--config "$(nfs4_config)")

if [ "$JOB" = fanout ]; then
    check "$CLIENTS addresses" load_addrs_add "$CLIENTS" || exit 1
fi
if [ "$JOB" = deepwrite ] || [ "$JOB" = deepread ]; then
    check "fio" need_cmd fio || exit 1
fi
if [ "$JOB" = randread ]; then
    check "fio" need_cmd fio || exit 1
    # Made on the server's side: in its page cache from the start, as after seq-write.
    check "$SIZE file to read" fallocate -l "$SIZE" "$EXPORT/seq.dat" || exit 1
    check "... filled" dd if=/dev/urandom of="$EXPORT/seq.dat" bs=1M count=$(($(stat -c %s "$EXPORT/seq.dat") >> 20)) conv=notrunc status=none || exit 1
    chmod 0644 "$EXPORT/seq.dat"
fi

if [ "$JOB" = lookup ] || [ "$JOB" = getattr ]; then
    mkdir -p "$EXPORT/ab-lookup" && for i in $(seq 100); do : > "$EXPORT/ab-lookup/f$i"; done
    check "100 files to look up" test -e "$EXPORT/ab-lookup/f100" || exit 1
fi

if [ "$JOB" = listing ]; then
    mkdir -p "$EXPORT/ab-listing" && for ((i = 0; i < FILES; i++)); do : > "$EXPORT/ab-listing/f$i"; done
    chmod 0777 "$EXPORT/ab-listing"
    check "$FILES files to list" test -e "$EXPORT/ab-listing/f$((FILES - 1))" || exit 1
fi

for ((r = 1; r <= ROUNDS; r++)); do
    order=("${BINS[@]}")
    if ((r % 2 == 0)); then
        order=()
        for ((i = ${#BINS[@]} - 1; i >= 0; i--)); do order+=("${BINS[i]}"); done
    fi
    step "round $r: ${order[*]%%=*}"
    if [ "${AB_KNFSD:-0}" = 1 ] && check "knfsd_start" knfsd_start $EXPORT; then
        [ "$BENCH_SPLIT" = 1 ] && check "knfsd on vCPU 0" pin_server $(pgrep -x nfsd)
        run_job knfsd "$r"
        check "knfsd_stop" knfsd_stop
    fi
    for b in "${order[@]}"; do
        name=${b%%=*} NFSRDMAD_BIN=${b#*=}
        check "$name start" nfsrdmad_start $EXPORT --rdma "0.0.0.0:$NFSRDMAD_RDMA_PORT" "${config[@]}" || continue
        # NFSv4.1: OPENs wait out the grace period (lease_time 15 s) first
        [ "$VERS" != 3 ] && wait_for 40 grep -q "grace period over" "$NFSRDMAD_LOG"
        [ "$BENCH_SPLIT" = 1 ] && check "$name on vCPU 0" pin_server "$NFSRDMAD_PID"
        run_job "$name" "$r"
        check "$name stop" nfsrdmad_stop > /dev/null
    done
done

step "results"
python3 - "$RES/ab.lines" "${BINS[0]%%=*}" "$JOB" > "$VMTEST_OUT/table.txt" <<'PY'
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base = sys.argv[2]
unit = {"randread": "(READs/s, guest CPU per READ)",
        "serial": "(loops/s, guest CPU per loop)",
        "lookup": "(LOOKUPs/s, guest CPU per LOOKUP)",
        "getattr": "(stat()s/s, guest CPU per stat())",
        "listing": "(entries listed with attributes per s, guest CPU per entry)",
        "deepwrite": "(MiB/s, guest CPU per MiB)", "deepread": "(MiB/s, guest CPU per MiB)",
        "fanout": "(MiB/s written, guest CPU per MiB moved)"}.get(sys.argv[3], "(files/s, guest CPU per file)")
json.dump(rows, open(sys.argv[1].replace(".lines", ".json"), "w"), indent=1)
names = []
for r in rows:
    if r["name"] not in names:
        names.append(r["name"])
print(f"{'round':>5}  " + "  ".join(f"{n:>22}" for n in names) + "   " + unit)
for rd in sorted({r["round"] for r in rows}):
    cells = []
    for n in names:
        m = [r for r in rows if r["round"] == rd and r["name"] == n]
        cells.append(f"{m[0]['files_per_s']:>9} {m[0]['cpu_us_per_file']:>7} us" + (" E" if m[0]["errors"] else "  ") if m else f"{'-':>22}")
    print(f"{rd:>5}  " + "  ".join(f"{c:>22}" for c in cells))
def ratio(n, over):
    ratios = []
    for rd in {r["round"] for r in rows}:
        a = [r for r in rows if r["round"] == rd and r["name"] == over]
        b = [r for r in rows if r["round"] == rd and r["name"] == n]
        if a and b and a[0]["files_per_s"] > 0:
            ratios.append(b[0]["files_per_s"] / a[0]["files_per_s"])
    if ratios:
        logs = [math.log(x) for x in ratios]
        m = sum(logs) / len(logs)
        line = (f"{n} / {over}: geometric mean {math.exp(m):.3f} over {len(ratios)} rounds "
                f"(each: {', '.join(f'{x:.2f}' for x in sorted(ratios))})")
        if len(logs) > 1:
            # Student's t over the rounds' log ratios: the interval a change has to leave
            # before it is more than this boot's noise (one build against a copy of itself
            # moved 0.52-1.45 round to round in the unlink job: bench/vm/README.md)
            sd = math.sqrt(sum((x - m) ** 2 for x in logs) / (len(logs) - 1))
            t = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31,
                 9: 2.26}.get(len(logs) - 1, 2.2)
            lo, hi = math.exp(m - t * sd / math.sqrt(len(logs))), math.exp(m + t * sd / math.sqrt(len(logs)))
            line += (f"; ahead in {sum(x > 1 for x in ratios)} of {len(ratios)}; 95 % interval "
                     f"{lo:.2f}-{hi:.2f}" + (", inside the noise" if lo <= 1 <= hi else ""))
        print(line)
for n in names:
    own = [r["server_us_per_file"] for r in rows if r["name"] == n and "server_us_per_file" in r]
    if own:
        print(f"{n}: the server's own CPU per unit {min(own)}-{max(own)} us "
              "(nfsrdmad's process, or the nfsd threads without their softirq work)")
for n in names:
    if n not in (base, "knfsd"):
        ratio(n, base)
if "knfsd" in names:
    for n in names:
        if n != "knfsd":
            ratio(n, "knfsd")
PY
cat "$VMTEST_OUT/table.txt"
vm_summary
