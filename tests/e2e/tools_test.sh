#!/usr/bin/env bash
# End-to-end test of nfsrdmad with standard command-line clients:
#   rpcinfo (rpcbind registration, NULL pings), showmount (MOUNT v1 EXPORT via rpcbind),
#   nfs-ls / nfs-cp / nfs-cat (libnfs-utils), and unregistration after SIGTERM.
#
# Needs root (it may start rpcbind, and the daemon registers with it).
# Usage: NFSRDMAD_BIN=/path/to/nfsrdmad bash tests/e2e/tools_test.sh
# Set NFSRDMAD_E2E_KEEP=1 to keep the temporary directory.
set -euo pipefail

export PATH="$PATH:/usr/sbin:/sbin"

fatal() {
    echo "tools_test: FATAL: $*" >&2
    exit 2
}

# NFSRDMAD_E2E_DAEMON, when set, is the daemon to test instead (daemon_fixture.h).
BIN="${NFSRDMAD_E2E_DAEMON:-${NFSRDMAD_BIN:-}}"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ -n "$BIN" ]] || fatal "NFSRDMAD_BIN is not set: it must hold the path of the nfsrdmad binary" \
    "(CTest sets it; by hand: NFSRDMAD_BIN=build/daemon/nfsrdmad bash $0)"
[[ -f "$BIN" && -x "$BIN" ]] ||
    fatal "${NFSRDMAD_E2E_DAEMON:+NFSRDMAD_E2E_DAEMON=}${NFSRDMAD_E2E_DAEMON:-NFSRDMAD_BIN=$BIN} is not an executable file"
[[ "$(id -u)" -eq 0 ]] || fatal "must run as root (starts rpcbind if needed; the daemon registers with it)"
for tool in rpcinfo showmount nfs-ls nfs-cp nfs-cat rpcbind cmp awk grep head; do
    command -v "$tool" >/dev/null 2>&1 || fatal "required tool '$tool' not found in PATH"
done
PY="$(command -v python3 || true)"
[[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
[[ -n "$PY" ]] || fatal "python3 is needed to pick free ports"

WORK="$(mktemp -d /tmp/nfsrdmad-e2e-tools-XXXXXX)"
WORK="$(cd "$WORK" && pwd -P)"
EXPORT="$WORK/export"
STATE="$WORK/state"
LOG="$WORK/daemon.log"
mkdir -p "$EXPORT" "$STATE"
chmod 0755 "$EXPORT"

DPID=""
RPCBIND_PID=""
PASSED=0
FAILED=0
FAILED_NAMES=()

cleanup() {
    local rc=$?
    if [[ -n "$DPID" ]] && kill -0 "$DPID" 2>/dev/null; then
        kill -TERM "$DPID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$DPID" 2>/dev/null || true
        wait "$DPID" 2>/dev/null || true
    fi
    if [[ -n "$RPCBIND_PID" ]]; then
        kill -TERM "$RPCBIND_PID" 2>/dev/null || true
        wait "$RPCBIND_PID" 2>/dev/null || true
    fi
    if [[ $rc -ne 0 || $FAILED -ne 0 ]] && [[ -f "$LOG" ]]; then
        echo "---- nfsrdmad log tail ($LOG) ----" >&2
        tail -n 80 "$LOG" >&2 || true
        echo "---- end of log tail ----" >&2
    fi
    if [[ -n "${NFSRDMAD_E2E_KEEP:-}" ]]; then
        echo "tools_test: keeping $WORK" >&2
    else
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT

# check NAME COMMAND...: runs COMMAND, counts and reports the result, never aborts the script.
check() {
    local name="$1"
    shift
    local out="$WORK/check.out"
    if "$@" >"$out" 2>&1; then
        PASSED=$((PASSED + 1))
        echo "PASS: $name"
    else
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("$name")
        echo "FAIL: $name"
        sed 's/^/    | /' "$out" | head -n 40
    fi
}

# retry SECONDS COMMAND...: succeeds as soon as COMMAND does.
retry() {
    local secs="$1"
    shift
    local end=$((SECONDS + secs))
    while true; do
        if "$@"; then return 0; fi
        [[ $SECONDS -ge $end ]] && { "$@"; return $?; }
        sleep 0.2
    done
}

# ---- rpcbind ----------------------------------------------------------------------------------
if rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
    echo "tools_test: using the rpcbind that is already running"
else
    echo "tools_test: starting rpcbind"
    # -f: stay in the foreground so that we own the pid and stop exactly this process.
    # (No -w: a warm start could resurrect registrations from an earlier run.)
    rpcbind -f >"$WORK/rpcbind.log" 2>&1 &
    RPCBIND_PID=$!
    retry 5 rpcinfo -p 127.0.0.1 >/dev/null 2>&1 ||
        fatal "rpcbind did not come up: $(cat "$WORK/rpcbind.log" 2>/dev/null)"
fi

# Registrations of 100003/100005 that exist before we start (e.g. a kernel nfsd) are not ours.
PRE_NFS="$(rpcinfo -p 127.0.0.1 | awk '$1==100003 || $1==100005' | wc -l)"
[[ "$PRE_NFS" -eq 0 ]] ||
    echo "tools_test: note: rpcbind already lists 100003/100005 ($PRE_NFS entries), not ours"

# ---- daemon -----------------------------------------------------------------------------------
# two free TCP ports on 127.0.0.1
pick_ports() {
    "$PY" - <<'EOF'
import socket
socks = []
for _ in range(2):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(*[s.getsockname()[1] for s in socks])
EOF
}
read -r NFSPORT MOUNTPORT < <(pick_ports)
[[ -n "$NFSPORT" && -n "$MOUNTPORT" ]] || fatal "could not pick free ports"
read -r METRICSPORT _ < <(pick_ports)

echo "hello from nfsrdmad" >"$EXPORT/hello.txt"
mkdir "$EXPORT/subdir"

echo "tools_test: starting $BIN (nfs port $NFSPORT, mount port $MOUNTPORT, export $EXPORT)"
"$BIN" --foreground --log-level debug --state-dir "$STATE" \
    --tcp "127.0.0.1:$NFSPORT" --mount-port "$MOUNTPORT" --metrics "127.0.0.1:$METRICSPORT" \
    --export "$EXPORT=rw,no_root_squash,insecure" >"$LOG" 2>&1 &
DPID=$!

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ready=0
for _ in $(seq 1 200); do
    kill -0 "$DPID" 2>/dev/null || fatal "nfsrdmad exited before it was ready"
    if port_open "$NFSPORT" && port_open "$MOUNTPORT"; then
        ready=1
        break
    fi
    sleep 0.05
done
[[ $ready -eq 1 ]] || fatal "nfsrdmad did not accept connections on ports $NFSPORT/$MOUNTPORT within 10 s"

URL_ARGS="version=3&nfsport=$NFSPORT&mountport=$MOUNTPORT"
URL="nfs://127.0.0.1$EXPORT"

# ---- checks -----------------------------------------------------------------------------------
listed() { # PROG VERS PORT [PROTO]
    rpcinfo -p 127.0.0.1 | awk -v p="$1" -v v="$2" -v port="$3" -v proto="${4:-tcp}" \
        '$1==p && $2==v && $3==proto && $4==port {f=1} END {exit !f}'
}
check_listed() {
    retry 5 listed "$@" || { echo "rpcinfo -p 127.0.0.1:"; rpcinfo -p 127.0.0.1; return 1; }
}
check "rpcinfo -p lists 100003 v3 tcp on port $NFSPORT" check_listed 100003 3 "$NFSPORT"
check "rpcinfo -p lists 100005 v1 tcp on port $MOUNTPORT" check_listed 100005 1 "$MOUNTPORT"
check "rpcinfo -p lists 100005 v3 tcp on port $MOUNTPORT" check_listed 100005 3 "$MOUNTPORT"
check "rpcinfo -p lists 100021 (NLM) v4 tcp on port $NFSPORT" check_listed 100021 4 "$NFSPORT"
check "rpcinfo -p lists 100021 (NLM) v4 udp on port $NFSPORT" check_listed 100021 4 "$NFSPORT" udp
check "rpcinfo -u: NLM v4 NULL over UDP (port from rpcbind)" rpcinfo -u 127.0.0.1 100021 4

# NULL call sent straight to a port (rpcinfo's -n is not honoured by every rpcinfo build).
rpc_null_on_port() { # PORT PROG VERS
    "$PY" - "$@" <<'PYEOF'
import socket, struct, sys
port, prog, vers = (int(a) for a in sys.argv[1:4])
call = struct.pack(">10I", 0x5EED, 0, 2, prog, vers, 0, 0, 0, 0, 0)
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)
def recv_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            sys.exit("connection closed before a complete reply")
        buf += chunk
    return buf
data = b""
while True:
    (m,) = struct.unpack(">I", recv_exact(4))
    data += recv_exact(m & 0x7FFFFFFF)
    if m & 0x80000000:
        break
xid, mtype, stat = struct.unpack(">3I", data[:12])
if (xid, mtype, stat) != (0x5EED, 1, 0):
    sys.exit("not an accepted reply to our call: xid=%#x type=%d reply_stat=%d" % (xid, mtype, stat))
(vlen,) = struct.unpack(">I", data[16:20])
off = 20 + (vlen + 3) // 4 * 4
(accept,) = struct.unpack(">I", data[off:off + 4])
print("program %d version %d on port %d: accept_stat %d" % (prog, vers, port, accept))
sys.exit(0 if accept == 0 else 1)
PYEOF
}
check "NULL call: NFS v3 on the NFS port" rpc_null_on_port "$NFSPORT" 100003 3
check "NULL call: MOUNT v1 on the mount port" rpc_null_on_port "$MOUNTPORT" 100005 1

# /metrics read by the Prometheus project's own parser (python3-prometheus-client): the
# text is exposition format, and the families have the types their names promise.
metrics_parse() {
    "$PY" - "http://127.0.0.1:$METRICSPORT/metrics" <<'EOF'
import sys, urllib.request
from prometheus_client.parser import text_string_to_metric_families
text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
families = {f.name: f for f in text_string_to_metric_families(text)}
ours = {n: f for n, f in families.items() if n.startswith("nfsrdmad_")}
print(len(ours), "nfsrdmad families")
bad = []
for name, f in ours.items():
    # The parser drops _total from counters; a counter's samples keep it.
    if f.type == "counter" and not all(s.name.endswith(("_total", "_created")) for s in f.samples):
        bad.append(name + ": a counter sample without _total")
    if f.type == "gauge" and name.endswith("_total"):
        bad.append(name + ": a gauge named _total")
    if f.type == "histogram" and not name.endswith("_seconds"):
        bad.append(name + ": a histogram without its unit")
assert families["nfsrdmad_calls"].type == "counter", "nfsrdmad_calls_total"
assert families["nfsrdmad_call_duration_seconds"].type == "histogram"
nulls = [s for s in families["nfsrdmad_calls"].samples
         if s.labels.get("operation") == "NULL" and s.labels.get("program") == "nfs"]
assert nulls and nulls[0].value >= 1, "the NFS NULL calls made above are counted"
print("\n".join(bad))
sys.exit(1 if bad or len(ours) < 30 else 0)
EOF
}
check "metrics: /metrics parses as Prometheus exposition format, names follow the conventions" \
    metrics_parse
check "NULL call: MOUNT v3 on the mount port" rpc_null_on_port "$MOUNTPORT" 100005 3
check "NULL call: MOUNT v3 on the NFS port" rpc_null_on_port "$NFSPORT" 100005 3
check "NULL call: NLM v4 on the NFS port" rpc_null_on_port "$NFSPORT" 100021 4

via_rpcbind() { # PROG VERS: rpcinfo looks the port up in rpcbind and pings it
    local out
    out="$(rpcinfo -t 127.0.0.1 "$1" "$2" 2>&1)" || { echo "$out"; return 1; }
    echo "$out"
    grep -q "ready and waiting" <<<"$out"
}
check "rpcinfo -t 127.0.0.1 100003 3 (port from rpcbind)" via_rpcbind 100003 3
check "rpcinfo -t 127.0.0.1 100005 1 (port from rpcbind)" via_rpcbind 100005 1
check "rpcinfo -t 127.0.0.1 100005 3 (port from rpcbind)" via_rpcbind 100005 3

showmount_lists_export() {
    local out
    out="$(showmount -e 127.0.0.1 2>&1)" || { echo "$out"; return 1; }
    echo "$out"
    grep -qE "^${EXPORT}([[:space:]]|$)" <<<"$out"
}
check "showmount -e 127.0.0.1 lists $EXPORT" showmount_lists_export

nfs_ls_lists() {
    local out
    out="$(nfs-ls "$URL/?$URL_ARGS" 2>&1)" || { echo "$out"; return 1; }
    echo "$out"
    grep -q "hello.txt" <<<"$out" && grep -q "subdir" <<<"$out"
}
check "nfs-ls lists hello.txt and subdir" nfs_ls_lists

nfs_cat_exact() {
    local out="$WORK/cat.out"
    nfs-cat "$URL/hello.txt?$URL_ARGS" >"$out" || return 1
    cmp "$out" "$EXPORT/hello.txt"
}
check "nfs-cat returns hello.txt byte for byte" nfs_cat_exact

head -c 3145739 /dev/urandom >"$WORK/local.bin" # 3 MiB + 11 bytes: several 1 MiB WRITEs + a tail
nfs_cp_upload() {
    nfs-cp "$WORK/local.bin" "$URL/up.bin?$URL_ARGS" || return 1
    cmp "$WORK/local.bin" "$EXPORT/up.bin"
}
check "nfs-cp upload lands byte for byte on the server's disk" nfs_cp_upload

nfs_cp_download() {
    nfs-cp "$URL/up.bin?$URL_ARGS" "$WORK/down.bin" || return 1
    cmp "$WORK/local.bin" "$WORK/down.bin"
}
check "nfs-cp download of the uploaded file is identical" nfs_cp_download

# ---- a second daemon on other ports leaves the first one's rpcbind entries alone ----------------
read -r NFSPORT2 MOUNTPORT2 < <(pick_ports)
LOG2="$WORK/daemon2.log"
mkdir -p "$WORK/state2"
second_daemon_leaves_ours() {
    "$BIN" --log-level debug --state-dir "$WORK/state2" --rdma off \
        --tcp "127.0.0.1:$NFSPORT2" --mount-port "$MOUNTPORT2" \
        --export "$EXPORT=ro,insecure" >"$LOG2" 2>&1 &
    local pid2=$! rc=0
    retry 10 port_open "$MOUNTPORT2" || { echo "second daemon did not come up"; cat "$LOG2"; kill -KILL $pid2; return 1; }
    retry 5 grep -q "registered by another server on port $NFSPORT" "$LOG2" ||
        { echo "the second daemon did not leave program 100003 to the first:"; grep rpcbind "$LOG2"; rc=1; }
    kill -TERM $pid2
    wait $pid2 || { echo "second daemon exit status $?"; rc=1; }
    grep rpcbind "$LOG2"
    for e in "100003 3 $NFSPORT" "100005 3 $MOUNTPORT" "100021 4 $NFSPORT"; do
        # shellcheck disable=SC2086
        listed $e || { echo "after the second daemon stopped, rpcinfo -p lacks $e:"; rpcinfo -p 127.0.0.1; rc=1; }
    done
    return $rc
}
check "a second daemon on other ports neither takes nor removes the first one's rpcbind entries" \
    second_daemon_leaves_ours

# ---- SIGTERM: exit 0 and unregister -----------------------------------------------------------
sigterm_exits_zero() {
    kill -TERM "$DPID"
    for _ in $(seq 1 100); do
        kill -0 "$DPID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$DPID" 2>/dev/null; then
        echo "nfsrdmad still running 10 s after SIGTERM"
        return 1
    fi
    local rc=0
    wait "$DPID" || rc=$?
    DPID=""
    echo "exit status $rc"
    [[ $rc -eq 0 ]]
}
check "SIGTERM: nfsrdmad exits with status 0" sigterm_exits_zero

not_listed_anymore() {
    local table
    table="$(rpcinfo -p 127.0.0.1)"
    echo "$table"
    if awk -v port="$NFSPORT" -v mport="$MOUNTPORT" \
        '($1==100003 && $4==port) || ($1==100005 && $4==mport) || ($1==100021 && $4==port) {f=1} END {exit !f}' <<<"$table"; then
        return 1
    fi
    if [[ "$PRE_NFS" -eq 0 ]] && awk '$1==100003 || $1==100005 {f=1} END {exit !f}' <<<"$table"; then
        return 1
    fi
    return 0
}
check "after SIGTERM rpcinfo -p no longer lists 100003/100005/100021" retry 3 not_listed_anymore

# check-config --strict opens each export as the daemon would; plain check-config only
# reads the file.
mkdir -p "$WORK/strict-ok"
printf 'exports:\n  - path: %s\n  - path: %s\n' "$WORK/strict-ok" "$WORK/strict-missing" \
    >"$WORK/strict.yaml"
strict_finds_the_missing_path() {
    "$BIN" check-config "$WORK/strict.yaml" || return 1
    local out rc=0
    out="$("$BIN" check-config --strict "$WORK/strict.yaml" 2>&1)" || rc=$?
    echo "$out"
    [[ $rc -eq 1 ]] && grep -q "strict-missing" <<<"$out" && ! grep -q "strict-ok" <<<"$out"
}
check "check-config --strict: a missing export path fails, an existing one passes" \
    strict_finds_the_missing_path

# import-exports: an exports(5) file becomes YAML that check-config --strict accepts.
mkdir -p "$WORK/imp a" "$WORK/imp-b"
printf '# test\n"%s" 10.0.0.0/8(rw,sync,no_subtree_check) \\\n  *(ro,async)\n%s -rw *\n' \
    "$WORK/imp a" "$WORK/imp-b" >"$WORK/exports"
import_round_trips() {
    local rc=0
    "$BIN" import-exports "$WORK/exports" >"$WORK/imported.yaml" 2>"$WORK/import.err" || rc=$?
    cat "$WORK/imported.yaml" "$WORK/import.err"
    [[ $rc -eq 0 ]] || return 1
    grep -q "option 'async' dropped" "$WORK/import.err" || return 1
    "$BIN" check-config --strict "$WORK/imported.yaml" | grep -q "OK (2 export(s))"
}
check "import-exports: /etc/exports syntax to YAML that check-config --strict accepts" \
    import_round_trips

# doctor: a healthy setup passes; each broken one fails (or warns) on the line that says so.
DOC="$(mktemp -d /tmp/nfsrdmad-doctor-XXXXXX)"
chmod 0755 "$DOC"
mkdir -p "$DOC/export" "$DOC/state"
chmod 0700 "$DOC/state"
read -r DPORT1 DPORT2 < <(pick_ports)
doctor_yaml() { # RDMA-LIST EXPORT-PATH [TCP-PORT]
    printf 'listeners:\n  tcp: ["127.0.0.1:%s"]\n  mount_port: %s\n  rdma: %s\n' \
        "${3:-$DPORT1}" "$DPORT2" "$1"
    printf 'state_dir: %s\nexports:\n  - path: %s\n' "$DOC/state" "$2"
}
doctor_expect() { # STATUS PATTERN YAML-FILE [RUNNER...]: exit status and a line of output
    local want="$1" pattern="$2" file="$3" rc=0 out
    shift 3
    out="$("$@" "$BIN" doctor --config "$file" 2>&1)" || rc=$?
    echo "$out"
    [[ $rc -eq $want ]] && grep -qE "$pattern" <<<"$out"
}
doctor_yaml "[]" "$DOC/export" >"$DOC/healthy.yaml"
check "doctor: a healthy setup exits 0" doctor_expect 0 "^ok +exports" "$DOC/healthy.yaml"
read -r HELD _ < <(pick_ports)
"$PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(60)' \
    "$HELD" &
HOLDER=$!
for _ in $(seq 1 100); do port_open "$HELD" && break; sleep 0.05; done
doctor_yaml "[]" "$DOC/export" "$HELD" >"$DOC/taken.yaml"
check "doctor: a port another program holds is a FAIL" \
    doctor_expect 1 "^FAIL ports .*127.0.0.1:$HELD" "$DOC/taken.yaml"
kill "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null || true
doctor_yaml "[]" "$DOC/nowhere" >"$DOC/missing.yaml"
check "doctor: a missing export is a FAIL" doctor_expect 1 "^FAIL exports .*nowhere" "$DOC/missing.yaml"
doctor_yaml '["0.0.0.0:20049"]' "$DOC/export" >"$DOC/rdma.yaml"
if [[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]]; then
    check "doctor: no RDMA device is said plainly" doctor_expect 0 "^WARN rdma +no RDMA device" \
        "$DOC/rdma.yaml"
else
    check "doctor: each RDMA device port is listed" doctor_expect 0 "rdma +device .* port" \
        "$DOC/rdma.yaml"
fi
check "doctor: RLIMIT_MEMLOCK below the registered pools is a FAIL (without CAP_IPC_LOCK)" \
    doctor_expect 1 "^FAIL memlock +RLIMIT_MEMLOCK is 64 KiB" "$DOC/rdma.yaml" \
    setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock prlimit --memlock=65536:65536
check "doctor: without root's capabilities it is a FAIL" \
    doctor_expect 1 "^FAIL capabilities .*CAP_DAC_READ_SEARCH" "$DOC/healthy.yaml" \
    setpriv --reuid=65534 --regid=65534 --clear-groups
chmod 0777 "$DOC/state"
check "doctor: a state directory others can write is a FAIL" \
    doctor_expect 1 "^FAIL state_dir" "$DOC/healthy.yaml"
rm -rf "$DOC"

echo
echo "$PASSED passed, $FAILED failed"
if [[ $FAILED -ne 0 ]]; then
    printf '  failed: %s\n' "${FAILED_NAMES[@]}"
    exit 1
fi
exit 0
