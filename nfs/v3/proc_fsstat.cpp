// NFSPROC3_FSSTAT (RFC 1813 §3.3.18).
#include "nfs/v3/request.h"
#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_fsstat(Request& rq) {
    x::FSSTAT3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::FSSTAT3res res;
    Target t;
    res.status = rq.resolve(a.fsroot, t);
    if (res.status != x::NFS3_OK) return rq.reply(res);
    auto fs = vfs::fsstat(t.node);
    res.resok.obj_attributes = post_op(t.node);
    res.resfail.obj_attributes = res.resok.obj_attributes;
    if (!fs) {
        res.status = to_nfsstat3(fs.error());
        return rq.reply(res);
    }
    auto& r = res.resok;
    r.tbytes = fs->total_bytes;
    r.fbytes = fs->free_bytes;
    r.abytes = fs->avail_bytes;
    r.tfiles = fs->total_files;
    r.ffiles = fs->free_files;
    r.afiles = fs->avail_files;
    r.invarsec = 0;  // the numbers change all the time
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
