#include "nfs/vfs/lookup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

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

Result<UniqueFd> open_in_dir(const Node& dir, std::string_view name) {
    if (name == "..") return open_parent(dir);
    const auto n = sys::name_buf(name);
    return sys::open_child_path(dir.fd.get(), n.c_str());
}

}  // namespace

Result<Entry> lookup(const Node& dir, std::string_view name, const Identity& id) {
    if (auto r = validate_name(name); !r) return r.failure();
    return with_identity(id, [&]() -> Result<Entry> {
        auto fd = open_in_dir(dir, name);
        if (!fd) return fd.failure();
        return make_entry(dir.exp, std::move(*fd));
    });
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
