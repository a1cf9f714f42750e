// attrs.h — attributes: GETATTR, SETATTR, ACCESS, FSSTAT, PATHCONF.
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <cstdint>
#include <optional>

#include "nfs/vfs/identity.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

// RFC 1813 §3.3.1 GETATTR. statx with btime when the filesystem has it (check
// stx_mask & STATX_BTIME). No permission needed: holding the handle is enough.
Result<struct statx> getattr(const Node& node);

// RFC 1813 §3.3.4 ACCESS bits.
inline constexpr uint32_t kAccessRead = 0x01;
inline constexpr uint32_t kAccessLookup = 0x02;
inline constexpr uint32_t kAccessModify = 0x04;
inline constexpr uint32_t kAccessExtend = 0x08;
inline constexpr uint32_t kAccessDelete = 0x10;
inline constexpr uint32_t kAccessExecute = 0x20;
inline constexpr uint32_t kAccessAll = 0x3f;

// The ACCESS bits id holds on an object with attributes st, computed from the mode bits
// (owner, else group incl. supplementary groups, else other), like Linux nfsd:
//   directory: READ<-r, LOOKUP<-x, MODIFY|EXTEND|DELETE<-w+x;
//   regular:   READ<-r, MODIFY|EXTEND<-w, EXECUTE<-x;
//   other:     READ<-r, MODIFY|EXTEND<-w.
// uid 0 gets everything except EXECUTE on a file with no x bit at all. Immutable files
// lose MODIFY/EXTEND/DELETE, append-only ones MODIFY/DELETE. POSIX ACLs are not
// consulted (access_of does). The caller masks out write bits for read-only exports.
uint32_t access_from_mode(const struct statx& st, const Identity& id);

// The ACCESS bits of `wanted` that id holds on the object `fd` names (O_PATH or not; st
// its attributes), as the kernel grants them: access_from_mode, unless the object is a
// regular file or directory with a POSIX access ACL (acl(5)) and id is neither root nor
// its owner. Then the ACL decides (named users and groups, the mask; a named user "---"
// is refused what the mode's other bits would give), and only the kernel reads it right:
// faccessat(2) as id, one call per kind of access `wanted` asks about; `together` (an
// open for reading and writing): one call for all of them, which one ACL entry must grant
// whole, and all of `wanted` or nothing. may_switch false (a reactor, whose credentials
// must stay its own): EWOULDBLOCK where an ACL is to be read.
Result<uint32_t> access_of(int fd, const struct statx& st, const Identity& id, uint32_t wanted,
                           bool may_switch = true, bool together = false);

// RFC 1813 §3.3.4: requested & access_from_mode(getattr(node), id).
Result<uint32_t> access(const Node& node, uint32_t requested, const Identity& id);

// RFC 1813 §2.6 set_atime / set_mtime.
struct TimeChange {
    enum How { Keep, ServerTime, ClientTime };
    How how = Keep;
    struct timespec time {};  // ClientTime only

    static TimeChange server() { return {ServerTime, {}}; }
    static TimeChange client(struct timespec t) { return {ClientTime, t}; }
};

// RFC 1813 §2.6 sattr3.
struct SetAttrs {
    std::optional<uint32_t> mode;  // permission bits incl. suid/sgid/sticky (07777)
    std::optional<uint32_t> uid;
    std::optional<uint32_t> gid;
    std::optional<uint64_t> size;
    TimeChange atime;
    TimeChange mtime;
};

// RFC 1813 §3.3.2 SETATTR, performed with id's credentials (the kernel enforces who may
// chown/chmod/set times). Applied in the order size, owner, mode, times (so a chown
// clearing setuid does not undo a requested mode, and a truncation does not override a
// requested mtime). Not atomic: a failure can leave earlier changes applied.
//   size on a directory -> EISDIR, on another non-regular file -> EINVAL. As in Linux
//   nfsd the owner may truncate a file even without write permission (a client that
//   created it 0444 with O_TRUNC sends CREATE then SETATTR size=0).
//   mode on a symlink: Linux symlinks have no mode of their own, so a change is
//   refused before anything is applied: EPERM for a caller who is neither the owner
//   nor root, else EOPNOTSUPP. The mode the symlink already has is no change.
// Guarded SETATTR (ctime check) is done by the caller with getattr().
Result<void> setattr(const Node& node, const SetAttrs& attrs, const Identity& id);

// RFC 1813 §3.3.18 FSSTAT (from fstatvfs).
struct FsStat {
    uint64_t total_bytes = 0;
    uint64_t free_bytes = 0;
    uint64_t avail_bytes = 0;  // available to non-root
    uint64_t total_files = 0;
    uint64_t free_files = 0;
    uint64_t avail_files = 0;
};
Result<FsStat> fsstat(const Node& node);

// RFC 1813 §3.3.20 PATHCONF.
struct PathConf {
    uint32_t link_max = 0;
    uint32_t name_max = 0;
    bool no_trunc = true;          // long names are rejected, not truncated
    bool chown_restricted = true;  // only root may give files away
    bool case_insensitive = false;
    bool case_preserving = true;
};
Result<PathConf> pathconf(const Node& node);

}  // namespace nfsrdmad::vfs
