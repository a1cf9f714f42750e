#!/bin/bash
# PID 1 of the test VM after switch_root (copied into the run directory by boot.sh), or, with
# boot.sh --systemd, vmtest.service under systemd (which has mounted the API file systems).
# Root fs = the host's / (read-only 9p) + tmpfs overlay; /vmtest = the run directory (9p, rw).
#
#  * as PID 1: mounts the API filesystems and tmpfs on /tmp and /run,
#  * touches /vmtest/booted (boot.sh's boot watchdog waits for it),
#  * runs /vmtest/guest.sh with bash as root, cwd /vmtest, with the variables of /vmtest/env,
#    VMTEST_OUT=/vmtest/out (comes back to the host) and VMTEST_LIB=/vmtest/lib,
#  * writes its exit status to /vmtest/exit_code and the kernel log to out/dmesg.txt,
#  * if /vmtest/shell exists, opens an interactive shell on the console,
#  * powers the VM off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-linux} LANG=C.UTF-8 LC_ALL=C.UTF-8
umask 022

if [ $$ -eq 1 ]; then
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys  || mount -t sysfs sysfs /sys
mountpoint -q /dev  || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
fi
mkdir -p /run/lock /run/rpcbind /run/sendsigs.omit.d /var/tmp /var/lib/nfs /root
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
hostname vmtest
echo "127.0.0.1 localhost vmtest" > /etc/hosts
ip link set lo up
# NB: no depmod here (prepare.sh ran `depmod -b` on the host; in the guest it takes ~25 s).

touch /vmtest/booted
echo "[vm] guest up: kernel $(uname -r), uptime $(cut -d' ' -f1 /proc/uptime)s," \
     "$(nproc) cpus, $(awk '/MemTotal/{print int($2/1024)" MiB"}' /proc/meminfo)"

export VMTEST_OUT=/vmtest/out VMTEST_LIB=/vmtest/lib
mkdir -p "$VMTEST_OUT"
rc=0
if [ -f /vmtest/guest.sh ]; then
    echo "===== [vm] guest script begin: $(cat /vmtest/guest.name 2>/dev/null) ====="
    # own session: the script's background jobs cannot grab the console; setsid -w waits
    (
        cd /vmtest || exit 1
        set -a
        # shellcheck disable=SC1091
        [ -f /vmtest/env ] && . /vmtest/env
        set +a
        exec setsid -w /bin/bash /vmtest/guest.sh </dev/null
    )
    rc=$?
    echo "===== [vm] guest script end: rc=$rc, uptime $(cut -d' ' -f1 /proc/uptime)s ====="
    # How busy the two vCPUs were (USER_HZ ticks of /proc/stat's first line): under TCG each
    # busy vCPU is a host thread at work, which is what the VM tier costs the host.
    read -r _ u n s i w q sq _ < /proc/stat
    echo "[vm] guest CPU: busy $(( (u + n + s + q + sq) / 100 )) s (user $(( (u + n) / 100 )), system $(( (s + q + sq) / 100 ))), idle $(( (i + w) / 100 )) s, both vCPUs together"
fi
dmesg > "$VMTEST_OUT/dmesg.txt" 2>/dev/null
echo "$rc" > /vmtest/exit_code
sync

if [ -f /vmtest/shell ]; then
    echo "[vm] interactive shell (libraries in /vmtest/lib; 'exit' powers the VM off)"
    (cd /vmtest && setsid -c /bin/bash --rcfile /vmtest/shellrc -i </dev/ttyS0 >/dev/ttyS0 2>&1)
fi
echo "[vm] powering off (uptime $(cut -d' ' -f1 /proc/uptime)s)"
cd /
umount /vmtest 2>/dev/null
[ $$ -eq 1 ] || exec systemctl --force --force poweroff
exec /bin/busybox poweroff -f
