// dirops.h — operations that remove or rename directory entries: REMOVE, RMDIR, RENAME,
// LINK. All run with the caller's credentials; the kernel enforces write+search
// permission on the directories and the sticky bit. With a DirChange, also the
// directory's attributes just before and after the change (dir_change.h).
#pragma once

#include <string_view>

#include "nfs/vfs/dir_change.h"
#include "nfs/vfs/identity.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

// RFC 1813 §3.3.12 REMOVE of a non-directory. A directory -> EISDIR (Linux unlink(2)
// semantics); "." / ".." -> EINVAL; missing -> ENOENT.
Result<void> remove(const Node& dir, std::string_view name, const Identity& id,
                    DirChange* change = nullptr);

// RFC 1813 §3.3.13 RMDIR. Not a directory -> ENOTDIR; not empty -> ENOTEMPTY;
// "." / ".." -> EINVAL; a mount point -> EBUSY.
Result<void> rmdir(const Node& dir, std::string_view name, const Identity& id,
                   DirChange* change = nullptr);

// RFC 1813 §3.3.14 RENAME (atomic, replaces an existing compatible target). Directories
// in different exports -> EXDEV; source "." / ".." -> EINVAL; target "." / ".." -> EEXIST.
// Other errors from renameat(2): EISDIR, ENOTDIR, ENOTEMPTY, EINVAL (into itself).
Result<void> rename(const Node& from_dir, std::string_view from_name, const Node& to_dir,
                    std::string_view to_name, const Identity& id, DirChange* from_change = nullptr,
                    DirChange* to_change = nullptr);

// RFC 1813 §3.3.15 LINK: new name for file in dir. Different exports -> EXDEV; a
// directory -> EPERM; name exists -> EEXIST. Uses /proc/self/fd/N with AT_SYMLINK_FOLLOW,
// which (unlike AT_EMPTY_PATH) does not require CAP_DAC_READ_SEARCH. Subject to
// fs.protected_hardlinks for non-owners.
Result<void> link(const Node& file, const Node& dir, std::string_view name, const Identity& id,
                  DirChange* change = nullptr);

}  // namespace nfsrdmad::vfs
