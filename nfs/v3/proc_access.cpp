// NFSPROC3_ACCESS (RFC 1813 §3.3.4). A read-only export grants no write access.
#include "nfs/v3/request.h"
#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_access(Request& rq) {
    x::ACCESS3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::ACCESS3res res;
    Target t;
    res.set_status(rq.resolve(a.object, t));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    auto st = vfs::getattr(t.node);
    if (!st) {
        res.set_status(to_nfsstat3(st.error()));
        return rq.reply(res);
    }
    // POSIX ACLs count (vfs::access_of); one to read as the caller is a worker's.
    auto access = vfs::access_of(t.node.fd.get(), *st, t.who.id, a.access, !rq.ctx.nowait);
    if (!access && access.error() == EWOULDBLOCK && rq.ctx.nowait) {
        rq.block();
        return rq.reply(res);
    }
    if (!access) {
        res.set_status(to_nfsstat3(access.error()));
        return rq.reply(res);
    }
    uint32_t granted = *access;
    if (!t.who.read_write)
        granted &= ~(vfs::kAccessModify | vfs::kAccessExtend | vfs::kAccessDelete);
    // A write delegation's holder may have grown the file: no attributes (nor for LOOKUP
    // and READDIRPLUS); the client asks GETATTR, which recalls it.
    if (!rq.stale_attributes(t.node.handle))
        res.resok().obj_attributes = post_op(*st, t.node.fsid());
    res.resok().access = granted;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
