// NFSPROC3_LINK (RFC 1813 §3.3.15).
#include "nfs/v3/names.h"
#include "nfs/v3/request.h"
#include "nfs/vfs/dirops.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_link(Request& rq) {
    x::LINK3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::LINK3res res;
    Target file, dir;
    res.set_status(rq.resolve(a.file, file));
    if (res.status() == x::NFS3_OK) res.set_status(rq.resolve_for_change(a.link.dir, dir));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    const x::pre_op_attr before;  // none for a failure before the link (resolve_for_change)
    vfs::DirChange change;  // the directory around the link itself
    if (const x::nfsstat3 bad = check_name(a.link.name, NameUse::Link); bad != x::NFS3_OK) {
        res.set_status(bad);
    } else if (!dir.who.read_write) {
        res.set_status(x::NFS3ERR_ROFS);
    } else if (rq.delegated(file.node.handle, true)) {
        res.set_status(x::NFS3ERR_JUKEBOX);
    } else if (auto r = vfs::link(file.node, dir.node, a.link.name, dir.who.id, &change); !r) {
        res.set_status(to_nfsstat3(r.error()));
    }
    x::post_op_attr attrs = post_op(file.node);
    x::wcc_data w = wcc(change, before, dir.node);
    if (res.status() == x::NFS3_OK) {
        res.resok().file_attributes = attrs;
        res.resok().linkdir_wcc = w;
    } else {
        res.resfail().file_attributes = attrs;
        res.resfail().linkdir_wcc = w;
    }
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
