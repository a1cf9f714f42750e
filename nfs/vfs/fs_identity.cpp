#include "nfs/vfs/fs_identity.h"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace nfsrdmad::vfs {
namespace {

constexpr long kExtMagic = 0xEF53;         // ext2, ext3, ext4
constexpr long kBtrfsMagic = 0x9123683E;

std::optional<std::string> blkid_uuid(dev_t dev) {
    if (major(dev) == 0) return std::nullopt;  // no block device (btrfs subvolumes, tmpfs)
    std::unique_ptr<char, decltype(&std::free)> name(blkid_devno_to_devname(dev), &std::free);
    if (!name) return std::nullopt;
    blkid_probe pr = blkid_new_probe_from_filename(name.get());  // needs read access
    if (!pr) return std::nullopt;
    std::optional<std::string> uuid;
    blkid_probe_enable_superblocks(pr, 1);
    blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_UUID);
    const char* value = nullptr;
    size_t len = 0;
    if (blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, "UUID", &value, &len) == 0 &&
        value && len > 1)
        uuid.emplace(value, ::strnlen(value, len));
    blkid_free_probe(pr);
    return uuid;
}

}  // namespace

std::optional<FsIdentity> filesystem_identity(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::nullopt;
    if (auto uuid = blkid_uuid(st.st_dev)) return FsIdentity{"uuid:" + *uuid, "uuid " + *uuid};
    struct statfs fs {};
    if (::fstatfs(fd, &fs) != 0) return std::nullopt;
    uint32_t words[2];
    static_assert(sizeof words == sizeof fs.f_fsid);
    std::memcpy(words, &fs.f_fsid, sizeof words);
    if ((fs.f_type != kExtMagic && fs.f_type != kBtrfsMagic) || (words[0] == 0 && words[1] == 0))
        return std::nullopt;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%08x%08x", words[0], words[1]);
    return FsIdentity{std::string("f_fsid:") + hex,
                      std::string(fs.f_type == kExtMagic ? "ext" : "btrfs") + " f_fsid " + hex};
}

Result<bool> is_mount_root(const std::string& path) {
    struct statx st {};
    if (::statx(AT_FDCWD, path.c_str(), AT_NO_AUTOMOUNT, STATX_INO, &st) != 0) return fail(errno);
    if (st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
        return (st.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
    struct statx parent {};
    if (::statx(AT_FDCWD, (path + "/..").c_str(), AT_NO_AUTOMOUNT, STATX_INO, &parent) != 0)
        return fail(errno);
    return st.stx_dev_major != parent.stx_dev_major || st.stx_dev_minor != parent.stx_dev_minor ||
           st.stx_ino == parent.stx_ino;  // "/": its own parent
}

}  // namespace nfsrdmad::vfs
