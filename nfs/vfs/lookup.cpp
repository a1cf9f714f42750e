#include "nfs/vfs/lookup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "nfs/vfs/attrs.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/names.h"
#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

// ".." — RESOLVE_BENEATH would refuse it outright, so resolve it without, but never
// above the export root and never across a mount.
Result<UniqueFd> open_parent(const Node& dir) {
    auto st = sys::stat_fd(dir.fd.get());
    if (!st) return st.failure();
    if (!S_ISDIR(st->stx_mode)) return fail(ENOTDIR);
    if (dir.exp->is_root(*st)) return sys::open_child_path(dir.fd.get(), ".");
    return sys::openat2(dir.fd.get(), "..", O_PATH | O_DIRECTORY,
                        RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS);
}

// Deeper than any path a client could name (PATH_MAX / 2 components).
constexpr int kMaxExportDepth = 2048;

// Whether the directory `fd` is the export root or below it, found by walking ".." up
// to the export root (yes), the top of the mount or of the filesystem, or a removed
// directory (no). Runs as root: the walk is the server's check, not the caller's lookup.
Result<bool> within_export(const Export& exp, int fd) {
    auto cur = sys::dup_fd(fd);
    if (!cur) return cur.failure();
    for (int depth = 0; depth <= kMaxExportDepth; ++depth) {
        auto st = sys::stat_fd(cur->get());
        if (!st) return st.failure();
        if (exp.is_root(*st)) return true;
        auto up = sys::openat2(cur->get(), "..", O_PATH | O_DIRECTORY,
                               RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS);
        if (!up) {
            if (up.error() == EXDEV || up.error() == ENOENT) return false;
            return up.failure();
        }
        auto up_st = sys::stat_fd(up->get());
        if (!up_st) return up_st.failure();
        if (up_st->stx_ino == st->stx_ino && up_st->stx_dev_major == st->stx_dev_major &&
            up_st->stx_dev_minor == st->stx_dev_minor)
            return false;  // "/" is its own parent
        cur = std::move(up);
    }
    return false;
}

Result<UniqueFd> open_in_dir(const Node& dir, std::string_view name) {
    if (name == "..") return open_parent(dir);
    const auto n = sys::name_buf(name);
    return sys::open_child_path(dir.fd.get(), n.c_str());
}

}  // namespace

Result<Peek> peek(const Node& dir, std::string_view name) {
    if (auto r = validate_existing_name(name); !r) return r.failure();
    const auto n = sys::name_buf(name);
    struct statx st {};
    if (::statx(dir.fd.get(), n.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                STATX_TYPE | STATX_MODE, &st) != 0)
        return fail(errno);
    // Another filesystem mounted on the name: its root's handle means nothing here.
    if (st.stx_attributes_mask & st.stx_attributes & STATX_ATTR_MOUNT_ROOT) return fail(EXDEV);
    auto kernel = kernel_handle_at(dir.fd.get(), n.c_str());
    if (!kernel) return kernel.failure();
    return Peek{dir.exp->encode(*kernel), st.stx_mode};
}

namespace {

// The name opened (as whoever the thread is now) and its handle and attributes read.
Result<Entry> open_entry(const Node& dir, std::string_view name) {
    auto fd = open_in_dir(dir, name);
    if (!fd) return fd.failure();
    return make_entry(dir.exp, std::move(*fd));
}

// lookup()'s last step for "..": never a handle above the export.
Result<Entry> within_export_or_stale(const Node& dir, Result<Entry> e, std::string_view name) {
    if (!e || name != "..") return e;
    // Handles are not subtree-checked (export.h), so `dir` may be a directory a local
    // user moved out of the export; its ".." must not hand out a handle further out.
    // ESTALE, as knfsd answers with subtree_check for an object outside the exported
    // subtree: to this export the directory is gone (RFC 1813 §2.6 NFS3ERR_STALE,
    // "no longer exists or access to it has been revoked"). ACCES would wrongly suggest
    // a permission the client could be granted.
    auto inside = within_export(*dir.exp, e->node.fd.get());
    if (!inside) return inside.failure();
    if (!*inside) return fail(ESTALE);
    return e;
}

}  // namespace

Result<Entry> lookup(const Node& dir, std::string_view name, const Identity& id) {
    if (auto r = validate_name(name); !r) return r.failure();
    return within_export_or_stale(dir, with_identity(id, [&] { return open_entry(dir, name); }),
                                  name);
}

Result<Entry> lookup_permitted(const Node& dir, std::string_view name) {
    if (auto r = validate_name(name); !r) return r.failure();
    return within_export_or_stale(dir, open_entry(dir, name), name);
}

Result<Listed> lookup_listed(const Node& dir, std::string_view name) {
    if (auto r = validate_name(name); !r) return r.failure();
    if (!is_dot_or_dotdot(name)) {
        const auto n = sys::name_buf(name);
        auto kernel = kernel_handle_at(dir.fd.get(), n.c_str());
        if (!kernel && kernel.error() == ENOENT) return kernel.failure();
        // Handle first, attributes second; the pair is kept only if both calls found the
        // same inode. A name replaced in between (even replaced and put back) shows two
        // inode numbers and goes the long way; only an inode number freed and reused
        // between the two calls could pair two objects.
        struct statx st {};
        if (kernel &&
            ::statx(dir.fd.get(), n.c_str(),
                    AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_SYNC_AS_STAT, sys::kStatxMask,
                    &st) == 0 &&
            (st.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
            !(st.stx_attributes & STATX_ATTR_MOUNT_ROOT) && inode_of(*kernel) == st.stx_ino)
            return Listed{dir.exp->encode(*kernel), st, true};
    }
    auto e = lookup_permitted(dir, name);
    if (!e) return e.failure();
    return Listed{e->node.handle, e->attr, false};
}

Result<Entry> lookup_as(const Node& dir, const struct statx& dir_st, std::string_view name,
                        const Identity& id) {
    if (!S_ISDIR(dir_st.stx_mode)) return lookup(dir, name, id);
    if (auto r = validate_name(name); !r) return r.failure();
    auto search = may_search(dir, dir_st, id);
    if (!search) return search.failure();
    if (!*search) return fail(EACCES);
    return lookup_permitted(dir, name);
}

Result<bool> may_search(const Node& dir, const struct statx& st, const Identity& id) {
    if (!S_ISDIR(st.stx_mode)) return fail(ENOTDIR);
    auto may = access_of(dir.fd.get(), st, id, kAccessLookup);
    if (!may) return may.failure();
    return (*may & kAccessLookup) != 0;
}

Result<Entry> lookup_cached(const Node& dir, const struct statx& dir_st, std::string_view name,
                            const Identity& id) {
    if (auto r = validate_name(name); !r) return r.failure();
    if (name == ".." || !S_ISDIR(dir_st.stx_mode)) return fail(EWOULDBLOCK);
    // The dentry cache first, as root: a name it does not hold (the LOOKUP before a create)
    // goes to a worker after this one system call, before any permission is looked at.
    // An O_PATH descriptor reads nothing; nothing is answered before the check below.
    const auto n = sys::name_buf(name);
    struct open_how how {};
    how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = sys::kResolveBeneath | RESOLVE_CACHED;
    const int fd =
        static_cast<int>(::syscall(SYS_openat2, dir.fd.get(), n.c_str(), &how, sizeof how));
    const int err = fd < 0 ? errno : 0;
    UniqueFd found(fd);
    // EAGAIN: not in the dentry cache. EINVAL: a kernel before 5.12 (no RESOLVE_CACHED;
    // the name itself was validated). Out of descriptors: a worker can make room.
    if (err == EAGAIN || err == EINVAL || err == EMFILE || err == ENFILE || err == EINTR)
        return fail(EWOULDBLOCK);
    // The one permission a single-component lookup needs (path_resolution(7)): search on
    // dir, before any answer, ENOENT included. Root's is never refused; an ACL is the
    // kernel's to read, as the caller (a worker's).
    auto may = access_of(dir.fd.get(), dir_st, id, kAccessLookup, /*may_switch=*/false);
    if (!may) return may.failure();
    if (!(*may & kAccessLookup)) return fail(EACCES);
    if (err) return fail(err);
    return make_entry(dir.exp, std::move(found));
}

Result<std::string> readlink(const Node& node) {
    auto st = sys::stat_fd(node.fd.get());
    if (!st) return st.failure();
    if (!S_ISLNK(st->stx_mode)) return fail(EINVAL);
    std::string target(st->stx_size > 0 ? st->stx_size + 1 : 256, '\0');
    for (;;) {
        const ssize_t n = ::readlinkat(node.fd.get(), "", target.data(), target.size());
        if (n < 0) return fail(errno);
        if (static_cast<size_t>(n) < target.size()) {
            target.resize(static_cast<size_t>(n));
            return target;
        }
        if (target.size() >= 65536) return fail(ENAMETOOLONG);
        target.resize(target.size() * 2);  // the link grew since statx
    }
}

}  // namespace nfsrdmad::vfs
