// fs_identity.h — what names a filesystem wherever it is mounted: its UUID.
//
// An export's fsid goes into every file handle (handle.h). Derived from the path alone, it
// changes when the mount point is renamed or the filesystem is mounted elsewhere, and every
// handle clients hold goes stale; derived from the filesystem's identity and the export
// directory's own kernel handle (as the Linux nfsd's uuid fsids are, exportfs(8)), it does
// not. Served from the empty directory under an unmounted export, the same path gives
// another fsid, so old handles are refused (ESTALE) rather than resolved there.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

struct FsIdentity {
    std::string id;      // stable bytes naming the filesystem
    std::string source;  // for the log: "uuid 3f2c...", "ext4 f_fsid ..."
};

// The identity of the filesystem `fd` is on: the UUID libblkid reads from its block
// device (st_dev), else, for ext2/3/4 and btrfs, whose statfs f_fsid is a digest of their
// UUID, that f_fsid. nullopt for anything else (tmpfs, overlayfs, NFS, a device this
// process may not read and whose f_fsid is not UUID-derived).
std::optional<FsIdentity> filesystem_identity(int fd);

// Whether `path` (symlinks followed) is the root of a mount: STATX_ATTR_MOUNT_ROOT, or on
// kernels without it, a device other than its parent's. For exports(5) `mp`.
Result<bool> is_mount_root(const std::string& path);

}  // namespace nfsrdmad::vfs
