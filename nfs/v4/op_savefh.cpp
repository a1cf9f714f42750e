// SAVEFH (RFC 8881 §18.31) and RESTOREFH (§18.27): the current filehandle and
// stateid to the saved ones and back (§16.2.3.1.2).
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_savefh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    c.rq->save_current();
    encode_status_only(res, x4::NFS4_OK);
    return {};
}

OpResult op_restorefh(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    c.rq->restore_saved();
    encode_status_only(res, x4::NFS4_OK);
    return {};
}

}  // namespace nfsrdmad::nfs::v4
