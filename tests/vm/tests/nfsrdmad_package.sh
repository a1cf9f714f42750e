#!/bin/bash
# nfsrdmad_package.sh - guest test group vm_nfsrdmad_package (issue 14), booted with
# `boot.sh --systemd`: systemd is PID 1, so the Debian package's maintainer scripts and the
# hardened unit run as they do on a server.
#
# $NFSRDMAD_DEB is the package `scripts/make-deb.sh` made (ctest: from the Release tree).
# The guest's root is the host's, read-only, under a tmpfs overlay: nfsrdmad is not
# installed there, and everything the package writes lands in the overlay's upper
# directory (/.vmtest-upper), which is what "nothing left behind" is checked against.
#
# Asserts:
#  - `dpkg -i` installs it with no other package missing; the unit is enabled and started by
#    the maintainer scripts; /etc/nfsrdmad/nfsrdmad.yaml is a conffile that exports nothing
#    and the service runs with it (Type=notify: active, StatusText from the daemon), from the
#    installed /usr/sbin/nfsrdmad, registered with the system's rpcbind (NFS 3 and 4, MOUNT);
#  - the admin edits the file and reloads: `nfsrdmad exports` lists the export, and the
#    kernel client mounts it over RDMA (NFSv4.1, rxe) and TCP (NFSv3 through rpcbind), with
#    a file written through one read back exactly through the other;
#  - a file check-config rejects fails `systemctl reload` and the mounts keep working; an
#    export the daemon cannot open is logged at priority err (`journalctl -p err` shows it,
#    and no info line), and the exports in force stay;
#  - WatchdogSec: a daemon that stops pinging (SIGSTOP) is killed and restarted by systemd;
#  - the man pages are installed and render;
#  - `nfsrdmad doctor` on the installed setup finds the rxe device and nothing wrong, and
#    fails an RDMA address no device has;
#  - reinstalling the package (an upgrade) restarts the service and keeps the edited file;
#  - `dpkg -r` stops the service and unregisters it from rpcbind; `dpkg -P` removes the
#    conffile, the state directory and the enablement links: no file the package or the
#    service made is left anywhere.
source "${VMTEST_LIB:-/vmtest/lib}/nfs.sh"
source "${VMTEST_LIB:-/vmtest/lib}/rxe.sh"

CONF=/etc/nfsrdmad/nfsrdmad.yaml
EXPORT=/srv/nfs

# What the guest wrote: the overlay's upper directory, one "TYPE PATH" line per entry (find's
# %y), minus what any guest run churns.
upper_files() {
    (cd /.vmtest-upper && find . -mindepth 1 \
        \( -path ./tmp -o -path ./var/log -o -path ./var/cache -o -path ./root \
           -o -path ./var/lib/dpkg -o -path ./var/backups -o -path ./var/lib/systemd/catalog \
           -o -path ./var/lib/systemd/random-seed -o -path ./var/tmp -o -path ./srv \
           -o -path ./mnt -o -path ./vmtest -o -path ./lib/modules -o -path ./etc/hosts \
           -o -path ./etc/hostname -o -path ./etc/machine-id -o -path ./.vmtest-upper \
           -o -path ./.vmtest-lower \) -prune -o -printf '%y %p\n' | sort)
}

# Entries of upper.after that upper.before lacks, except directories the host's root has
# (overlayfs copies a directory up when a file is made in it, and it stays when the file
# goes): what was left behind.
left_behind() {
    local type path
    comm -13 "$VMTEST_OUT/upper.before" "$VMTEST_OUT/upper.after" | while read -r type path; do
        [ "$type" = d ] && [ -d "/.vmtest-lower/${path#./}" ] && continue
        echo "$type $path"
    done
}

service_prop() { systemctl show -p "$1" --value nfsrdmad.service; }

main_pid_changes_from() {  # OLD_PID: waits up to 60 s for a new main process
    local i pid
    for ((i = 0; i < 120; i++)); do
        pid=$(service_prop MainPID)
        [ "$pid" != 0 ] && [ "$pid" != "$1" ] && [ "$(systemctl is-active nfsrdmad)" = active ] \
            && return 0
        sleep 0.5
    done
    echo "main pid still $(service_prop MainPID) (was $1), state $(systemctl is-active nfsrdmad)"
    return 1
}

exports_list() { nfsrdmad exports 2>&1; }

exports_show() {  # PATTERN: `nfsrdmad exports` shows it within 10 s
    local i
    for ((i = 0; i < 50; i++)); do
        exports_list | grep -q "$1" && return 0
        sleep 0.2
    done
    exports_list
    return 1
}

write_config() {  # EXPORT-PATH|-
    sed '/^exports: \[\]$/d' "$VMTEST_OUT/conffile.orig" > "$CONF"
    if [ "$1" != - ]; then
        printf 'exports:\n  - path: %s\n    access: rw\n    squash: none\n' "$1" >> "$CONF"
    else
        echo 'exports: []' >> "$CONF"
    fi
}

step "systemd is PID 1"
check "PID 1 is systemd" test "$(cat /proc/1/comm)" = systemd
check "the package file is there ($NFSRDMAD_DEB)" test -s "${NFSRDMAD_DEB:-/nonexistent}"
check "nfsrdmad is not installed before" \
    bash -c '! dpkg-query -W -f="\${Status}" nfsrdmad 2>/dev/null | grep -q "install ok"'
# The build host is a container image whose policy-rc.d (exit 101) forbids maintainer
# scripts to start, restart or stop services; a server has none.
rm -f /usr/sbin/policy-rc.d
# man-db's dpkg trigger re-indexes the manual after every install and removal: half a
# minute each under emulation, and not the package's doing (`man -l` below reads the
# pages themselves). Debian skips it where this flag file is absent.
rm -f /var/lib/man-db/auto-update
rxe_setup || exit 1
nfs_client_modules || exit 1
make_ext4 "$EXPORT" 256 || exit 1
upper_files > "$VMTEST_OUT/upper.before"

step "install"
check "dpkg -i installs it" dpkg -i "$NFSRDMAD_DEB"
dpkg-deb -c "$NFSRDMAD_DEB" > "$VMTEST_OUT/package.contents"
dpkg-deb -I "$NFSRDMAD_DEB" > "$VMTEST_OUT/package.info"
cp "$CONF" "$VMTEST_OUT/conffile.orig"
check_eq "the unit is enabled" enabled "$(systemctl is-enabled nfsrdmad 2>&1)"
check_eq "the service is active after install" active "$(systemctl is-active nfsrdmad 2>&1)"
check "$CONF is a conffile" bash -c "dpkg-query -W -f='\${Conffiles}' nfsrdmad | grep -q ' $CONF '"
check "the shipped file exports nothing" grep -qx 'exports: \[\]' "$CONF"
PID=$(service_prop MainPID)
check_eq "the daemon runs from the installed binary" /usr/sbin/nfsrdmad "$(readlink /proc/"$PID"/exe)"
status=$(service_prop StatusText)
note "StatusText: $status"
check_eq "StatusText says what it serves (sd_notify STATUS=)" "serving 0 export(s)" "$status"
check "nfsrdmad exports: no exports" exports_show "no exports"
check "the state directory is 0700 root" \
    test "$(stat -c '%a %U' /var/lib/nfsrdmad)" = "700 root"
rpcinfo -p > "$VMTEST_OUT/rpcinfo.installed" 2>&1
check "registered with rpcbind: NFS v3 and v4, MOUNT v3" \
    bash -c "grep -Eq '100003 +3 +tcp' $VMTEST_OUT/rpcinfo.installed && \
             grep -Eq '100003 +4 +tcp' $VMTEST_OUT/rpcinfo.installed && \
             grep -Eq '100005 +3 +tcp' $VMTEST_OUT/rpcinfo.installed"
check "the man pages render" bash -c 'man -l /usr/share/man/man8/nfsrdmad.8.gz | grep -q "check-config" && man -l /usr/share/man/man5/nfsrdmad.yaml.5.gz | grep -q "mount_port"'

step "edit the file, reload, mount"
write_config "$EXPORT"
check "check-config --strict accepts the edited file" nfsrdmad check-config --strict "$CONF"
check "systemctl reload" systemctl reload nfsrdmad
check "nfsrdmad exports lists $EXPORT" exports_show "$EXPORT"
check_eq "still the same process after reload" "$PID" "$(service_prop MainPID)"
check_eq "StatusText after the reload" "serving 1 export(s)" "$(service_prop StatusText)"
check "mount v4.1 over RDMA" nfs_mount "$RXE_IP:$EXPORT" /mnt/r "vers=4.1,proto=rdma,port=20049,soft,timeo=150,retrans=2"
check "the v4.1 mount is RDMA" assert_mount_transport /mnt/r rdma
check "mount v3 over TCP through rpcbind" nfs_mount "127.0.0.1:$EXPORT" /mnt/t "vers=3,proto=tcp,nolock,soft,timeo=150,retrans=2"
check "the v3 mount is TCP" assert_mount_transport /mnt/t tcp
dd if=/dev/urandom of=/tmp/data bs=1M count=16 status=none
check "16 MiB written over RDMA" cp /tmp/data /mnt/r/data
sync
check "read back exactly over TCP" cmp /tmp/data /mnt/t/data
check "and on the server's disk" cmp /tmp/data "$EXPORT/data"

step "delegations under the unit's capabilities"
# A file a user owns: the daemon's read lease needs CAP_LEASE (the unit's bounding set),
# and its watch of the delegated file (vfs/file_watch.h) an unprivileged fanotify group.
# A chmod on the server then recalls the v4.1 client's delegation, and the client sees it.
echo delegated > "$EXPORT/deleg"
chown 1000:1000 "$EXPORT/deleg"
chmod 644 "$EXPORT/deleg"
check "the v4.1 client reads a file a user owns" grep -q delegated /mnt/r/deleg
check_eq "... its mode" 644 "$(stat -c %a /mnt/r/deleg)"
deleg_stat() {  # KEY of the daemon's last stats: nfs4_delegations line (SIGUSR1 dumps it)
    systemctl kill -s USR1 nfsrdmad && sleep 1
    journalctl -u nfsrdmad -o cat --no-pager | grep -o 'stats: nfs4_delegations .*' | tail -1 |
        tr ' ' '\n' | sed -n "s/^$1=//p"
}
check "the daemon granted it a delegation (no file lease refused)" \
    test "$(deleg_stat granted)" -ge 1
chmod 600 "$EXPORT/deleg"
_deleg_mode() { test "$(stat -c %a /mnt/r/deleg)" = 600; }
check "a chmod on the server: the client sees mode 600 within 30 s (the watch recalled it)" \
    wait_for 30 _deleg_mode
check "... (daemon: local_changes)" test "$(deleg_stat local_changes)" -ge 1
check "the journal has no warning about leases or the watch" \
    bash -c "! journalctl -u nfsrdmad -o cat --no-pager | grep -Eq 'file lease is refused|fanotify|cannot be watched'"

step "doctor on the installed setup, with Soft-RoCE"
# The unit gives the daemon LimitMEMLOCK=infinity; the shell that asks gives doctor the same.
doctor() { bash -c 'ulimit -l unlimited && exec nfsrdmad doctor "$@"' doctor "$@" 2>&1; }
doctor > "$VMTEST_OUT/doctor.txt"
rc=$?
cat "$VMTEST_OUT/doctor.txt"
check_eq "doctor: nothing stops it from serving (exit 0)" 0 "$rc"
check "doctor: the rxe device, its port active with a RoCE v2 GID" \
    grep -Eq "^ok +rdma +device $RXE_DEV port 1: active, [0-9]+ GID\(s\), [1-9][0-9]* RoCE v2" \
    "$VMTEST_OUT/doctor.txt"
check "doctor: the running daemon holds the ports" grep -Eq "^ok +ports" "$VMTEST_OUT/doctor.txt"
sed "s|0.0.0.0:20049|10.99.0.77:20049|" "$CONF" \
    > /tmp/doctor-bad.yaml
doctor --config /tmp/doctor-bad.yaml > "$VMTEST_OUT/doctor-bad.txt"
rc=$?
cat "$VMTEST_OUT/doctor-bad.txt"
check_eq "doctor: an RDMA address no device has fails (exit 1)" 1 "$rc"
check_eq "doctor: that is its only FAIL" 1 "$(grep -c '^FAIL' "$VMTEST_OUT/doctor-bad.txt")"
check "doctor: says which address and what to do" \
    grep -q "^FAIL rdma .*no RDMA device has a GID for 10.99.0.77" "$VMTEST_OUT/doctor-bad.txt"

step "a rejected file fails the reload; the exports stay"
printf 'exports:\n  - pathh: /srv/nfs\n' > "$CONF"
check "systemctl reload fails on a file check-config rejects" bash -c '! systemctl reload nfsrdmad'
check_eq "the service stays active" active "$(systemctl is-active nfsrdmad)"
check "the mounts keep working" cmp /tmp/data /mnt/t/data
write_config /srv/not-there
check "a reload with an export the daemon cannot open is accepted by systemctl" \
    systemctl reload nfsrdmad
sleep 1
journalctl -u nfsrdmad -p err -o cat --no-pager > "$VMTEST_OUT/journal.err" 2>&1
journalctl -u nfsrdmad -o cat --no-pager > "$VMTEST_OUT/journal.all" 2>&1
check "journalctl -p err shows the daemon's error" grep -q "keeping the current exports" "$VMTEST_OUT/journal.err"
check "journalctl -p err shows no info line" bash -c "! grep -q 'exports replaced' $VMTEST_OUT/journal.err"
check "the info lines are in the journal" grep -q "exports replaced" "$VMTEST_OUT/journal.all"
check "the exports in force stay" exports_show "$EXPORT"
write_config "$EXPORT"
check "reload back" systemctl reload nfsrdmad

step "the watchdog restarts a daemon that stops pinging"
mkdir -p /etc/systemd/system/nfsrdmad.service.d
printf '[Service]\nWatchdogSec=4\nRestartSec=1\n' > /etc/systemd/system/nfsrdmad.service.d/test.conf
systemctl daemon-reload
check "restart with WatchdogSec=4" systemctl restart nfsrdmad
PID=$(service_prop MainPID)
check "the watchdog is armed (WatchdogUSec 4s)" test "$(service_prop WatchdogUSec)" = 4s
sleep 6
check_eq "pings keep it running past WatchdogSec" "$PID" "$(service_prop MainPID)"
kill -STOP "$PID"
check "systemd kills the silent daemon and starts a new one" main_pid_changes_from "$PID"
check "the journal names the watchdog" bash -c "journalctl -u nfsrdmad --no-pager | grep -qi watchdog"
rm -rf /etc/systemd/system/nfsrdmad.service.d
systemctl daemon-reload
check "the mounts survive the restart" cmp /tmp/data /mnt/t/data
# The client's page cache dropped first, so that the file is read from the new daemon.
echo 3 > /proc/sys/vm/drop_caches
check "... the v4.1 RDMA mount too" cmp /tmp/data /mnt/r/data

step "upgrade: reinstall restarts the service, keeps the edited file"
PID=$(service_prop MainPID)
check "dpkg -i again" dpkg -i --force-confold "$NFSRDMAD_DEB"
check "a new daemon after the upgrade" main_pid_changes_from "$PID"
check "the edited file is kept" grep -q "path: $EXPORT" "$CONF"
check "still serving $EXPORT" exports_show "$EXPORT"
echo 3 > /proc/sys/vm/drop_caches
check "the v4.1 RDMA mount reads through the new daemon" cmp /tmp/data /mnt/r/data

step "remove and purge"
# nfs_mounts_of PID: the NFS mount points in PID's mount namespace (mountinfo's fstype
# follows the " - " separator).
nfs_mounts_of() {
    awk '{for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) ~ /^nfs/) print $5; break }}' \
        /proc/$1/mountinfo | xargs
}
PID=$(service_prop MainPID)
note "propagation of / here: $(findmnt -no PROPAGATION /); NFS mounts in the daemon's namespace before the umounts: $(nfs_mounts_of $PID)"
check "umount the v4.1 RDMA mount" nfs_umount /mnt/r
check "umount the v3 TCP mount" nfs_umount /mnt/t
note "NFS mounts in the daemon's namespace after: $(nfs_mounts_of $PID)"
check "dpkg -r" dpkg -r nfsrdmad
check "the service is stopped" bash -c '! systemctl is-active -q nfsrdmad'
# systemd forgets a unit whose file went away even if its process lives on (seen while
# policy-rc.d blocked the stop): the process itself must be gone.
check "no nfsrdmad process is left" bash -c '! pgrep -x nfsrdmad'
# One that is left is stuck in the kernel: say where, thread by thread. (Seen when the
# guest's root was private: the daemon's namespace kept copies of /mnt/r and /mnt/t, and
# its exit unmounted them, waiting in the NFS client for the dead daemon; guest/init.)
for p in $(pgrep -x nfsrdmad); do
    for t in /proc/$p/task/*; do
        note "left: pid $p thread ${t##*/} ($(cat $t/comm 2>/dev/null)): $(grep -E '^State' $t/status 2>/dev/null), wchan $(cat $t/wchan 2>/dev/null)"
        sed 's/^/    left:   /' $t/stack 2>/dev/null
    done
done
check "the binary is gone" test ! -e /usr/sbin/nfsrdmad
check "the conffile stays until purge" test -f "$CONF"
rpcinfo -p > "$VMTEST_OUT/rpcinfo.removed" 2>&1
check "its rpcbind entries are gone" bash -c "! grep -Eq '1000(03|05|21) ' $VMTEST_OUT/rpcinfo.removed"
check "rpcbind itself still runs" grep -Eq '100000 +2 +tcp' "$VMTEST_OUT/rpcinfo.removed"
check "dpkg -P" dpkg -P nfsrdmad
check "nothing is known to dpkg" bash -c '! dpkg-query -W nfsrdmad 2>/dev/null'
journalctl -u nfsrdmad --no-pager > "$VMTEST_OUT/journal.final" 2>&1
upper_files > "$VMTEST_OUT/upper.after"
left_behind > "$VMTEST_OUT/left-behind.txt"
sed 's/^/    left: /' "$VMTEST_OUT/left-behind.txt"
check "nothing the package or the service made is left (every file the guest wrote)" \
    test ! -s "$VMTEST_OUT/left-behind.txt"
check "no path named nfsrdmad anywhere the guest wrote" \
    bash -c "! (cd /.vmtest-upper && find . -path ./vmtest -prune -o -path ./tmp -prune -o -iname '*nfsrdmad*' -print | grep .)"

vm_summary
