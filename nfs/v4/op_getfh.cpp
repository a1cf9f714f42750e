// GETFH (RFC 8881 §18.8). The handle goes back as the client gave it or as this
// server made it: it was checked when it became current.
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_getfh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    x4::GETFH4res r(x4::NFS4_OK);
    r.resok4().object = c.current_fh->data();
    x4::xdr_encode(res, r);
    return {};
}

}  // namespace nfsrdmad::nfs::v4
