# common.sh - helpers for guest scripts (sourced; bash). Loaded by every other lib file.
#
#   step TITLE                 print a section header
#   check DESC CMD [ARGS...]   run CMD; record PASS/FAIL (with the command and its status)
#   check_eq DESC WANT GOT     compare two strings
#   note TEXT                  informational line
#   vm_summary                 print "N passed, N failed" and return 0 only if nothing failed
#   need_cmd CMD...            fail fast when a host tool is missing (the guest runs host binaries)
#   load_modules MOD...        modprobe with a clear error
#   make_ext4 MOUNTPOINT MB    fresh ext4 image (on tmpfs) loop-mounted at MOUNTPOINT
#   now / since T0             wall-clock helpers (seconds, fractional)
# Results also go to $VMTEST_OUT/results.txt (one line per check).

[ -n "${_VM_COMMON_SH:-}" ] && return 0
_VM_COMMON_SH=1

VMTEST_OUT=${VMTEST_OUT:-/tmp/vmtest-out}
mkdir -p "$VMTEST_OUT"
VM_PASSED=0
VM_FAILED=0
VM_FAILED_NAMES=()

note() { echo "    $*"; }

# Seconds of uptime at the last step or result, and how long since then as " (+N s)" when that
# is 2 s or more: the console shows which checks (and the work before them) take the time.
read -r _VM_LAST_T _ < /proc/uptime  # a result before the first step: time since sourcing
_VM_LAST_T=${_VM_LAST_T:-0.00}
_vm_took() {  # sets _VM_TOOK; no fork (uptime has two decimals: count hundredths)
    local up _ d
    read -r up _ < /proc/uptime
    up=${up:-$_VM_LAST_T}
    d=$(( 10#${up/./} - 10#${_VM_LAST_T/./} ))
    _VM_TOOK=
    [ $d -ge 200 ] && _VM_TOOK=" (+$((d / 100)).$((d / 10 % 10)) s)"
    _VM_LAST_T=$up
}
step() {
    local up _
    read -r up _ < /proc/uptime
    _VM_LAST_T=$up
    echo; echo "### $* (t=${up}s)"
}

_vm_record() {  # PASS|FAIL DESC [detail]
    local took
    _vm_took
    took=$_VM_TOOK
    if [ "$1" = PASS ]; then
        VM_PASSED=$((VM_PASSED + 1))
        echo "PASS: $2$took"
    else
        VM_FAILED=$((VM_FAILED + 1))
        VM_FAILED_NAMES+=("$2")
        echo "FAIL: $2${3:+ -- $3}$took"
    fi
    echo "$1: $2${3:+ -- $3}" >> "$VMTEST_OUT/results.txt"
}

# check DESC CMD...: runs CMD (output shown), PASS if it exits 0. Returns CMD's status.
check() {
    local desc=$1; shift
    "$@"
    local rc=$?
    if [ $rc = 0 ]; then _vm_record PASS "$desc"; else _vm_record FAIL "$desc" "exit status $rc: $*"; fi
    return $rc
}

# check_eq DESC WANT GOT
check_eq() {
    if [ "$2" = "$3" ]; then _vm_record PASS "$1"; return 0; fi
    _vm_record FAIL "$1" "want '$2', got '$3'"
    return 1
}

# fail DESC [detail] / pass DESC: record a result computed by the caller
fail() { _vm_record FAIL "$1" "${2:-}"; return 1; }
pass() { _vm_record PASS "$1"; }

vm_summary() {
    echo
    if [ $VM_FAILED -gt 0 ]; then
        echo "failed checks:"
        printf '  - %s\n' "${VM_FAILED_NAMES[@]}"
    fi
    echo "$VM_PASSED passed, $VM_FAILED failed"
    [ $VM_FAILED = 0 ] && [ $VM_PASSED -gt 0 ]
}

need_cmd() {
    local c missing=()
    for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
    [ ${#missing[@]} = 0 ] && return 0
    echo "missing tools in the guest (install them on the HOST; tests/vm/prepare.sh does): ${missing[*]}" >&2
    return 1
}

load_modules() {
    local m
    for m in "$@"; do
        modprobe "$m" || { echo "modprobe $m failed (kernel $(uname -r))" >&2; return 1; }
    done
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}'; }

# make_ext4 MOUNTPOINT SIZE_MB: an ext4 file system on a sparse image in the guest's /tmp
# (tmpfs: only written blocks use memory), loop-mounted at MOUNTPOINT. ext4, unlike the
# guest's overlay root, supports name_to_handle_at/open_by_handle_at (nfsrdmad needs them)
# and is exportable by the kernel nfsd.
make_ext4() {
    local mnt=$1 mb=$2 img
    load_modules loop ext4 || return 1
    mkdir -p /tmp/vm-images "$mnt" || return 1
    img=/tmp/vm-images/$(echo "$mnt" | tr / _).img
    rm -f "$img"
    truncate -s "${mb}M" "$img" || return 1
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -m 0 "$img" || return 1
    mount -o loop "$img" "$mnt" || { echo "loop mount of $img failed" >&2; return 1; }
    chmod 0755 "$mnt"
}

# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds
wait_for() {
    local secs=$1 i; shift
    for ((i = 0; i < secs * 5; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    "$@"
}
