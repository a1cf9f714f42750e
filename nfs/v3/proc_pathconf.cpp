// NFSPROC3_PATHCONF (RFC 1813 §3.3.20).
#include "nfs/v3/request.h"
#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_pathconf(Request& rq) {
    x::PATHCONF3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::PATHCONF3res res;
    Target t;
    res.status = rq.resolve(a.object, t);
    if (res.status != x::NFS3_OK) return rq.reply(res);
    auto pc = vfs::pathconf(t.node);
    res.resok.obj_attributes = post_op(t.node);
    res.resfail.obj_attributes = res.resok.obj_attributes;
    if (!pc) {
        res.status = to_nfsstat3(pc.error());
        return rq.reply(res);
    }
    auto& r = res.resok;
    r.linkmax = pc->link_max;
    r.name_max = pc->name_max;
    r.no_trunc = pc->no_trunc;
    r.chown_restricted = pc->chown_restricted;
    r.case_insensitive = pc->case_insensitive;
    r.case_preserving = pc->case_preserving;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
