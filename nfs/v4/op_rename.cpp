// RENAME (RFC 8881 §18.26): oldname in the saved directory to newname in the current
// one; across exports NFS4ERR_XDEV. LINK (§18.9): the saved object gets newname in the
// current directory. Both answer change_info4 of the directories.
#include <sys/stat.h>

#include <cerrno>

#include "nfs/v4/attrs/change.h"
#include "nfs/v4/lookup.h"
#include "nfs/v4/names.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/vfs/attrs.h"
#include "nfs/vfs/dirops.h"
#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_rename(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::RENAME4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    auto fail = [&](x4::nfsstat4 st) {
        encode_status_only(res, st);
        return OpResult{st};
    };
    Target *from, *to;
    if (auto st = rq.saved_for_change(from); st != x4::NFS4_OK) return fail(st);
    if (auto st = rq.current_for_change(to); st != x4::NFS4_OK) return fail(st);
    if (auto st = must_be_dir(*from); st != x4::NFS4_OK) return fail(st);
    if (auto st = must_be_dir(*to); st != x4::NFS4_OK) return fail(st);
    std::string_view oldname, newname;
    if (auto st = check_name(a.oldname, oldname); st != x4::NFS4_OK) return fail(st);
    if (auto st = check_name(a.newname, newname); st != x4::NFS4_OK) return fail(st);
    if (from->pseudo || to->pseudo) return fail(x4::NFS4ERR_ROFS);
    // §8.4.2.1: a returning client may be about to reclaim an open of either name.
    if (auto st = rq.svc.recovery.may_change(); st != x4::NFS4_OK) return fail(st);
    if (from->node.exp.get() != to->node.exp.get()) return fail(x4::NFS4ERR_XDEV);
    if (!to->who.read_write) return fail(x4::NFS4ERR_ROFS);
    // A file renamed over loses its cached descriptor (as REMOVE). Looked at as root
    // (vfs::peek): the rename itself runs as the caller and answers for its rights.
    auto victim = vfs::peek(to->node, newname);
    // §10.4.1: other clients' delegations of the file renamed or replaced are recalled
    // first.
    if (!rq.svc.delegations.empty()) {
        auto moved = vfs::peek(from->node, oldname);
        if ((moved && S_ISREG(moved->mode) && rq.delegated(moved->handle, true)) ||
            (victim && S_ISREG(victim->mode) && rq.delegated(victim->handle, true)))
            return fail(x4::NFS4ERR_DELAY);
    }
    vfs::DirChange from_change, to_change;
    if (auto r = vfs::rename(from->node, oldname, to->node, newname, to->who.id, &from_change,
                             &to_change);
        !r) {
        // §18.26.3: "If the source object and the target are not compatible or if the target
        // is a directory but not empty, the server will return the error NFS4ERR_EXIST."
        // (rename(2): ENOTDIR, EISDIR, ENOTEMPTY/EEXIST; a directory into itself stays EINVAL.)
        const int e = r.error();
        const bool clash = e == ENOTDIR || e == EISDIR || e == ENOTEMPTY || e == EEXIST;
        return fail(clash ? x4::NFS4ERR_EXIST : to_nfsstat4(e));
    }
    if (victim && S_ISREG(victim->mode)) rq.svc.files.forget(victim->handle);
    x4::RENAME4res out(x4::NFS4_OK);
    out.resok4().source_cinfo = change_info_of(from_change);
    out.resok4().target_cinfo = change_info_of(to_change);
    x4::xdr_encode(res, out);
    return {};
}

OpResult op_link(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::LINK4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    auto fail = [&](x4::nfsstat4 st) {
        encode_status_only(res, st);
        return OpResult{st};
    };
    Target *obj, *dir;
    if (auto st = rq.saved(obj); st != x4::NFS4_OK) return fail(st);
    if (auto st = rq.current_for_change(dir); st != x4::NFS4_OK) return fail(st);
    if (auto st = must_be_dir(*dir); st != x4::NFS4_OK) return fail(st);
    std::string_view name;
    if (auto st = check_name(a.newname, name); st != x4::NFS4_OK) return fail(st);
    if (obj->pseudo) return fail(x4::NFS4ERR_ISDIR);
    if (dir->pseudo) return fail(x4::NFS4ERR_ROFS);
    if (obj->node.exp.get() != dir->node.exp.get()) return fail(x4::NFS4ERR_XDEV);
    if (!dir->who.read_write) return fail(x4::NFS4ERR_ROFS);
    auto attr = vfs::getattr(obj->node);
    if (!attr) return fail(to_nfsstat4(attr.error()));
    if (S_ISDIR(attr->stx_mode)) return fail(x4::NFS4ERR_ISDIR);
    if (rq.delegated(obj->node.handle, true)) return fail(x4::NFS4ERR_DELAY);
    vfs::DirChange change;
    if (auto r = vfs::link(obj->node, dir->node, name, dir->who.id, &change); !r)
        return fail(to_nfsstat4(r.error()));
    x4::LINK4res out(x4::NFS4_OK);
    out.resok4().cinfo = change_info_of(change);
    x4::xdr_encode(res, out);
    return {};
}

}  // namespace nfsrdmad::nfs::v4
