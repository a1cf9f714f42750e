// create.h — operations that create a directory entry: CREATE, MKDIR, SYMLINK, MKNOD.
//
// All run with the caller's credentials (new objects belong to id.uid / id.gid or the
// directory's setgid group) and a zero umask (the client applied its own). Each returns
// the new object's handle and attributes. With `change`, also the directory's attributes
// just before and after the new entry appeared (dir_change.h: wcc_data, RFC 1813 §2.6;
// change_info4, RFC 8881 §3.3.8).
// Names: invalid -> EINVAL / ENAMETOOLONG; "." or ".." -> EEXIST.
// Out of descriptors (EMFILE/ENFILE after the caches gave back what they could,
// fd_pressure.h): nothing is left created, so the client's retry after NFS3ERR_JUKEBOX
// sees the directory as the first attempt did.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string_view>

#include "nfs/vfs/dir_change.h"
#include "nfs/vfs/identity.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

// RFC 1813 §3.3.8 createmode3 (same numeric values).
enum class CreateHow { Unchecked = 0, Guarded = 1, Exclusive = 2 };

// RFC 1813 §3.3.8 CREATE of a regular file with permission bits mode (07777).
//   Unchecked: if name exists and is a regular file, returns it unchanged (mode is not
//              applied; the caller applies the rest of sattr3, e.g. size 0, with
//              setattr); if it is something else -> EEXIST.
//   Guarded:   EEXIST if name exists.
//   Exclusive: the verifier is stored in the new file's timestamps like Linux nfsd does
//              (mtime.tv_sec = verifier>>32 & 0x7fffffff, atime.tv_sec = verifier &
//              0x7fffffff). If name exists as an empty regular file carrying the same
//              verifier, this is a retransmission: success, same file. Otherwise EEXIST.
//              The client follows up with SETATTR to set the real mode and times.
//              verifier = the 8 createverf3 bytes read big-endian.
//   created (when given): whether this call made the file (false: an existing one was
//              returned), decided by the O_CREAT|O_EXCL open itself, so no lookup before
//              it and no race with one.
//   writable:  a file this call makes is opened O_RDWR|O_NONBLOCK (its creator may, whatever
//              the mode says), for the caller to hand to the descriptor cache
//              (FdCache::adopt) when a WRITE is what comes next; otherwise O_RDONLY. A file
//              that existed is never opened for writing here (its Entry's descriptor is O_PATH).
Result<Entry> create(const Node& dir, std::string_view name, uint32_t mode, CreateHow how,
                     uint64_t verifier, const Identity& id, bool* created = nullptr,
                     DirChange* change = nullptr, bool writable = false);

// RFC 1813 §3.3.9 MKDIR.
Result<Entry> mkdir(const Node& dir, std::string_view name, uint32_t mode, const Identity& id,
                    DirChange* change = nullptr);

// RFC 1813 §3.3.10 SYMLINK. target is stored verbatim (never interpreted by the server);
// empty or containing NUL -> EINVAL, 4096 bytes or more -> ENAMETOOLONG. mode is
// accepted for the protocol's sake and ignored: Linux symlinks are always 0777.
Result<Entry> symlink(const Node& dir, std::string_view name, std::string_view target,
                      uint32_t mode, const Identity& id, DirChange* change = nullptr);

// RFC 1813 §3.3.11 MKNOD. Devices need uid 0 (CAP_MKNOD) -> otherwise EPERM.
enum class SpecialType { Fifo, Socket, CharDevice, BlockDevice };
Result<Entry> mknod(const Node& dir, std::string_view name, SpecialType type, uint32_t mode,
                    dev_t rdev, const Identity& id, DirChange* change = nullptr);

}  // namespace nfsrdmad::vfs
