// NVERIFY (RFC 8881 §18.15): the converse of VERIFY: NFS4_OK when the given attributes
// differ from the current object's, NFS4ERR_SAME when they are equal (e.g. a client
// re-reads a directory only if its change attribute moved). The comparison and its errors
// are compare_attrs() (attrs/object_attrs.h), shared with VERIFY.
#include "nfs/v4/attrs/object_attrs.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_nverify(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::NVERIFY4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    Target* t;
    x4::nfsstat4 st = rq.current(t);
    bool same = false;
    if (st == x4::NFS4_OK) st = compare_attrs(rq, *t, a.obj_attributes, same);
    if (st == x4::NFS4_OK && same) st = x4::NFS4ERR_SAME;
    encode_status_only(res, st);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
