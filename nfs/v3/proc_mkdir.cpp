// NFSPROC3_MKDIR (RFC 1813 §3.3.9).
#include "nfs/v3/creation.h"
#include "nfs/vfs/create.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_mkdir(Request& rq) {
    x::MKDIR3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    uint32_t mode = a.attributes.mode.set_it() ? (a.attributes.mode.mode() & 07777) : 0755;
    return create_object(rq, a.where, &a.attributes, [&](Target& dir, vfs::DirChange* c) {
        return vfs::mkdir(dir.node, a.where.name, mode, dir.who.id, c);
    });
}

}  // namespace nfsrdmad::nfs::v3
