# cpu.sh - CPU time of the servers and of the whole VM, for the bench's guest scripts
# (guest-deleg.sh, guest-gss.sh; sourced from /vmtest). Bash builtins only: under TCG every
# fork+exec costs a tenth of a second.
#   server_cpu SERVER   ticks (user + system) SERVER has used so far: nfsrdmad's process
#                       (all its threads, $NFSRDMAD_PID), or the kernel nfsd's threads
#   vm_busy             ticks all vCPUs have spent not idle so far (/proc/stat)
#   cpu_json SERVER     {"server": ticks, "vm": ticks}

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
