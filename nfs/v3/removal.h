// What REMOVE and RMDIR share (RFC 1813 §3.3.12, §3.3.13): one name in one
// directory goes away, the reply carries the directory's wcc_data.
#pragma once

#include "nfs/v3/names.h"
#include "nfs/v3/request.h"

namespace nfsrdmad::nfs::v3 {

// The handle of `name` in `dir` when it is a regular file (else `out` stays empty).
// A removed file may still sit open in the descriptor cache, which keeps its blocks
// allocated: REMOVE and RENAME take its handle first and forget it once it is gone.
// Looked at as root (vfs::peek): the operation itself runs with the caller's identity
// and answers for what the caller may do.
void regular_file_handle(const vfs::Node& dir, std::string_view name, vfs::FileHandle& out);

// `use`: NameUse::Remove or NameUse::RemoveDir (names.h).
template <class Op>
rpc::Outcome remove_entry(Request& rq, NameUse use, Op op) {
    x::REMOVE3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::REMOVE3res res;
    Target dir;
    res.set_status(rq.resolve_for_change(a.object.dir, dir));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    const x::pre_op_attr before;  // none for a failure before the change (resolve_for_change)
    vfs::DirChange change;  // the directory around the removal itself
    if (const x::nfsstat3 bad = check_name(a.object.name, use); bad != x::NFS3_OK) {
        res.set_status(bad);
    } else if (!dir.who.read_write) {
        res.set_status(x::NFS3ERR_ROFS);
    } else {
        vfs::FileHandle victim;
        regular_file_handle(dir.node, a.object.name, victim);
        if (victim.size && rq.delegated(victim, true))
            res.set_status(x::NFS3ERR_JUKEBOX);
        else if (auto r = op(dir.node, a.object.name, dir.who.id, &change); !r)
            res.set_status(to_nfsstat3(r.error()));
        else if (victim.size)
            rq.svc.files.forget(victim);
    }
    if (res.status() == x::NFS3_OK)
        res.resok().dir_wcc = wcc(change, before, dir.node);
    else
        res.resfail().dir_wcc = wcc(change, before, dir.node);
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
