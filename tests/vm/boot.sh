#!/usr/bin/env bash
# boot.sh - boot the test VM (Debian kernel under qemu, TCG: no KVM needed), run one guest
# script in it as root, stream the console, power off, return the guest script's exit status.
#
# Usage: tests/vm/boot.sh [options] GUEST_SCRIPT [FILE...]
#        tests/vm/boot.sh --shell [options] [GUEST_SCRIPT [FILE...]]
#
#   GUEST_SCRIPT   bash script run in the guest (cwd /vmtest). tests/vm/lib/*.sh and *.py are in
#                  /vmtest/lib ($VMTEST_LIB); FILEs are copied into /vmtest.
#                  Whatever it writes to $VMTEST_OUT (/vmtest/out) is in RUN_DIR/out afterwards.
#   -e KEY=VAL     environment variable for the guest script (repeatable)
#   --vm-dir DIR   what prepare.sh made (default: $NFSRDMAD_VM_DIR, else <repo>/build/vm)
#   --run-dir DIR  run directory shared with the guest: script, results, console.log. It must be
#                  empty, absent, or an earlier run directory (then it is emptied). Default: a new
#                  directory under /tmp (its path is printed at the end).
#   --timeout S    whole run, boot included (default $VMTEST_TIMEOUT or 1200)
#   --boot-timeout S  time for the guest to reach its script (default $VMTEST_BOOT_TIMEOUT or 180)
#   --mem SIZE     guest memory (default $VMTEST_MEM or 2G); --smp N vCPUs (default $VMTEST_SMP or 2)
#   --shell        after the script (or instead of it when none is given) open a root shell on
#                  the console; Ctrl-A x kills the VM. Needs a terminal.
#   --debug        on an early boot failure the initramfs gives a busybox shell instead of powering off
#   --systemd      systemd is the guest's PID 1 and runs the script as vmtest.service (after
#                  basic.target), so the script can install, start and stop real units; the
#                  overlay's upper directory (every file the guest wrote) is at /.vmtest-upper,
#                  its lower one (the host's root) at /.vmtest-lower
#
# VMTEST_APPEND: more arguments for the guest kernel, e.g. "clocksource=tsc tsc=reliable".
#
# Runs are serialized per VM directory (flock on VM_DIR/.lock; VMTEST_LOCK_WAIT seconds, 1800).
#
# The guest sees the host's / read-only (plus a tmpfs overlay), so host binaries - the freshly
# built daemon included - run in the guest at the same paths. Exceptions: the guest has its own
# empty /tmp, /run and /dev/shm, so pass files from there as FILE arguments instead.
#
# Exit status: the guest script's; 124 the run timed out; 125 the VM did not boot or died
# before the script finished (the reason is printed); 2 bad usage or missing prerequisites.
set -uo pipefail

# The whole script is one compound command: bash parses it completely before running it,
# so editing this file while it runs (a VM can run for many minutes) cannot derail it.
{

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_DIR=${NFSRDMAD_VM_DIR:-$HERE/../../build/vm}
RUN_DIR=
TIMEOUT=${VMTEST_TIMEOUT:-1200}
BOOT_TIMEOUT=${VMTEST_BOOT_TIMEOUT:-180}
MEM=${VMTEST_MEM:-2G}
SMP=${VMTEST_SMP:-2}
SHELL_MODE=0
DEBUG=0
SYSTEMD=0
GUEST_ENV=()

say() { echo "[vm-boot] $*" >&2; }
usage_fail() { say "$*"; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        -e) [ $# -ge 2 ] || usage_fail "-e needs KEY=VAL"; GUEST_ENV+=("$2"); shift 2 ;;
        --vm-dir) VM_DIR=$2; shift 2 ;;
        --run-dir) RUN_DIR=$2; shift 2 ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --boot-timeout) BOOT_TIMEOUT=$2; shift 2 ;;
        --mem) MEM=$2; shift 2 ;;
        --smp) SMP=$2; shift 2 ;;
        --shell) SHELL_MODE=1; shift ;;
        --debug) DEBUG=1; shift ;;
        --systemd) SYSTEMD=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        -*) usage_fail "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
SCRIPT=${1:-}
[ $# -gt 0 ] && shift
[ -n "$SCRIPT" ] || [ $SHELL_MODE = 1 ] || usage_fail "no guest script given (see --help)"
[ -z "$SCRIPT" ] || [ -f "$SCRIPT" ] || usage_fail "guest script not found: $SCRIPT"
for f in "$@"; do [ -e "$f" ] || usage_fail "file to copy into the guest not found: $f"; done
for kv in "${GUEST_ENV[@]}"; do
    [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || usage_fail "bad -e argument (want KEY=VAL): $kv"
done
[[ $TIMEOUT =~ ^[0-9]+$ && $BOOT_TIMEOUT =~ ^[0-9]+$ ]] || usage_fail "timeouts must be whole seconds"

# ------------------------------------------------------------------------------ prerequisites
QEMU=$(command -v qemu-system-x86_64 || true)
[ -n "$QEMU" ] || usage_fail "qemu-system-x86_64 not found: install qemu-system-x86 (tests/vm/prepare.sh does)"
[ -d "$VM_DIR" ] || usage_fail "VM directory $VM_DIR missing: run tests/vm/prepare.sh $VM_DIR first"
VM_DIR=$(cd "$VM_DIR" && pwd)
for f in vmlinuz initramfs.gz kver; do
    [ -s "$VM_DIR/$f" ] || usage_fail "$VM_DIR/$f missing: run tests/vm/prepare.sh $VM_DIR"
done
KVER=$(cat "$VM_DIR/kver")
[ -d "$VM_DIR/kroot/lib/modules/$KVER" ] || usage_fail "$VM_DIR/kroot has no modules for $KVER: rerun prepare.sh"
[ "$(id -u)" = 0 ] || say "warning: not root; the guest may not be able to read every host file"
if [ $SHELL_MODE = 1 ] && ! [ -t 0 ]; then usage_fail "--shell needs a terminal on stdin"; fi

# One VM per VM directory at a time (2-core hosts; prepare.sh also takes this lock before it
# replaces the kernel tree a running guest reads its modules from).
exec 9>"$VM_DIR/.lock"
if ! flock -n 9; then
    say "another VM run (or prepare.sh) is using $VM_DIR; waiting up to ${VMTEST_LOCK_WAIT:-1800}s"
    LOCK_T0=$SECONDS
    flock -w "${VMTEST_LOCK_WAIT:-1800}" 9 || usage_fail "$VM_DIR is still busy after ${VMTEST_LOCK_WAIT:-1800}s"
    say "waited $((SECONDS - LOCK_T0))s for the other VM run"
fi

# ------------------------------------------------------------------------------ run directory
if [ -z "$RUN_DIR" ]; then
    RUN_DIR=$(mktemp -d /tmp/nfsrdmad-vm.XXXXXX) || usage_fail "mktemp failed"
else
    mkdir -p "$RUN_DIR" || usage_fail "cannot create $RUN_DIR"
    if [ -n "$(ls -A "$RUN_DIR")" ]; then
        [ -f "$RUN_DIR/.vmtest-run" ] || usage_fail "--run-dir $RUN_DIR is not empty and not an earlier run directory; refusing to empty it"
        find "$RUN_DIR" -mindepth 1 -delete || usage_fail "cannot empty $RUN_DIR"
    fi
fi
RUN_DIR=$(cd "$RUN_DIR" && pwd)
touch "$RUN_DIR/.vmtest-run"
mkdir -p "$RUN_DIR/out" "$RUN_DIR/lib"
cp "$HERE/guest/runner.sh" "$RUN_DIR/runner.sh"
cp "$HERE"/lib/*.sh "$HERE"/lib/*.py "$RUN_DIR/lib/"
if [ $SYSTEMD = 1 ]; then
    mkdir -p "$RUN_DIR/systemd"
    cp "$HERE"/guest/vmtest.service "$HERE"/guest/vmtest.target "$RUN_DIR/systemd/"
fi
if [ -n "$SCRIPT" ]; then
    cp "$SCRIPT" "$RUN_DIR/guest.sh"
    basename "$SCRIPT" > "$RUN_DIR/guest.name"
fi
for f in "$@"; do cp -r "$f" "$RUN_DIR/"; done
: > "$RUN_DIR/env"
for kv in "${GUEST_ENV[@]}"; do
    key=${kv%%=*} val=${kv#*=}
    # The guest sees the host's / except /tmp, /run and /dev/shm (its own are RAM). A
    # program there (a build tree in /tmp) travels in the run directory, seen as /vmtest.
    case "$val" in
        /tmp/*|/run/*|/dev/shm/*)
            if [ -f "$val" ] && [ -x "$val" ]; then
                mkdir -p "$RUN_DIR/bin"
                cp "$val" "$RUN_DIR/bin/"
                val=/vmtest/bin/$(basename "$val")
            fi ;;
    esac
    printf '%s=%q\n' "$key" "$val" >> "$RUN_DIR/env"
done
if [ $SHELL_MODE = 1 ]; then
    touch "$RUN_DIR/shell"
    cat > "$RUN_DIR/shellrc" <<'EOF'
set -a; [ -f /vmtest/env ] && . /vmtest/env; set +a
export VMTEST_OUT=/vmtest/out VMTEST_LIB=/vmtest/lib
for f in /vmtest/lib/*.sh; do . "$f"; done
PS1='vm:\w# '
echo "libraries loaded: $(cd /vmtest/lib && echo *.sh); try: rxe_setup, knfsd_start, nfsrdmad_start"
EOF
fi

# ------------------------------------------------------------------------------ qemu
APPEND="console=ttyS0 panic=-1 oops=panic loglevel=4 mitigations=off nokaslr"
APPEND+=" vmtest.kroot=$VM_DIR/kroot"
[ $DEBUG = 1 ] && APPEND+=" vmtest.debug=1"
APPEND+=" ${VMTEST_APPEND:-}"
if [ $SHELL_MODE = 1 ]; then
    CONSOLE=(-chardev "stdio,id=con0,mux=on,signal=off,logfile=$RUN_DIR/console.log"
             -serial chardev:con0 -mon chardev=con0,mode=readline)
else
    CONSOLE=(-chardev "stdio,id=con0,logfile=$RUN_DIR/console.log" -serial chardev:con0)
fi
QEMU_CMD=("$QEMU"
    -nodefaults -no-user-config -no-reboot
    -machine q35 -accel tcg,thread=multi -cpu max
    -smp "$SMP" -m "$MEM"
    -display none "${CONSOLE[@]}"
    -kernel "$VM_DIR/vmlinuz" -initrd "$VM_DIR/initramfs.gz" -append "$APPEND"
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap,id=fs0"
    -virtfs "local,path=$RUN_DIR,mount_tag=vmtest,security_model=none,id=fs1"
    -nic none
    -pidfile "$RUN_DIR/qemu.pid")
# shellcheck disable=SC2206
[ -n "${VMTEST_QEMU_EXTRA:-}" ] && QEMU_CMD+=($VMTEST_QEMU_EXTRA)
printf '%q ' "${QEMU_CMD[@]}" > "$RUN_DIR/qemu.cmdline"

say "kernel $KVER, ${SMP} vCPU, $MEM, run dir $RUN_DIR, timeout ${TIMEOUT}s (boot ${BOOT_TIMEOUT}s)"
[ -n "$SCRIPT" ] && say "guest script: $SCRIPT"

# Watchdog: kills qemu (by the pid it wrote) when the guest has not booted within
# BOOT_TIMEOUT or the run exceeds TIMEOUT, and leaves the reason in RUN_DIR/watchdog.
watchdog() {
    local t=0 pid= reason=
    while :; do
        sleep 1; t=$((t + 1))
        [ -z "$pid" ] && [ -s "$RUN_DIR/qemu.pid" ] && pid=$(cat "$RUN_DIR/qemu.pid")
        if [ ! -e "$RUN_DIR/booted" ] && [ $t -ge "$BOOT_TIMEOUT" ]; then
            reason="the VM did not boot within ${BOOT_TIMEOUT}s (no sign of the guest runner; see the console above)"
        elif [ $t -ge "$TIMEOUT" ] && [ $SHELL_MODE = 0 ]; then
            reason="timeout: the run took longer than ${TIMEOUT}s; qemu killed"
        fi
        if [ -n "$reason" ]; then
            echo "$reason" > "$RUN_DIR/watchdog"
            if [ -n "$pid" ]; then
                kill -TERM "$pid" 2>/dev/null
                sleep 5
                kill -KILL "$pid" 2>/dev/null
            fi
            return
        fi
    done
}
watchdog 9>&- &
WD=$!
trap 'kill $WD 2>/dev/null; [ -s "$RUN_DIR/qemu.pid" ] && kill -TERM "$(cat "$RUN_DIR/qemu.pid")" 2>/dev/null' INT TERM

T0=$(date +%s.%N)
if [ $SHELL_MODE = 1 ]; then
    "${QEMU_CMD[@]}" 9>&-
else
    "${QEMU_CMD[@]}" </dev/null 9>&-
fi
QRC=$?
T1=$(date +%s.%N)
kill $WD 2>/dev/null
wait $WD 2>/dev/null
trap - INT TERM

WALL=$(awk -v a="$T0" -v b="$T1" 'BEGIN{printf "%.1f", b - a}')
if [ -s "$RUN_DIR/watchdog" ]; then
    say "FAILED: $(cat "$RUN_DIR/watchdog")"
    if [ -e "$RUN_DIR/booted" ]; then RC=124; else RC=125; fi
elif [ -s "$RUN_DIR/exit_code" ]; then
    RC=$(cat "$RUN_DIR/exit_code")
elif [ $QRC -ne 0 ] && [ ! -s "$RUN_DIR/console.log" ]; then
    say "FAILED: qemu could not start (exit status $QRC); command line in $RUN_DIR/qemu.cmdline"
    RC=125
else
    RC=125
    if [ ! -e "$RUN_DIR/booted" ]; then
        say "FAILED: the VM stopped before reaching the guest script (qemu exit status $QRC)"
    else
        say "FAILED: the VM stopped before the guest script finished (qemu exit status $QRC)"
    fi
    grep -aE 'FATAL|Kernel panic|BUG:|Oops|Out of memory' "$RUN_DIR/console.log" 2>/dev/null \
        | head -5 | sed 's/^/[vm-boot]   console: /' >&2
fi
say "wall ${WALL}s, exit status $RC, results in $RUN_DIR/out"
exit "$RC"
}
