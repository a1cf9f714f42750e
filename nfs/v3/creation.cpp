#include "nfs/v3/creation.h"

#include <spdlog/spdlog.h>

#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v3 {

bool apply_remaining_attrs(const vfs::Entry& e, const x::sattr3& s, const vfs::Identity& id) {
    vfs::SetAttrs a = to_set_attrs(s);
    a.mode.reset();
    if (!a.uid && !a.gid && !a.size && a.atime.how == vfs::TimeChange::Keep &&
        a.mtime.how == vfs::TimeChange::Keep)
        return false;
    if (auto r = vfs::setattr(e.node, a, id); !r)
        spdlog::debug("nfs3: attributes after create: {}", vfs::describe_error(r.error()));
    return true;
}

vfs::Result<void> apply_size_to_existing(const vfs::Entry& e, const x::sattr3& s,
                                         const vfs::Identity& id, bool& changed) {
    changed = false;
    vfs::SetAttrs a;
    a.size = to_set_attrs(s).size;
    if (!a.size) return {};
    changed = true;
    return vfs::setattr(e.node, a, id);
}

}  // namespace nfsrdmad::nfs::v3
