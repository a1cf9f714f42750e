// What REMOVE and RMDIR share (RFC 1813 §3.3.12, §3.3.13): one name in one
// directory goes away, the reply carries the directory's wcc_data.
#pragma once

#include "nfs/v3/request.h"

namespace nfsrdmad::nfs::v3 {

template <class Op>
rpc::Outcome remove_entry(Request& rq, Op op) {
    x::REMOVE3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::REMOVE3res res;
    Target dir;
    res.status = rq.resolve(a.object.dir, dir);
    if (res.status != x::NFS3_OK) return rq.reply(res);
    x::pre_op_attr before = pre_op(dir.node);
    if (!dir.who.read_write) {
        res.status = x::NFS3ERR_ROFS;
    } else if (auto r = op(dir.node, a.object.name, dir.who.id); !r) {
        res.status = to_nfsstat3(r.error());
    }
    res.resok.dir_wcc = wcc(before, dir.node);
    res.resfail.dir_wcc = res.resok.dir_wcc;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
