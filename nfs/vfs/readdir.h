// readdir.h — READDIR / READDIRPLUS support.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string_view>

#include "nfs/vfs/function_ref.h"
#include "nfs/vfs/identity.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

// One directory entry. cookie is the position *after* this entry (the kernel's d_off):
// pass it back to readdir() to continue with the next entry. type is a DT_* value
// (DT_UNKNOWN possible: call getattr/lookup then).
struct DirEntry {
    std::string_view name;  // valid only during the callback
    uint64_t ino;
    uint8_t type;
    uint64_t cookie;
};

// Return true to accept the entry and get the next one; false if it does not fit: it is
// then NOT consumed, and the listing stops (resume with the previous entry's cookie).
using DirCallback = FunctionRef<bool(const DirEntry&)>;

struct ReaddirResult {
    bool eof = false;  // every entry after `cookie` was delivered and accepted
};

// RFC 1813 §3.3.16 READDIR: entries of dir after cookie (0 = from the start), including
// "." and "..", in the filesystem's order. The directory is opened with id's credentials
// (read permission required -> EACCES); the callbacks run with the thread's normal
// credentials, so they may call lookup()/getattr() for READDIRPLUS (§3.3.17).
// Cookies are the filesystem's own positions (ext4: name hashes), stable across
// unrelated insertions and deletions and across server restarts. A cookie the
// filesystem rejects -> EINVAL (map to NFS3ERR_BAD_COOKIE). dir not a dir -> ENOTDIR.
Result<ReaddirResult> readdir(const Node& dir, uint64_t cookie, DirCallback callback,
                              const Identity& id);

// RFC 1813 §3.3.16 cookieverf3: changes only if the directory itself is replaced (derived
// from device, inode number and birth time — deliberately not mtime, so listing a large
// directory while entries are added does not end in NFS3ERR_BAD_COOKIE). Never 0.
uint64_t cookie_verifier(const struct statx& dir_attr);
Result<uint64_t> cookie_verifier(const Node& dir);

}  // namespace nfsrdmad::vfs
