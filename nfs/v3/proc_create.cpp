// NFSPROC3_CREATE (RFC 1813 §3.3.8): UNCHECKED, GUARDED and EXCLUSIVE (the verifier
// is kept in the file's timestamps by vfs::create, so a retransmission is recognised
// even after a server restart).
//
// A file made here is opened for writing as it is made and handed to the descriptor cache
// (FdCache::adopt): a client creates a file to write it, and its first WRITE then finds the
// descriptor open instead of opening the handle again.
#include <cerrno>

#include "nfs/v3/creation.h"
#include "nfs/v3/removal.h"
#include "nfs/vfs/create.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_create(Request& rq) {
    x::CREATE3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    const auto& how = a.how;
    if (how.mode() == x::EXCLUSIVE) {
        uint64_t verf = 0;
        for (uint8_t b : how.verf()) verf = verf << 8 | b;
        return create_object(rq, a.where, nullptr, [&](Target& dir, vfs::DirChange* c) {
            bool made = false;
            auto e = vfs::create(dir.node, a.where.name, 0, vfs::CreateHow::Exclusive, verf,
                                 dir.who.id, &made, c, /*writable=*/true);
            if (e && made) rq.svc.files.adopt(e->node);
            return e;
        });
    }
    const x::sattr3& attrs = how.obj_attributes();
    uint32_t mode = attrs.mode.set_it() ? (attrs.mode.mode() & 07777) : 0644;
    auto kind = how.mode() == x::GUARDED ? vfs::CreateHow::Guarded : vfs::CreateHow::Unchecked;
    bool made = false;
    return create_object(
        rq, a.where, &attrs,
        [&](Target& dir, vfs::DirChange* c) -> vfs::Result<vfs::Entry> {
            // UNCHECKED over an existing file truncates it: an NFSv4.1 client's delegation of
            // it is recalled first (EAGAIN: NFS3ERR_JUKEBOX).
            if (kind == vfs::CreateHow::Unchecked && attrs.size.set_it() && rq.any_delegations()) {
                vfs::FileHandle existing;
                regular_file_handle(dir.node, a.where.name, existing);
                if (existing.size && rq.delegated(existing, true)) return vfs::fail(EAGAIN);
            }
            auto e = vfs::create(dir.node, a.where.name, mode, kind, 0, dir.who.id, &made, c,
                                 /*writable=*/true);
            if (e && made) rq.svc.files.adopt(e->node);
            return e;
        },
        &made);
}

}  // namespace nfsrdmad::nfs::v3
