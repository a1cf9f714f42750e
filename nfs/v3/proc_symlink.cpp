// NFSPROC3_SYMLINK (RFC 1813 §3.3.10). The target is stored as given.
#include "nfs/v3/creation.h"
#include "nfs/vfs/create.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_symlink(Request& rq) {
    x::SYMLINK3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    const auto& s = a.symlink;
    uint32_t mode = s.symlink_attributes.mode.set_it() ? s.symlink_attributes.mode.mode() : 0777;
    return create_object(rq, a.where, nullptr, [&](Target& dir, vfs::DirChange* c) {
        return vfs::symlink(dir.node, a.where.name, s.symlink_data, mode, dir.who.id, c);
    });
}

}  // namespace nfsrdmad::nfs::v3
