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
    res.status = rq.resolve(a.symlink, t);
    if (res.status != x::NFS3_OK) return rq.reply(res);
    auto target = vfs::readlink(t.node);
    res.resok.symlink_attributes = post_op(t.node);
    res.resfail.symlink_attributes = res.resok.symlink_attributes;
    if (!target) {
        res.status = to_nfsstat3(target.error());
        return rq.reply(res);
    }
    res.resok.data = *target;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
