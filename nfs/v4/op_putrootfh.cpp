// PUTROOTFH (RFC 8881 §18.21) and PUTPUBFH (§18.20): the root of the pseudo file
// system (§7.3); this server's public filehandle is the same root (§18.20.3 allows it).
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

namespace {

OpResult put_root(Compound& c, xdr::Encoder& res) {
    Request& rq = *c.rq;
    PseudoFs::Entry root = rq.pseudo().root();
    Target t;
    if (root.kind == PseudoFs::Entry::ExportRoot) {
        // An export at "/": the root is that export's root directory.
        auto exp = rq.table->find_by_fsid(root.fsid);
        if (!exp) {
            encode_status_only(res, x4::NFS4ERR_STALE);
            return {x4::NFS4ERR_STALE};
        }
        if (auto st = rq.resolve(exp->root_handle().data(), t); st != x4::NFS4_OK) {
            encode_status_only(res, st);
            return {st};
        }
    } else {
        t.pseudo = true;
        t.pseudo_node = root.node;
    }
    rq.set_current(std::move(t));
    encode_status_only(res, x4::NFS4_OK);
    return {};
}

}  // namespace

OpResult op_putrootfh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    return put_root(c, res);
}
OpResult op_putpubfh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    return put_root(c, res);
}

}  // namespace nfsrdmad::nfs::v4
