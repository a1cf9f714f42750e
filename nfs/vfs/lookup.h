// lookup.h — name resolution inside an export: LOOKUP and READLINK.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "nfs/vfs/identity.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

// RFC 1813 §3.3.3 LOOKUP of one component, with id's credentials (search permission on
// dir is enforced by the kernel).
//   name invalid (empty, '/', NUL)  -> EINVAL; longer than 255 -> ENAMETOOLONG
//   "."                             -> dir itself
//   ".." of the export root         -> the export root (never leave the export)
//   ".." whose result is not within the export (dir was moved out of it) -> ESTALE
//   symlink                         -> the symlink itself, never followed
//   mount point inside the export   -> EXDEV (not crossed; map to NFS3ERR_ACCES)
//   dir not a directory             -> ENOTDIR
// Also serves READDIRPLUS (RFC 1813 §3.3.17), which needs handle + attributes per entry.
Result<Entry> lookup(const Node& dir, std::string_view name, const Identity& id);

// lookup() without blocking, for a reactor (rpc::CallContext::nowait): the same answer,
// or EWOULDBLOCK where only a worker can give it. `dir_st` is dir's attributes, read now.
// The name is opened as root from the dentry cache alone (openat2 RESOLVE_CACHED: a name
// the kernel would read the directory for -> EWOULDBLOCK, at once), then the caller's
// search permission on dir is checked, from the mode (vfs::access_of; a POSIX ACL to
// read as the caller -> EWOULDBLOCK), before any answer (EACCES, else the found object,
// or ENOENT for a name the kernel knows is absent). ".." and a dir that is not a
// directory -> EWOULDBLOCK: lookup() answers those.
Result<Entry> lookup_cached(const Node& dir, const struct statx& dir_st, std::string_view name,
                            const Identity& id);

// lookup() for a caller whose search permission on dir is already known (may_search):
// READDIRPLUS and NFSv4.1 READDIR look up every entry of one directory for one caller,
// and a single-component lookup asks the caller for that one permission only, the same
// for every name. Runs on the server's own credentials (no identity switch per entry);
// call outside any IdentityScope.
Result<Entry> lookup_permitted(const Node& dir, std::string_view name);
// READDIRPLUS's lookup_permitted() (RFC 1813 §3.3.17: each entry's handle and
// attributes), without a descriptor: the handle and the attributes read by name
// (name_to_handle_at and statx, two system calls where opening the name makes four: open,
// statx, name_to_handle_at, close). The two are kept only when they name one inode (the
// handle's inode number, where inode_of() knows it, equals statx's) on the directory's own
// mount: a name replaced between the two calls, a mount point, "." and "..", and
// filesystems whose handles inode_of() cannot read are answered by lookup_permitted().
// The same caller and the same answers as lookup_permitted(); call outside any
// IdentityScope.
struct Listed {
    FileHandle handle;
    struct statx attr;
    bool by_name = false;  // answered without opening the name (tests)
};
Result<Listed> lookup_listed(const Node& dir, std::string_view name);

// lookup() with the caller's one permission, search on dir (`dir_st`: its attributes,
// read now), checked by may_search instead of an identity switch around the lookup: the
// same answer. A dir that is not a directory: lookup() itself.
Result<Entry> lookup_as(const Node& dir, const struct statx& dir_st, std::string_view name,
                        const Identity& id);
// Whether id may search dir (`st`: its attributes), as the kernel decides it for id
// (vfs::access_of: the mode, or a POSIX ACL read as id).
Result<bool> may_search(const Node& dir, const struct statx& st, const Identity& id);

// What the server itself must know of `name` in `dir` before it removes or replaces it
// (a delegation to recall, a cached descriptor to forget): its handle and file type,
// looked at as root with two system calls, nothing opened and no identity switch. Never
// an answer to the client: whether the caller may see or remove the name is left to the
// operation itself, done with the caller's identity. Call outside any IdentityScope.
// EINVAL for "." and "..", EXDEV for a mount point, else statx(2)'s errors (ENOENT).
struct Peek {
    FileHandle handle;
    uint32_t mode = 0;  // stx_mode: type and permission bits
};
Result<Peek> peek(const Node& dir, std::string_view name);

// RFC 1813 §3.3.5 READLINK: the target text, verbatim. EINVAL if node is not a symlink.
Result<std::string> readlink(const Node& node);

}  // namespace nfsrdmad::vfs
