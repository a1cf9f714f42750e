// NFSPROC3_SETATTR (RFC 1813 §3.3.2), with the ctime guard.
#include "nfs/v3/request.h"
#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_setattr(Request& rq) {
    x::SETATTR3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::SETATTR3res res;
    Target t;
    res.set_status(rq.resolve(a.object, t));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    auto before = vfs::getattr(t.node);
    if (!before) {
        res.set_status(to_nfsstat3(before.error()));
        return rq.reply(res);
    }
    x::wcc_data w;  // resok and resfail carry the same wcc_data
    w.before = pre_op(*before);
    if (!t.who.read_write) {
        res.set_status(x::NFS3ERR_ROFS);
    } else if (rq.delegated(t.node.handle, true)) {
        res.set_status(x::NFS3ERR_JUKEBOX);
    } else if (a.guard.check() && (before->stx_ctime.tv_sec != a.guard.obj_ctime().seconds ||
                                   before->stx_ctime.tv_nsec != a.guard.obj_ctime().nseconds)) {
        res.set_status(x::NFS3ERR_NOT_SYNC);
    } else {
        auto r = vfs::setattr(t.node, to_set_attrs(a.new_attributes), t.who.id);
        res.set_status(r ? x::NFS3_OK : to_nfsstat3(r.error()));
    }
    w.after = post_op(t.node);
    if (res.status() == x::NFS3_OK)
        res.resok().obj_wcc = w;
    else
        res.resfail().obj_wcc = w;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
