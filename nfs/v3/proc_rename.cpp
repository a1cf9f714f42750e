// NFSPROC3_RENAME (RFC 1813 §3.3.14): atomic, replacing an existing target.
#include "nfs/v3/names.h"
#include "nfs/v3/removal.h"
#include "nfs/vfs/dirops.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_rename(Request& rq) {
    x::RENAME3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::RENAME3res res;
    Target from, to;
    res.set_status(rq.resolve_for_change(a.from.dir, from));
    if (res.status() == x::NFS3_OK) res.set_status(rq.resolve_for_change(a.to.dir, to));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    // None for a failure before the rename (Request::resolve_for_change).
    const x::pre_op_attr from_before, to_before;
    vfs::DirChange from_change, to_change;  // the directories around the rename itself
    x::nfsstat3 bad = check_name(a.from.name, NameUse::Rename);
    if (bad == x::NFS3_OK) bad = check_name(a.to.name, NameUse::Rename);
    if (bad != x::NFS3_OK) {
        res.set_status(bad);
    } else if (!from.who.read_write || !to.who.read_write) {
        res.set_status(x::NFS3ERR_ROFS);
    } else {
        vfs::FileHandle replaced;  // a file the rename may replace
        regular_file_handle(to.node, a.to.name, replaced);
        vfs::FileHandle moved;  // the file renamed, when delegations are held at all
        if (rq.any_delegations()) regular_file_handle(from.node, a.from.name, moved);
        if ((moved.size && rq.delegated(moved, true)) ||
            (replaced.size && rq.delegated(replaced, true)))
            res.set_status(x::NFS3ERR_JUKEBOX);
        else if (auto r = vfs::rename(from.node, a.from.name, to.node, a.to.name, from.who.id,
                                      &from_change, &to_change);
                 !r)
            res.set_status(to_nfsstat3(r.error()));
        else if (replaced.size)
            rq.svc.files.forget(replaced);
    }
    x::wcc_data from_wcc = wcc(from_change, from_before, from.node),
                to_wcc = wcc(to_change, to_before, to.node);
    if (res.status() == x::NFS3_OK) {
        res.resok().fromdir_wcc = from_wcc;
        res.resok().todir_wcc = to_wcc;
    } else {
        res.resfail().fromdir_wcc = from_wcc;
        res.resfail().todir_wcc = to_wcc;
    }
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
