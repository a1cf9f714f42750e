# load.sh - many clients, deep queues and create storms in the guest (sourced; bash).
# Shared by the VM test group vm_nfsrdmad_scale (tests/vm/tests/nfsrdmad_scale.sh) and the
# benchmark's load mode (bench/vm/guest-load.sh), so both measure the same thing.
#
#   load_addrs_add N            N more IPv4 addresses (/32) on $RXE_NETDEV (one `ip -batch`), and
#                               waits until rxe has a RoCE GID for each. The Linux client
#                               shares one transport per server address, so N addresses (one
#                               mount each, nosharecache) give N connections.
#   load_addr I                 the I-th of them (0-based): 10.98.I/250.I%250+1
#   load_mount_all N PATH BASE OPTS
#                               mounts load_addr I:PATH on BASE/I for every I < N, at most
#                               $LOAD_MOUNT_PAR (32) at a time, each bounded by
#                               $LOAD_MOUNT_TIMEOUT (60 s). Sets LOAD_MOUNTED (indices that
#                               mounted) and LOAD_MOUNT_WALL; 0 iff all N mounted.
#   load_umount_all BASE        unmounts BASE/* (bounded; lazy when stuck)
#   load_roundtrip BASE MB OUT.json IDX...
#                               through BASE/IDX for every IDX in parallel (threads of one
#                               python3): MB MiB of random data written + fsync'd, then read
#                               back with O_DIRECT and md5-compared. JSON: per-phase wall
#                               time and MiB/s, mounts exact, errors.
#   load_xprt MNT...            "MNT transport connect_count" per mount, from the xprt: line
#                               of /proc/self/mountstats (one awk)
#   load_xprt_connects MNT      the connect count of one mount (empty when not mounted)
#   load_log_conns LOG SKIP     "ADDR COUNT" of the daemon's "rdma: connection from ADDR:port"
#                               lines after line SKIP of LOG
#   load_log_lines LOG          line count of LOG (the SKIP for the next phase)
#   load_fio MNT RW DEPTH SIZE RUNTIME OUT.json
#                               fio 1 MiB O_DIRECT libaio at DEPTH, RW write|read, time-based,
#                               on MNT/deep.dat (a read needs the write first); bounded.
#   load_storm DIR THREADS FILES OUT.json
#                               THREADS threads x FILES files each created, 100 bytes written,
#                               fsync'd and closed (a mkdir per thread): files/s, errors,
#                               worst create latency.
#   load_json FILE KEY          KEY's value in a result JSON ("" when absent)
# Env: LOAD_MOUNT_PAR, LOAD_MOUNT_TIMEOUT, LOAD_IO_TIMEOUT (s; roundtrip and storm bound, 180).
source "${VMTEST_LIB:-/vmtest/lib}/common.sh"

LOAD_MOUNT_PAR=${LOAD_MOUNT_PAR:-32}
LOAD_MOUNT_TIMEOUT=${LOAD_MOUNT_TIMEOUT:-60}
LOAD_IO_TIMEOUT=${LOAD_IO_TIMEOUT:-180}
LOAD_PY=/tmp/vmload.py
LOAD_MOUNTED=()
LOAD_MOUNT_WALL=

load_addr() { echo "10.98.$(($1 / 250)).$(($1 % 250 + 1))"; }

load_addrs_add() {
    local n=$1 i want have
    : > /tmp/load-addrs.batch
    for ((i = 0; i < n; i++)); do
        # /32: each address is a primary one. Addresses of one subnet would be secondaries of
        # its first, whose address the local routes then give as source: every client
        # connection would come from that one address, and the daemon's per-address count of
        # connections would mean nothing.
        echo "addr replace $(load_addr "$i")/32 dev $RXE_NETDEV" >> /tmp/load-addrs.batch
    done
    ip -batch /tmp/load-addrs.batch || return 1
    # rxe adds one GID per address (::ffff:10.98.x.y, "0000:...:ffff:0a62:xxxx"); count them
    # with one grep over the table (builtins only would be hundreds of reads per poll).
    want=$n
    for ((i = 0; i < 50; i++)); do
        have=$(cat /sys/class/infiniband/"$RXE_DEV"/ports/1/gids/* 2>/dev/null | grep -c ':ffff:0a62:')
        # RoCE v1 and v2 GIDs: two per address
        [ "$have" -ge "$want" ] && break
        sleep 0.2
    done
    echo "load_addrs_add: $n addresses $(load_addr 0)..$(load_addr $((n - 1))) on $RXE_NETDEV, $have RoCE GIDs for them"
    [ "$have" -ge "$want" ]
}

_load_mount_one() {  # I PATH BASE OPTS
    local i=$1 mnt=$3/$1
    mkdir -p "$mnt"
    if timeout -k 5 "$LOAD_MOUNT_TIMEOUT" mount -t nfs -o "$4" "$(load_addr "$i"):$2" "$mnt" 2> "/tmp/load-mount.$i.err"; then
        : > "/tmp/load-mount.$i.ok"
    fi
}

load_mount_all() {
    local n=$1 path=$2 base=$3 opts=$4 i running=0 t0 failed=()
    rm -f /tmp/load-mount.*.ok /tmp/load-mount.*.err
    t0=$(now)
    echo "+ $n x mount -t nfs -o $opts ADDR:$path $base/I ($LOAD_MOUNT_PAR at a time)"
    for ((i = 0; i < n; i++)); do
        if [ $running -ge "$LOAD_MOUNT_PAR" ]; then wait -n; running=$((running - 1)); fi
        _load_mount_one "$i" "$path" "$base" "$opts" &
        running=$((running + 1))
    done
    while [ $running -gt 0 ]; do wait -n; running=$((running - 1)); done
    LOAD_MOUNT_WALL=$(since "$t0")
    LOAD_MOUNTED=()
    for ((i = 0; i < n; i++)); do
        if [ -e "/tmp/load-mount.$i.ok" ]; then LOAD_MOUNTED+=("$i"); else failed+=("$i"); fi
    done
    echo "  ${#LOAD_MOUNTED[@]} of $n mounted in $LOAD_MOUNT_WALL s"
    if [ ${#failed[@]} -gt 0 ]; then
        echo "  not mounted: ${failed[*]}"
        i=${failed[0]}
        echo "  first failure ($(load_addr "$i")): $(head -c 300 "/tmp/load-mount.$i.err")"
        dmesg | tail -8 | sed 's/^/  dmesg: /'
        return 1
    fi
}

load_umount_all() {
    local base=$1 m left
    [ -d "$base" ] || return 0
    # one umount for all of them (each exec costs ~0.1 s under TCG)
    mapfile -t left < <(awk -v b="$base/" 'index($2, b) == 1 {print $2}' /proc/mounts)
    [ ${#left[@]} = 0 ] && return 0
    timeout -k 5 120 umount "${left[@]}" 2>/dev/null
    mapfile -t left < <(awk -v b="$base/" 'index($2, b) == 1 {print $2}' /proc/mounts)
    [ ${#left[@]} = 0 ] && return 0
    echo "load_umount_all: ${#left[@]} mounts under $base stuck; lazy unmount" >&2
    for m in "${left[@]}"; do umount -f -l "$m" 2>/dev/null; done
    return 1
}

load_xprt() {  # MNT...: "MNT transport connect_count" (xprt: TRANSPORT PORT BIND CONNECT ...)
    awk -v want=" $* " '
        /^device / { m = $5; nfs = ($8 ~ /^nfs/) }
        nfs && $1 == "xprt:" && index(want, " " m " ") { print m, $2, $5 }' /proc/self/mountstats
}

load_xprt_connects() { load_xprt "$1" | awk '{print $3; exit}'; }

load_log_lines() { local n=0; [ -f "$1" ] && n=$(wc -l < "$1"); echo "$n"; }

load_log_conns() {  # LOG SKIP
    awk -v skip="$2" 'NR > skip && /rdma: connection from / {
            for (i = 1; i <= NF; i++) if ($i == "from") { a = $(i + 1); break }
            sub(/:[0-9]+$/, "", a); n[a]++ }
        END { for (a in n) print a, n[a] }' "$1"
}

load_json() {
    python3 -c 'import json,sys
try: d = json.load(open(sys.argv[1]))
except Exception: sys.exit(0)
for k in sys.argv[2].split("."): d = d.get(k, "") if isinstance(d, dict) else ""
print(d)' "$1" "$2"
}

load_roundtrip() {  # BASE MB OUT IDX...
    local base=$1 mb=$2 out=$3; shift 3
    _load_py || return 1
    rm -f "$out"
    timeout -s KILL "$LOAD_IO_TIMEOUT" python3 "$LOAD_PY" roundtrip "$base" "$mb" "$out" "$@"
    local rc=$?
    [ $rc = 137 ] && echo "load_roundtrip: killed after $LOAD_IO_TIMEOUT s" >&2
    [ -s "$out" ] && [ "$(load_json "$out" exact)" = "$#" ]
}

load_storm() {  # DIR THREADS FILES OUT
    _load_py || return 1
    rm -f "$4"
    timeout -s KILL "$LOAD_IO_TIMEOUT" python3 "$LOAD_PY" storm "$@"
    local rc=$?
    [ $rc = 137 ] && echo "load_storm: killed after $LOAD_IO_TIMEOUT s" >&2
    [ -s "$4" ] && [ "$(load_json "$4" errors)" = 0 ]
}

load_fio() {  # MNT RW DEPTH SIZE RUNTIME OUT
    local mnt=$1 rw=$2 depth=$3 size=$4 runtime=$5 out=$6 rc
    _load_py || return 1
    rm -f "$out" "$out.fio"
    [ "$rw" = read ] && { sync; echo 3 > /proc/sys/vm/drop_caches; }
    timeout -s KILL $((runtime + 180)) fio --eta=never --output-format=json --output="$out.fio" \
        --name="deep-$rw" --directory="$mnt" --filename=deep.dat --rw="$rw" --bs=1M --direct=1 \
        --ioengine=libaio --iodepth="$depth" --size="$size" --time_based=1 --runtime="$runtime"
    rc=$?
    [ $rc = 137 ] && echo "load_fio: killed after $((runtime + 180)) s" >&2
    python3 "$LOAD_PY" fio "$out.fio" "$rw" "$out" || return 1
    [ $rc = 0 ] && [ "$(load_json "$out" error)" = 0 ]
}

_load_py() {
    [ -s "$LOAD_PY" ] && return 0
    cat > "$LOAD_PY" <<'EOF'
import hashlib, json, mmap, os, sys, threading, time

MiB = 1 << 20


def roundtrip(base, mb, out, idxs):
    size = int(mb) * MiB
    data = {i: os.urandom(size) for i in idxs}
    res = {i: {} for i in idxs}

    def write(i):
        t0 = time.monotonic()
        try:
            fd = os.open(f"{base}/{i}/load-{i}.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                mv, off = memoryview(data[i]), 0
                while off < size:
                    off += os.write(fd, mv[off:off + MiB])
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            res[i]["error"] = f"write: {e}"
        res[i]["write_s"] = time.monotonic() - t0

    def read(i):
        t0 = time.monotonic()
        h, got = hashlib.md5(), 0
        try:
            fd = os.open(f"{base}/{i}/load-{i}.bin", os.O_RDONLY | os.O_DIRECT)
            buf = mmap.mmap(-1, MiB)
            try:
                while True:
                    n = os.preadv(fd, [buf], got)
                    if n <= 0:
                        break
                    h.update(buf[:n])
                    got += n
            finally:
                os.close(fd)
            res[i]["exact"] = got == size and h.hexdigest() == hashlib.md5(data[i]).hexdigest()
            if not res[i]["exact"]:
                res[i].setdefault("error", f"read: {got} bytes, md5 differs")
        except OSError as e:
            res[i].setdefault("error", f"read: {e}")
        res[i]["read_s"] = time.monotonic() - t0

    total = size * len(idxs) / MiB

    def summary(walls):  # what is known so far (the write phase's alone if the read hangs)
        errors = {i: r["error"] for i, r in res.items() if "error" in r}
        d = {"mounts": len(idxs), "mib_each": int(mb), "phases_done": list(walls),
             "exact": sum(1 for r in res.values() if r.get("exact")),
             "errors": len(errors), "first_errors": dict(list(errors.items())[:5])}
        for phase, wall in walls.items():
            d[f"{phase}_s"] = round(wall, 2)
            d[f"{phase}_mibs"] = round(total / wall, 2)
            d[f"worst_{phase}_s"] = round(max(r.get(f"{phase}_s", 0) for r in res.values()), 2)
        json.dump(d, open(out, "w"))
        return d

    walls = {}
    for phase, fn in (("write", write), ("read", read)):
        t0 = time.monotonic()
        ts = [threading.Thread(target=fn, args=(i,)) for i in idxs]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        walls[phase] = time.monotonic() - t0
        d = summary(walls)
    print(f"  roundtrip: {d['exact']}/{len(idxs)} mounts exact; {total:.0f} MiB written in "
          f"{d['write_s']} s ({d['write_mibs']} MiB/s), read in {d['read_s']} s "
          f"({d['read_mibs']} MiB/s); worst mount {d['worst_write_s']} s / {d['worst_read_s']} s")
    for i, e in d["first_errors"].items():
        print(f"  mount {i}: {e}")


def storm(top, threads, files, out):
    threads, files = int(threads), int(files)
    lock = threading.Lock()
    st = {"created": 0, "errors": 0, "first_errors": [], "worst_s": 0.0}

    def err(what):
        with lock:
            st["errors"] += 1
            if len(st["first_errors"]) < 5:
                st["first_errors"].append(what)

    def run(k):
        d = f"{top}/t{k}"
        try:
            os.makedirs(d, exist_ok=True)
        except OSError as e:
            err(f"mkdir {d}: {e}")
            return
        worst = 0.0
        for j in range(files):
            t0 = time.monotonic()
            try:
                fd = os.open(f"{d}/f{j}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    os.write(fd, b"x" * 100)
                    os.fsync(fd)
                finally:
                    os.close(fd)
                with lock:
                    st["created"] += 1
            except OSError as e:
                err(f"{d}/f{j}: {e}")
            worst = max(worst, time.monotonic() - t0)
        with lock:
            st["worst_s"] = max(st["worst_s"], worst)

    t0 = time.monotonic()
    ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.monotonic() - t0
    st.update(wall_s=round(wall, 2), files_per_s=round(st["created"] / wall, 1),
              worst_s=round(st["worst_s"], 3), wanted=threads * files)
    json.dump(st, open(out, "w"))
    print(f"  storm: {st['created']}/{threads * files} files in {st['wall_s']} s "
          f"({st['files_per_s']} files/s), {st['errors']} errors, worst create {st['worst_s']} s")
    for e in st["first_errors"]:
        print(f"  error: {e}")


def fio(src, rw, out):
    d = {"error": -1}
    try:
        j = json.load(open(src))["jobs"][0]
        side = j[rw]
        d = {"error": j.get("error", 0), "mibs": round(side["bw"] / 1024.0, 2),
             "mib": round(side["io_bytes"] / MiB, 1), "clat_max_s": round(side["clat_ns"]["max"] / 1e9, 3),
             "clat_mean_s": round(side["clat_ns"]["mean"] / 1e9, 3), "runtime_s": round(side["runtime"] / 1000.0, 1)}
        print(f"  fio {rw}: {d['mib']} MiB at {d['mibs']} MiB/s, worst completion {d['clat_max_s']} s "
              f"(mean {d['clat_mean_s']} s), error {d['error']}")
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"  fio {rw}: no usable result ({e})")
    json.dump(d, open(out, "w"))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "roundtrip":
        roundtrip(args[0], args[1], args[2], args[3:])
    elif cmd == "storm":
        storm(*args)
    elif cmd == "fio":
        fio(*args)
    else:
        sys.exit(f"vmload.py: unknown command {cmd}")
EOF
}
