# cpu.sh - CPU time of the servers and of the whole VM, for the bench's guest scripts
# (guest-bench.sh, guest-deleg.sh, guest-gss.sh; sourced from /vmtest). Bash builtins only: under TCG every
# fork+exec costs a tenth of a second.
#   server_cpu SERVER   ticks (user + system) SERVER has used so far: nfsrdmad's process
#                       (all its threads, $NFSRDMAD_PID), or the kernel nfsd's threads
#   vm_busy             ticks all vCPUs have spent not idle so far (/proc/stat)
#   cpu_json SERVER     {"server": ticks, "vm": ticks}
#   mount_bytes MNT     "READ WRITE": bytes the NFS mount at MNT has read from and written to
#                       its server so far (/proc/self/mountstats, "bytes:" server fields)
# Placement (run.sh --split; BENCH_SPLIT=1): client and server on vCPUs of their own, as if
# they were two hosts. Without it, each does nothing.
#   pin_server PID...   every thread of each PID (a daemon, the nfsd threads) on vCPU 0;
#                       threads started later inherit it
#   pin_client          this shell, and so the jobs it starts from now on, on vCPU 1
#   unpin_client        this shell on every vCPU again

server_cpu() {
    local f p comm sum=0
    if [ "$1" = nfsrdmad ]; then
        read -r -a f < "/proc/$NFSRDMAD_PID/stat" && sum=$((f[13] + f[14]))
    else
        for p in /proc/[0-9]*; do
            read -r comm < "$p/comm" 2> /dev/null || continue
            [ "$comm" = nfsd ] || continue
            read -r -a f < "$p/stat" 2> /dev/null && sum=$((sum + f[13] + f[14]))
        done
    fi
    echo $sum
}

vm_busy() {
    local cpu u n s idle io irq sirq steal
    read -r cpu u n s idle io irq sirq steal _ < /proc/stat
    echo $((u + n + s + irq + sirq))
}

cpu_json() { echo "{\"server\": $(server_cpu "$1"), \"vm\": $(vm_busy)}"; }

mount_bytes() {
    local mnt src mounted on at rest key f
    mnt=$(cd "$1" && pwd -P) || return 1
    local inb=0
    while read -r key rest; do
        if [ "$key" = device ]; then
            read -r src mounted on at _ <<< "$rest"  # SRC mounted on MNT with fstype nfs4 ...
            inb=0
            [ "$on" = on ] && [ "$at" = "$mnt" ] && [[ $rest == *" with fstype nfs"* ]] && inb=1
        elif [ $inb = 1 ] && [ "$key" = bytes: ]; then
            read -r -a f <<< "$rest"  # normal r/w, direct r/w, server r/w, pages r/w
            echo "${f[4]} ${f[5]}"
            return 0
        fi
    done < /proc/self/mountstats
    echo "0 0"
}

pin_server() {
    [ "${BENCH_SPLIT:-0}" = 1 ] || return 0
    [ $# -gt 0 ] || { echo "pin_server: no process to pin" >&2; return 1; }
    local p
    for p in "$@"; do taskset -apc 0 "$p" > /dev/null || return 1; done
}

pin_client() {
    [ "${BENCH_SPLIT:-0}" = 1 ] || return 0
    taskset -pc 1 $$ > /dev/null
}

unpin_client() {
    [ "${BENCH_SPLIT:-0}" = 1 ] || return 0
    taskset -pc "0-$(($(nproc --all) - 1))" $$ > /dev/null
}
