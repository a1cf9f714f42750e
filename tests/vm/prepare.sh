#!/usr/bin/env bash
# prepare.sh - build (or reuse) everything the VM test tier needs to boot a guest.
#
#   tests/vm/prepare.sh [VM_DIR]          VM_DIR defaults to $NFSRDMAD_VM_DIR, else build/vm
#
# What it does, each step only when needed:
#   1. Host packages (Debian only): qemu, busybox-static, kmod, rdma-core userspace, the NFS
#      server/client tools, fio, ... The guest runs the HOST's userspace (the host's / is
#      shared read-only into the VM over virtio-9p), so every tool the guest scripts use must be
#      installed on the host. apt-get runs only when a package is missing.
#   2. The Debian kernel image package behind linux-image-amd64 is fetched with
#      `apt-get download` (nothing is installed on the host: no /boot, no /lib/modules) and
#      extracted into VM_DIR/kroot; `depmod -b` runs here on the host (in the guest it would take
#      ~25 s over 9p under TCG).
#   3. A tiny busybox initramfs (VM_DIR/initramfs.gz) whose /init (guest/init) loads virtio,
#      9p and overlay, mounts the host root read-only with a tmpfs overlay and switch_roots.
#
# Caching: VM_DIR/stamp records the inputs (kernel package name and version, the hashes of
# this script, guest/init and /bin/busybox). When the recorded inputs equal the current ones
# and the outputs exist, the script prints "up to date" and exits 0 within a second. It never
# runs `apt-get update` unless it has to (a package is missing, or the kernel package cannot
# be resolved from the local apt lists).
#
# Env: NFSRDMAD_VM_DIR     cache directory (overridden by the argument)
#      NFSRDMAD_VM_KPKG    kernel package to use (default: what linux-image-amd64 depends on)
#      NFSRDMAD_VM_NO_APT=1  never call apt-get install/update (fail if something is missing)
# Exit: 0 ready; 1 failed (the last line says why).
set -euo pipefail

# The whole script is one compound command: bash parses it completely before running it,
# so editing this file while it runs (a VM can run for many minutes) cannot derail it.
{

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_DIR=${1:-${NFSRDMAD_VM_DIR:-$HERE/../../build/vm}}
mkdir -p "$VM_DIR"
VM_DIR=$(cd "$VM_DIR" && pwd)

log() { echo "[vm-prepare] $*" >&2; }
die() { echo "[vm-prepare] FAILED: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get, and the 9p share of / needs to read every file)"
[ "$(uname -m)" = x86_64 ] || die "only x86_64 hosts are supported (uname -m = $(uname -m))"

# ------------------------------------------------------------------------------ host packages
# Binaries the guest scripts need, and the package that provides each. Checked with
# dpkg-query (cheap) so apt-get runs only when something is missing.
HOST_PACKAGES=(
    qemu-system-x86     # qemu-system-x86_64 (TCG: no KVM needed)
    busybox-static      # the initramfs userspace
    kmod                # modprobe/depmod (host depmod -b, guest modprobe)
    cpio                # packs the initramfs
    iproute2            # ip, rdma (rdma link add ... type rxe)
    e2fsprogs           # mkfs.ext4 for the export image in the guest
    util-linux          # losetup, setsid, mountpoint
    mount
    rdma-core           # rdma-core userspace and udev rules
    ibverbs-providers   # librxe (the Soft-RoCE verbs provider)
    ibverbs-utils       # ibv_devinfo, ibv_rc_pingpong
    rdmacm-utils        # rping
    perftest            # ib_send_lat, ib_write_bw (self-check extras, bench)
    nfs-kernel-server   # rpc.nfsd, rpc.mountd, exportfs (the kernel nfsd baseline)
    nfs-common          # mount.nfs, rpc.statd, rpc.gssd
    krb5-kdc krb5-admin-server krb5-user   # the GSS group's realm: krb5kdc, kadmin.local, kinit
    nfs4-acl-tools      # nfs4_getfacl, nfs4_setfacl: NFSv4 ACLs through the kernel client
    rpcbind
    fio                 # bench/vm
    procps psmisc coreutils findutils bc
)

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
pkg_candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/{print $2; exit}'; }

missing=()
for p in "${HOST_PACKAGES[@]}"; do pkg_installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
    [ "${NFSRDMAD_VM_NO_APT:-0}" = 1 ] && die "host packages missing and NFSRDMAD_VM_NO_APT=1: ${missing[*]}"
    log "installing missing host packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    need_update=0
    for p in "${missing[@]}"; do
        c=$(pkg_candidate "$p"); [ -n "$c" ] && [ "$c" != "(none)" ] || need_update=1
    done
    if [ $need_update = 1 ]; then
        log "apt-get update (some packages have no install candidate in the local lists)"
        apt-get update -q || die "apt-get update failed"
    fi
    apt-get install -y -q --no-install-recommends "${missing[@]}" \
        || die "apt-get install ${missing[*]} failed"
fi
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found after installing qemu-system-x86"
[ -x /bin/busybox ] || die "/bin/busybox not found (package busybox-static)"

# ------------------------------------------------------------------------------ kernel package
kpkg=${NFSRDMAD_VM_KPKG:-}
resolve_kpkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
if [ -z "$kpkg" ]; then
    kpkg=$(resolve_kpkg)
    if [ -z "$kpkg" ] && [ "${NFSRDMAD_VM_NO_APT:-0}" != 1 ]; then
        log "apt-get update (linux-image-amd64 is not in the local apt lists)"
        apt-get update -q || die "apt-get update failed"
        kpkg=$(resolve_kpkg)
    fi
fi
[ -n "$kpkg" ] || die "cannot resolve the kernel package behind linux-image-amd64 (apt-cache depends linux-image-amd64)"
kver_pkg=$(pkg_candidate "$kpkg")
[ -n "$kver_pkg" ] && [ "$kver_pkg" != "(none)" ] || die "no install candidate for $kpkg"

# ------------------------------------------------------------------------------ cache check
sha() { sha256sum "$1" | cut -d' ' -f1; }
want_stamp=$(cat <<EOF
kernel-package=$kpkg
kernel-package-version=$kver_pkg
prepare.sh=$(sha "$HERE/prepare.sh")
guest/init=$(sha "$HERE/guest/init")
busybox=$(sha /bin/busybox)
EOF
)
if [ -f "$VM_DIR/stamp" ] && [ "$(cat "$VM_DIR/stamp")" = "$want_stamp" ] \
   && [ -s "$VM_DIR/vmlinuz" ] && [ -s "$VM_DIR/initramfs.gz" ] && [ -s "$VM_DIR/kver" ] \
   && [ -d "$VM_DIR/kroot/lib/modules/$(cat "$VM_DIR/kver")" ]; then
    log "up to date: $kpkg $kver_pkg, kernel $(cat "$VM_DIR/kver"), in $VM_DIR"
    exit 0
fi
# the same lock boot.sh holds while a VM runs: never replace kroot under a running guest
exec 9>"$VM_DIR/.lock"
if ! flock -n 9; then
    log "a VM is running from $VM_DIR; waiting for it before rebuilding"
    flock -w 3600 9 || die "$VM_DIR is still locked by a VM run after an hour"
fi
log "preparing $VM_DIR ($kpkg $kver_pkg)"
rm -f "$VM_DIR/stamp"

# ------------------------------------------------------------------------------ fetch + extract
mkdir -p "$VM_DIR/debs"
deb_glob="$VM_DIR/debs/${kpkg}_$(echo "$kver_pkg" | sed 's/:/%3a/')_*.deb"
# shellcheck disable=SC2086
deb=$(ls -1 $deb_glob 2>/dev/null | head -1 || true)
if [ -z "$deb" ]; then
    [ "${NFSRDMAD_VM_NO_APT:-0}" = 1 ] && die "kernel package not cached and NFSRDMAD_VM_NO_APT=1"
    log "apt-get download $kpkg=$kver_pkg"
    tmpd=$(mktemp -d "$VM_DIR/debs/dl.XXXXXX")
    chmod 0777 "$tmpd"          # apt-get download drops privileges to _apt when it can
    (cd "$tmpd" && apt-get download -q "$kpkg=$kver_pkg") || { rm -rf "$tmpd"; die "apt-get download $kpkg=$kver_pkg failed"; }
    rm -f "$VM_DIR"/debs/*.deb  # keep one kernel only
    mv "$tmpd"/*.deb "$VM_DIR/debs/"
    rm -rf "$tmpd"
    # shellcheck disable=SC2086
    deb=$(ls -1 $deb_glob | head -1)
fi
log "kernel package file: $deb"

rm -rf "$VM_DIR/kroot.new"
dpkg-deb -x "$deb" "$VM_DIR/kroot.new" || die "dpkg-deb -x $deb failed"
kver=$(ls "$VM_DIR/kroot.new/lib/modules" | head -1)
[ -n "$kver" ] && [ -f "$VM_DIR/kroot.new/boot/vmlinuz-$kver" ] || die "no kernel/modules in $deb"
depmod -b "$VM_DIR/kroot.new" "$kver" || die "depmod -b failed"
# the modules the guest tests need must exist in this kernel
for m in rdma_rxe ib_uverbs rdma_ucm rpcrdma nfsd nfsv3 nfsv4 dummy loop ext4 virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$VM_DIR/kroot.new" -S "$kver" --show-depends "$m" >/dev/null 2>&1 \
        || die "kernel $kver has no module $m"
done
rm -rf "$VM_DIR/kroot"
mv "$VM_DIR/kroot.new" "$VM_DIR/kroot"
cp "$VM_DIR/kroot/boot/vmlinuz-$kver" "$VM_DIR/vmlinuz"
echo "$kver" > "$VM_DIR/kver"

# ------------------------------------------------------------------------------ initramfs
ird=$VM_DIR/initramfs.d
rm -rf "$ird"
mkdir -p "$ird"/{bin,dev,proc,sys,lower,rw,newroot,lib/mod}
cp /bin/busybox "$ird/bin/busybox"
for a in sh mount umount mkdir insmod switch_root cat echo sleep ls poweroff; do
    ln -s busybox "$ird/bin/$a"
done
# modules needed before the root fs exists (virtio-pci, 9p, overlay), with their
# dependencies, in load order
: > "$ird/lib/mod/order"
for m in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -d "$VM_DIR/kroot" -S "$kver" --show-depends "$m"
done | awk '$1 == "insmod" && !seen[$2]++ {print $2}' | while read -r ko; do
    cp "$ko" "$ird/lib/mod/"
    basename "$ko" >> "$ird/lib/mod/order"
done
install -m 0755 "$HERE/guest/init" "$ird/init"
(cd "$ird" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$VM_DIR/initramfs.gz.new"
mv "$VM_DIR/initramfs.gz.new" "$VM_DIR/initramfs.gz"
rm -rf "$ird"

echo "$want_stamp" > "$VM_DIR/stamp"
log "ready: kernel $kver ($kpkg $kver_pkg), initramfs $(du -h "$VM_DIR/initramfs.gz" | cut -f1), in $VM_DIR"
exit
}
