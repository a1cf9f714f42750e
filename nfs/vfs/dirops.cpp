#include "nfs/vfs/dirops.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "nfs/vfs/durability.h"
#include "nfs/vfs/names.h"
#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

Result<void> unlink_entry(const Node& dir, std::string_view name, int flags, const Identity& id,
                          DirChange* change) {
    if (auto r = validate_existing_name(name); !r) return r;
    const auto n = sys::name_buf(name);
    auto r = change_directory(dir, change, [&] {
        return with_identity(
            id, [&] { return check_syscall(::unlinkat(dir.fd.get(), n.c_str(), flags)); });
    });
    if (!r) return r;
    return commit_directory(dir);  // RFC 1813 §3.3.12, §3.3.13 (durability.h)
}

bool same_export(const Node& a, const Node& b) {
    return a.exp && b.exp && a.fsid() == b.fsid();
}

}  // namespace

Result<void> remove(const Node& dir, std::string_view name, const Identity& id, DirChange* change) {
    return unlink_entry(dir, name, 0, id, change);
}

Result<void> rmdir(const Node& dir, std::string_view name, const Identity& id, DirChange* change) {
    return unlink_entry(dir, name, AT_REMOVEDIR, id, change);
}

Result<void> rename(const Node& from_dir, std::string_view from_name, const Node& to_dir,
                    std::string_view to_name, const Identity& id, DirChange* from_change,
                    DirChange* to_change) {
    if (auto r = validate_existing_name(from_name); !r) return r;
    if (auto r = validate_new_name(to_name); !r) return r;
    if (!same_export(from_dir, to_dir)) return fail(EXDEV);
    const auto from = sys::name_buf(from_name);
    const auto to = sys::name_buf(to_name);
    auto r = change_directories(from_dir, from_change, to_dir, to_change, [&] {
        return with_identity(id, [&] {
            return check_syscall(
                ::renameat(from_dir.fd.get(), from.c_str(), to_dir.fd.get(), to.c_str()));
        });
    });
    if (!r) return r;
    // RFC 1813 §3.3.14: both directories on stable storage (durability.h); one commit
    // when they are the same directory.
    if (auto c = commit_directory(to_dir); !c) return c;
    if (from_dir.handle == to_dir.handle) return {};
    return commit_directory(from_dir);
}

Result<void> link(const Node& file, const Node& dir, std::string_view name, const Identity& id,
                  DirChange* change) {
    if (auto r = validate_new_name(name); !r) return r;
    if (!same_export(file, dir)) return fail(EXDEV);
    const auto n = sys::name_buf(name);
    const auto source = sys::proc_fd_path(file.fd.get());
    auto r = change_directory(dir, change, [&] {
        return with_identity(id, [&] {
            return check_syscall(
                ::linkat(AT_FDCWD, source.c_str(), dir.fd.get(), n.c_str(), AT_SYMLINK_FOLLOW));
        });
    });
    if (!r) return r;
    // RFC 1813 §3.3.15: the new name and the file's link count (durability.h)
    if (auto c = commit_directory(dir); !c) return c;
    return commit_object(file);
}

}  // namespace nfsrdmad::vfs
