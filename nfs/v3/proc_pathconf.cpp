// NFSPROC3_PATHCONF (RFC 1813 §3.3.20).
#include "nfs/v3/request.h"
#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_pathconf(Request& rq) {
    x::PATHCONF3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::PATHCONF3res res;
    Target t;
    res.set_status(rq.resolve(a.object, t));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    auto pc = vfs::pathconf(t.node);
    x::post_op_attr attrs = post_op(t.node);
    if (!pc) {
        res.set_status(to_nfsstat3(pc.error()));
        res.resfail().obj_attributes = attrs;
        return rq.reply(res);
    }
    auto& r = res.resok();
    r.obj_attributes = attrs;
    r.linkmax = pc->link_max;
    r.name_max = pc->name_max;
    r.no_trunc = pc->no_trunc;
    r.chown_restricted = pc->chown_restricted;
    r.case_insensitive = pc->case_insensitive;
    r.case_preserving = pc->case_preserving;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
