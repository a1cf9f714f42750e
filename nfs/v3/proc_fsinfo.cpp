// NFSPROC3_FSINFO (RFC 1813 §3.3.19): transfer sizes the client should use.
#include <cstdint>

#include "nfs/v3/request.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_fsinfo(Request& rq) {
    x::FSINFO3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::FSINFO3res res;
    Target t;
    res.set_status(rq.resolve(a.fsroot, t));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    auto& r = res.resok();
    r.obj_attributes = post_op(t.node);
    r.rtmax = r.rtpref = kMaxTransfer;
    r.wtmax = r.wtpref = kMaxTransfer;
    r.rtmult = r.wtmult = 4096;
    r.dtpref = kDirTransfer;
    r.maxfilesize = INT64_MAX;
    r.time_delta = {0, 1};
    r.properties = x::FSF3_LINK | x::FSF3_SYMLINK | x::FSF3_HOMOGENEOUS | x::FSF3_CANSETTIME;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
