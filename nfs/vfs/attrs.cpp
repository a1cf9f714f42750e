#include "nfs/vfs/attrs.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "nfs/vfs/dir_change.h"
#include "nfs/vfs/durability.h"
#include "nfs/vfs/lease.h"
#include "nfs/vfs/names.h"
#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

constexpr unsigned kR = 4, kW = 2, kX = 1;

bool has_attribute(const struct statx& st, uint64_t attr) {
    return (st.stx_attributes_mask & attr) && (st.stx_attributes & attr);
}

// The rwx triple that applies to id (root: DAC override, x only if anyone may execute).
unsigned permission_triple(const struct statx& st, const Identity& id) {
    const unsigned mode = st.stx_mode;
    if (id.is_root()) {
        const bool any_x = S_ISDIR(mode) || (mode & 0111) != 0;
        return kR | kW | (any_x ? kX : 0);
    }
    if (id.uid == st.stx_uid) return (mode >> 6) & 7;
    if (id.in_group(st.stx_gid)) return (mode >> 3) & 7;
    return mode & 7;
}

Result<void> set_size(const Node& node, const struct statx& st, uint64_t size, const Identity& id) {
    if (S_ISDIR(st.stx_mode)) return fail(EISDIR);
    if (!S_ISREG(st.stx_mode)) return fail(EINVAL);
    if (size > static_cast<uint64_t>(LLONG_MAX)) return fail(EFBIG);
    const auto length = static_cast<off_t>(size);
    // Not truncate(2) by path: it waits in the kernel for a file lease to be given back
    // (an NFSv4.1 read delegation's, vfs/lease.h), and a worker never waits on a client.
    // An O_NONBLOCK open for writing fails EWOULDBLOCK instead (the caller answers "later")
    // and starts the lease's break. The open checks write permission as truncate(2) does.
    // A write-leased file (an NFSv4.1 write delegation's, whose holder is the caller: the
    // others' calls recall it first) is truncated through the lease's own description,
    // which any open would break (lease.h); the permission is checked as the open would.
    if (auto leased = leased_file(node.handle)) {
        auto r = with_identity(id, [&] {
            return check_syscall(::faccessat(node.fd.get(), "", W_OK, AT_EACCESS | AT_EMPTY_PATH));
        });
        if (!r && !(r.error() == EACCES && id.uid == st.stx_uid)) return r;
        // As the caller: root's CAP_FSETID would keep setuid and setgid bits.
        return with_identity(id,
                             [&] { return check_syscall(::ftruncate(leased->fd.get(), length)); });
    }
    auto trunc = [&]() -> Result<void> {
        auto fd = sys::reopen(node.fd.get(), O_WRONLY | O_NONBLOCK);
        if (!fd) return fd.failure();
        return check_syscall(::ftruncate(fd->get(), length));
    };
    auto r = with_identity(id, trunc);
    if (r.error() == EACCES && id.uid == st.stx_uid) r = trunc();  // owner override (Linux nfsd)
    return r;
}

struct timespec to_timespec(const TimeChange& t) {
    switch (t.how) {
        case TimeChange::ServerTime:
            return {0, UTIME_NOW};
        case TimeChange::ClientTime:
            return t.time;
        case TimeChange::Keep:
            break;
    }
    return {0, UTIME_OMIT};
}

// Owner, mode and times, all with the caller's credentials.
Result<void> set_owner_mode_times(const Node& node, const struct statx& st, const SetAttrs& a) {
    const int fd = node.fd.get();
    if (a.uid || a.gid) {
        const uid_t uid = a.uid ? *a.uid : static_cast<uid_t>(-1);
        const gid_t gid = a.gid ? *a.gid : static_cast<gid_t>(-1);
        if (::fchownat(fd, "", uid, gid, AT_EMPTY_PATH) != 0) return fail(errno);
    }
    if (a.mode && !S_ISLNK(st.stx_mode)) {
        const auto path = sys::proc_fd_path(fd);
        if (::chmod(path.c_str(), *a.mode & 07777) != 0) return fail(errno);
    }
    if (a.atime.how != TimeChange::Keep || a.mtime.how != TimeChange::Keep) {
        const struct timespec times[2] = {to_timespec(a.atime), to_timespec(a.mtime)};
        if (::utimensat(fd, "", times, AT_EMPTY_PATH) != 0) {
            // SET_TO_SERVER_TIME (RFC 1813 §2.6) by a writer who is not the owner (a group
            // or an ACL entry lets it write; an O_TRUNC open sends size and mtime): the
            // kernel lets such a caller set the times only as a touch of both to now, as
            // the Linux nfsd's write check (NFSD_MAY_WRITE) lets it set mtime. atime moves
            // too then.
            const bool to_now =
                a.atime.how != TimeChange::ClientTime && a.mtime.how != TimeChange::ClientTime;
            if (errno != EPERM || !to_now) return fail(errno);
            if (::utimensat(fd, "", nullptr, AT_EMPTY_PATH) != 0) return fail(errno);
        }
    }
    return {};
}

// A mode change of a symlink, checked before anything is applied. Linux keeps no mode
// on symlinks (lchmod fails with EOPNOTSUPP, and since 2023 the VFS refuses a symlink
// mode change outright, "attr: block mode changes of symlinks"). knfsd (fs/nfsd/vfs.c,
// nfsd_setattr) drops such a change and answers NFS3_OK, also to a non-owner: a success
// that did nothing. We answer what a local chmod would: a caller who is neither the
// owner nor root gets EPERM (RFC 1813 §3.3.2 NFS3ERR_PERM, "not owner"); the owner gets
// EOPNOTSUPP (NFS3ERR_NOTSUPP, RFC 1813 §2.6 "operation is not supported"), because the
// request is well formed (NFS3ERR_INVAL would say otherwise) but cannot be carried out.
// Asking for the mode the symlink has changes nothing and is not refused.
Result<void> check_symlink_mode(const struct statx& st, const SetAttrs& attrs, const Identity& id) {
    if (!attrs.mode || !S_ISLNK(st.stx_mode)) return {};
    if (!id.is_root() && id.uid != st.stx_uid) return fail(EPERM);
    if ((*attrs.mode & 07777) != (st.stx_mode & 07777)) return fail(EOPNOTSUPP);
    return {};
}

}  // namespace

Result<struct statx> getattr(const Node& node) {
    return sys::stat_fd(node.fd.get());
}

uint32_t access_from_mode(const struct statx& st, const Identity& id) {
    const unsigned perm = permission_triple(st, id);
    uint32_t granted = (perm & kR) ? kAccessRead : 0;
    if (S_ISDIR(st.stx_mode)) {
        if (perm & kX) granted |= kAccessLookup;
        if ((perm & (kW | kX)) == (kW | kX))
            granted |= kAccessModify | kAccessExtend | kAccessDelete;
    } else {
        if (perm & kW) granted |= kAccessModify | kAccessExtend;
        if ((perm & kX) && S_ISREG(st.stx_mode)) granted |= kAccessExecute;
    }
    if (has_attribute(st, STATX_ATTR_IMMUTABLE)) {
        granted &= ~(kAccessModify | kAccessExtend | kAccessDelete);
    }
    if (has_attribute(st, STATX_ATTR_APPEND)) granted &= ~(kAccessModify | kAccessDelete);
    return granted;
}

namespace {

// Whether the object has a POSIX access ACL. fgetxattr(2) refuses O_PATH descriptors
// (EBADF); /proc/self/fd/N names the object itself then.
Result<bool> has_access_acl(int fd) {
    static constexpr char kName[] = "system.posix_acl_access";
    ssize_t n = ::fgetxattr(fd, kName, nullptr, 0);
    if (n < 0 && errno == EBADF) n = ::getxattr(sys::proc_fd_path(fd).c_str(), kName, nullptr, 0);
    if (n > 0) return true;
    // No ACL, or a file system without them (EOPNOTSUPP).
    if (n == 0 || errno == ENODATA || errno == EOPNOTSUPP) return false;
    return fail(errno);
}

}  // namespace

Result<uint32_t> access_of(int fd, const struct statx& st, const Identity& id, uint32_t wanted,
                           bool may_switch, bool together) {
    const uint32_t by_mode = access_from_mode(st, id) & wanted;
    // The owner's class is the ACL's owner entry, which is the mode's owner bits; root
    // overrides both.
    if (id.is_root() || id.uid == st.stx_uid || wanted == 0) return by_mode;
    if (!S_ISREG(st.stx_mode) && !S_ISDIR(st.stx_mode)) return by_mode;
    auto acl = has_access_acl(fd);
    if (!acl) return acl.failure();
    if (!*acl) return by_mode;
    if (!may_switch) return fail(EWOULDBLOCK);
    const bool dir = S_ISDIR(st.stx_mode);
    // Each kind of access the bits stand for (access_from_mode's table), asked of the kernel
    // as id: several modes in one faccessat must all be granted by one ACL entry, as a
    // directory's MODIFY needs write and search together.
    struct Kind {
        uint32_t bits;
        int mode;
    };
    const Kind kinds[] = {
        {kAccessRead, R_OK},
        {dir ? kAccessLookup : kAccessExecute, X_OK},
        {dir ? (kAccessModify | kAccessExtend | kAccessDelete) : (kAccessModify | kAccessExtend),
         dir ? (W_OK | X_OK) : W_OK},
    };
    return with_identity(id, [&]() -> Result<uint32_t> {
        // Whether the kernel grants `mode` to id (the scope's credentials).
        const auto permits = [fd](int mode) -> Result<bool> {
            if (::faccessat(fd, "", mode, AT_EACCESS | AT_EMPTY_PATH) == 0) return true;
            if (errno == EACCES || errno == EPERM || errno == EROFS || errno == ETXTBSY)
                return false;
            return fail(errno);
        };
        uint32_t granted = 0;
        if (together) {
            int mode = 0;
            uint32_t asked = 0;  // the bits one of the kinds stands for; no others
            for (const Kind& k : kinds) {
                if (!(wanted & k.bits)) continue;
                mode |= k.mode;
                asked |= k.bits & wanted;
            }
            auto all = permits(mode);
            if (!all) return all.failure();
            granted = *all ? asked : 0;
        } else {
            for (const Kind& k : kinds) {
                if (!(wanted & k.bits)) continue;
                auto one = permits(k.mode);
                if (!one) return one.failure();
                if (*one) granted |= k.bits;
            }
        }
        // What access_from_mode takes away whatever the permission bits say.
        if (has_attribute(st, STATX_ATTR_IMMUTABLE))
            granted &= ~(kAccessModify | kAccessExtend | kAccessDelete);
        if (has_attribute(st, STATX_ATTR_APPEND)) granted &= ~(kAccessModify | kAccessDelete);
        return granted & wanted;
    });
}

Result<uint32_t> access(const Node& node, uint32_t requested, const Identity& id) {
    auto st = getattr(node);
    if (!st) return st.failure();
    return access_of(node.fd.get(), *st, id, requested);
}

Result<void> setattr(const Node& node, const SetAttrs& attrs, const Identity& id) {
    auto st = getattr(node);
    if (!st) return st.failure();
    if (auto r = check_symlink_mode(*st, attrs, id); !r) return r;
    if (attrs.size) {
        if (auto r = set_size(node, *st, *attrs.size, id); !r) return r;
    }
    auto change = [&] {
        return with_identity(id, [&] { return set_owner_mode_times(node, *st, attrs); });
    };
    // A directory's own attributes change under its change lock too (dir_change.h): no
    // create or remove in it brackets a chmod of it.
    if (auto r = S_ISDIR(st->stx_mode) ? change_directory(node, nullptr, change) : change(); !r)
        return r;
    return commit_object(node);  // RFC 1813 §3.3.2: on stable storage before the reply
}

Result<FsStat> fsstat(const Node& node) {
    struct statvfs sv {};
    if (::fstatvfs(node.fd.get(), &sv) != 0) return fail(errno);
    const uint64_t unit = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
    FsStat s;
    s.total_bytes = uint64_t{sv.f_blocks} * unit;
    s.free_bytes = uint64_t{sv.f_bfree} * unit;
    s.avail_bytes = uint64_t{sv.f_bavail} * unit;
    s.total_files = sv.f_files;
    s.free_files = sv.f_ffree;
    s.avail_files = sv.f_favail;
    return s;
}

Result<PathConf> pathconf(const Node& node) {
    struct statvfs sv {};
    if (::fstatvfs(node.fd.get(), &sv) != 0) return fail(errno);
    errno = 0;
    const long link_max = ::fpathconf(node.fd.get(), _PC_LINK_MAX);
    if (link_max < 0 && errno != 0) return fail(errno);
    PathConf pc;
    pc.link_max =
        link_max < 0 ? UINT32_MAX : static_cast<uint32_t>(std::min<long>(link_max, UINT32_MAX));
    pc.name_max = static_cast<uint32_t>(std::min<unsigned long>(sv.f_namemax, kNameMax));
    return pc;
}

}  // namespace nfsrdmad::vfs
