// SETATTR (RFC 8881 §18.30) and READLINK (§18.24). SETATTR's result carries attrsset
// even on failure (empty then). A size change goes through its stateid (§18.30.3:
// an open stateid must allow writing, the special ones are checked as WRITE's).
#include <sys/stat.h>

#include "nfs/v4/attrs/set_attrs.h"
#include "nfs/v4/io_file.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/vfs/attrs.h"
#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v4 {

void encode_setattr_error(xdr::Encoder& res, x4::nfsstat4 st) {
    x4::SETATTR4res r;
    r.status = st;
    x4::xdr_encode(res, r);
}

OpResult op_setattr(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::SETATTR4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    auto fail = [&](x4::nfsstat4 st) {
        encode_setattr_error(res, st);
        return OpResult{st};
    };
    Target* t;
    if (auto st = rq.current(t); st != x4::NFS4_OK) return fail(st);
    vfs::SetAttrs attrs;
    AttrMask set;
    if (auto st = decode_set_attrs(a.obj_attributes, rq.svc.ids, attrs, set); st != x4::NFS4_OK)
        return fail(st);
    if (t->pseudo || !t->who.read_write) return fail(x4::NFS4ERR_ROFS);
    // §10.4.1: another client's delegation of the file is recalled first.
    if (rq.delegated(t->node.handle, true)) return fail(x4::NFS4ERR_DELAY);
    auto at = vfs::getattr(t->node);
    if (!at) return fail(to_nfsstat4(at.error()));
    // An ACL sets the nine low mode bits; "the three high-order bits ... SHOULD remain
    // unchanged" (§6.4.1.2). A mode given as well is applied as given.
    if (set.has(x4::FATTR4_ACL) && !set.has(x4::FATTR4_MODE))
        attrs.mode = (at->stx_mode & 07000) | (*attrs.mode & 0777);
    // A symlink has no mode of its own on Linux: a mode change of one is dropped and the
    // SETATTR succeeds, as knfsd does (nfsd_setattr) and as clients cleaning a tree
    // with "chmod everything, then remove" expect.
    // Only its owner (or root) may ask, as for any chmod.
    if (S_ISLNK(at->stx_mode) && attrs.mode) {
        if (!t->who.id.is_root() && t->who.id.uid != at->stx_uid) return fail(x4::NFS4ERR_PERM);
        attrs.mode.reset();
    }
    if (attrs.size) {
        if (S_ISDIR(at->stx_mode)) return fail(x4::NFS4ERR_ISDIR);
        if (!S_ISREG(at->stx_mode)) return fail(x4::NFS4ERR_INVAL);
        std::shared_ptr<const vfs::OpenFile> file;
        Caller who;
        if (auto st = io_file(c, a.stateid, true, file, who); st != x4::NFS4_OK) return fail(st);
    }
    if (auto r = vfs::setattr(t->node, attrs, t->who.id); !r) return fail(to_nfsstat4(r.error()));
    x4::SETATTR4res out;
    out.status = x4::NFS4_OK;
    out.attrsset = set.to_wire();
    x4::xdr_encode(res, out);
    return {};
}

OpResult op_readlink(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    Request& rq = *c.rq;
    Target* t;
    x4::nfsstat4 st = rq.current(t);
    std::string target;
    // §18.24.4: "The server should return the error NFS4ERR_WRONG_TYPE if the object is not
    // of type NF4LNK."
    if (st == x4::NFS4_OK && t->pseudo) st = x4::NFS4ERR_WRONG_TYPE;
    if (st == x4::NFS4_OK) {
        auto at = vfs::getattr(t->node);
        if (!at)
            st = to_nfsstat4(at.error());
        else if (!S_ISLNK(at->stx_mode))
            st = x4::NFS4ERR_WRONG_TYPE;
    }
    if (st == x4::NFS4_OK) {
        auto l = vfs::readlink(t->node);
        if (!l)
            st = to_nfsstat4(l.error());
        else
            target = std::move(*l);
    }
    x4::READLINK4res out(st);
    if (st == x4::NFS4_OK)
        out.resok4().link = {reinterpret_cast<const uint8_t*>(target.data()), target.size()};
    x4::xdr_encode(res, out);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
