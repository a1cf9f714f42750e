// NFSPROC3_READLINK (RFC 1813 §3.3.5). The target is returned verbatim; the server
// never interprets it.
#include "nfs/v3/request.h"
#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_readlink(Request& rq) {
    x::READLINK3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::READLINK3res res;
    Target t;
    res.set_status(rq.resolve(a.symlink, t));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    auto target = vfs::readlink(t.node);
    x::post_op_attr attrs = post_op(t.node);
    if (!target) {
        res.set_status(to_nfsstat3(target.error()));
        res.resfail().symlink_attributes = attrs;
        return rq.reply(res);
    }
    res.resok().symlink_attributes = attrs;
    res.resok().data = *target;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
