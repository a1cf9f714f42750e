// NFSPROC3_FSSTAT (RFC 1813 §3.3.18).
#include "nfs/v3/request.h"
#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_fsstat(Request& rq) {
    x::FSSTAT3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::FSSTAT3res res;
    Target t;
    res.set_status(rq.resolve(a.fsroot, t));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    auto fs = vfs::fsstat(t.node);
    x::post_op_attr attrs = post_op(t.node);
    if (!fs) {
        res.set_status(to_nfsstat3(fs.error()));
        res.resfail().obj_attributes = attrs;
        return rq.reply(res);
    }
    auto& r = res.resok();
    r.obj_attributes = attrs;
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
